import Foundation
import XCTest
import KilnTestSupport
import KilnC
import KilnKit

/// Issue 31, item 10 through the `kiln` binary: each input that was quadratic or unbounded builds to a clear finding
/// naming the file and line (or passes whole), and the records before it ship. No test asserts a time.
final class LinearReadersCommandTests: CLITestCase {
    private func findings(_ report: String) throws -> [[String: Any]] {
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: file(report))) as? [String: Any])
        return object["diagnostics"] as? [[String: Any]] ?? []
    }

    private func counts(_ report: String) throws -> [String: Any] {
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: file(report))) as? [String: Any])
        return object["counts"] as? [String: Any] ?? object
    }

    private func rows(_ bundle: String, _ sql: String) throws -> [[String]] {
        let database = try Database(path: file(bundle).path, mode: .readOnly)
        return try database.rows(sql).map { $0.values.map { $0.textValue ?? "NULL" } }
    }

    /// The records `kiln extract` reads from `path` with the manifest's source `source` (`s.kind` for one kind).
    private func extract(_ source: String, _ path: String, manifest: String) throws -> [[String: Any]] {
        let run = try kiln("extract", source, path, "--manifest", manifest, "--format", "json")
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any], run.stderr)
        return object["records"] as? [[String: Any]] ?? []
    }

    private func put(_ data: Data, _ path: String) throws {
        let url = file(path)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try data.write(to: url)
    }

    func testJSONDeepFieldShipsWholeAndALongStringIsAFindingAfterTheRecordsBeforeIt() throws {
        try writePipeline("j", manifest: """
            { bundle: "j", schemaVersion: 1,
              tables: [{ name: "t", columns: [{ name: "id", type: "integer" }, { name: "v", type: "text" }] }],
              sources: [{ name: "s", format: "json", path: "*.json", options: { records: "*", fields: { id: "id", v: "v" } },
                          into: "t", columns: { id: "id", v: "v" } }] }
            """)
        let deep = String(repeating: "[", count: 50_000) + "7" + String(repeating: "]", count: 50_000)
        try put(Data("[{\"id\":1,\"v\":\(deep)}]".utf8), "j/a.json")
        var long = Data("[{\"id\":2,\"v\":\"kept\"},\n{\"id\":3,\"v\":\"".utf8)
        long.append(Data(repeating: UInt8(ascii: "x"), count: 17 << 20))
        long.append(Data("\"},\n{\"id\":4}]".utf8))
        try put(long, "j/b.json")
        let run = try kiln("build", "j", "--out", "j.sqlite")
        XCTAssertEqual(run.status, 1, run.stderr)
        XCTAssertTrue(run.stdout.contains("json.too-long") || run.stderr.contains("json.too-long"), run.stdout + run.stderr)
        XCTAssertEqual(try extract("s", "j/a.json", manifest: "j").map { $0["v"] as? String }, [deep])
        XCTAssertEqual(try extract("s", "j/b.json", manifest: "j").map { "\($0["id"] ?? "-")|\($0["v"] ?? "-")" }, ["2|kept"])
        let found = try findings("j.report.json")
        XCTAssertEqual(found.map { [$0["code"] as? String, $0["file"] as? String, ($0["line"] as? Int).map(String.init)] },
                       [["json.too-long", "b.json", "2"]])
    }

    func testAProgressiveJPEGOfThousandsOfBrokenScansIsCorruptAtOnce() throws {
        // A progressive JPEG (Pillow) with 38 000 empty DC scans appended: libjpeg warns at the first.
        let script = """
            import io, sys
            from PIL import Image
            image = Image.new('RGB', (2000, 2000), (120, 60, 30))
            out = io.BytesIO(); image.save(out, 'JPEG', progressive=True, quality=50); data = out.getvalue()
            end = data.rindex(b'\\xff\\xd9')
            scan = b'\\xff\\xda\\x00\\x08\\x01\\x01\\x00\\x00\\x00\\x00'
            open(sys.argv[1], 'wb').write(data[:end] + scan * 38000 + data[end:])
            """
        try FileManager.default.createDirectory(at: file("p/photos"), withIntermediateDirectories: true)
        try runOracle(script, [file("p/photos/scans.jpg").path])
        try put(try Data(contentsOf: CLITestCase.repositoryRoot.appendingPathComponent("Tests/Fixtures/real/libjpeg-turbo-testimages/testorig.jpg")),
                "p/photos/plain.jpg")
        try writePipeline("p", manifest: """
            { bundle: "photos", schemaVersion: 1,
              tables: [{ name: "photo", columns: [{ name: "name", type: "text" }, { name: "width", type: "integer" }] }],
              sources: [{ name: "photos", format: "files", path: "photos/*", into: "photo", columns: { name: "name", width: "width" } }] }
            """)
        let run = try kiln("build", "p", "--out", "p.sqlite")
        XCTAssertEqual(run.status, 1, run.stderr)
        let found = try findings("p.report.json")
        XCTAssertEqual(found.map { $0["code"] as? String }, ["image.corrupt"])
        XCTAssertEqual(found.first?["file"] as? String, "photos/scans.jpg")
        XCTAssertTrue((found.first?["message"] as? String)?.contains("Corrupt JPEG data") == true, "\(found)")
    }

    func testAValidJPEGOfMoreThanAHundredScansIsNotDecodedPastThem() throws {
        // 110 valid scans: two jpegtran scan scripts (at most 100 scans each) over one image, the second's AC bands
        // spliced after the first's. djpeg decodes it whole, and refuses it with -maxscans 100.
        let script = LinearReadersCommandTests.spliceScript
        try FileManager.default.createDirectory(at: file("s/photos"), withIntermediateDirectories: true)
        let image = file("s/photos/scans.jpg")
        try runOracle(script, [image.path])
        XCTAssertEqual(try status("djpeg", ["-outfile", "/dev/null", image.path]), 0)
        XCTAssertNotEqual(try status("djpeg", ["-maxscans", "100", "-outfile", "/dev/null", image.path]), 0)
        try writePipeline("s", manifest: """
            { bundle: "photos", schemaVersion: 1,
              tables: [{ name: "photo", columns: [{ name: "name", type: "text" }, { name: "width", type: "integer" }] }],
              sources: [{ name: "photos", format: "files", path: "photos/*", into: "photo", columns: { name: "name", width: "width" } }] }
            """)
        let run = try kiln("build", "s", "--out", "s.sqlite")
        XCTAssertEqual(run.status, 1, run.stderr)
        let found = try findings("s.report.json")
        XCTAssertEqual(found.map { $0["code"] as? String }, ["image.corrupt"])
        XCTAssertEqual(found.first?["message"] as? String,
                       "scans.jpg is not a sound JPEG image: more than 100 scans (a progressive JPEG has about ten); not decoded further")
    }

    /// The exit status of `command arguments…` (a tool on PATH).
    private func status(_ command: String, _ arguments: [String]) throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [command] + arguments
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus
    }

    private static let spliceScript = #"""
