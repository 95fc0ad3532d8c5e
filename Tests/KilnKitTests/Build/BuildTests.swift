import Foundation
import XCTest
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

final class BuildTests: KilnTestCase {
    // MARK: Helpers

    /// Copies raw/patras into the temporary folder and loads it.
    private func patras(_ name: String = "patras") throws -> CompiledPipeline {
        let folder = try copyRepositoryFolder("raw/patras", as: name)
        return try ManifestLoader.load(folder.path)
    }

    /// Copies the broken fixture and the real manifest beside it; `severity` replaces the manifest's overrides.
    private func broken(severity: String? = nil) throws -> CompiledPipeline {
        let folder = try copyRepositoryFolder("Tests/Fixtures/patras-broken", as: "broken")
        var manifest = try String(contentsOf: KilnTestCase.repositoryRoot.appendingPathComponent("raw/patras/kiln.json5"), encoding: .utf8)
        if let severity {
            let old = "  severity: {\n    \"duplicate-row\": \"warning\",\n  },"
            XCTAssertTrue(manifest.contains(old), "the manifest's severity block changed")
            manifest = manifest.replacingOccurrences(of: old, with: "  severity: {\n\(severity)\n  },")
        }
        try write(manifest, to: "broken/kiln.json5")
        return try ManifestLoader.load(folder.path)
    }

    private func output(_ name: String) -> URL {
        temporaryDirectory.appendingPathComponent("out").appendingPathComponent(name)
    }

    private func build(_ pipeline: CompiledPipeline, to name: String = "patras.sqlite", report: URL? = nil) throws -> BuildOutcome {
        try Builder.build(pipeline, options: BuildOptions(output: output(name), report: report))
    }

    private func open(_ url: URL) throws -> Database {
        try Database(path: url.path, mode: .readOnly)
    }

    private func texts(_ database: Database, _ sql: String) throws -> [String] {
        try database.rows(sql).map { $0.values.first?.textValue ?? "NULL" }
    }

    private func text(_ database: Database, _ sql: String) throws -> String? {
        try database.rows(sql).first?.values.first?.textValue
    }

    private func describe(_ diagnostics: [Diagnostic]) -> String {
        diagnostics.map(\.formatted).joined(separator: "\n")
    }

    // MARK: The sample builds

    func testPatrasBuilds() throws {
        let outcome = try build(try patras())
        XCTAssertTrue(outcome.built, describe(outcome.diagnostics))
        XCTAssertEqual(outcome.diagnostics.filter { $0.severity == .error }.count, 0, describe(outcome.diagnostics))
        XCTAssertEqual(outcome.bundle, "patras")
        XCTAssertEqual(outcome.output, output("patras.sqlite"))
        XCTAssertTrue(FileManager.default.fileExists(atPath: output("patras.sqlite").path))
        XCTAssertEqual(outcome.tables.map(\.name), ["stop", "line", "route_stop", "line_stop", "timetable", "line_timetable"])
        XCTAssertEqual(outcome.inputs.keys.sorted(), ["Routes_UTF8.txt", "StartingPoints.txt", "StopsUTF8.txt", "Timetables_UTF8.txt",
                                                      "lines_stopsutf8.txt", "linesutf8.txt", "stops_linesutf8.txt"])
        XCTAssertTrue(outcome.inputs.values.allSatisfy { $0.count == 64 && $0.allSatisfy(\.isHexDigit) })
        // No staging or temporary file is left in the output folder.
        let left = try FileManager.default.contentsOfDirectory(atPath: output("").path).sorted()
        // The Android target's own bundle (raw/patras targets API 24, without FTS5) is beside it.
        XCTAssertEqual(left, [KilnFileNames.cacheFolder, "patras.android.sqlite", "patras.report.json", "patras.sqlite"])

        let database = try open(outcome.output)
        XCTAssertEqual(try text(database, "PRAGMA integrity_check"), "ok")
        XCTAssertEqual(try database.rows("PRAGMA foreign_key_check").count, 0)
        XCTAssertEqual(try text(database, "PRAGMA user_version"), "1")
        // Tables that are not shipped are not in the bundle.
        XCTAssertEqual(try texts(database, "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'stop_search%' ORDER BY name"),
                       ["kiln_metadata", "line", "line_stop", "line_timetable", "route_stop", "stop", "timetable"])
    }

