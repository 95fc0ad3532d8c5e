import Foundation
import KilnKit
import XCTest
@testable import kiln

/// `ExitStatus` is the one list of exit statuses: the reference's table, the manual page and the interruption
/// handler are held to it here.
final class ExitStatusTests: CLITestCase {
    /// The rows of the table in docs/reference/commands.md that follows the `| status | meaning |` header.
    private func referenceRows() throws -> [(status: Int32, meaning: String)] {
        let reference = try String(contentsOf: CLITestCase.repositoryRoot.appendingPathComponent("docs/reference/commands.md"), encoding: .utf8)
        let lines = reference.components(separatedBy: "\n")
        let header = try XCTUnwrap(lines.firstIndex(of: "| status | meaning |"), "docs/reference/commands.md has the table of exit statuses")
        return try lines[(header + 2)...].prefix { $0.hasPrefix("|") }.map { line in
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            XCTAssertEqual(cells.count, 2, line)
            let number = cells[0].replacingOccurrences(of: "**", with: "")
            return (try XCTUnwrap(Int32(number), line), cells.count > 1 ? cells[1] : "")
        }
    }

    func testTheReferenceTableListsExactlyTheExitStatuses() throws {
        let rows = try referenceRows()
        XCTAssertEqual(rows.map(\.status), ExitStatus.allCases.map(\.rawValue), "the statuses, in order")
        XCTAssertEqual(rows.map(\.meaning), ExitStatus.allCases.map(\.meaning), "what each means, as ExitStatus.meaning says")
    }

    func testTheManualPageListsEveryStatus() throws {
        let run = try kiln("help", "--man")
        XCTAssertEqual(run.status, ExitStatus.success.rawValue)
        let section = try XCTUnwrap(run.stdout.components(separatedBy: "\n.SH EXIT STATUS\n").dropFirst().first?
            .components(separatedBy: "\n.SH ").first)
        let listed = section.components(separatedBy: "\n").filter { $0.hasPrefix(".B ") }.map { $0.dropFirst(3) }
        XCTAssertEqual(listed.map(String.init), ExitStatus.allCases.map { "\($0.rawValue)" })
    }

    func testEachHandledSignalExitsWith128PlusItsNumber() {
        for signal in Interruption.signals {
            XCTAssertEqual(signal.status.rawValue, 128 + signal.number, signal.name)
        }
        XCTAssertEqual(Set(Interruption.signals.map(\.status)), [.hangUp, .interrupted, .terminated])
    }

    func testEachKindOfFailureHasItsStatus() {
        XCTAssertEqual(ExitStatus(.usage("u")), .usage)
        XCTAssertEqual(ExitStatus(.validation("v")), .failed)
        XCTAssertEqual(ExitStatus(.io("i")), .io)
        XCTAssertEqual(ExitStatus(.manifest(ManifestIssue(file: "kiln.json5", line: 1, keyPath: "tables", message: "m"))), .usage)
    }
}
