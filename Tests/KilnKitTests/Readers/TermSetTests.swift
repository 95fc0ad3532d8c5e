import Foundation
import XCTest
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

/// `TermSet` and the normalizers built on vocabularies and times: `{terms, output}` and `{minutesAfter}`.
final class TermSetTests: XCTestCase {
    private func term(_ name: String, _ code: String, aliases: [String] = []) -> JSONValue {
        var object: [String: JSONValue] = ["name": .string(name), "code": .string(code)]
        if !aliases.isEmpty { object["aliases"] = .array(aliases.map(JSONValue.string)) }
        return .object(object)
    }

    private var dayTerms: JSONValue {
        .array([term("Καθημερινές", "weekdays", aliases: ["Δευτέρα-Παρασκευή"]), term("Σάββατο", "saturday", aliases: ["Σαβ"]),
                term("Κυριακή", "sunday"), term("Αργίες", "holidays")])
    }

    private func days(separator: String? = nil) throws -> TermSet {
        let terms = try dayTerms.decode([Term].self, codingPath: [])
        if let separator { return try TermSet(terms: terms, separator: separator) }
        return try TermSet(terms: terms)
    }

    private func vocabularies(separator: String? = nil) throws -> [String: VocabularySpec] {
        var object: [String: JSONValue] = ["terms": dayTerms]
        if let separator { object["separator"] = .string(separator) }
        return ["days": try JSONValue.object(object).decode(VocabularySpec.self, codingPath: [])]
    }

    private func selection(_ codes: String, _ mask: Int) -> TermSet.Selection { TermSet.Selection(codes: codes, mask: mask) }

    // MARK: TermSet

    func testSingleTerms() throws {
        let set = try days()
        XCTAssertEqual(try set.parse("Καθημερινές"), selection("weekdays", 1))
        XCTAssertEqual(try set.parse("Σάββατο"), selection("saturday", 2))
        XCTAssertEqual(try set.parse("Κυριακή"), selection("sunday", 4))
        XCTAssertEqual(try set.parse("Αργίες"), selection("holidays", 8))
        XCTAssertEqual(set.names, ["Καθημερινές", "Σάββατο", "Κυριακή", "Αργίες"])
    }

    func testSeveralTermsWithEverySeparator() throws {
        let set = try days()
        XCTAssertEqual(try set.parse("Σάββατο - Κυριακή"), selection("saturday,sunday", 6))
        XCTAssertEqual(try set.parse("Σάββατο, Κυριακή & Αργίες"), selection("saturday,sunday,holidays", 14))
        XCTAssertEqual(try set.parse("Σάββατο/Κυριακή"), selection("saturday,sunday", 6))
        XCTAssertEqual(try set.parse("Καθημερινές+Σάββατο"), selection("weekdays,saturday", 3))
        XCTAssertEqual(try set.parse("Κυριακή &amp; Αργίες".replacingOccurrences(of: "&amp;", with: "&")), selection("sunday,holidays", 12))
        XCTAssertEqual(try set.parse("Καθημερινές - Σάββατο - Κυριακή - Αργίες"), selection("weekdays,saturday,sunday,holidays", 15))
    }

    func testCodesComeInCanonicalOrder() throws {
        let set = try days()
        XCTAssertEqual(try set.parse("Αργίες - Καθημερινές"), selection("weekdays,holidays", 9))
        XCTAssertEqual(try set.parse("Κυριακή, Σάββατο"), selection("saturday,sunday", 6))
    }

    func testRepeatedTermCountsOnce() throws {
        let set = try days()
        XCTAssertEqual(try set.parse("Σάββατο - Σάββατο"), selection("saturday", 2))
        // An alias and its term are the same term.
        XCTAssertEqual(try set.parse("Σαβ - Σάββατο"), selection("saturday", 2))
    }

    func testCaseAndAccentsAreIgnored() throws {
        let set = try days()
        XCTAssertEqual(try set.parse("ΣΑΒΒΑΤΟ"), selection("saturday", 2))
        XCTAssertEqual(try set.parse("σαββατο"), selection("saturday", 2))
        XCTAssertEqual(try set.parse("ΚΥΡΙΑΚΗ - αργιες"), selection("sunday,holidays", 12))
        XCTAssertEqual(try set.parse("καθημερινες"), selection("weekdays", 1))
        // Decomposed accents and surrounding or doubled white space.
        XCTAssertEqual(try set.parse("  Κυριακη\u{0301} \u{00A0}"), selection("sunday", 4))
    }

