import Foundation
import XCTest
import KilnTestSupport
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

/// `TextFolding.nfc` and `fold` (over ICU) compared with the Foundation versions they replaced, and with Python's
/// `unicodedata` (scripts/oracles/text_fold.py), over every text value of the repository's real data and a
/// generated set of scripts, marks and text not in NFC.
final class TextFoldingOracleTests: KilnTestCase {
    /// The functions as they were before ICU: Foundation's composition and diacritic- and case-insensitive folding.
    enum FoundationFolding {
        static func nfc(_ text: String) -> String {
            text.utf8.allSatisfy { $0 < 0x80 } ? text : text.precomposedStringWithCanonicalMapping
        }

        static func fold(_ text: String) -> String {
            let folded = TextFolding.collapseSpaces(nfc(text).folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil))
            return folded.replacingOccurrences(of: "ς", with: "σ")
        }
    }

    /// What the Python oracle says of one text (see scripts/oracles/text_fold.py).
    struct PythonFolding {
        let reference: String, rule: String, nfc: String, known: Bool, divergent: Bool
    }

    private func scalars(_ text: String) -> String {
        text.unicodeScalars.map { String($0.value, radix: 16, uppercase: true) }.joined(separator: " ")
    }

    /// Every text of the real data: each line and each run between markup punctuation, of every text file under
    /// raw/, Tests/Fixtures/real/ and the shared data folder (when there is one). Sorted, without duplicates.
    static func realTexts() throws -> [String] {
        let root = KilnTestCase.repositoryRoot
        let folders = [root.appendingPathComponent("raw"), root.appendingPathComponent("Tests/Fixtures/real"),
                       root.deletingLastPathComponent().appendingPathComponent("shared/data")]
        var texts = Set<String>()
        for folder in folders {
            guard let files = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil) else { continue }
            for case let file as URL in files {
                guard let data = try? Data(contentsOf: file), !data.contains(0) else { continue }
                guard let text = String(data: data, encoding: .utf8) ?? String(data: data, encoding: .isoLatin1) else { continue }
                for line in text.split(whereSeparator: \.isNewline) {
                    texts.insert(String(line))
                    for run in line.split(whereSeparator: { "<>\"\t|=[]{}".contains($0) }) { texts.insert(String(run)) }
                }
            }
        }
        return texts.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }

    /// Greek (monotonic and polytonic), Latin with diacritics, Cyrillic, CJK, emoji, Hangul, Hebrew, Arabic, Indic
    /// and Thai marks, combining sequences, text not in NFC, and every letter of the Latin, Greek and Cyrillic
    /// blocks alone and under every combining diacritic.
    static func generatedTexts() -> [String] {
        var texts = [
            "Πανεπιστήμιο", "ΠΑΝΕΠΙΣΤΗΜΙΟ", "Προϊστάμενος", "ΐΰ", "Αγίου Σπυρίδωνος", "ΟΔΟΣ Έλληνος", "Ἀθῆναι ᾯ ᾳ ᾼ ῥ",
            "Příliš žluťoučký kůň úpěl ďábelské ódy", "Ångström Øresund Łódź Çà", "Straße STRASSE ẞ", "ﬁnance ﬀ ﬃ",
            "İstanbul ı I", "ǅ ǆ Ǆ ǈ", "Ёлка Йошкар-Ола й ў Ї", "東京都 日本語 中文", "👍🏽 👨‍👩‍👧 🇬🇷 ❤️",
            "한국어 서울", "\u{1112}\u{1161}\u{11AB}", "שָׁלוֹם", "عَرَبِيّ", "क़ ज़ \u{0915}\u{093C}", "ภาษาไทย ไม้เอก ก่",
            "e\u{0301}\u{0323}", "q\u{0307}", "\u{03B1}\u{0345}", "\u{0301}leading", "\u{0345}", " \u{0301}x",
            "\u{212B} \u{2126} \u{212A} \u{1FBB} \u{0344}", "Πα\u{0301}τρα", "A\u{030A}ngstro\u{0308}m",
            "a\u{20DD} b\u{0488}", "x\u{200C}y", "  tabs\tand\u{00A0}no-break \u{3000} ideographic \u{2003} ",
            "ﾀﾞ ｶﾞ", "ŉ ǰ ẖ ẚ", "ϐ ϑ ϕ ϖ ϰ ϱ ϵ", "ꭰ Ꭰ", "Ⓐ ⓐ", "𝐀 𝔄", "ｆｕｌｌ ｗｉｄｔｈ", "Ǳ ǲ ǳ",
            "ズ パ ゴ ば じ", "\u{30B9}\u{3099}", "Ελληνικά ΕΛΛΗΝΙΚΆ ελληνικα", "Český Krumlov ČESKÝ",
        ]
        let ranges: [ClosedRange<UInt32>] = [0xC0...0x24F, 0x370...0x3FF, 0x400...0x50F, 0x1E00...0x1EFF, 0x1F00...0x1FFF]
        for range in ranges {
            for value in range {
                guard let scalar = Unicode.Scalar(value) else { continue }
                texts.append(String(Character(scalar)))
            }
        }
        for base in ["a", "A", "z", "α", "Ω", "ι", "и", "Ж", " ", "日", "ש"] {
            for mark in UInt32(0x300)...0x36F {
                texts.append(base + String(Character(Unicode.Scalar(mark)!)))
            }
        }
        return texts
    }

    /// Every code point of planes 0–2 outside the surrogates and private use, alone (but U+FEFF, which JSON
    /// decoding drops).
    static func everyCodePoint() -> [String] {
        (UInt32(0x80)...0x2FFFF).compactMap { value in
            guard !(0xE000...0xF8FF).contains(value), value != 0xFEFF, let scalar = Unicode.Scalar(value) else { return nil }
            return String(Character(scalar))
        }
    }

    /// Runs the Python oracle over `texts`.
    private func python(_ texts: [String]) throws -> [PythonFolding] {
        let input = String(decoding: try JSONSerialization.data(withJSONObject: texts), as: UTF8.self)
        let output = try PythonOracle.run("text_fold.py", [], input: input)
        let rows = try XCTUnwrap(try JSONSerialization.jsonObject(with: output) as? [[Any]])
        XCTAssertEqual(rows.count, texts.count)
        return try rows.map { row in
            PythonFolding(reference: try XCTUnwrap(row[0] as? String), rule: try XCTUnwrap(row[1] as? String),
                          nfc: try XCTUnwrap(row[2] as? String), known: try XCTUnwrap(row[3] as? Bool),
                          divergent: try XCTUnwrap(row[4] as? Bool))
        }
    }

    private func same(_ a: String, _ b: String) -> Bool { a.utf8.elementsEqual(b.utf8) }

    func testRealDataIsThere() throws {
        let texts = try Self.realTexts()
        XCTAssertGreaterThan(texts.count, 5000)
        for sample in ["Πανεπιστήμιο", "Weißenburg", "ě"] { XCTAssertTrue(texts.contains { $0.contains(sample) }, sample) }
    }

    /// On the real data, byte for byte what Foundation gave: the bundles do not change.
    func testFoldAndNFCAsFoundationOnRealData() throws {
        var folds = 0
        for text in try Self.realTexts() {
            XCTAssertTrue(same(TextFolding.nfc(text), FoundationFolding.nfc(text)), "nfc of \(scalars(text))")
            let folded = TextFolding.fold(text), before = FoundationFolding.fold(text)
            XCTAssertTrue(same(folded, before), "fold of \(text): \(scalars(folded)), Foundation \(scalars(before))")
            if !same(folded, text) { folds += 1 }
        }
        XCTAssertGreaterThan(folds, 1000)
    }

    /// On generated text, what Foundation gave, but for characters newer than Foundation's tables (lower-case
    /// Cherokee folds to upper case since Unicode 8) and marks Foundation kept by accident of its cluster loop
    /// (a second combining diacritic on a Han or Hebrew letter, the spacing Greek accents U+1FCD–U+1FDF, which
    /// Python strips too).
    func testFoldAndNFCAsFoundationOnGeneratedText() throws {
        let ownWay: Set<String> = ["\u{1FCD}", "\u{1FCE}", "\u{1FCF}", "\u{1FDD}", "\u{1FDE}", "\u{1FDF}", "ꭰ Ꭰ",
                                   "日\u{0344}", "ש\u{0344}"]
        for text in Self.generatedTexts() {
            XCTAssertTrue(same(TextFolding.nfc(text), FoundationFolding.nfc(text)), "nfc of \(scalars(text))")
            let folded = TextFolding.fold(text), before = FoundationFolding.fold(text)
            if ownWay.contains(text) {
                XCTAssertFalse(same(folded, before), "fold of \(scalars(text)) now as Foundation's")
            } else {
                XCTAssertTrue(same(folded, before), "fold of \(scalars(text)): \(scalars(folded)), Foundation \(scalars(before))")
            }
        }
    }

    /// Against Python: `nfc` is unicodedata's NFC; `fold` is the documented rule over Python's database, and is
    /// reference.py's `fold` wherever the two do not differ by design (see `PythonFolding.divergent`).
    func testFoldAndNFCAsPython() throws {
        try TestTier.requireFull("the Python oracles")  // before the 1.1 M texts are made
        let texts = try Self.realTexts() + Self.generatedTexts() + Self.everyCodePoint()
        let answers = try python(texts)
        var checked = 0, divergent = 0
        for (text, answer) in zip(texts, answers) where answer.known {
            checked += 1
            let folded = TextFolding.fold(text)
            XCTAssertTrue(same(TextFolding.nfc(text), answer.nfc), "nfc of \(scalars(text))")
            XCTAssertTrue(same(folded, answer.rule), "fold of \(scalars(text)): \(scalars(folded)), Python \(scalars(answer.rule))")
            if answer.divergent {
                divergent += 1
            } else {
                XCTAssertTrue(same(folded, answer.reference), "fold of \(scalars(text)): \(scalars(folded)), reference.py \(scalars(answer.reference))")
            }
        }
        XCTAssertGreaterThan(checked, 100_000)
        XCTAssertLessThan(divergent, checked / 10)
    }

    /// Where Foundation (and now ICU) and reference.py disagree, Kiln keeps Foundation's answer: full case folding
    /// (ß and ẞ as ss, ligatures apart), and the marks of scripts other than Latin, Greek and Cyrillic (kana voicing,
    /// nukta, Hebrew points) kept.
    func testWhereFoundationAndPythonDisagreeFoundationWins() throws {
        let texts = ["Weißenburg", "STRASSE ẞ", "ﬁnance", "ズ パ", "क़", "שָׁלוֹם", "ϐ", "\u{0301}a"]
        let answers = try python(texts)
        for (text, answer) in zip(texts, answers) {
            let folded = TextFolding.fold(text)
            XCTAssertTrue(answer.divergent, text)
            XCTAssertFalse(same(folded, answer.reference), text)
            XCTAssertTrue(same(folded, FoundationFolding.fold(text)), text)
            XCTAssertTrue(same(folded, answer.rule), text)
        }
        XCTAssertEqual(TextFolding.fold("Weißenburg"), TextFolding.fold("WEISSENBURG"))
    }
}
