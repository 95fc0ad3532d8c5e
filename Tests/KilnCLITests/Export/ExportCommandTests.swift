import Foundation
import XCTest

/// `kiln export` end to end: the legacy text files come back byte for byte.
final class ExportCommandTests: CLITestCase {
    let legacyFiles = ["StopsUTF8.txt", "linesutf8.txt", "lines_stopsutf8.txt", "stops_linesutf8.txt",
                       "StartingPoints.txt", "Routes_UTF8.txt", "Timetables_UTF8.txt"]


    /// A pipeline folder for BUNDLE means its manifest and build/<bundle>.sqlite, for every export as for room:
    /// `export swift .` from inside the folder was an I/O error (a folder is no bundle).
    func testEveryExportTakesThePipelineFolderForTheBundle() throws {
        try copy("raw/patras", to: "patras")
        XCTAssertEqual(try kiln("build", "patras", "--quiet").status, 0)
        for name in ["swift", "docs", "datasette", "gtfs"] {
            let fromFolder = try kiln("export", name, "patras", "--out", "folder-\(name)")
            XCTAssertEqual(fromFolder.status, 0, "\(name): \(fromFolder.stderr)")
            let fromBundle = try kiln("export", name, "build/patras.sqlite", "--manifest", "patras", "--out", "bundle-\(name)")
            XCTAssertEqual(fromBundle.status, 0, "\(name): \(fromBundle.stderr)")
            let files = try FileManager.default.contentsOfDirectory(atPath: file("folder-\(name)").path).sorted()
            XCTAssertEqual(files, try FileManager.default.contentsOfDirectory(atPath: file("bundle-\(name)").path).sorted(), name)
            for entry in files where !entry.hasSuffix(".zip") {
                var isFolder: ObjCBool = false
                if FileManager.default.fileExists(atPath: file("folder-\(name)/\(entry)").path, isDirectory: &isFolder), isFolder.boolValue { continue }
                XCTAssertEqual(try Data(contentsOf: file("folder-\(name)/\(entry)")), try Data(contentsOf: file("bundle-\(name)/\(entry)")), "\(name): \(entry)")
            }
        }
        // From inside the pipeline folder, as `.`: its build/patras.sqlite.
        XCTAssertEqual(try kiln(in: file("patras"), ["build", ".", "--quiet"]).status, 0)
        let dot = try kiln(in: file("patras"), ["export", "swift", ".", "--out", "../dot-swift"])
        XCTAssertEqual(dot.status, 0, dot.stderr)
        XCTAssertTrue(FileManager.default.fileExists(atPath: file("dot-swift/PatrasBundle.swift").path))
    }
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
        XCTAssertEqual(run.stderr, "Error: raw/patras/kiln.json5 declares no export \"netex\"; exports: legacy-text, gtfs, swift, datasette, docs, room; declare it under exports, or take another manifest's exports with exportsFrom: \"../other/kiln.json5\"\nUsage: kiln export NAME BUNDLE --out DIR [--manifest M] [--package PACKAGE] [--date YYYY-MM-DD] [--sql-seconds S]\n")
    }

    func testTheWebPipelineTakesTheExportsOfPatras() throws {
        try copy("raw/patras", to: "raw/patras")
        try copy("raw/patras-web", to: "raw/patras-web")
        XCTAssertEqual(try kiln("build", "raw/patras-web", "--quiet").status, 0)
        let legacy = try kiln("export", "legacy-text", "build/patras-web.sqlite", "--out", "legacy")
        XCTAssertEqual(legacy.status, 0, legacy.stderr)
        // The web pages hold the same rows as the text files: exported as text, they are those files again.
        for name in legacyFiles {
            XCTAssertEqual(try Data(contentsOf: file("legacy/" + name)), try Data(contentsOf: file("raw/patras/" + name)), name)
        }
        let gtfs = try kiln("export", "gtfs", "build/patras-web.sqlite", "--out", "gtfs")
        XCTAssertEqual(gtfs.status, 0, gtfs.stderr)
        XCTAssertTrue(FileManager.default.fileExists(atPath: file("patras-gtfs.zip").path))
    }

    func testExportsFromMistakesPointAtTheKey() throws {
        try copy("raw/patras", to: "raw/patras")
        XCTAssertEqual(try kiln("build", "raw/patras", "--quiet").status, 0)
        let manifest = try String(contentsOf: file("raw/patras/kiln.json5"), encoding: .utf8)
        try writePipeline("bare", manifest: manifest.replacingOccurrences(of: #"bundle: "patras","#, with: #"bundle: "patras", exportsFrom: "../missing/kiln.json5","#))
        let missing = try kiln("export", "gtfs", "build/patras.sqlite", "--out", "x", "--manifest", "bare")
        XCTAssertEqual(missing.status, 64)
        XCTAssertTrue(missing.stderr.hasPrefix("Error: \(shown(file("bare/kiln.json5"))):4: manifest error at exportsFrom: cannot take the exports of ../missing/kiln.json5: no pipeline at "), missing.stderr)

        try writePipeline("twice", manifest: manifest.replacingOccurrences(of: #"bundle: "patras","#, with: #"bundle: "patras", exportsFrom: "../raw/patras/kiln.json5","#))
        let twice = try kiln("export", "gtfs", "build/patras.sqlite", "--out", "x", "--manifest", "twice")
        XCTAssertEqual(twice.status, 64)
        XCTAssertTrue(twice.stderr.contains("manifest error at exportsFrom: export \"legacy-text\" is declared here and in ../raw/patras/kiln.json5: rename or remove one"), twice.stderr)

        try writePipeline("chain", manifest: #"{ bundle: "patras", schemaVersion: 1, exportsFrom: "../twice/kiln.json5", tables: [{ name: "t", columns: [{ name: "a", type: "text" }] }] }"#)
        let chain = try kiln("export", "gtfs", "build/patras.sqlite", "--out", "x", "--manifest", "chain")
        XCTAssertEqual(chain.status, 64)
        XCTAssertTrue(chain.stderr.contains("manifest error at exportsFrom: ../twice/kiln.json5 takes its exports from ../raw/patras/kiln.json5 itself; name the manifest that declares them"), chain.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: file("x").path), "a refused export wrote something")
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
        XCTAssertEqual(empty.stderr, "Error: --out needs a path, not an empty string\nUsage: kiln export NAME BUNDLE --out DIR [--manifest M] [--package PACKAGE] [--date YYYY-MM-DD] [--sql-seconds S]\n")
        XCTAssertTrue(try kiln("export", "--help").stdout.contains("DIR may already hold other files, which are left as they are; it may not be an\nempty string (--out \"\"), the pipeline folder or a file."))
    }
}