    func testTableCountsMatchMetadata() throws {
        let outcome = try build(try patras())
        XCTAssertTrue(outcome.built)
        let database = try open(outcome.output)
        var metadata: [String: String] = [:]
        for row in try database.rows("SELECT key, value FROM kiln_metadata") { metadata[row["key"].textValue!] = row["value"].textValue! }
        XCTAssertEqual(metadata["bundle.name"], "patras")
        XCTAssertEqual(metadata["bundle.schema_version"], "1")
        XCTAssertEqual(metadata["kiln.version"], KilnVersion.current)
        XCTAssertEqual(metadata.keys.filter { $0.hasPrefix("rows.") }.sorted(),
                       ["rows.line", "rows.line_stop", "rows.line_timetable", "rows.route_stop", "rows.stop", "rows.timetable"])
        for table in outcome.tables {
            let counted = try text(database, "SELECT count(*) FROM \(quoteIdentifier(table.name))")
            XCTAssertEqual(counted, String(table.rows), table.name)
            XCTAssertEqual(metadata["rows.\(table.name)"], String(table.rows), table.name)
            XCTAssertGreaterThan(table.rows, 0, table.name)
        }
        for (path, digest) in outcome.inputs {
            XCTAssertEqual(metadata["input.\(path).sha256"], digest, path)
        }
        // The sample has 21 lines and 168 stops, one per text line.
        XCTAssertEqual(outcome.tables.first { $0.name == "line" }?.rows, 21)
        XCTAssertEqual(outcome.tables.first { $0.name == "stop" }?.rows, 168)
    }

    func testFullTextSearchIgnoresCaseAndAccents() throws {
        let outcome = try build(try patras())
        let database = try open(outcome.output)
        for query in ["πανεπιστημιο", "ΠΑΝΕΠΙΣΤΗΜΙΟ", "Πανεπιστήμιο"] {
            XCTAssertEqual(try texts(database, "SELECT code FROM stop_search WHERE stop_search MATCH \(quoteLiteral(query)) ORDER BY code"),
                           ["0602"], query)
        }
        XCTAssertEqual(try text(database, "SELECT name FROM stop WHERE code = '0602'"), "Πανεπιστήμιο")
        XCTAssertEqual(try text(database, "SELECT search_name FROM stop WHERE code = '0602'").map { Array($0.unicodeScalars) },
                       Array("πανεπιστημιο".unicodeScalars))
        // A prefix query also finds Οδός Πανεπιστημίου.
        XCTAssertEqual(try texts(database, "SELECT code FROM stop_search WHERE stop_search MATCH 'πανεπιστημ*' ORDER BY code"), ["0514", "0602"])
    }

    func testCodesStayText() throws {
        let outcome = try build(try patras())
        let database = try open(outcome.output)
        XCTAssertEqual(try text(database, "SELECT typeof(code) || ' ' || code FROM stop WHERE code = '0102'"), "text 0102")
        XCTAssertEqual(try text(database, "SELECT count(*) FROM stop WHERE typeof(code) <> 'text'"), "0")
        XCTAssertEqual(try text(database, "SELECT typeof(latitude) FROM stop WHERE code = '0102'"), "real")
        XCTAssertEqual(try text(database, "SELECT latitude || ' ' || longitude FROM stop WHERE code = '0102'"), "38.2336 21.72433")
        XCTAssertEqual(try text(database, "SELECT typeof(stop_code) FROM route_stop LIMIT 1"), "text")
        XCTAssertEqual(try text(database, "SELECT typeof(position) FROM route_stop LIMIT 1"), "integer")
    }

