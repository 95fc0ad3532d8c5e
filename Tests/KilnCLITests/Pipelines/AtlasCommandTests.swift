import Foundation
import XCTest
import KilnC
import KilnKit
import KilnTestSupport

/// The mushroom atlas end to end: `kiln build raw/atlas` and `kiln check`, the Czech order compared with ICU's own
/// (PyICU), photo sizes with Pillow's, the legacy SQL compared with the pages, the empty `finds` table and its
/// CHECKs, and the broken fixture's findings.
final class AtlasCommandTests: CLITestCase {
    private func buildSample() throws -> Run {
        try copy("raw/atlas", to: "raw/atlas")
        return try kiln("build", "raw/atlas")
    }

    private func bundle() throws -> Database { try Database(path: file("build/atlas.sqlite").path, mode: .readOnly) }

    /// The report's findings as `file:line code`, files relative to the pipeline folder.
    private func findings(_ report: String) throws -> [String] {
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: file(report))) as? [String: Any]
        let diagnostics = json?["diagnostics"] as? [[String: Any]] ?? []
        return diagnostics.map { "\($0["file"] as? String ?? "-"):\($0["line"] as? Int ?? 0) \($0["code"] as? String ?? "?")" }
    }

    /// Runs an oracle of `scripts/oracles/` with the Python that `scripts/oracles/install` set up.
    private func oracle(_ script: String, _ arguments: [String], input: String = "") throws -> String {
        let python = try PythonOracle.interpreter()
        let process = Process()
        process.executableURL = python
        process.arguments = [CLITestCase.repositoryRoot.appendingPathComponent("scripts/oracles/\(script)").path] + arguments
        let stdin = Pipe(), stdout = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        try process.run()
        stdin.fileHandleForWriting.write(Data(input.utf8))
        try stdin.fileHandleForWriting.close()
        let output = stdout.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0, "\(script) failed (are the oracles installed? scripts/oracles/install)")
        return String(decoding: output, as: UTF8.self)
    }

    func testBuildAndCheckPass() throws {
        let run = try buildSample()
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertTrue(run.stderr.hasPrefix("""
            built build/atlas.sqlite (bundle atlas)
              mushroom  49 rows
              synonym   24 rows
              finds     0 rows
            size: 
            """), run.stderr)
        XCTAssertTrue(run.stderr.contains("\ndiagnostics: 0 errors, 4 warnings, 4 info\n"), run.stderr)
        let check = try kiln("check", "build/atlas.sqlite")
        XCTAssertEqual(check.status, 0, check.stdout + check.stderr)
        XCTAssertTrue(check.stdout.hasPrefix("check build/atlas.sqlite with raw/atlas/kiln.json5\n"), check.stdout)
        XCTAssertTrue(check.stdout.hasSuffix("passed: 0 errors, 0 warnings, 0 info\n"), check.stdout)
    }

    func testTwoBuildsGiveTheSameBytes() throws {
        XCTAssertEqual(try buildSample().status, 0)
        let first = try sha256("build/atlas.sqlite")
        XCTAssertEqual(try kiln("build", "raw/atlas", "--out", "build/again.sqlite").status, 0)
        XCTAssertEqual(try sha256("build/again.sqlite"), first)
    }

    func testLegacySQLAndPagesDisagreeOnTheseSpecies() throws {
        XCTAssertEqual(try buildSample().status, 0)
        // The differences SOURCES.md lists (made by scripts/atlas-data/generate.py).
        XCTAssertEqual(try findings("build/atlas.report.json").filter { $0.contains(" legacy.") }.sorted(), [
            "legacy/atlas.sql:11 legacy.status",
            "legacy/atlas.sql:39 legacy.season",
            "legacy/atlas.sql:77 legacy.status",
            "legacy/atlas.sql:95 legacy.only",
            "pages/fomes-fomentarius.html:9 legacy.missing",
            "pages/gyromitra-esculenta.html:9 legacy.missing",
            "pages/inosperma-erubescens.html:9 legacy.missing",
            "pages/trametes-versicolor.html:9 legacy.missing",
        ])
        let run = try kiln("build", "raw/atlas")
        for text in ["Hřib koloděj (Suillellus luridus): the legacy data says jedovatá, the page says jedlá",
                     "Čechratka podvinutá (Paxillus involutus): the legacy data says jedlá, the page says jedovatá",
                     "Hlíva ústřičná (Pleurotus ostreatus): the legacy data says months 10–3, the page 11–3",
                     "Lysohlávka kopinatá (Psilocybe semilanceata) is in the legacy data but has no page"] {
            XCTAssertTrue(run.stderr.contains(text), text + "\n" + run.stderr)
        }
        let lines = try String(contentsOf: file("raw/atlas/legacy/atlas.sql"), encoding: .utf8).components(separatedBy: "\n")
        XCTAssertTrue(lines[10].contains("'Hřib koloděj'") && lines[10].hasPrefix("INSERT"), "line 11 is the INSERT of hřib koloděj")
        XCTAssertTrue(lines[94].contains("'Psilocybe semilanceata'"), "line 95 is the INSERT of lysohlávka")
    }

    func testCzechOrderIsICUsOrder() throws {
        XCTAssertEqual(try buildSample().status, 0)
        let rows = try bundle().rows("SELECT status, name FROM mushroom ORDER BY status_order, name_key")
        XCTAssertEqual(rows.count, 49)
        let statuses = rows.map { $0["status"].textValue ?? "" }
        XCTAssertEqual(statuses, statuses.sorted { ["jedlá", "nejedlá", "jedovatá"].firstIndex(of: $0)! < ["jedlá", "nejedlá", "jedovatá"].firstIndex(of: $1)! })
        for status in ["jedlá", "nejedlá", "jedovatá"] {
            let names = rows.filter { $0["status"].textValue == status }.map { $0["name"].textValue ?? "" }
            let icu = try oracle("icu_sort.py", ["cs"], input: names.joined(separator: "\n") + "\n")
                .split(separator: "\n").map { String($0.split(separator: "\t")[0]) }
            XCTAssertEqual(names, icu, status)
        }
        let edible = rows.map { $0["name"].textValue ?? "" }
        XCTAssertLessThan(edible.firstIndex(of: "Hřib smrkový")!, edible.firstIndex(of: "Chřapáč kadeřavý")!)
        XCTAssertLessThan(edible.firstIndex(of: "Choroš šupinatý")!, edible.firstIndex(of: "Chřapáč kadeřavý")!)
    }

    func testPhotoSizesArePillows() throws {
        XCTAssertEqual(try buildSample().status, 0)
        let photos = try FileManager.default.contentsOfDirectory(atPath: file("raw/atlas/photos").path).sorted()
        XCTAssertEqual(photos.count, 49)
        let pillow = try oracle("images.py", ["read"] + photos.map { file("raw/atlas/photos/\($0)").path })
            .split(separator: "\n").map { $0.split(separator: "\t").map(String.init) }
        let shipped = try bundle().rows("SELECT photo, photo_width, photo_height FROM mushroom ORDER BY photo")
        XCTAssertEqual(shipped.map { [$0["photo"].textValue ?? "", "JPEG", $0["photo_width"].textValue ?? "", $0["photo_height"].textValue ?? ""] },
                       pillow)
    }

    func testFindsShipsEmptyAndItsChecksKeepTheAppsInsertsValid() throws {
        XCTAssertEqual(try buildSample().status, 0)
        let database = try Database(path: file("build/atlas.sqlite").path, mode: .readWrite)
        XCTAssertEqual(try database.rows("SELECT count(*) AS n FROM finds")[0]["n"], .integer(0))
        try database.execute("PRAGMA foreign_keys = ON")
        try database.execute("INSERT INTO finds (description, date, category, latin, latitude, longitude) "
                             + "VALUES ('Pod smrkem u cesty', '2026-09-12', 'mushroom', 'Boletus edulis', 49.2, 16.6)")
        try database.execute("INSERT INTO finds (description, date, category) VALUES ('Maliny u potoka', '2026-07-01', 'raspberries')")
        let invalid = ["INSERT INTO finds (description, date, category) VALUES ('x', '2026-07-01', 'apples')",
                       "INSERT INTO finds (description, date, category, latitude) VALUES ('x', '2026-07-01', 'elder', 91)",
                       "INSERT INTO finds (description, date, category, longitude) VALUES ('x', '2026-07-01', 'elder', -181)",
                       "INSERT INTO finds (date, category) VALUES ('2026-07-01', 'elder')",
                       "INSERT INTO finds (description, date, category, latin) VALUES ('x', '2026-07-01', 'mushroom', 'Boletus nonexistens')"]
        for statement in invalid {
            XCTAssertThrowsError(try database.execute(statement), statement)
        }
        XCTAssertEqual(try database.rows("SELECT count(*) AS n FROM finds")[0]["n"], .integer(2))
    }

    func testBrokenFixtureReportsEachFailureAtItsFileAndLine() throws {
        try copy("Tests/Fixtures/atlas-broken", to: "broken")
        try FileManager.default.copyItem(at: CLITestCase.repositoryRoot.appendingPathComponent("raw/atlas/kiln.json5"),
                                         to: file("broken/kiln.json5"))
        let run = try kiln("build", "broken", "--out", "build/broken.sqlite")
        XCTAssertEqual(run.status, 1, run.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: file("build/broken.sqlite").path))
        let found = Set(try findings("build/broken.report.json"))
        // Tests/Fixtures/atlas-broken/README.md lists these.
        for expected in ["pages/boletus-edulis.html:9 value.unknown-term",
                         "pages/amanita-phalloides.html:9 value.month",
                         "pages/lepista-nuda.html:5 encoding",
                         "pages/helvella-crispa.html:9 photo.missing",
                         "photos/Morchella_conica.jpg:1 photo.orphan",
                         "photos/Tylopilus_felleus.jpg:0 image.corrupt",
                         "legacy/atlas.sql:5 sql.statement",
                         "legacy/atlas.sql:7 sql.denied",
                         "legacy/atlas.sql:8 sql.denied",
                         "legacy/atlas.sql:9 value.unknown-term",
                         "legacy/atlas.sql:10 sql.statement"] {
            XCTAssertTrue(found.contains(expected), expected + "\n" + found.sorted().joined(separator: "\n"))
        }
        XCTAssertTrue(run.stderr.contains("\"léto a podzim\" is not a month or a range of months"), run.stderr)
        XCTAssertTrue(run.stderr.contains("Tylopilus_felleus.jpg is not a sound JPEG image"), run.stderr)
        XCTAssertTrue(run.stderr.contains("DROP TABLE is not allowed in a script read as data"), run.stderr)
    }

    func testUnknownCollationLocaleIsAManifestError() throws {
        let folder = try copy("raw/atlas", to: "raw/atlas")
        let manifest = folder.appendingPathComponent("kiln.json5")
        let text = try String(contentsOf: manifest, encoding: .utf8).replacingOccurrences(of: "{ collationKey: \"cs\" }", with: "{ collationKey: \"xx\" }")
        try text.write(to: manifest, atomically: true, encoding: .utf8)
        let run = try kiln("build", "raw/atlas")
        XCTAssertEqual(run.status, 64, run.stderr)
        XCTAssertTrue(run.stderr.contains("manifest error at sources[0].into.species.columns.name_key.normalize[2]: ICU has no collation for locale \"xx\""), run.stderr)
    }

    /// An app's copy of the bundle, with the user's finds in it.
    private func appCopy() throws -> URL {
        XCTAssertEqual(try buildSample().status, 0)
        let copy = file("app.sqlite")
        try FileManager.default.copyItem(at: file("build/atlas.sqlite"), to: copy)
        let database = try Database(path: copy.path, mode: .readWrite)
        for day in 1...3 {
            try database.execute("INSERT INTO finds (description, date, category) VALUES ('Borůvky', '2026-07-0\(day)', 'blueberries')")
        }
        try database.close()
        return copy
    }

    func testCheckAcceptsTheUsersRowsInAUserFilledTable() throws {
        _ = try appCopy()
        let run = try kiln("check", "app.sqlite")
        XCTAssertEqual(run.status, 0, run.stdout)
        XCTAssertTrue(run.stdout.contains("  metadata   passed (1 check)\n"), run.stdout)

        // Without userFilled, the user's rows contradict the recorded count.
        let manifest = file("raw/atlas/kiln.json5")
        let text = try String(contentsOf: manifest, encoding: .utf8).replacingOccurrences(of: "      userFilled: true,\n", with: "")
        try text.write(to: manifest, atomically: true, encoding: .utf8)
        let strict = try kiln("check", "app.sqlite")
        XCTAssertEqual(strict.status, 1, strict.stdout)
        XCTAssertTrue(strict.stdout.contains("kiln_metadata records 0 rows for table finds, but the table holds 3"), strict.stdout)
    }

    func testDiffDoesNotCountTheUsersRowsAsRemoved() throws {
        _ = try appCopy()
        let run = try kiln("diff", "app.sqlite", "build/atlas.sqlite", "--max-removed", "0")
        XCTAssertEqual(run.status, 0, run.stdout + run.stderr)
        XCTAssertTrue(run.stdout.contains("  finds     3 → 0         filled by the app: not compared\n"), run.stdout)
        let json = try kiln("diff", "app.sqlite", "build/atlas.sqlite", "--format", "json")
        let document = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
        let finds = (document?["tables"] as? [[String: Any]])?.first { $0["name"] as? String == "finds" }
        XCTAssertEqual(finds?["userFilled"] as? Bool, true)
        XCTAssertEqual(finds?["removed"] as? Int, 0)
        XCTAssertEqual(finds?["oldRows"] as? Int, 3)

        let manifest = file("raw/atlas/kiln.json5")
        let text = try String(contentsOf: manifest, encoding: .utf8).replacingOccurrences(of: "      userFilled: true,\n", with: "")
        try text.write(to: manifest, atomically: true, encoding: .utf8)
        let strict = try kiln("diff", "app.sqlite", "build/atlas.sqlite", "--max-removed", "0")
        XCTAssertEqual(strict.status, 1, strict.stdout)
        XCTAssertTrue(strict.stdout.contains("finds: 3 of 3 rows removed"), strict.stdout)
    }
}
