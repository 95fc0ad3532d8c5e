import Foundation
import XCTest
import KilnTestSupport
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

final class NormalizerTests: XCTestCase {
    /// Swift compares strings by canonical equivalence; these compare the exact scalars.
    private func scalars(_ text: String?) -> [UInt32]? { text.map { $0.unicodeScalars.map(\.value) } }

    private func apply(_ spec: NormalizerSpec, _ value: String?) throws -> String? {
        try Normalizer(spec, fieldNames: [], vocabularies: [:]).apply(value, record: Record(RecordKind(fields: []), line: 1))
    }

    // MARK: TextFolding

    func testFoldIgnoresCaseAndAccents() {
        XCTAssertEqual(scalars(TextFolding.fold("Πανεπιστήμιο")), scalars("πανεπιστημιο"))
        XCTAssertEqual(scalars(TextFolding.fold("ΠΑΝΕΠΙΣΤΗΜΙΟ")), scalars("πανεπιστημιο"))
        XCTAssertEqual(scalars(TextFolding.fold("πανεπιστημιο")), scalars("πανεπιστημιο"))
        XCTAssertEqual(scalars(TextFolding.fold("ΑΓΙΟΥ ΑΝΔΡΕΟΥ")), scalars(TextFolding.fold("Αγίου Ανδρέου")))
        XCTAssertEqual(scalars(TextFolding.fold("Αγίου Ανδρέου")), scalars("αγιου ανδρεου"))
    }

    func testFoldRemovesDialytika() {
        XCTAssertEqual(scalars(TextFolding.fold("Προϊστάμενος")), scalars("προισταμενοσ"))
        XCTAssertEqual(scalars(TextFolding.fold("ΐ")), scalars("ι"))
    }

    func testFoldWritesFinalSigmaAsSigma() {
        XCTAssertEqual(scalars(TextFolding.fold("Οδός")), scalars("οδοσ"))
        XCTAssertEqual(scalars(TextFolding.fold("ΟΔΟΣ")), scalars("οδοσ"))
        XCTAssertEqual(scalars(TextFolding.fold("Έλληνος Στρατιώτου")), scalars("ελληνοσ στρατιωτου"))
        XCTAssertFalse(TextFolding.fold("Αγίου Σπυρίδωνος").unicodeScalars.contains("ς"))
    }

    func testFoldComposesAndCollapsesSpaces() {
        // Decomposed ά (α + U+0301) folds like the composed one.
        XCTAssertEqual(scalars(TextFolding.fold("  Πλα\u{0301}τανος \u{00A0}\t Πάρκο ")), scalars("πλατανοσ παρκο"))
    }

    func testFoldOfLatinText() {
        XCTAssertEqual(TextFolding.fold("Café  RÉSUMÉ"), "cafe resume")
    }

    func testCollapseSpaces() {
        XCTAssertEqual(TextFolding.collapseSpaces("  Άνω \u{00A0}  Καστρίτσι\t\n"), "Άνω Καστρίτσι")
        XCTAssertEqual(TextFolding.collapseSpaces("one"), "one")
        XCTAssertEqual(TextFolding.collapseSpaces("   "), "")
        XCTAssertEqual(TextFolding.collapseSpaces(""), "")
    }

    func testNFCComposesDecomposedInput() {
        let decomposed = "Πα\u{0301}τρα" // α + combining acute
        XCTAssertEqual(decomposed.unicodeScalars.count, 6)
        let composed = TextFolding.nfc(decomposed)
        XCTAssertEqual(scalars(composed), [0x03A0, 0x03AC, 0x03C4, 0x03C1, 0x03B1])
        XCTAssertEqual(Array(composed.utf8), Array("Πάτρα".utf8))
        // Already composed text is unchanged.
        XCTAssertEqual(scalars(TextFolding.nfc("Πάτρα")), [0x03A0, 0x03AC, 0x03C4, 0x03C1, 0x03B1])
        // Ά written with the canonically equivalent U+1FBB becomes U+0386.
        XCTAssertEqual(scalars(TextFolding.nfc("\u{1FBB}")), [0x0386])
    }