    func testAliases() throws {
        let set = try days()
        XCTAssertEqual(try set.parse("Σαβ"), selection("saturday", 2))
        XCTAssertEqual(try set.parse("Δευτέρα-Παρασκευή"), nil, "the default separator splits the alias itself")
        let spaced = try days(separator: #"\s*(?:,|&)\s*"#)
        XCTAssertEqual(try spaced.parse("Δευτέρα-Παρασκευή, Σάββατο"), selection("weekdays,saturday", 3))
    }

    func testUnknownTermsGiveNil() throws {
        let set = try days()
        XCTAssertNil(try set.parse("Τρίτη"))
        XCTAssertNil(try set.parse("Σάββατο - Τρίτη"), "one unknown part makes the whole text unknown")
        XCTAssertNil(try set.parse(""))
        XCTAssertNil(try set.parse(" - "))
        XCTAssertNil(try set.parse("Σάββατο Κυριακή"), "without a separator it is one unknown name")
    }

    func testEmptyPartsAreIgnored() throws {
        XCTAssertEqual(try days().parse("Σάββατο, , Κυριακή"), selection("saturday,sunday", 6))
        XCTAssertEqual(try days().parse("Σάββατο -"), selection("saturday", 2))
    }

    func testCustomSeparator() throws {
        let set = try days(separator: #"\s+(?:και|ή)\s+"#)
        XCTAssertEqual(try set.parse("Σάββατο και Κυριακή"), selection("saturday,sunday", 6))
        XCTAssertNil(try set.parse("Σάββατο - Κυριακή"))
    }

    func testBadSeparatorIsACompileError() throws {
        let terms = try dayTerms.decode([Term].self, codingPath: [])
        XCTAssertThrowsError(try TermSet(terms: terms, separator: "(")) { XCTAssertTrue($0 is RegexCompileError, "got \($0)") }
    }

    func testTermDecoding() throws {
        // `heading` is accepted for `name`, as the timetable reader's days write it.
        let heading = try JSONValue.object(["heading": .string("Σάββατο"), "code": .string("saturday")]).decode(Term.self, codingPath: [])
        XCTAssertEqual(heading.name, "Σάββατο")
        XCTAssertEqual(heading.aliases, [])
        XCTAssertThrowsError(try JSONValue.object(["code": .string("x")]).decode(Term.self, codingPath: []))
        XCTAssertThrowsError(try JSONValue.object(["name": .string("x")]).decode(Term.self, codingPath: []))
        XCTAssertThrowsError(try JSONValue.object(["name": .string("x"), "code": .string("x"), "colour": .string("red")]).decode(Term.self, codingPath: []))
        let vocabulary = try vocabularies()["days"]!
        XCTAssertEqual(vocabulary.separator, TermSet.defaultSeparator)
        XCTAssertEqual(vocabulary.terms.map(\.code), ["weekdays", "saturday", "sunday", "holidays"])
    }

    // MARK: The terms normalizer

    private func apply(_ spec: NormalizerSpec, _ value: String?, fields: [String] = [], values: [String?] = [],
                       vocabularies: [String: VocabularySpec]? = nil) throws -> String? {
        let normalizer = try Normalizer(spec, fieldNames: fields, vocabularies: vocabularies ?? self.vocabularies())
        return try normalizer.apply(value, record: Record(RecordKind(fields: fields), values: values, line: 7))
    }

    func testTermsNormalizerGivesCodes() throws {
        XCTAssertEqual(try apply(.terms(vocabulary: "days", output: "codes"), "Σάββατο, Κυριακή & Αργίες"), "saturday,sunday,holidays")
        XCTAssertEqual(try apply(.terms(vocabulary: "days", output: "codes"), "ΚΑΘΗΜΕΡΙΝΕΣ"), "weekdays")
        XCTAssertNil(try apply(.terms(vocabulary: "days", output: "codes"), nil))
    }

    func testTermsNormalizerGivesMask() throws {
        XCTAssertEqual(try apply(.terms(vocabulary: "days", output: "mask"), "Σάββατο - Κυριακή"), "6")
        XCTAssertEqual(try apply(.terms(vocabulary: "days", output: "mask"), "Αργίες"), "8")
        XCTAssertEqual(try apply(.terms(vocabulary: "days", output: "mask"), "Καθημερινές / Σάββατο / Κυριακή / Αργίες"), "15")
    }

    func testTermsNormalizerUsesTheVocabularySeparator() throws {
        let custom = try vocabularies(separator: #"\s+και\s+"#)
        XCTAssertEqual(try apply(.terms(vocabulary: "days", output: "codes"), "Σάββατο και Κυριακή", vocabularies: custom), "saturday,sunday")
    }

    func testUnknownTermIsAValueProblem() throws {
        XCTAssertThrowsError(try apply(.terms(vocabulary: "days", output: "codes"), "Σάββατο - Τρίτη")) { error in
            guard let problem = error as? ValueProblem else { return XCTFail("got \(error)") }
            XCTAssertEqual(problem.code, "value.unknown-term")
            XCTAssertEqual(problem.message, "\"Σάββατο - Τρίτη\" names no known term; expected names from: Καθημερινές, Σάββατο, Κυριακή, Αργίες")
        }
    }

    func testUnknownVocabularyIsAValueProblem() throws {
        XCTAssertThrowsError(try Normalizer(.terms(vocabulary: "months", output: "codes"), fieldNames: [], vocabularies: vocabularies())) { error in
            guard let problem = error as? ValueProblem else { return XCTFail("got \(error)") }
            XCTAssertEqual(problem.message, "no vocabulary named \"months\"; vocabularies: days")
        }
    }

    func testNormalizerSpecDecoding() throws {
        func decode(_ value: JSONValue) throws -> NormalizerSpec { try value.decode(NormalizerSpec.self, codingPath: []) }
        XCTAssertEqual(try decode(.object(["terms": .string("days")])), .terms(vocabulary: "days", output: "codes"))
        XCTAssertEqual(try decode(.object(["terms": .string("days"), "output": .string("mask")])), .terms(vocabulary: "days", output: "mask"))
        XCTAssertThrowsError(try decode(.object(["terms": .string("days"), "output": .string("bits")]))) { error in
            guard case DecodingError.dataCorrupted(let context) = error else { return XCTFail("got \(error)") }
            XCTAssertEqual(context.debugDescription, "expected \"codes\" or \"mask\", found \"bits\"")
        }
        XCTAssertEqual(try decode(.object(["minutesAfter": .string("from")])), .minutesAfter(field: "from", overnightBefore: "04:00"))
        XCTAssertEqual(try decode(.object(["minutesAfter": .string("from"), "overnightBefore": .string("05:30")])),
                       .minutesAfter(field: "from", overnightBefore: "05:30"))
    }

    // MARK: The minutesAfter normalizer

    private func until(_ from: String?, _ until: String?, overnightBefore: String = "04:00") throws -> String? {
        try apply(.minutesAfter(field: "from", overnightBefore: overnightBefore), until,
                  fields: ["line", "from", "until"], values: ["1.1", from, until])
    }

    func testMinutesAfterAStart() throws {
        XCTAssertEqual(try until("06:20", "07:00"), "420")
        XCTAssertEqual(try until("21:00", "22:40"), "1360")
        XCTAssertEqual(try until("07:00", "24:00"), "1440")
        XCTAssertEqual(try until("6.20", "7.05"), "425")
        XCTAssertNil(try until("06:00", nil))
    }

    func testOvernightEndRunsPastMidnight() throws {
        XCTAssertEqual(try until("23:00", "00:30"), "1470")
        XCTAssertEqual(try until("22:00", "03:59"), "1679")
        XCTAssertEqual(try until("23:30", "00:00"), "1440")
        XCTAssertEqual(try until("22:00", "04:30", overnightBefore: "05:00"), "1710")
    }

    func testEndBeforeStartThatIsNotOvernightIsATimeOrderProblem() throws {
        XCTAssertThrowsError(try until("13:00", "12:00")) { error in
            guard let problem = error as? ValueProblem else { return XCTFail("got \(error)") }
            XCTAssertEqual(problem.code, "value.time-order")
            XCTAssertEqual(problem.message, "the period ends at 12:00, not after it starts at 13:00; only an end before 04:00 may run past midnight")
        }
        // An end equal to the start is not after it.
        XCTAssertThrowsError(try until("08:00", "08:00")) { XCTAssertEqual(($0 as? ValueProblem)?.code, "value.time-order") }
        // 04:00 itself is not before 04:00.
        XCTAssertThrowsError(try until("22:00", "04:00")) { XCTAssertEqual(($0 as? ValueProblem)?.code, "value.time-order") }
        XCTAssertThrowsError(try until("22:00", "04:30")) { error in
            XCTAssertEqual((error as? ValueProblem)?.message,
                           "the period ends at 04:30, not after it starts at 22:00; only an end before 04:00 may run past midnight")
        }
    }

    func testMalformedTimesAreValueProblems() throws {
        XCTAssertThrowsError(try until("06:00", "7 pm")) { error in
            XCTAssertEqual((error as? ValueProblem)?.message, "\"7 pm\" is not a time; expected HH:MM")
            XCTAssertEqual((error as? ValueProblem)?.code, "value")
        }
        XCTAssertThrowsError(try until("25:00", "07:00")) { error in
            XCTAssertEqual((error as? ValueProblem)?.message, "\"25:00\" is not a time of day (hours 00–24, minutes 00–59)")
        }
        XCTAssertThrowsError(try until(nil, "07:00")) { error in
            XCTAssertEqual((error as? ValueProblem)?.message, "\"\" is not a time; expected HH:MM")
        }
    }

    func testMinutesAfterNamingAnUnknownField() throws {
        XCTAssertThrowsError(try Normalizer(.minutesAfter(field: "start", overnightBefore: "04:00"), fieldNames: ["from", "until"],
                                            vocabularies: [:])) { error in
            XCTAssertEqual((error as? ValueProblem)?.message, "the reader has no field \"start\"; fields: from, until")
        }
    }

    func testBadOvernightBefore() throws {
        XCTAssertThrowsError(try Normalizer(.minutesAfter(field: "from", overnightBefore: "4am"), fieldNames: ["from"], vocabularies: [:])) { error in
            XCTAssertEqual((error as? ValueProblem)?.message, "overnightBefore must be a time like 04:00, not \"4am\"")
        }
    }
}
