import Foundation
import XCTest

/// `kiln export` end to end: the legacy text files come back byte for byte.
final class ExportCommandTests: CLITestCase {
    let legacyFiles = ["StopsUTF8.txt", "linesutf8.txt", "lines_stopsutf8.txt", "stops_linesutf8.txt",
                       "StartingPoints.txt", "Routes_UTF8.txt", "Timetables_UTF8.txt"]

    func testLegacyTextRoundTripIsByteIdentical() throws {
        try copy("raw/patras", to: "raw/patras")
        XCTAssertEqual(try kiln("build", "raw/patras", "--quiet").status, 0)
        let run = try kiln("export", "legacy-text", "build/patras.sqlite", "--out", "legacy")
        XCTAssertEqual(run.status, 0, run.stderr)
        for name in legacyFiles {
            let original = try Data(contentsOf: file("raw/patras/" + name))
            let exported = try Data(contentsOf: file("legacy/" + name))
            XCTAssertEqual(exported, original, "\(name) differs after the round trip")
        }
        XCTAssertTrue(run.stderr.contains("wrote legacy/Timetables_UTF8.txt"), run.stderr)
    }

    func testExplicitManifestOption() throws {
        try copy("raw/patras", to: "elsewhere/patras")
        XCTAssertEqual(try kiln("build", "elsewhere/patras", "--out", "b.sqlite", "--quiet").status, 0)
        let run = try kiln("export", "legacy-text", "b.sqlite", "--out", "out", "--manifest", "elsewhere/patras")
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(try Data(contentsOf: file("out/Routes_UTF8.txt")),
                       try Data(contentsOf: file("elsewhere/patras/Routes_UTF8.txt")))
    }

    func testUnknownExportIsAUsageError() throws {
        try copy("raw/patras", to: "raw/patras")
        XCTAssertEqual(try kiln("build", "raw/patras", "--quiet").status, 0)
        let run = try kiln("export", "netex", "build/patras.sqlite", "--out", "x")
        XCTAssertEqual(run.status, 64)
        XCTAssertTrue(run.stderr.hasPrefix("Error: the manifest declares no export \"netex\"; exports: legacy-text, gtfs"), run.stderr)
    }

    func testNotASQLiteFileIsRefusedInOneSentence() throws {
        try "this is not a database".write(to: file("fake.sqlite"), atomically: true, encoding: .utf8)
        let run = try kiln("export", "legacy-text", "fake.sqlite", "--out", "x")
        XCTAssertEqual(run.status, 1)
        XCTAssertTrue(run.stderr.hasPrefix("Error: "), run.stderr)
        XCTAssertTrue(run.stderr.contains("is not an SQLite database"), run.stderr)
    }

    func testMissingOutIsAUsageError() throws {
        let run = try kiln("export", "legacy-text", "b.sqlite")
        XCTAssertEqual(run.status, 64)
        XCTAssertTrue(run.stderr.hasPrefix("Error: missing --out DIR"), run.stderr)
    }

    func testOutMayHoldOtherFilesButMayNotBeAnEmptyString() throws {
        try copy("raw/patras", to: "raw/patras")
        XCTAssertEqual(try kiln("build", "raw/patras", "--quiet").status, 0)
        try FileManager.default.createDirectory(at: file("legacy"), withIntermediateDirectories: true)
        try Data("mine\n".utf8).write(to: file("legacy/notes.txt"))
        let run = try kiln("export", "legacy-text", "build/patras.sqlite", "--out", "legacy")
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(try Data(contentsOf: file("legacy/notes.txt")), Data("mine\n".utf8), "another file in DIR is kept")
        for name in legacyFiles { XCTAssertEqual(try Data(contentsOf: file("legacy/" + name)), try Data(contentsOf: file("raw/patras/" + name)), name) }
        let empty = try kiln("export", "legacy-text", "build/patras.sqlite", "--out", "")
        XCTAssertEqual(empty.status, 64)
        XCTAssertEqual(empty.stderr, "Error: --out needs a path, not an empty string\nUsage: kiln export NAME BUNDLE --out DIR [--manifest M]\n")
        XCTAssertTrue(try kiln("export", "--help").stdout.contains("DIR may already hold other files, which are left as they are; it may not be an\nempty string (--out \"\"), the pipeline folder or a file."))
    }
}
