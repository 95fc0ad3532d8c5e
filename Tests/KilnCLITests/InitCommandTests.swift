import Foundation
import KilnTestSupport
import XCTest

/// `kiln init DIR [INPUT…]`: the manifest it writes builds at once, and the bundle passes `kiln check`, for the
/// samples' semicolon files, tab- and comma-separated text, a Windows-1252 file, a GTFS feed (the one kiln export
/// gtfs writes from the Patras bundle) and AC Transit's real GTFS routes; nothing is lost on the way.
final class InitCommandTests: CLITestCase {
    /// Inits, builds and checks `folder`; returns the manifest's text and the build's summary.
    private func initBuildAndCheck(_ folder: String, _ inputs: String...) throws -> (manifest: String, summary: String) {
        let initRun = try kiln(["init", folder] + inputs)
        XCTAssertEqual(initRun.status, 0, initRun.stderr)
        XCTAssertTrue(initRun.stderr.hasPrefix("wrote \(folder)/kiln.json5"), initRun.stderr)
        let build = try kiln("build", folder)
        XCTAssertEqual(build.status, 0, build.stderr)
        XCTAssertTrue(build.stderr.contains("diagnostics: 0 errors"), build.stderr)
        let check = try kiln("check", "build/\(folder).sqlite", "--manifest", folder)
        XCTAssertEqual(check.status, 0, check.stdout + check.stderr)
        return (try String(contentsOf: file("\(folder)/kiln.json5"), encoding: .utf8), build.stderr)
    }

    /// The records of a file: its non-blank lines, less a header.
    private func records(_ path: String, header: Bool) throws -> Int {
        let lines = try String(contentsOf: file(path), encoding: .utf8).split(whereSeparator: \.isNewline).filter { !$0.allSatisfy(\.isWhitespace) }
        return lines.count - (header ? 1 : 0)
    }