import subprocess, sys, tempfile, os, random
from PIL import Image
def script(dc_full, bands):
    s = ['0: 0-0, 0, 10;'] + ['0: 0-0, %d, %d;' % (a, a - 1) for a in range(10, 0, -1)] if dc_full else ['0: 0-0, 0, 0;']
    for k in bands:
        s.append('0: %d-%d, 0, 10;' % (k, k)); s += ['0: %d-%d, %d, %d;' % (k, k, a, a - 1) for a in range(10, 0, -1)]
    return '\n'.join(s)
def scans_end(data, start):
    i = start
    while True:
        i = data.index(b'\xff', i)
        if data[i + 1] != 0 and not (0xD0 <= data[i + 1] <= 0xD7): return i
        i += 2
work = tempfile.mkdtemp()
random.seed(1); image = Image.new('L', (64, 64)); image.putdata([random.randrange(256) for _ in range(4096)])
image.save(os.path.join(work, 'g.jpg'), quality=90)
outs = []
for name, dc, bands in [('a', True, range(1, 5)), ('b', False, range(5, 10))]:
    open(os.path.join(work, name + '.txt'), 'w').write(script(dc, bands))
    subprocess.run(['jpegtran', '-scans', os.path.join(work, name + '.txt'), '-outfile', os.path.join(work, name + '.jpg'), os.path.join(work, 'g.jpg')], check=True)
    outs.append(open(os.path.join(work, name + '.jpg'), 'rb').read())
