import Foundation
import XCTest
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild
import KilnTestSupport

/// `JSONText`, the one JSON string escaper: hostile text stays valid JSON that parses back to the same string, holds
/// no character a terminal obeys, and is the same bytes whether written by hand or through `KilnJSON`.
final class JSONTextTests: XCTestCase {
    /// Strings with every kind of character the escaper treats specially, and some it must leave alone.
    static let hostile = [
        "ding\u{07}\u{08}\u{08}\u{7F}", "csi\u{9B}31m", "\u{202E}reversed\u{202C}", "isolate\u{2066}x\u{2069}",
        "nul\u{0}tab\ttab", "quote\" back\\slash /slash", "line\nbreak\r\n", "\u{1B}[31mred\u{1B}[0m", "\u{85}next line",
        "Πάτρα — Κορίνθου", "emoji 🚌 and \u{2028}\u{2029} separators", "bom \u{FEFF} \u{200B}zero width", "",
    ]

    func testEveryStringParsesBackToItselfWithNoUnsafeCharacter() throws {
        for text in JSONTextTests.hostile {
            let json = JSONText.string(text)
            let parsed = try JSONSerialization.jsonObject(with: Data(json.utf8), options: .fragmentsAllowed) as? String
            XCTAssertEqual(parsed, text, json)
            XCTAssertFalse(json.unicodeScalars.contains(where: TerminalText.isUnsafe), json)
        }
    }

    func testTheEncoderAndTheHandWrittenTextAreTheSameBytes() throws {
        for text in JSONTextTests.hostile {
            let encoded = String(decoding: try KilnJSON.encode(["k": text]), as: UTF8.self)
            XCTAssertEqual(encoded, "{\n  \"k\" : " + JSONText.string(text) + "\n}", text.debugDescription)
        }
    }

    /// A report with its flat objects filled by `KilnJSON.encode(_:filling:)` against the same report through the
    /// encoder alone: random keys of hostile, non-ASCII and canonically equivalent text (the encoder orders keys by
    /// their UTF-8 bytes, not as Swift compares strings), empty objects, one entry, many.
    func testFillingFlatObjectsGivesTheEncodersBytes() throws {
        struct Report: Encodable {
            var name = "x\u{202E}y"
            var inputs: [String: String] = [:]
            var nested: [String: [String: Int]] = ["inputs": [:]]
            var sizes: [String: Int] = [:]
            var zlast = [1, 2]
        }
        let pieces = JSONTextTests.hostile + ["é", "e\u{301}", "Å", "A\u{30A}", "ß", "ς", "日", "10", "9", "/", "-", "A", "a"]
        var generator = SeededGenerator(seed: 0x150A)
        func key() -> String {
            (0..<Int.random(in: 1...3, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }.joined()
        }
        for round in 0..<200 {
            var full = Report()
            for _ in 0..<(round % 5 == 0 ? 0 : Int.random(in: 1...30, using: &generator)) {
                full.inputs[key()] = pieces.randomElement(using: &generator)!
            }
            for _ in 0..<(round % 7 == 0 ? 0 : Int.random(in: 1...30, using: &generator)) {
                full.sizes[key()] = Int.random(in: -5...1_000_000, using: &generator)
            }
            var rest = full
            rest.inputs = [:]
            rest.sizes = [:]
            let filled = try KilnJSON.encode(rest, filling: [("inputs", .strings(full.inputs)), ("sizes", .integers(full.sizes))])
            XCTAssertEqual(String(decoding: filled, as: UTF8.self), String(decoding: try KilnJSON.encode(full), as: UTF8.self), "round \(round)")
        }
        XCTAssertThrowsError(try KilnJSON.encode(Report(inputs: ["k": "v"]), filling: [("inputs", .strings([:]))]),
                             "a member that is not an empty object is not silently left as it was")
    }

    func testTheByteCheckAgreesWithTheCharacterRule() {
        // Every scalar from U+0000 to U+2FFF, alone and between Greek letters: the one-pass byte check says a string
        // needs escaping exactly when one of its characters is escaped.
        for value in UInt32(0)..<0x3000 {
            guard let scalar = Unicode.Scalar(value) else { continue }
            let text = "Πά" + String(Character(scalar)) + "τρα"
            let escapes = scalar.value < 0x20 || scalar == "\"" || scalar == "\\" || TerminalText.isUnsafe(scalar)
            XCTAssertEqual(JSONText.needsEscaping(text.utf8), escapes, "U+\(String(value, radix: 16))")
        }
    }

    func testTextWithoutSpecialCharactersIsUnchanged() throws {
        let plain = try KilnJSON.encode(["name": "Πάτρα 🚌 / ok"])
        XCTAssertEqual(JSONText.hardened(plain), plain)
        XCTAssertEqual(JSONText.escaped("Πάτρα 🚌 / ok"), "Πάτρα 🚌 / ok")
    }
}