    func testNaturalSortKey() {
        XCTAssertEqual(TextFolding.naturalSortKey("6.2"), "0000000006.0000000002")
        XCTAssertEqual(TextFolding.naturalSortKey("6.10"), "0000000006.0000000010")
        XCTAssertEqual(TextFolding.naturalSortKey("18.1"), "0000000018.0000000001")
        XCTAssertEqual(TextFolding.naturalSortKey("A7b"), "A0000000007b")
        XCTAssertEqual(TextFolding.naturalSortKey("007"), "0000000007")
        let ids = ["18.1", "6.10", "1.1", "6.2", "6.1", "2.10", "2.9"]
        XCTAssertEqual(ids.sorted { TextFolding.naturalSortKey($0) < TextFolding.naturalSortKey($1) },
                       ["1.1", "2.9", "2.10", "6.1", "6.2", "6.10", "18.1"])
        XCTAssertLessThan(TextFolding.naturalSortKey("6.2"), TextFolding.naturalSortKey("6.10"))
        XCTAssertLessThan(TextFolding.naturalSortKey("6.10"), TextFolding.naturalSortKey("18.1"))
    }

    // MARK: ClockTime

    func testClockTimeMinutes() {
        XCTAssertEqual(try ClockTime.minutes("6:20").get(), 380)
        XCTAssertEqual(try ClockTime.minutes("06:20").get(), 380)
        XCTAssertEqual(try ClockTime.minutes("6.20").get(), 380)
        XCTAssertEqual(try ClockTime.minutes(" 00:00 ").get(), 0)
        XCTAssertEqual(try ClockTime.minutes("23:59").get(), 1439)
        XCTAssertEqual(try ClockTime.minutes("24:00").get(), 1440)
    }