a, b = outs
first = b.index(b'\xff\xda')
tail = b[scans_end(b, first + 2):b.rindex(b'\xff\xd9')]
open(sys.argv[1], 'wb').write(a[:a.rindex(b'\xff\xd9')] + tail + b'\xff\xd9')
"""#

    /// Runs a Python program of the oracles' environment (Pillow) with `arguments`.
    private func runOracle(_ program: String, _ arguments: [String]) throws {
        let process = Process()
        process.executableURL = try PythonOracle.interpreter()
        process.arguments = ["-c", program] + arguments
        try process.run()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0)
    }

    func testMarkupWithAnElementOfTooManyAttributesKeepsWhatCameBefore() throws {
        let attributes = (0..<5000).map { "a\($0)=\"v\"" }.joined(separator: " ")
        try put(Data("<root>\n<item id=\"1\"/>\n<item id=\"2\" \(attributes)/>\n<item id=\"3\"/>\n</root>\n".utf8), "m/in.xml")
        try put(Data("<html><body><table>\n<tr><td>one</td></tr>\n<tr \(attributes)><td>two</td></tr>\n</table></body></html>\n".utf8), "m/in.html")
        try writePipeline("m", manifest: """
            { bundle: "m", schemaVersion: 1,
              tables: [{ name: "x", columns: [{ name: "id", type: "text" }] }, { name: "h", columns: [{ name: "c", type: "text" }] }],
              sources: [{ name: "x", format: "xml", path: "in.xml", options: { record: "item", fields: { id: "@id" } }, into: "x", columns: { id: "id" } },
                        { name: "h", format: "html", path: "in.html", options: { records: { css: "tr" }, fields: { c: { css: "td" } } },
                          into: "h", columns: { c: "c" } }] }
            """)
        let run = try kiln("build", "m", "--out", "m.sqlite")
        XCTAssertEqual(run.status, 1, run.stderr)
        XCTAssertEqual(try extract("x", "m/in.xml", manifest: "m").map { $0["id"] as? String }, ["1"])
        XCTAssertEqual(try extract("h", "m/in.html", manifest: "m").map { $0["c"] as? String }, ["one"])
        let found = try findings("m.report.json").map { "\($0["code"] as? String ?? ""):\($0["file"] as? String ?? ""):\($0["line"] as? Int ?? 0)" }
        XCTAssertEqual(found.sorted(), ["html.malformed:in.html:3", "xml.malformed:in.xml:3"])
    }

    func testAThousandSourcesBuildWithEveryRow() throws {
        let count = TestTier.size(1000, fast: 200)
        var sources: [String] = []
        for index in 0..<count {
            try put(Data("\(index)\n".utf8), "many/in/f\(index).txt")
            sources.append(#"{ name: "s\#(index)", format: "delimited", path: "in/f\#(index).txt", options: { fields: ["id"] }, into: "t", columns: { id: "id" } }"#)
        }
        try writePipeline("many", manifest: """
            { bundle: "many", schemaVersion: 1, tables: [{ name: "t", columns: [{ name: "id", type: "integer" }] }],
              sources: [\(sources.joined(separator: ",\n"))] }
            """)
        let run = try kiln("build", "many", "--out", "many.sqlite")
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(try rows("many.sqlite", "SELECT count(*), count(DISTINCT id), min(id), max(id) FROM t"), [["\(count)", "\(count)", "0", "\(count - 1)"]])
    }

    func testTheRegexBudgetIsAnErrorNamingTheLinesNotExamined() throws {
        let line = String(repeating: "a", count: 28) + "b\n"
        try put(Data((String(repeating: line, count: 2000) + "aaa\n").utf8), "r/in.txt")
        try writePipeline("r", manifest: """
            { bundle: "r", schemaVersion: 1, limits: { regexSecondsPerFile: 0.05 },
              tables: [{ name: "t", columns: [{ name: "a", type: "text" }] }],
              sources: [{ name: "s", format: "text", path: "in.txt", options: { extract: { row: "^(?<a>(a+)+)$", candidate: "a" } },
                          into: "t", columns: { a: "a" } }] }
            """)
        let run = try kiln("build", "r", "--out", "r.sqlite")
        XCTAssertEqual(run.status, 1, run.stderr)
        let budget = try XCTUnwrap(try findings("r.report.json").first { $0["code"] as? String == "regex.budget" })
        let message = try XCTUnwrap(budget["message"] as? String)
        let skipped = try XCTUnwrap(message.firstMatch(of: /lines (\d+)–2001 \((\d+) lines\) were not examined/), message)
        XCTAssertEqual(budget["file"] as? String, "in.txt")
        XCTAssertEqual(budget["line"] as? Int, Int(skipped.1))
        XCTAssertEqual(Int(skipped.2), 2001 - (Int(skipped.1) ?? 0) + 1)
        // The last line would have matched: it was not examined, and the finding says so.
        XCTAssertEqual(try extract("s", "r/in.txt", manifest: "r").count, 0)
    }

    func testARuleMessageCarryingFiveMegabytesIsCutInTheReport() throws {
        try put(Data(("1\t" + String(repeating: "v", count: 5_000_000) + "\n2\tshort\n").utf8), "q/in.txt")
        try writePipeline("q", manifest: """
            { bundle: "q", schemaVersion: 1,
              tables: [{ name: "t", columns: [{ name: "id", type: "integer" }, { name: "v", type: "text" }] }],
              sources: [{ name: "s", format: "delimited", path: "in.txt", options: { separator: "\\t", fields: ["id", "v"] }, into: "t", columns: { id: "id", v: "v" } }],
              rules: [{ kind: "sql", code: "big", severity: "warning", sql: "SELECT id, v FROM t", message: "row {id} holds {v}" }] }
            """)
        let run = try kiln("build", "q", "--out", "q.sqlite")
        XCTAssertEqual(run.status, 0, run.stderr)
        let found = try findings("q.report.json").filter { $0["code"] as? String == "big" }
        XCTAssertEqual(found.count, 2)
        let messages = found.compactMap { $0["message"] as? String }
        XCTAssertTrue(messages.contains("row 2 holds short"), "\(messages.map { $0.prefix(40) })")
        let cut = try XCTUnwrap(messages.first { $0.hasPrefix("row 1 holds vvv") })
        XCTAssertEqual(cut.count, 1920 + " … (message cut: 1920 of its 5000012 characters are shown) … ".count)
        XCTAssertTrue(cut.contains(" … (message cut: 1920 of its 5000012 characters are shown) … "))
        XCTAssertLessThan(try Data(contentsOf: file("q.report.json")).count, 20_000)
        // The value itself ships whole.
        XCTAssertEqual(try rows("q.sqlite", "SELECT id, length(v) FROM t ORDER BY id"), [["1", "5000000"], ["2", "5"]])
    }

    func testACalendarOverItsOccurrenceBudgetIsAnErrorNamingTheFile() throws {
        var feed = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//kiln//test//EN\r\n"
        for index in 0..<3 {
            feed += "BEGIN:VEVENT\r\nUID:e\(index)@x\r\nDTSTAMP:20240101T000000Z\r\nDTSTART:20240101T0\(index)0000Z\r\nDURATION:PT1H\r\n"
                + "RRULE:FREQ=DAILY;COUNT=40\r\nSUMMARY:Event \(index)\r\nEND:VEVENT\r\n"
        }
        try put(Data((feed + "END:VCALENDAR\r\n").utf8), "c/cal.ics")
        try writePipeline("c", manifest: """
            { bundle: "c", schemaVersion: 1, limits: { occurrencesPerFile: 100 },
              tables: [{ name: "event", columns: [{ name: "uid", type: "text" }, { name: "n", type: "integer" }] },
                       { name: "o", columns: [{ name: "uid", type: "text" }, { name: "start", type: "text" }] }],
              sources: [{ name: "s", format: "ics", path: "cal.ics",
                          into: { event: { table: "event", columns: { uid: "uid", n: "occurrences" } },
                                  occurrence: { table: "o", columns: { uid: "event_uid", start: "start_utc" } } } }] }
            """)
        let run = try kiln("build", "c", "--out", "c.sqlite")
        XCTAssertEqual(run.status, 1, run.stderr)
        let occurrences = try extract("s.occurrence", "c/cal.ics", manifest: "c")
        var byEvent: [String: [String]] = [:]
        for occurrence in occurrences { byEvent[occurrence["event_uid"] as? String ?? "", default: []].append(occurrence["start_utc"] as? String ?? "") }
        XCTAssertEqual(byEvent.mapValues(\.count), ["e0@x": 40, "e1@x": 40, "e2@x": 20])
        XCTAssertEqual(byEvent["e2@x"]?.first, "2024-01-01T02:00:00Z")
        XCTAssertEqual(byEvent["e2@x"]?.last, "2024-01-20T02:00:00Z")
        // Every event ships, the third too.
        XCTAssertEqual(try extract("s.event", "c/cal.ics", manifest: "c").compactMap { $0["uid"] as? String }, ["e0@x", "e1@x", "e2@x"])
        let found = try findings("c.report.json")
        XCTAssertEqual(found.map { $0["code"] as? String }, ["ics.file-occurrences"])
        XCTAssertEqual(found.first?["file"] as? String, "cal.ics")
        XCTAssertEqual(found.first?["message"] as? String,
                       "the file gives more than 100 occurrences (limits.occurrencesPerFile): event \"Event 2\" (e2@x) ships only its first 20 of at least 21; "
                           + "100 occurrences shipped. Narrow the window or raise limits.occurrencesPerFile")
    }

    func testAWikitextPageOfManyFindingsCountsThemAll() throws {
        let count = 20_000
        try put(Data(String(repeating: "{{x\n", count: count).utf8), "w/Page.wikicode")
        try writePipeline("w", manifest: """
            { bundle: "w", schemaVersion: 1, tables: [{ name: "l", columns: [{ name: "name", type: "text" }] }],
              sources: [{ name: "s", format: "wikitext", path: "Page.wikicode", into: { listing: { table: "l", columns: { name: "name" } } } }] }
            """)
        let run = try kiln("build", "w", "--out", "w.sqlite", "--format", "json")
        XCTAssertEqual(run.status, 0, run.stderr)
        let found = try findings("w.report.json").filter { $0["code"] as? String == "wikitext.template" }
        XCTAssertEqual(found.count, 100)
        XCTAssertEqual(found.compactMap { $0["line"] as? Int }, Array(1...100))
        XCTAssertTrue(run.stdout.contains("\(count)"), String(run.stdout.prefix(2000)))
    }
}
