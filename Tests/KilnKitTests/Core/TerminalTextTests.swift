import XCTest
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

/// `TerminalText`: control characters, bidirectional overrides and workflow commands in human-readable output.
final class TerminalTextTests: XCTestCase {
    func testEscapeMakesOneVisibleLine() {
        XCTAssertEqual(TerminalText.escape("a\nb\r\tc\u{1B}[31m\u{7F}\u{9B}\u{202E}\u{0}"), #"a\nb\r\tc\u{1B}[31m\u{7F}\u{9B}\u{202E}\u{0}"#)
        XCTAssertEqual(TerminalText.escape("Πάτρα — ok"), "Πάτρα — ok")
    }

    func testInvisibleCharactersAreShownEscapedInTextButKeptInJSON() {
        XCTAssertEqual(TerminalText.escape("a\u{2028}b\u{2029}c\u{200B}d\u{FEFF}e"), #"a\u{2028}b\u{2029}c\u{200B}d\u{FEFF}e"#)
        XCTAssertEqual(TerminalText.sanitize("line\u{2028}break\n"), #"line\u{2028}break"# + "\n")
        XCTAssertEqual(JSONText.escaped("a\u{2028}b\u{200B}"), "a\u{2028}b\u{200B}", "JSON keeps them as text")
    }

    func testSanitizeKeepsLinesAndNeutralisesWorkflowCommands() {
        let output = "built\n  ::error file=a::x\n::set-output name=a::b\n##[group]x\n\tnot::a command\u{1B}[0m\n"
        XCTAssertEqual(TerminalText.sanitize(output),
                       "built\n  \\::error file=a::x\n\\::set-output name=a::b\n\\##[group]x\n\tnot::a command\\u{1B}[0m\n")
        XCTAssertEqual(TerminalText.sanitize("::error::x\u{1B}\n", workflowCommands: true), "::error::x\\u{1B}\n")
    }

    func testDisplayLineEscapesTheFileAndTheMessage() {
        let diagnostic = Diagnostic(code: "value", severity: .error, message: "found \"1\n::error::x\"",
                                    provenance: Provenance(file: "a\u{1B}.txt", line: 3))
        XCTAssertEqual(diagnostic.displayLine, #"a\u{1B}.txt:3: error: found "1\n::error::x" [value]"#)
    }
}
