import Foundation
import XCTest
import KilnKit

/// Every JSON Kiln prints or writes, with scraped text that holds control characters, C1 controls and bidirectional
/// overrides: Python's `json` module (an independent parser) reads each document, finds the value exactly as it was
/// scraped, and no byte a terminal would obey is left raw (before: `"ding\u0007\b\b\u{7F}"`, which is not JSON).
final class JSONOutputCommandTests: CLITestCase {
    /// The scraped value: BEL, two backspaces, DEL, CSI (C1), RIGHT-TO-LEFT OVERRIDE.
    private let hostile = "ding\u{07}\u{08}\u{08}\u{7F}\u{9B}\u{202E} end"

    /// A pipeline `name` shipping `lines` of `in.txt` into `t(v)`; with `pattern`, the column must match it.
    private func pipeline(_ name: String, lines: [String], pattern: Bool = false) throws {
        let folder = file(name)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let constraint = pattern ? #", pattern: "^[a-z]+$""# : ""
        try """
            { bundle: "j", schemaVersion: 1,
              tables: [{ name: "t", columns: [{ name: "v", type: "text"\(constraint) }], primaryKey: ["v"] }],
              sources: [{ name: "s", format: "delimited", path: "in.txt", options: { fields: ["v"] }, into: "t", columns: { v: "v" } }] }
            """.write(to: folder.appendingPathComponent("kiln.json5"), atomically: true, encoding: .utf8)
        try (lines.joined(separator: "\n") + "\n").write(to: folder.appendingPathComponent("in.txt"), atomically: true, encoding: .utf8)
    }

    /// What Python's `json.loads` makes of `document`: whether it parsed, whether one of its strings contains
    /// `value`, and whether the raw text holds a character a terminal obeys outside an escape.
    private func python(_ document: String, contains value: String) throws -> String {
        let script = """
            import json, sys
            raw = open(sys.argv[1], encoding="utf-8").read()
            value = bytes.fromhex(sys.argv[2]).decode("utf-8")
            strings = []
            def walk(node):
                if isinstance(node, dict):
                    for key, item in node.items(): strings.append(key); walk(item)
                elif isinstance(node, list):
                    for item in node: walk(item)
                elif isinstance(node, str): strings.append(node)
            walk(json.loads(raw))
            unsafe = any(ord(c) < 0x20 and c not in "\\n" or 0x7f <= ord(c) <= 0x9f or 0x202a <= ord(c) <= 0x202e or 0x2066 <= ord(c) <= 0x2069 for c in raw)
            print("parsed", any(value in s for s in strings), "unsafe" if unsafe else "clean")
            """
        let documentURL = file("document.json"), scriptURL = file("oracle.py")
        try document.write(to: documentURL, atomically: true, encoding: .utf8)
        try script.write(to: scriptURL, atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", scriptURL.path, documentURL.path, Data(value.utf8).map { String(format: "%02x", $0) }.joined()]
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return text.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    func testEveryJSONOutputParsesAndKeepsTheScrapedValue() throws {
        try pipeline("old", lines: ["plain"])
        try pipeline("new", lines: ["plain", hostile])
        try pipeline("strict", lines: ["plain", hostile], pattern: true)
        XCTAssertEqual(try kiln("build", "old", "--out", "old.sqlite", "--quiet").status, 0)
        let built = try kiln("build", "new", "--out", "new.sqlite", "--format", "json")
        XCTAssertEqual(built.status, 0, built.stderr)
        let failed = try kiln("build", "strict", "--out", "strict.sqlite", "--format", "json")
        XCTAssertEqual(failed.status, 1, "the pattern fails the build, and its message holds the value")

        let outputs: [(String, Run)] = [
            ("build --format json (a failed build's findings)", failed),
            ("check --format json", try kiln("check", "new.sqlite", "--manifest", "strict/kiln.json5", "--format", "json")),
            ("diff --format json", try kiln("diff", "old.sqlite", "new.sqlite", "--format", "json")),
            ("extract --format json", try kiln("extract", "s", "new/in.txt", "--manifest", "new/kiln.json5", "--format", "json")),
        ]
        for (name, run) in outputs {
            XCTAssertFalse(run.stdout.isEmpty, name)
            XCTAssertEqual(try python(run.stdout, contains: hostile), "parsed True clean", name)
        }
        let report = try String(contentsOf: file("strict.report.json"), encoding: .utf8)
        XCTAssertEqual(try python(report, contains: hostile), "parsed True clean", "the report file")
        XCTAssertEqual(try python(built.stdout, contains: "plain"), "parsed False clean", "a document without the value says so")
    }
}
