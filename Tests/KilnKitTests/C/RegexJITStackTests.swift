import Foundation
import XCTest
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

/// Long lines through a pattern whose JIT code recurses once per repetition: the JIT's default 32 KiB stack ran out
/// at 900 characters ("JIT stack limit reached") where pcre2grep matches 5 000. Expected answers are Python's `re`.
final class RegexJITStackTests: XCTestCase {
    /// What Python's `re.fullmatch` says of `pattern` over each subject: "1" for a match, "0" for none.
    private func python(_ pattern: String, _ subjects: [String]) throws -> [String] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", "import re, sys\nfor line in sys.stdin.read().split('\\n'):\n    print(1 if re.fullmatch(sys.argv[1], line) else 0)",
                             pattern]
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        try input.fileHandleForWriting.write(contentsOf: Data(subjects.joined(separator: "\n").utf8))
        try input.fileHandleForWriting.close()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return text.split(separator: "\n").map(String.init)
    }

    func testLongLinesMatchAsAnotherEngineMatchesThem() throws {
        let pattern = try RegexPattern("^(a|b)*c$")
        let subjects = [900, 5_000, 50_000, 200_000].flatMap { length in
            [String(repeating: "ab", count: length / 2) + "c", String(repeating: "ab", count: length / 2) + "d"]
        }
        let expected = try python("(a|b)*c", subjects)
        XCTAssertEqual(expected.count, subjects.count)
        XCTAssertEqual(Set(expected), ["0", "1"], "the oracle answers both ways")
        for (subject, answer) in zip(subjects, expected) {
            XCTAssertEqual(try pattern.matches(subject) ? "1" : "0", answer, "\(subject.count) characters")
        }
    }

    func testTheMatchLimitStillStopsCatastrophicBacktracking() throws {
        let pattern = try RegexPattern("^(a+)+$", matchLimit: 100_000)
        XCTAssertThrowsError(try pattern.matches(String(repeating: "a", count: 40) + "b")) { error in
            XCTAssertTrue(error is RegexMatchError, "\(error)")
        }
    }
}