    func testLinesSortNaturally() throws {
        let outcome = try build(try patras())
        let database = try open(outcome.output)
        let ids = try texts(database, "SELECT id FROM line ORDER BY sort_key")
        let index62 = try XCTUnwrap(ids.firstIndex(of: "6.2")), index610 = try XCTUnwrap(ids.firstIndex(of: "6.10"))
        XCTAssertLessThan(index62, index610)
        XCTAssertEqual(ids.last, "18.1")
        // The same order as linesutf8.txt, which lists them naturally.
        let listed = try String(contentsOf: KilnTestCase.repositoryRoot.appendingPathComponent("raw/patras/linesutf8.txt"), encoding: .utf8)
            .split(separator: "\n").map { String($0.split(separator: ";")[0]) }
        XCTAssertEqual(ids, listed)
        XCTAssertEqual(try text(database, "SELECT number || '|' || variant || '|' || start_stop FROM line WHERE id = '6.10'"), "6|10|0111")
        XCTAssertEqual(try text(database, "SELECT typeof(number) FROM line WHERE id = '6.10'"), "integer")
    }

    func testTimetablesAreSharedAndOvernightRowsRunPastMidnight() throws {
        let outcome = try build(try patras())
        let database = try open(outcome.output)
        XCTAssertEqual(try text(database, "SELECT count(*) FROM timetable WHERE day_mask NOT BETWEEN 1 AND 15"), "0")
        // The first weekday row of 1.1 (06:20–07:00 every 20).
        XCTAssertEqual(try texts(database, """
            SELECT t.days || ' ' || t.from_min || ' ' || t.until_min || ' ' || t.frequency FROM line_timetable AS lt
            JOIN timetable AS t ON t.id = lt.timetable_id WHERE lt.line_id = '1.1' AND t.day_mask = 1 ORDER BY t.from_min
            """), ["weekdays 380 420 20", "weekdays 420 1260 10", "weekdays 1260 1360 15"])
        XCTAssertEqual(try text(database, "SELECT count(*) FROM (SELECT days, from_min, until_min, frequency FROM timetable GROUP BY 1, 2, 3, 4 HAVING count(*) > 1)"), "0")
    }

    func testBuildingTwiceGivesIdenticalBytes() throws {
        let pipeline = try patras()
        let first = try build(pipeline, to: "first.sqlite")
        let second = try build(pipeline, to: "second.sqlite")
        XCTAssertTrue(first.built)
        XCTAssertTrue(second.built)
        let firstData = try Data(contentsOf: first.output), secondData = try Data(contentsOf: second.output)
        XCTAssertGreaterThan(firstData.count, 0)
        XCTAssertEqual(firstData, secondData)

        // Rebuilding over the same file from a fresh copy of the inputs also gives the same bytes and report.
        let firstReport = try Data(contentsOf: first.reportURL)
        let again = try build(try patras("patras-again"), to: "first.sqlite")
        XCTAssertEqual(try Data(contentsOf: again.output), firstData)
        XCTAssertEqual(try Data(contentsOf: again.reportURL), firstReport)
    }

    // MARK: The broken fixture

    private struct Expected {
        let code: String
        let severity: Severity
        let file: String
        let line: Int
        let fragment: String
    }