    /// GTFS times since the start of the service day, each as gtfs-kit's `timestr_to_seconds` reads it (the oracle
    /// runs in the oracles' Python); minutes only for whole minutes.
    func testGTFSServiceTimesAgreeWithGTFSKit() throws {
        let times = ["0:00:00", "6:00:00", "06:00:00", "7:05:00", "12:05:30", "23:59:59", "24:00:00", "25:10:00", "47:05:00", "100:00:01", " 8:10:00 "]
        let python = try PythonOracle.interpreter()
        let process = Process()
        process.executableURL = python
        process.arguments = ["-c", "import sys\nfrom gtfs_kit.helpers import timestr_to_seconds\nfor t in sys.argv[1:]: print(timestr_to_seconds(t))"] + times
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let printed = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).split(separator: "\n").map(String.init)
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0)
        XCTAssertEqual(times.map { (try? ClockTime.serviceSeconds($0).get()).map(String.init) ?? "?" }, printed)
        XCTAssertEqual(try ClockTime.serviceMinutes("25:10:00").get(), 1510)
        XCTAssertEqual(try ClockTime.serviceMinutes("7:05:00").get(), 425)
        for (text, message) in [("12:05:30", "\"12:05:30\" has 30 seconds, which minutes cannot hold; use gtfsSeconds"),
                                ("7:5:00", "\"7:5:00\" is not a GTFS time; expected H:MM:SS or HH:MM:SS (hours may pass 23)"),
                                ("7:05", "\"7:05\" is not a GTFS time; expected H:MM:SS or HH:MM:SS (hours may pass 23)"),
                                ("1000:00:00", "\"1000:00:00\" is not a GTFS time; expected H:MM:SS or HH:MM:SS (hours may pass 23)"),
                                ("25:60:00", "\"25:60:00\" is not a GTFS time (minutes and seconds 00–59)"),
                                ("-1:00:00", "\"-1:00:00\" is not a GTFS time; expected H:MM:SS or HH:MM:SS (hours may pass 23)")] {
            guard case .failure(let problem) = ClockTime.serviceMinutes(text) else { XCTFail(text); continue }
            XCTAssertEqual(problem.message, message)
        }
    }

    private func failure(_ text: String) -> String? {
        if case .failure(let problem) = ClockTime.minutes(text) { return problem.message }
        return nil
    }

    func testClockTimeFailures() {
        XCTAssertEqual(failure("25:99"), "\"25:99\" is not a time of day (hours 00–24, minutes 00–59)")
        XCTAssertEqual(failure("24:01"), "\"24:01\" is not a time of day (hours 00–24, minutes 00–59)")
        XCTAssertEqual(failure("12:60"), "\"12:60\" is not a time of day (hours 00–24, minutes 00–59)")
        XCTAssertEqual(failure("7:5"), "\"7:5\" is not a time; expected HH:MM")
        XCTAssertEqual(failure(""), "\"\" is not a time; expected HH:MM")
        XCTAssertEqual(failure("123:00"), "\"123:00\" is not a time; expected HH:MM")
        XCTAssertEqual(failure("6:20:00"), "\"6:20:00\" is not a time; expected HH:MM")
        XCTAssertEqual(failure("-1:00"), "\"-1:00\" is not a time; expected HH:MM")
        XCTAssertEqual(failure("+6:20"), "\"+6:20\" is not a time; expected HH:MM")
        XCTAssertEqual(failure("٦:٢٠"), "\"٦:٢٠\" is not a time; expected HH:MM")
    }

    /// Plain `HH:MM` text is read from its bytes; with spaces around it, by the general path: both agree on every
    /// text of up to five characters from digits, separators and a letter.
    func testClockTimeReadsPlainAndSpacedTimesAlike() {
        let alphabet = ["0", "1", "2", "4", "5", "9", ":", ".", "x", "٣"]
        var texts = [""]
        for _ in 1...5 { texts += texts.filter { $0.count == texts.last!.count }.flatMap { text in alphabet.map { text + $0 } } }
        var times = 0
        for text in Set(texts) {
            let plain = try? ClockTime.minutes(text).get(), spaced = try? ClockTime.minutes(" \(text)\t").get()
            XCTAssertEqual(plain, spaced, text)
            if plain != nil { times += 1 }
        }
        XCTAssertGreaterThan(times, 100)
    }

    func testClockTimeText() {
        XCTAssertEqual(ClockTime.text(1500), "01:00")
        XCTAssertEqual(ClockTime.text(380), "06:20")
        XCTAssertEqual(ClockTime.text(0), "00:00")
        XCTAssertEqual(ClockTime.text(1439), "23:59")
        XCTAssertEqual(ClockTime.text(1440), "24:00")
        XCTAssertEqual(ClockTime.text(1441), "00:01")
    }

    // MARK: Normalizer

    func testDecimal() throws {
        XCTAssertEqual(try apply(.named("decimal"), "38,25"), "38.25")
        XCTAssertEqual(try apply(.named("decimal"), " 21.72433 "), "21.72433")
        XCTAssertEqual(try apply(.named("decimal"), "38"), "38")
        XCTAssertNil(try apply(.named("decimal"), nil))
    }

    func testCapture() throws {
        XCTAssertEqual(try apply(.capture("^([0-9]+)"), "6.10"), "6")
        XCTAssertEqual(try apply(.capture(#"^[0-9]+\.([0-9]+)$"#), "6.10"), "10")
        // No match gives NULL.
        XCTAssertNil(try apply(.capture(#"^[0-9]+\.([0-9]+)$"#), "18"))
        // Without a group the whole match is kept.
        XCTAssertEqual(try apply(.capture("[0-9]{2}"), "ab123"), "12")
        // An optional group that did not take part gives NULL.
        XCTAssertNil(try apply(.capture("^a(b)?"), "ac"))
    }

    func testCaptureWithBadPatternThrows() {
        XCTAssertThrowsError(try Normalizer(.capture("(unclosed"), fieldNames: [], vocabularies: [:])) { error in
            XCTAssertTrue(error is RegexCompileError, "\(error)")
        }
    }

    func testEmptyToNull() throws {
        XCTAssertNil(try apply(.named("emptyToNull"), ""))
        XCTAssertEqual(try apply(.named("emptyToNull"), " "), " ")
        XCTAssertEqual(try apply(.named("emptyToNull"), "x"), "x")
        XCTAssertNil(try apply(.named("emptyToNull"), nil))
    }

    func testNamedSteps() throws {
        XCTAssertEqual(try apply(.named("trim"), " \t a b \n"), "a b")
        XCTAssertEqual(try apply(.named("lower"), "ΠΆΤΡΑ"), "πάτρα")
        XCTAssertEqual(try apply(.named("upper"), "abc"), "ABC")
        XCTAssertEqual(try apply(.named("minutes"), "06:20"), "380")
        XCTAssertEqual(try apply(.named("naturalSortKey"), "6.2"), "0000000006.0000000002")
        XCTAssertEqual(scalars(try apply(.named("fold"), "ΠΑΝΕΠΙΣΤΉΜΙΟ")), scalars("πανεπιστημιο"))
        XCTAssertEqual(try apply(.named("collapseSpaces"), " a   b "), "a b")
        XCTAssertEqual(scalars(try apply(.named("nfc"), "α\u{0301}")), [0x03AC])
    }

    func testMinutesStepThrowsValueProblem() {
        XCTAssertThrowsError(try apply(.named("minutes"), "25:99")) { error in
            XCTAssertEqual((error as? ValueProblem)?.message, "\"25:99\" is not a time of day (hours 00–24, minutes 00–59)")
        }
    }

    func testUnknownStepIsRefused() {
        XCTAssertThrowsError(try Normalizer(.named("titlecase"), fieldNames: [], vocabularies: [:])) { error in
            let message = (error as? ValueProblem)?.message ?? ""
            XCTAssertTrue(message.hasPrefix("unknown normalizer \"titlecase\"; expected one of: trim, collapseSpaces"), message)
        }
    }

    // MARK: ValueConversion

    private func convert(_ text: String, _ type: ColumnType) -> SQLValue? {
        try? ValueConversion.convert(text, to: type).get()
    }

    private func problem(_ text: String, _ type: ColumnType) -> String? {
        if case .failure(let problem) = ValueConversion.convert(text, to: type) { return problem.message }
        return nil
    }

    func testRealConversion() {
        XCTAssertEqual(convert("38.2336", .real), .real(38.2336))
        XCTAssertEqual(convert(" 21.5 ", .real), .real(21.5))
        XCTAssertEqual(convert("1e3", .real), .real(1000))
        XCTAssertEqual(problem("1e309", .real), "expected a decimal number, found \"1e309\"")
        XCTAssertEqual(problem("-1e309", .real), "expected a decimal number, found \"-1e309\"")
        XCTAssertEqual(problem("NaN", .real), "expected a decimal number, found \"NaN\"")
        XCTAssertEqual(problem("inf", .real), "expected a decimal number, found \"inf\"")
        XCTAssertEqual(problem("38,2x5", .real), "expected a decimal number, found \"38,2x5\"")
        XCTAssertEqual(problem("0x1p3", .real), "expected a decimal number, found \"0x1p3\"")
        XCTAssertEqual(problem("", .real), "expected a decimal number, found \"\"")
    }

    func testNegativeZeroBecomesZero() throws {
        guard case .real(let value) = try XCTUnwrap(convert("-0", .real)) else { return XCTFail("not a real") }
        XCTAssertEqual(value, 0)
        XCTAssertEqual(value.sign, .plus)
        guard case .real(let other) = try XCTUnwrap(convert("-0.0", .real)) else { return XCTFail("not a real") }
        XCTAssertEqual(other.sign, .plus)
    }

    func testTextIsKeptAsWritten() {
        XCTAssertEqual(convert("0123", .text), .text("0123"))
        XCTAssertEqual(convert(" 1e309 ", .text), .text(" 1e309 "))
    }

    func testIntegerConversion() {
        XCTAssertEqual(convert("0123", .integer), .integer(123))
        XCTAssertEqual(convert(" -5 ", .integer), .integer(-5))
        XCTAssertEqual(problem("12a", .integer), "expected a whole number, found \"12a\"")
        XCTAssertEqual(problem("1.5", .integer), "expected a whole number, found \"1.5\"")
        XCTAssertEqual(problem("99999999999999999999", .integer), "expected a whole number, found \"99999999999999999999\"")
        XCTAssertEqual(problem("", .integer), "expected a whole number, found \"\"")
    }

    func testBlobConversion() {
        XCTAssertEqual(convert("Aβ", .blob), .blob([0x41, 0xCE, 0xB2]))
    }
}