    func testSemicolonTabCommaAndWindows1252FilesBuildAtOnce() throws {
        try FileManager.default.createDirectory(at: file("mixed"), withIntermediateDirectories: true)
        for name in ["StopsUTF8.txt", "linesutf8.txt"] {
            try FileManager.default.copyItem(at: CLITestCase.repositoryRoot.appendingPathComponent("raw/patras/" + name), to: file("mixed/" + name))
        }
        // The stops again, tab-separated with a header, and a comma-separated file in Windows-1252.
        let stops = try String(contentsOf: file("mixed/StopsUTF8.txt"), encoding: .utf8).split(whereSeparator: \.isNewline)
        let tabbed = ["name\tcode\tlongitude\tlatitude"] + stops.map { $0.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: "\t") }
        try (tabbed.joined(separator: "\n") + "\n").write(to: file("mixed/stops.tsv"), atomically: true, encoding: .utf8)
        try XCTUnwrap("name,city\nCafé Müller,Zürich\nBäckerei Köln,Köln\n".data(using: .windowsCP1252)).write(to: file("mixed/cafes.csv"))
        let (manifest, summary) = try initBuildAndCheck("mixed")
        XCTAssertTrue(manifest.contains(#"separator: ";""#) && manifest.contains(#"separator: "\t""#) && manifest.contains(#"encoding: "windows-1252""#), manifest)
        // Stop codes keep their leading zero (text) and are the key; line ids 6.1 and 6.10 stay apart (text).
        XCTAssertTrue(manifest.contains(#"{ name: "field2", type: "text", notNull: true },"#), manifest)
        XCTAssertTrue(manifest.contains(#"primaryKey: ["field2"],"#), manifest)
        XCTAssertTrue(manifest.contains(#"{ name: "code", type: "text", notNull: true },"#), manifest)
        XCTAssertTrue(manifest.contains(#"{ name: "latitude", type: "real", notNull: true },"#), manifest)
        XCTAssertTrue(manifest.contains(#"primaryKey: ["code"],"#), manifest)
        // Every record is a row.
        XCTAssertTrue(summary.contains("stopsutf8  \(try records("mixed/StopsUTF8.txt", header: false)) rows"), summary)
        XCTAssertTrue(summary.contains("linesutf8  \(try records("mixed/linesutf8.txt", header: false)) rows"), summary)
        XCTAssertTrue(summary.contains("stops      \(try records("mixed/stops.tsv", header: true)) rows"), summary)
        XCTAssertTrue(summary.contains("cafes      2 rows"), summary)
    }

    func testAGTFSFeedGetsItsKeysAndTheReferencesItsRowsKeep() throws {
        try copy("raw/patras", to: "patras")
        XCTAssertEqual(try kiln("build", "patras", "--quiet").status, 0)
        XCTAssertEqual(try kiln("export", "gtfs", "build/patras.sqlite", "--manifest", "patras", "--out", "feed").status, 0)
        let (manifest, summary) = try initBuildAndCheck("feed")
        XCTAssertTrue(manifest.contains("(a GTFS feed)"), manifest)
        XCTAssertTrue(manifest.contains(#"primaryKey: ["trip_id", "stop_sequence"],"#), manifest)
        XCTAssertTrue(manifest.contains(#"{ name: "stop_id", type: "text", notNull: true, references: "stops.stop_id" },"#), manifest)
        XCTAssertTrue(manifest.contains(#"{ name: "trip_id", type: "text", notNull: true, references: "trips.trip_id" },"#), manifest)
        XCTAssertTrue(manifest.contains(#"{ name: "route_id", type: "text", notNull: true, references: "routes.route_id" },"#), manifest)
        XCTAssertTrue(summary.contains("stop_times      \(try records("feed/stop_times.txt", header: true)) rows"), summary)
        // AC Transit's real routes and agency (quoted CSV with a header), without the fixture's own manifest.
        try copy("Tests/Fixtures/real/actransit-gtfs", to: "actransit")
        try FileManager.default.removeItem(at: file("actransit/kiln.json5"))
        let (actransit, routes) = try initBuildAndCheck("actransit")
        XCTAssertTrue(actransit.contains(#"quote: "\"""#), actransit)
        XCTAssertTrue(routes.contains("routes  \(try records("actransit/routes.txt", header: true)) rows"), routes)
    }

    func testWhatInitRefuses() throws {
        try FileManager.default.createDirectory(at: file("empty"), withIntermediateDirectories: true)
        var run = try kiln("init", "empty")
        XCTAssertEqual(run.status, 64)
        XCTAssertTrue(run.stderr.hasPrefix("Error: no delimited input (.csv, .tsv, .txt) in empty; name the inputs after DIR"), run.stderr)
        try "a,b\n1,2\n".write(to: file("outside.csv"), atomically: true, encoding: .utf8)
        run = try kiln("init", "empty", "outside.csv")
        XCTAssertEqual(run.status, 64)
        XCTAssertTrue(run.stderr.hasPrefix("Error: outside.csv is outside empty: copy it into the folder"), run.stderr)
        try "a,b\n1,2\n3\n".write(to: file("empty/ragged.csv"), atomically: true, encoding: .utf8)
        run = try kiln("init", "empty")
        XCTAssertEqual(run.status, 64)
        XCTAssertTrue(run.stderr.contains("ragged.csv is not delimited text kiln init can sketch: ragged.csv:3: error: expected 2 fields"), run.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: file("empty/kiln.json5").path), "nothing was written")
        try "a,b\n1,2\n".write(to: file("empty/ragged.csv"), atomically: true, encoding: .utf8)
        XCTAssertEqual(try kiln("init", "empty").status, 0)
        let written = try Data(contentsOf: file("empty/kiln.json5"))
        run = try kiln("init", "empty")
        XCTAssertEqual(run.status, 64)
        XCTAssertTrue(run.stderr.hasPrefix("Error: empty/kiln.json5 is already there: kiln init writes a first manifest only"), run.stderr)
        XCTAssertEqual(try Data(contentsOf: file("empty/kiln.json5")), written)
    }
}