    /// One finding per planted defect, at the file and line the fixture's README gives.
    private let plantedDefects: [Expected] = [
        Expected(code: "duplicate-row", severity: .warning, file: "StopsUTF8.txt", line: 55, fragment: "0608"),
        Expected(code: "duplicate-key", severity: .error, file: "StopsUTF8.txt", line: 84, fragment: "1104"),
        Expected(code: "swapped-coordinates", severity: .error, file: "StopsUTF8.txt", line: 30, fragment: "0307"),
        Expected(code: "coordinates", severity: .error, file: "StopsUTF8.txt", line: 100, fragment: "1304"),
        Expected(code: "stop.similar-name", severity: .info, file: "StopsUTF8.txt", line: 4, fragment: "0105"),
        Expected(code: "parse", severity: .error, file: "StopsUTF8.txt", line: 13, fragment: "Αγίου Σπυρίδωνος; 0130; 21.73512"),
        Expected(code: "value", severity: .error, file: "StopsUTF8.txt", line: 14, fragment: "38,2x5"),
        Expected(code: "foreign-key", severity: .error, file: "Routes_UTF8.txt", line: 24, fragment: "0999"),
        Expected(code: "route.order", severity: .error, file: "Routes_UTF8.txt", line: 38, fragment: "route of line 8.1"),
        Expected(code: "line.start-not-first", severity: .error, file: "StartingPoints.txt", line: 9,
                 fragment: "line 4.1 starts at stop 0302, but its route's first stop is 0217"),
        Expected(code: "line-stops.mismatch", severity: .error, file: "lines_stopsutf8.txt", line: 33,
                 fragment: "lists line 6.1 at stop 0401"),
        Expected(code: "line.no-route", severity: .error, file: "linesutf8.txt", line: 21, fragment: "line 8.3 has no route"),
        Expected(code: "line.no-timetable", severity: .error, file: "linesutf8.txt", line: 21, fragment: "line 8.3 has no timetable"),
        Expected(code: "timetable.time-order", severity: .error, file: "Timetables_UTF8.txt", line: 64, fragment: "ends at 12:00"),
        Expected(code: "timetable.frequency", severity: .error, file: "Timetables_UTF8.txt", line: 120, fragment: "240"),
        Expected(code: "timetable.unknown-day", severity: .error, file: "Timetables_UTF8.txt", line: 48, fragment: "\"Τρίτη\""),
        Expected(code: "timetable.row", severity: .error, file: "Timetables_UTF8.txt", line: 202, fragment: "06:00 - 08:00 every 20"),
        Expected(code: "encoding", severity: .error, file: "linesutf8.txt", line: 11, fragment: "byte 0xFF"),
        Expected(code: "line.start-off-route", severity: .error, file: "linesutf8.txt", line: 15,
                 fragment: "line 6.4 starts at stop 0111 (StartingPoints.txt), which its route does not visit"),
        Expected(code: "route.repeated-stop", severity: .error, file: "Routes_UTF8.txt", line: 32,
                 fragment: "route of line 6.5 visits stop 0405 twice in a row (positions 2 and 3)"),
    ]

    func testBrokenFixtureReportsEveryPlantedDefect() throws {
        let outcome = try build(try broken())
        XCTAssertFalse(outcome.built)
        let all = describe(outcome.diagnostics)
        for expected in plantedDefects {
            let found = outcome.diagnostics.filter {
                $0.code == expected.code && $0.provenance?.file == expected.file && $0.provenance?.line == expected.line
            }
            XCTAssertEqual(found.count, 1, "\(expected.code) at \(expected.file):\(expected.line)\n\(all)")
            guard let finding = found.first else { continue }
            XCTAssertEqual(finding.severity, expected.severity, "\(expected.code)")
            XCTAssertTrue(finding.message.contains(expected.fragment), "\(expected.code): \(finding.message)")
        }
    }

