import Foundation
import XCTest

/// `kiln extract --fields` and the table's width: the fields asked for, in their order; on a terminal the table fits
/// it (cut cells end in `…`, said once), and nothing is cut in JSON or through a pipe unless `--width` asks.
final class ExtractTableCommandTests: CLITestCase {
    private let listings = ["extract", "guide.listing", "raw/itravel/itravel-export.xml", "--manifest", "raw/itravel"]
    private let timetable = ["extract", "timetables", "web/timetables/line-1.1.html", "--manifest", "web"]

    private func json(_ run: Run) throws -> [String: Any] {
        XCTAssertEqual(run.status, 0, run.stderr)
        return try XCTUnwrap(JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
    }

    /// The table's lines: header, dashes and one per record (up to the record count).
    private func tableLines(_ output: String) -> [String] {
        Array(output.components(separatedBy: "\n").prefix { !$0.hasSuffix(" records") && !$0.hasSuffix(" record") })
    }

    /// Each row's cells, cut at the columns the dashes line marks.
    private func cells(_ lines: [String]) -> [[String]] {
        let dashes = Array(lines[1])
        var columns: [Range<Int>] = [], start: Int?
        for (offset, character) in (dashes + [" "]).enumerated() {
            if character == "-", start == nil { start = offset }
            if character == " ", let begin = start { columns.append(begin..<offset); start = nil }
        }
        return lines.enumerated().filter { $0.offset != 1 }.map { _, line in
            let characters = Array(line)
            return columns.enumerated().map { index, range in
                let end = index == columns.count - 1 ? characters.count : min(range.upperBound, characters.count)
                return range.lowerBound < characters.count ? String(characters[range.lowerBound..<end]).trimmingCharacters(in: .whitespaces) : ""
            }
        }
    }

    func testFieldsChoosesTheColumnsAndTheirOrder() throws {
        try copy("raw/patras-web", to: "web")
        let whole = try json(try kiln(timetable + ["--format", "json"]))
        let chosen = try json(try kiln(timetable + ["--format", "json", "--fields", "every,line"]))
        XCTAssertEqual(chosen["fields"] as? [String], ["every", "line"])
        let all = try XCTUnwrap(whole["records"] as? [[String: Any]]), some = try XCTUnwrap(chosen["records"] as? [[String: Any]])
        XCTAssertEqual(some.count, all.count)
        XCTAssertGreaterThan(all.count, 3)
        for (full, part) in zip(all, some) {
            XCTAssertEqual(Set(part.keys), ["_file", "_line", "every", "line"])
            for key in part.keys { XCTAssertEqual(part[key] as? NSObject, full[key] as? NSObject, key) }
        }
        XCTAssertEqual(chosen["unmatched"] as? NSArray, whole["unmatched"] as? NSArray, "the missed lines are still shown")
        let table = try kiln(timetable + ["--fields", "every,line"])
        XCTAssertEqual(table.status, 0, table.stderr)
        let rows = cells(tableLines(table.stdout))
        XCTAssertEqual(rows[0], ["file:line", "every", "line"])
        XCTAssertEqual(rows.dropFirst().map { [$0[1], $0[2]] }, all.map { [$0["every"] as? String ?? "", $0["line"] as? String ?? ""] })
        XCTAssertTrue(table.stdout.contains("\n1 unmatched candidate line:\n"), table.stdout)
    }

    func testAnUnknownFieldIsAUsageErrorThatListsTheFields() throws {
        try copy("raw/patras-web", to: "web")
        let fields = try XCTUnwrap(try json(try kiln(timetable + ["--format", "json"]))["fields"] as? [String])
        let usage = "Usage: kiln extract SOURCE[.KIND] FILE... [--manifest M] [--format table|json] [--fields A,B] [--width N]\n"
        let cases: [(String, String)] = [
            ("line,stop", "--fields: unknown field \"stop\"; the fields of timetables.record are: \(fields.joined(separator: ", "))"),
            ("line,line", "--fields: \"line\" is given twice; give it once"),
            ("line,", "--fields needs field names separated by commas, not \"line,\""),
        ]
        for (given, message) in cases {
            let run = try kiln(timetable + ["--fields", given])
            XCTAssertEqual(run.status, 64, given)
            XCTAssertEqual(run.stdout, "", given)
            XCTAssertEqual(run.stderr, "Error: " + message + "\n" + usage, given)
        }
    }

    func testWidthCutsTheWidestColumnsAndSaysSoOnce() throws {
        try copy("raw/patras-web", to: "web")
        let whole = try kiln(timetable)
        let cut = try kiln(timetable + ["--width", "70"])
        XCTAssertEqual(cut.status, 0, cut.stderr)
        let wholeLines = tableLines(whole.stdout), cutLines = tableLines(cut.stdout)
        XCTAssertGreaterThan(wholeLines.map(\.count).max() ?? 0, 70, "the test needs a table wider than 70")
        XCTAssertEqual(cutLines.count, wholeLines.count)
        XCTAssertTrue(cutLines.allSatisfy { $0.count <= 70 }, cut.stdout)
        var marked = 0
        for (full, part) in zip(cells(wholeLines), cells(cutLines)) {
            XCTAssertEqual(part[0], full[0], "file:line is kept whole")
            for (whole, shown) in zip(full, part) where shown != whole {
                XCTAssertTrue(shown.hasSuffix("…") && whole.hasPrefix(String(shown.dropLast())), "\(shown) of \(whole)")
                marked += 1
            }
        }
        XCTAssertGreaterThan(marked, 0)
        XCTAssertEqual(cut.stdout.components(separatedBy: "cells cut to fit 70 columns end in …").count, 2, "said once")
        let notice = "(cells cut to fit 70 columns end in …; --fields A,B shows fewer fields, --width 0 every cell whole)\n"
        XCTAssertEqual(cut.stdout.components(separatedBy: "\n9 records\n" + notice).last, whole.stdout.components(separatedBy: "\n9 records\n").last,
                       "the count, then the notice; the missed lines are not cut")
        // A table that fits is not touched, and 0 means no limit.
        XCTAssertEqual(try kiln(timetable + ["--width", "500"]).stdout, whole.stdout)
        XCTAssertEqual(try kiln(timetable + ["--width", "0"]).stdout, whole.stdout)
    }

    func testNothingIsCutThroughAPipeOrInJSON() throws {
        try copy("raw/itravel", to: "raw/itravel")
        let plain = try kiln(listings)
        XCTAssertGreaterThan(tableLines(plain.stdout).map(\.count).max() ?? 0, 900, "the itravel listings are the wide table")
        XCTAssertFalse(plain.stdout.contains("cells cut to fit"))
        let narrow = try program(CLITestCase.executable.path, listings, environment: ["COLUMNS": "40"])
        XCTAssertEqual(narrow.stdout, plain.stdout, "COLUMNS counts only on a terminal")
    }

    /// Runs kiln on a pseudo-terminal (`script`), with `setup` before it in the shell; returns the output, \r\n → \n.
    private func onTerminal(_ setup: String, _ arguments: [String]) throws -> String {
        let command = ([CLITestCase.executable.path] + arguments).map { "'\($0)'" }.joined(separator: " ")
        let run = try program("/usr/bin/script", ["-qec", "\(setup); \(command)", "/dev/null"])
        XCTAssertEqual(run.status, 0, run.stdout)
        return run.stdout.replacingOccurrences(of: "\r\n", with: "\n")
    }

    func testOnATerminalTheTableFitsItsWidth() throws {
        try copy("raw/itravel", to: "raw/itravel")
        let fields = ["--fields", "name,type,lat,long,description"]
        let plain = try kiln(listings + fields)
        XCTAssertGreaterThan(tableLines(plain.stdout).map(\.count).max() ?? 0, 120)
        for (setup, width) in [("export COLUMNS=90", 90), ("unset COLUMNS; stty cols 72", 72)] {
            let output = try onTerminal(setup, listings + fields)
            let lines = tableLines(output)
            XCTAssertEqual(lines.count, tableLines(plain.stdout).count, setup)
            XCTAssertTrue(lines.allSatisfy { $0.count <= width }, "\(setup):\n\(output)")
            XCTAssertTrue(output.contains("(cells cut to fit \(width) columns end in …"), output)
        }
        // The JSON is the same on a terminal as through a pipe.
        let json = try onTerminal("export COLUMNS=40", listings + fields + ["--format", "json"])
        XCTAssertEqual(json, try kiln(listings + fields + ["--format", "json"]).stdout)
    }

    func testWidthNeedsANumberAndTheTable() throws {
        try copy("raw/patras-web", to: "web")
        for (arguments, message) in [(["--width", "wide"], "--width needs a number of columns (0: no limit), not \"wide\""),
                                     (["--width", "-3"], "--width needs a number of columns (0: no limit), not \"-3\""),
                                     (["--width", "80", "--format", "json"], "--width applies to the table; --format json is never cut")] {
            let run = try kiln(timetable + arguments)
            XCTAssertEqual(run.status, 64, arguments.joined(separator: " "))
            XCTAssertTrue(run.stderr.hasPrefix("Error: " + message + "\nUsage: kiln extract"), run.stderr)
        }
    }
}