    func testBrokenFixtureMessages() throws {
        let outcome = try build(try broken())
        func message(_ code: String, _ file: String, _ line: Int) -> String? {
            outcome.diagnostics.first { $0.code == code && $0.provenance == Provenance(file: file, line: line) }?.message
        }
        XCTAssertEqual(message("duplicate-row", "StopsUTF8.txt", 55),
                       "stop code \"0608\" is listed again with identical values (first at StopsUTF8.txt:54); kept once")
        let duplicate = try XCTUnwrap(message("duplicate-key", "StopsUTF8.txt", 84))
        XCTAssertTrue(duplicate.hasPrefix("stop code \"1104\" is listed twice with different values (first at StopsUTF8.txt:83): name \"Ευαγγελίστρια\" here, \"Τριών Ναυάρχων\" there"),
                      duplicate)
        XCTAssertEqual(message("swapped-coordinates", "StopsUTF8.txt", 30),
                       "stop 0307: latitude 21.741253 and longitude 38.245887 are swapped (the other way round they fall inside the box)")
        XCTAssertEqual(message("stop.similar-name", "StopsUTF8.txt", 4),
                       "stop 0106 «ΑΓΙΟΥ ΑΝΔΡΕΟΥ» differs from stop 0105 «Αγίου Ανδρέου» only by case, accents or spacing")
        XCTAssertEqual(message("parse", "StopsUTF8.txt", 13),
                       "expected 4 fields (name; code; longitude; latitude), found 3 in \"Αγίου Σπυρίδωνος; 0130; 21.73512\"")
        XCTAssertEqual(message("value", "StopsUTF8.txt", 14), "stop.latitude: expected a decimal number, found \"38.2x5\" (written \"38,2x5\")")
        XCTAssertEqual(message("foreign-key", "Routes_UTF8.txt", 24),
                       "route_stop.stop_code \"0999\" refers to no stop (no stop.code \"0999\")")
        // Routes_UTF8.txt line 38: 11 stops numbered 0, 1, 2, 4 … 11.
        XCTAssertEqual(message("route.order", "Routes_UTF8.txt", 38),
                       "route of line 8.1: its 11 stops are numbered 0…11; expected 0…n-1 with no gap or repeat")
        XCTAssertEqual(message("line-stops.mismatch", "lines_stopsutf8.txt", 33),
                       "lines_stopsutf8.txt lists line 6.1 at stop 0401, but stops_linesutf8.txt does not list stop 0401 for line 6.1")
        XCTAssertEqual(message("timetable.frequency", "Timetables_UTF8.txt", 120),
                       "timetable_row: frequency 240 is outside 1…180")
    }

    func testBrokenFixtureUndeclaredLineIsAForeignKey() throws {
        // Defect 12: line 9.1 has a route and a timetable but is not declared.
        let outcome = try build(try broken())
        let routeFindings = outcome.diagnostics.filter {
            $0.code == "foreign-key" && $0.provenance?.file == "Routes_UTF8.txt" && $0.message.contains("\"9.1\"")
        }
        XCTAssertEqual(routeFindings.map { $0.provenance?.line }, [42], describe(routeFindings))
        let timetableFindings = outcome.diagnostics.filter {
            $0.code == "foreign-key" && $0.provenance?.file == "Timetables_UTF8.txt" && $0.message.contains("\"9.1\"")
        }
        XCTAssertFalse(timetableFindings.isEmpty)
        XCTAssertTrue(timetableFindings.allSatisfy { ($0.provenance?.line ?? 0) > 222 }, describe(timetableFindings))
    }

    func testBrokenFixtureAcceptedVariationsAreNotReported() throws {
        let outcome = try build(try broken())
        // StopsUTF8.txt has a BOM and CRLF endings: nothing about its first line, no stray \r or U+FEFF anywhere.
        XCTAssertEqual(outcome.diagnostics.filter { $0.provenance == Provenance(file: "StopsUTF8.txt", line: 1) }.count, 0)
        XCTAssertFalse(outcome.diagnostics.contains { $0.message.contains("\r") || $0.message.contains("\u{FEFF}") },
                       describe(outcome.diagnostics))
        // linesutf8.txt line 14 separates with U+037E.
        XCTAssertEqual(outcome.diagnostics.filter { $0.provenance?.file == "linesutf8.txt" && $0.provenance?.line == 14 }.count, 0,
                       describe(outcome.diagnostics))
        // Line 6.3 was read, so nothing refers to it as missing.
        XCTAssertFalse(outcome.diagnostics.contains { $0.message.contains("\"6.3\"") }, describe(outcome.diagnostics))
        // Only the planted stop rows are reported in StopsUTF8.txt.
        let stopLines = Set(outcome.diagnostics.filter { $0.provenance?.file == "StopsUTF8.txt" }.compactMap { $0.provenance?.line })
        XCTAssertEqual(stopLines, [4, 13, 14, 30, 55, 84, 100])
        XCTAssertEqual(outcome.diagnostics.filter { $0.provenance == nil }.count, 0, describe(outcome.diagnostics))
    }

    func testBrokenFixtureSummaryCounts() throws {
        let outcome = try build(try broken())
        XCTAssertEqual(outcome.diagnostics.filter { $0.severity == .warning }.map(\.code), ["route.transfers", "duplicate-row"])
        XCTAssertEqual(outcome.diagnostics.filter { $0.severity == .info }.map(\.code), ["stop.similar-name"])
        // The diagnostics come sorted by file and line.
        let keys = outcome.diagnostics.map { ($0.provenance?.file ?? "", $0.provenance?.line ?? 0) }
        XCTAssertTrue(zip(keys, keys.dropFirst()).allSatisfy { $0 <= $1 })
    }

    func testFailedBuildLeavesThePreviousBundleUntouched() throws {
        let good = try build(try patras())
        XCTAssertTrue(good.built)
        let before = try Data(contentsOf: good.output)
        let bad = try build(try broken())
        XCTAssertFalse(bad.built)
        XCTAssertEqual(bad.output, good.output)
        XCTAssertEqual(try Data(contentsOf: good.output), before)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: output("").path).sorted(), [KilnFileNames.cacheFolder, "patras.android.sqlite", "patras.report.json", "patras.sqlite"])
        // The report is that of the failed build.
        let report = try JSONSerialization.jsonObject(with: Data(contentsOf: bad.reportURL)) as? [String: Any]
        XCTAssertEqual(report?["built"] as? Bool, false)
    }

    func testFailedBuildWithoutPreviousBundleWritesNone() throws {
        let bad = try build(try broken())
        XCTAssertFalse(bad.built)
        XCTAssertFalse(FileManager.default.fileExists(atPath: bad.output.path))
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: output("").path).filter { $0 != ".kiln-cache" }.sorted(), ["patras.report.json"],
                       "the build cache keeps what was read; nothing else is left")
    }

    // MARK: Severity overrides

    func testSeverityOffRemovesAFinding() throws {
        let outcome = try build(try broken(severity: "    \"duplicate-row\": \"warning\",\n    \"stop.similar-name\": \"off\","))
        XCTAssertFalse(outcome.diagnostics.contains { $0.code == "stop.similar-name" }, describe(outcome.diagnostics))
        // Other findings are still there.
        XCTAssertTrue(outcome.diagnostics.contains { $0.code == "duplicate-row" && $0.severity == .warning })
        XCTAssertTrue(outcome.diagnostics.contains { $0.code == "line.no-route" && $0.severity == .error })
    }

    func testSeverityOverrideTurnsAnErrorIntoAWarning() throws {
        let outcome = try build(try broken(severity: "    \"line.no-route\": \"warning\","))
        let findings = outcome.diagnostics.filter { $0.code == "line.no-route" }
        XCTAssertEqual(findings.map(\.severity), [.warning])
        XCTAssertEqual(findings.first?.provenance, Provenance(file: "linesutf8.txt", line: 21))
        // Without the manifest's own override, a duplicate row is reported at the rule's default: a warning.
        XCTAssertEqual(outcome.diagnostics.filter { $0.code == "duplicate-row" }.map(\.severity), [.warning])
        XCTAssertFalse(outcome.built)
    }

    func testSeverityOverrideCanTurnAWarningIntoAnError() throws {
        let outcome = try build(try broken(severity: "    \"duplicate-row\": \"error\","))
        XCTAssertEqual(outcome.diagnostics.filter { $0.code == "duplicate-row" }.map(\.severity), [.error])
    }

    // MARK: Export

    func testLegacyExportReproducesTheInputs() throws {
        let pipeline = try patras()
        let outcome = try build(pipeline)
        XCTAssertTrue(outcome.built)
        let folder = temporaryDirectory.appendingPathComponent("legacy")
        let written = try Exporter(manifest: pipeline.manifest).export("legacy-text", from: outcome.output, to: folder)
        let names = ["StopsUTF8.txt", "linesutf8.txt", "lines_stopsutf8.txt", "stops_linesutf8.txt",
                     "StartingPoints.txt", "Routes_UTF8.txt", "Timetables_UTF8.txt"]
        XCTAssertEqual(written.map(\.lastPathComponent), names)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted(), names.sorted())
        for name in names {
            let original = try Data(contentsOf: KilnTestCase.repositoryRoot.appendingPathComponent("raw/patras").appendingPathComponent(name))
            let exported = try Data(contentsOf: folder.appendingPathComponent(name))
            XCTAssertEqual(exported, original, "\(name) differs from raw/patras/\(name)")
        }
    }

    func testExportOfAnUnknownNameIsAUsageError() throws {
        let pipeline = try patras()
        let outcome = try build(pipeline)
        XCTAssertThrowsError(try Exporter(manifest: pipeline.manifest).export("modern", from: outcome.output, to: temporaryDirectory)) { error in
            guard case KilnError.usage(let message) = error else { return XCTFail("got \(error)") }
            XCTAssertEqual(message, "\(displayPath(pipeline.manifest.file)) declares no export \"modern\"; exports: legacy-text, gtfs, swift, datasette, docs, room; declare it under exports, or take another manifest's exports with exportsFrom: \"../other/kiln.json5\"")
        }
        XCTAssertEqual(try Exporter.bundleName(of: outcome.output), "patras")
    }

    // MARK: Report

    func testReportBesideTheBundle() throws {
        let outcome = try build(try broken())
        let reportURL = output("patras.report.json")
        XCTAssertEqual(outcome.reportURL, reportURL)
        XCTAssertTrue(FileManager.default.fileExists(atPath: reportURL.path))
        let report = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(contentsOf: reportURL)) as? [String: Any])
        XCTAssertEqual(report["built"] as? Bool, false)
        XCTAssertEqual(report["bundle"] as? String, "patras")
        let diagnostics = try XCTUnwrap(report["diagnostics"] as? [[String: Any]])
        XCTAssertEqual(diagnostics.count, outcome.diagnostics.count)
        for (entry, diagnostic) in zip(diagnostics, outcome.diagnostics) {
            XCTAssertEqual(entry["code"] as? String, diagnostic.code)
            XCTAssertEqual(entry["severity"] as? String, diagnostic.severity.rawValue)
            XCTAssertEqual(entry["message"] as? String, diagnostic.message)
            XCTAssertEqual(entry["file"] as? String, diagnostic.provenance?.file)
            XCTAssertEqual(entry["line"] as? Int, diagnostic.provenance?.line)
        }
        let encoding = try XCTUnwrap(diagnostics.first { $0["code"] as? String == "encoding" })
        XCTAssertEqual(encoding["severity"] as? String, "error")
        XCTAssertEqual(encoding["file"] as? String, "linesutf8.txt")
        XCTAssertEqual(encoding["line"] as? Int, 11)
        XCTAssertTrue((encoding["message"] as? String)?.contains("not valid UTF-8") == true)
        let summary = try XCTUnwrap(report["summary"] as? [String: Int])
        XCTAssertEqual(summary["warning"], 2)
        XCTAssertEqual(summary["info"], 1)
        XCTAssertEqual(summary["error"], outcome.diagnostics.filter { $0.severity == .error }.count)
    }

    func testReportOfASuccessfulBuild() throws {
        let reportURL = temporaryDirectory.appendingPathComponent("reports/custom.json")
        let outcome = try build(try patras(), report: reportURL)
        XCTAssertTrue(outcome.built)
        XCTAssertFalse(FileManager.default.fileExists(atPath: output("patras.report.json").path))
        let report = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(contentsOf: reportURL)) as? [String: Any])
        XCTAssertEqual(report["built"] as? Bool, true)
        XCTAssertEqual((report["diagnostics"] as? [Any])?.count, outcome.diagnostics.count)
        let tables = try XCTUnwrap(report["tables"] as? [[String: Any]])
        XCTAssertEqual(tables.compactMap { $0["name"] as? String }, outcome.tables.map(\.name))
        XCTAssertEqual(tables.compactMap { $0["rows"] as? Int }, outcome.tables.map(\.rows))
        XCTAssertEqual((report["inputs"] as? [String: String])?.count, 7)
    }
}
