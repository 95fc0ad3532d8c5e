import Foundation
import XCTest
import KilnKit
import KilnTestSupport

/// Per-source and per-file reuse through `kiln build` (`SourceCache`): after one file, one listing, the manifest or a
/// vocabulary changed, the build reads only what changed and writes the bundle and report a full `--no-cache` build
/// of the same inputs writes (the report but for its `reusedSources`); a damaged, foreign, half-written or contended
/// cache is read again and the bytes stay those of a full build.
final class SourceCacheCommandTests: CLITestCase {
    /// The report at `path` as a JSON object.
    private func report(_ path: String) throws -> [String: Any] {
        try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(contentsOf: file(path))) as? [String: Any])
    }

    /// The report's bytes without its `reusedIndexes`, `reusedRules`, `reusedSources` and `reusedTables` members, which
    /// only a build that reused something writes: Kiln's reports are JSON with sorted keys, two spaces and " : ", so
    /// each is one block of lines (`reusedRules` one line).
    private func reportBytesWithoutReuse(_ path: String) throws -> String {
        var text = try String(contentsOf: file(path), encoding: .utf8)
        if let line = text.range(of: #"\n  "reusedRules" : [0-9]+,\n"#, options: .regularExpression) {
            text.replaceSubrange(line, with: "\n")
        }
        for member in ["reusedIndexes", "reusedSources", "reusedTables"] {
            guard let start = text.range(of: "\n  \"\(member)\" : [\n") else { continue }
            let end = try XCTUnwrap(text.range(of: "\n  ],\n", range: start.upperBound..<text.endIndex))
            text = String(text[..<start.lowerBound]) + "\n" + String(text[end.upperBound...])
        }
        return text
    }

    /// `reusedSources` of the report at `path`: files reused and files in all, by source.
    private func reused(_ path: String) throws -> [String: [Int]] {
        let entries = try report(path)["reusedSources"] as? [[String: Any]] ?? []
        return Dictionary(uniqueKeysWithValues: entries.map { ($0["source"] as? String ?? "", [$0["files"] as? Int ?? -1, $0["of"] as? Int ?? -1]) })
    }

    /// Builds `pipeline` into `bundle` with the cache, then in full (`--no-cache`) into the same file, and checks that
    /// both wrote the same bundle and (but for `reusedSources`) the same report. Returns the cached build's run and
    /// its `reusedSources`.
    @discardableResult
    private func buildAndCompare(_ pipeline: String, _ bundle: String, _ what: String) throws -> (run: Run, reused: [String: [Int]]) {
        let report = KilnFileNames.report(for: URL(fileURLWithPath: bundle)).relativePath
        let cached = try kiln(["build", pipeline, "--out", bundle])
        let cachedBundle = try? sha256(bundle), cachedReport = try reportBytesWithoutReuse(report), reuse = try reused(report)
        let full = try kiln(["build", pipeline, "--out", bundle, "--no-cache"])
        XCTAssertEqual(cached.status, full.status, "\(what): \(cached.stderr)")
        XCTAssertEqual(try? sha256(bundle), cachedBundle, "\(what): the bundle a full build writes")
        XCTAssertEqual(try String(contentsOf: file(report), encoding: .utf8), cachedReport, "\(what): the report a full build writes")
        XCTAssertEqual(Array(cached.stderr.components(separatedBy: "\n").drop { !$0.hasPrefix("  ") }),
                       Array(full.stderr.components(separatedBy: "\n").drop { !$0.hasPrefix("  ") }), "\(what): the same summary")
        return (cached, reuse)
    }

    /// Builds `pipeline` in full into `fresh/` and checks that it writes the bytes of `bundle`.
    private func compareWithFullBuild(_ pipeline: String, _ bundle: String, _ what: String) throws {
        let fresh = "fresh/" + URL(fileURLWithPath: bundle).lastPathComponent
        _ = try build(pipeline, fresh, "--no-cache")
        XCTAssertEqual(try sha256(fresh), try sha256(bundle), what)
    }

    /// One input of each sample, edited so that its records change (a digit in its second half), and the others kept.
    func testOneEditedFileOfEverySampleIsReadAloneAndGivesAFullBuildsBytes() throws {
        let edited = ["patras": "StopsUTF8.txt", "patras-web": "timetables/line-2.1.html", "museum": "pages/history.html",
                      "atlas": "pages/boletus-edulis.html", "itravel": "itravel-export.xml"]
        for (sample, path) in edited.sorted(by: { $0.key < $1.key }) {
            try copy("raw/\(sample)", to: sample)
            let bundle = "out/\(sample).sqlite"
            let first = try build(sample, bundle, "--no-cache")
            XCTAssertFalse(first.stderr.contains("reused from the build cache"), first.stderr)
            let inputs = try XCTUnwrap(try report("out/\(sample).report.json")["inputs"] as? [String: String])

            var bytes = [UInt8](try Data(contentsOf: file("\(sample)/\(path)")))
            let digit = try XCTUnwrap(bytes.indices.dropFirst(bytes.count / 2).first { (48...57).contains(bytes[$0]) }, "\(path) has a digit")
            bytes[digit] = bytes[digit] == 57 ? 48 : bytes[digit] + 1
            try Data(bytes).write(to: file("\(sample)/\(path)"))

            // (The edit may make the build fail, a foreign key broken: the failed builds must agree too.)
            let (run, reuse) = try buildAndCompare(sample, bundle, "\(sample), \(path) edited")
            // Files came from the cache, and every source listing the edited file read it again: the source's reused
            // files are one fewer than its files, or it is not among the reused.
            let pipeline = try ManifestLoader.load(file(sample).path)
            if inputs.count > 1 {
                XCTAssertTrue(run.stderr.contains("reused from the build cache (unchanged files, not read again): "), "\(sample): \(run.stderr)")
                XCTAssertGreaterThan(reuse.values.map { $0[0] }.reduce(0, +), 0, sample)
            }
            for source in pipeline.sources where source.files.contains(where: { $0.relativePath == path }) {
                XCTAssertEqual(reuse[source.spec.name].map { $0[1] - $0[0] } ?? 1, 1, "\(sample) \(source.spec.name)")
            }
            for (source, counts) in reuse { XCTAssertLessThanOrEqual(counts[0], counts[1], "\(sample) \(source)") }
        }
    }

    func testAListingTheManifestOrAVocabularyChangedRereadsOnlyTheSourcesItDecides() throws {
        try copy("raw/patras-web", to: "web")
        _ = try build("web", "out/web.sqlite")

        // One file of a glob removed: its sources keep their other files' rows.
        try FileManager.default.removeItem(at: file("web/stops-3.xml"))
        var (_, reuse) = try buildAndCompare("web", "out/web.sqlite", "a file removed from a listing")
        XCTAssertEqual(reuse["stops"], [2, 2])
        XCTAssertEqual(reuse["stop-lines"], [2, 2])
        XCTAssertEqual(reuse["timetables"], [21, 21])

        // A file added to a listing (a copy of a page under another name): read alone, in its place in file order.
        try FileManager.default.copyItem(at: file("web/timetables/line-2.1.html"), to: file("web/timetables/line-2.0.html"))
        (_, reuse) = try buildAndCompare("web", "out/web.sqlite", "a file added to a listing")
        XCTAssertEqual(reuse["timetables"], [21, 22])
        XCTAssertEqual(reuse["stops"], [2, 2])

        // One source's mapping edited: that source is read again, the others are not.
        try replace(#"sort_key: { field: "id", normalize: ["naturalSortKey"] },"#, with: #"sort_key: { field: "name", normalize: ["naturalSortKey"] },"#,
                    in: "web/kiln.json5")
        (_, reuse) = try buildAndCompare("web", "out/web.sqlite", "a source's mapping edited")
        XCTAssertNil(reuse["lines"], "the edited source was read again")
        XCTAssertEqual(reuse["starting-points"], [1, 1])
        XCTAssertEqual(reuse["timetables"], [22, 22])

        // A vocabulary edited: the sources whose normalizers name it are read again.
        try replace(#"code: "weekdays""#, with: #"code: "weekday""#, in: "web/kiln.json5")
        (_, reuse) = try buildAndCompare("web", "out/web.sqlite", "a vocabulary edited")
        XCTAssertNil(reuse["timetables"], "the source using the vocabulary was read again")
        XCTAssertEqual(reuse["stops"], [2, 2])

        // A severity changed for a code the reading reports: every source is read again (findings depend on it).
        try replace(#"  sources: ["#, with: "  severity: { \"value\": \"warning\" },\n  sources: [", in: "web/kiln.json5")
        (_, reuse) = try buildAndCompare("web", "out/web.sqlite", "a severity override added")
        XCTAssertEqual(reuse, [:])
    }

    func testFindingsOfReusedFilesAreReplayedAsAFullReadReportsThem() throws {
        // 120 files, each with two values that are not numbers: more findings of one code than the report keeps (100),
        // so which are stored and how many are only counted depends on the order they are replayed in.
        _ = try writePipeline("findings", manifest: """
            { bundle: "findings", schemaVersion: 1,
              tables: [{ name: "t", columns: [{ name: "file", type: "text" }, { name: "n", type: "integer" }] }],
              sources: [{ name: "rows", format: "delimited", path: "rows/*.txt", options: { fields: ["n"] }, into: "t",
                          columns: { file: "_file", n: "n" } }],
              severity: { value: "warning" } }
            """)
        try FileManager.default.createDirectory(at: file("findings/rows"), withIntermediateDirectories: true)
        for index in 0..<120 {
            try "1\nx\(index)\n2\ny\n".write(to: file(String(format: "findings/rows/%03d.txt", index)), atomically: true, encoding: .utf8)
        }
        _ = try build("findings", "out/f.sqlite")
        // The first file loses its findings: a full read stores the next file's in their place.
        try "1\n2\n".write(to: file("findings/rows/000.txt"), atomically: true, encoding: .utf8)
        let (run, reuse) = try buildAndCompare("findings", "out/f.sqlite", "findings replayed")
        XCTAssertEqual(reuse["rows"], [119, 120])
        let report = try report("out/f.report.json")
        let findings = try XCTUnwrap(report["diagnostics"] as? [[String: Any]])
        XCTAssertEqual(findings.count, 100)
        XCTAssertEqual(findings.first?["file"] as? String, "rows/001.txt")
        XCTAssertEqual(findings.first?["line"] as? Int, 2)
        XCTAssertEqual((report["notStored"] as? [[String: Any]])?.first?["count"] as? Int, 238 - 100)
        XCTAssertTrue(run.stderr.contains("  value (warning) ×238\n"), run.stderr)
    }

    func testATamperedForeignOrHalfWrittenEntryIsReadAgainAndTheBytesStayAFullBuilds() throws {
        try copy("raw/patras-web", to: "web")
        _ = try build("web", "out/web.sqlite")
        let sources = file("out/\(KilnFileNames.cacheFolder)/web.sqlite/sources")
        let entries = try FileManager.default.contentsOfDirectory(atPath: sources.path).sorted()
        XCTAssertEqual(entries.filter { $0.hasSuffix(".json") }.count, 7, "one entry per source: \(entries)")
        XCTAssertEqual(entries.filter { $0.hasSuffix(".sqlite") }.count, 7, "\(entries)")
        XCTAssertFalse(entries.contains { $0.contains("tmp") }, "\(entries)")
        try replace("<name>Νοσοκομείο Ρίου</name>", with: "<name>Νοσοκομείο Ρίου Α</name>", in: "web/stops-2.xml")

        // The rows of one entry changed behind Kiln's back (sqlite3 edits a copied stop name): its digest no longer
        // matches, so the source is read again and the build says so.
        let timetables = try entryDatabase(of: "timetables", in: sources)
        let edit = try program("/usr/bin/env", ["python3", "-c", "import sqlite3,sys; d=sqlite3.connect(sys.argv[1]); d.execute('UPDATE timetable_row SET frequency = 999'); d.commit()", timetables.path])
        XCTAssertEqual(edit.status, 0, edit.stderr)
        let tampered = try build("web", "out/web.sqlite")
        XCTAssertTrue(tampered.stderr.contains("  build.cache (info) ×1\n"), tampered.stderr)
        XCTAssertTrue(tampered.stderr.contains("of source \"timetables\" is damaged or was edited (its SHA-256 is not the one recorded): the source's files were read again"),
                      tampered.stderr)
        XCTAssertFalse(try reused("out/web.report.json").keys.contains("timetables"))
        try compareWithFullBuild("web", "out/web.sqlite", "no tampered row reached the bundle")

        // An entry whose record was edited (its key): its checksum does not match, so it is read again, and said so.
        try replace("<name>Νοσοκομείο Ρίου Α</name>", with: "<name>Νοσοκομείο Ρίου Β</name>", in: "web/stops-2.xml")
        let record = try entryRecord(of: "lines", in: sources)
        var object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(contentsOf: record)) as? [String: Any])
        object["key"] = String(repeating: "0", count: 64)
        try JSONSerialization.data(withJSONObject: object).write(to: record)
        var run = try build("web", "out/web.sqlite")
        try compareWithFullBuild("web", "out/web.sqlite", "an edited entry record")
        XCTAssertNil(try reused("out/web.report.json")["lines"])
        XCTAssertTrue(run.stderr.contains("damaged or was edited (its record's checksum does not match)"), "an edited record is not trusted: \(run.stderr)")

        // A build killed while it wrote an entry: a temporary database of a process that is gone, and an entry
        // database cut short beside its old record.
        try replace("<name>Νοσοκομείο Ρίου Β</name>", with: "<name>Νοσοκομείο Ρίου Γ</name>", in: "web/stops-2.xml")
        let routes = try entryDatabase(of: "routes", in: sources)
        let leftover = sources.appendingPathComponent("." + routes.lastPathComponent + ".999999.tmp")
        try Data(try Data(contentsOf: routes).prefix(4096)).write(to: leftover)
        let cut = try Data(contentsOf: routes)
        try cut.prefix(cut.count / 2).write(to: routes)
        run = try build("web", "out/web.sqlite")
        try compareWithFullBuild("web", "out/web.sqlite", "a half-written entry")
        XCTAssertNil(try reused("out/web.report.json")["routes"])
        XCTAssertTrue(run.stderr.contains("of source \"routes\" is damaged or was edited"), run.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: leftover.path), "the dead build's temporary file was removed")
        // A build that found an entry damaged says so in its report, which is therefore not kept whole by the next.
        let next = try build("web", "out/web.sqlite")
        XCTAssertTrue(next.stderr.hasPrefix("built ") && !next.stderr.contains("build.cache"), next.stderr)
        XCTAssertTrue(try build("web", "out/web.sqlite").stderr.hasPrefix("up to date: "))

        // A real kill -9 during the build that rewrites the entries, at points spread over it; the next build writes
        // what a full build does, and the one after it is up to date.
        let started = Date()
        _ = try build("web", "timing/web.sqlite", "--no-cache")
        let duration = Date().timeIntervalSince(started)
        for round in 0..<4 {
            try replace(round % 2 == 0 ? "Γ</name>" : "Δ</name>", with: round % 2 == 0 ? "Δ</name>" : "Γ</name>", in: "web/stops-2.xml")
            let process = try start(["build", "web", "--out", "out/web.sqlite", "--quiet"])
            usleep(useconds_t(duration * (0.5 + Double(round) / 4) * 1_000_000))
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            try buildAndCompare("web", "out/web.sqlite", "after a kill, round \(round)")
        }
    }

    func testTwoBuildsAtOnceBothWriteAFullBuildsBytes() throws {
        try copy("raw/patras-web", to: "web")
        _ = try build("web", "out/web.sqlite")
        try replace("<name>Νοσοκομείο Ρίου</name>", with: "<name>Νοσοκομείο Ρίου Α</name>", in: "web/stops-2.xml")
        let first = try start(["build", "web", "--out", "out/web.sqlite", "--quiet"])
        let second = try start(["build", "web", "--out", "out/web.sqlite", "--quiet"])
        first.waitUntilExit()
        second.waitUntilExit()
        XCTAssertEqual([first.terminationStatus, second.terminationStatus], [0, 0])
        let together = try sha256("out/web.sqlite")
        _ = try build("web", "fresh/web.sqlite", "--no-cache")
        XCTAssertEqual(try sha256("fresh/web.sqlite"), together)
        XCTAssertTrue(try build("web", "out/web.sqlite").stderr.hasPrefix("up to date: "))
    }

    func testProgressSaysWhichFilesCameFromTheCache() throws {
        try copy("raw/patras-web", to: "web")
        _ = try build("web", "out/web.sqlite")
        try replace("<name>Νοσοκομείο Ρίου</name>", with: "<name>Νοσοκομείο Ρίου Α</name>", in: "web/stops-2.xml")
        let run = try build("web", "out/web.sqlite", "--progress", "json", "--quiet")
        let events = run.stdout.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
            + run.stderr.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        let cached = events.filter { $0["event"] as? String == "cached" }
        XCTAssertEqual(cached.first { $0["source"] as? String == "stops" }?["files"] as? Int, 2, "\(events)")
        XCTAssertEqual(cached.first { $0["source"] as? String == "stops" }?["of"] as? Int, 3)
        XCTAssertEqual(events.first { $0["event"] as? String == "reading" && $0["source"] as? String == "stops" }?["files"] as? Int, 1,
                       "only the edited file is read")
    }

    func testAFullTextIndexOfUnchangedRowsIsCopiedFromTheCacheAndTheBytesStayAFullBuilds() throws {
        _ = try writePipeline("fts", manifest: """
            { bundle: "fts", schemaVersion: 1,
              tables: [{ name: "stop", columns: [{ name: "code", type: "text" }, { name: "name", type: "text", notNull: true }],
                         primaryKey: ["code"], fullText: { name: "stop_search", columns: ["name"], unindexed: ["code"] } },
                       { name: "note", columns: [{ name: "file", type: "text" }, { name: "text", type: "text" }] }],
              sources: [{ name: "stops", format: "delimited", path: "stops.txt", options: { fields: ["name", "code"] }, into: "stop",
                          columns: { code: "code", name: "name" } },
                        { name: "notes", format: "delimited", path: "notes/*.txt", options: { fields: ["text"] }, into: "note",
                          columns: { file: "_file", text: "text" } }] }
            """)
        try (0..<3000).map { "Στάση Πανεπιστημίου \($0); \(100_000 + $0)\n" }.joined().write(to: file("fts/stops.txt"), atomically: true, encoding: .utf8)
        try FileManager.default.createDirectory(at: file("fts/notes"), withIntermediateDirectories: true)
        for name in ["a", "b"] { try "note \(name)\n".write(to: file("fts/notes/\(name).txt"), atomically: true, encoding: .utf8) }
        let first = try build("fts", "out/fts.sqlite", "--no-cache")
        XCTAssertFalse(first.stderr.contains("full-text index"), first.stderr)
        let kept = file("out/\(KilnFileNames.cacheFolder)/fts.sqlite/fulltext")
        let entries = try FileManager.default.contentsOfDirectory(atPath: kept.path).sorted()
        XCTAssertEqual(entries.map { URL(fileURLWithPath: $0).pathExtension }, ["json", "sqlite"], "one kept index: \(entries)")
        let reusedIndexes = { try self.report("out/fts.report.json")["reusedIndexes"] as? [String] }

        // Another source's file edited: the stops' rows are the same, so their index is copied, not built.
        try "note b, edited\n".write(to: file("fts/notes/b.txt"), atomically: true, encoding: .utf8)
        var (run, reuse) = try buildAndCompare("fts", "out/fts.sqlite", "a note edited")
        XCTAssertTrue(run.stderr.contains("reused from the build cache (the same rows, not indexed again): full-text index stop_search\n"), run.stderr)
        XCTAssertEqual(reuse["stops"], [1, 1])
        _ = try build("fts", "out/fts.sqlite", "--no-cache")
        try "note b, edited again\n".write(to: file("fts/notes/b.txt"), atomically: true, encoding: .utf8)
        _ = try build("fts", "out/fts.sqlite")
        XCTAssertEqual(try reusedIndexes(), ["stop_search"])

        // The indexed rows changed: built again.
        try replace("Στάση Πανεπιστημίου 1500;", with: "Στάση Ρίου 1500;", in: "fts/stops.txt")
        (run, _) = try buildAndCompare("fts", "out/fts.sqlite", "a stop renamed")
        XCTAssertFalse(run.stderr.contains("full-text index"), run.stderr)
        let search = try program("/usr/bin/env", ["python3", "-c", "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute(\"SELECT code FROM stop_search WHERE stop_search MATCH 'Ρίου'\").fetchall())",
                                                  file("out/fts.sqlite").path])
        XCTAssertEqual(search.stdout.trimmingCharacters(in: .whitespacesAndNewlines), "[('101500',)]", search.stderr)

        // The full-text declaration changed (the sources' rows did not): built again.
        try replace(#"unindexed: ["code"] }"#, with: #"unindexed: ["code"], tokenize: "unicode61 remove_diacritics 0" }"#, in: "fts/kiln.json5")
        _ = try build("fts", "out/fts.sqlite")
        XCTAssertNil(try reusedIndexes())
        try compareWithFullBuild("fts", "out/fts.sqlite", "a new tokenizer")

        // The kept index edited behind Kiln's back: not trusted, built again, and said so.
        try "note b, edited a third time\n".write(to: file("fts/notes/b.txt"), atomically: true, encoding: .utf8)
        let database = try XCTUnwrap(try FileManager.default.contentsOfDirectory(at: kept, includingPropertiesForKeys: nil).first { $0.pathExtension == "sqlite" })
        let edit = try program("/usr/bin/env", ["python3", "-c", "import sqlite3,sys; d=sqlite3.connect(sys.argv[1]); d.execute('DELETE FROM stop_search_data WHERE id > 10'); d.commit()",
                                                database.path])
        XCTAssertEqual(edit.status, 0, edit.stderr)
        run = try build("fts", "out/fts.sqlite")
        XCTAssertTrue(run.stderr.contains("of the full-text index \"stop_search\" is damaged or was edited (its SHA-256 is not the one recorded): the index was built again"),
                      run.stderr)
        XCTAssertNil(try reusedIndexes())
        try compareWithFullBuild("fts", "out/fts.sqlite", "no tampered index reached the bundle")
    }

    /// Rules over tables whose rows come from unchanged sources and files replay the findings they had
    /// (`RuleFindingsCache`), and the report is still a full build's: after an edit of another source's file, of the
    /// rules' own table, of a rule; a manifest's SQL rule (which may read any table) is checked whenever any table
    /// changed; a rules entry edited behind Kiln's back is a `build.cache` info and every rule is checked.
    func testRulesOverUnchangedRowsReplayTheirFindingsAndTheReportStaysAFullBuilds() throws {
        _ = try writePipeline("rules", manifest: """
            { bundle: "rules", schemaVersion: 1,
              tables: [{ name: "stop", columns: [{ name: "code", type: "text" }, { name: "name", type: "text", notNull: true },
                                                 { name: "ref", type: "text", pattern: "^[0-9]+$" }], primaryKey: ["code"] },
                       { name: "note", columns: [{ name: "file", type: "text" }, { name: "text", type: "text", pattern: "^note" }] }],
              sources: [{ name: "stops", format: "delimited", path: "stops.txt", options: { fields: ["name", "code", "ref"] }, into: "stop",
                          columns: { code: "code", name: "name", ref: "ref" } },
                        { name: "notes", format: "delimited", path: "notes/*.txt", options: { fields: ["text"] }, into: "note",
                          columns: { file: "_file", text: "text" } }],
              rules: [{ code: "long-name", kind: "sql", severity: "warning", message: "{name} is long",
                        sql: "SELECT _file, _line, name FROM stop WHERE length(name) > 24 ORDER BY rowid" }],
              severity: { pattern: "warning" } }
            """)
        // 300 stops, every third ref not a number (more findings of `pattern` than the report keeps), some names long,
        // one code listed twice with the same values (a `duplicate-row` warning).
        let stops = (0..<300).map { "Στάση \($0 % 7 == 0 ? "Πανεπιστημίου Πατρών " : "")\($0); \(100_000 + $0); \($0 % 3 == 0 ? "x\($0)" : "\($0)")\n" }
        try (stops + [stops[5]]).joined().write(to: file("rules/stops.txt"), atomically: true, encoding: .utf8)
        try FileManager.default.createDirectory(at: file("rules/notes"), withIntermediateDirectories: true)
        for name in ["a", "b"] { try "note \(name)\nremark \(name)\n".write(to: file("rules/notes/\(name).txt"), atomically: true, encoding: .utf8) }
        let first = try build("rules", "out/rules.sqlite", "--no-cache")
        XCTAssertFalse(first.stderr.contains("not checked again"), first.stderr)
        let findings = try XCTUnwrap(try report("out/rules.report.json")["diagnostics"] as? [[String: Any]]).compactMap { $0["code"] as? String }
        XCTAssertTrue(Set(findings).isSuperset(of: ["pattern", "long-name", "duplicate-row"]), "\(Set(findings))")
        XCTAssertNotNil(try report("out/rules.report.json")["notStored"], "more findings of a code than the report keeps")
        let entry = file("out/\(KilnFileNames.cacheFolder)/rules.sqlite/rules")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: entry.path).map { URL(fileURLWithPath: $0).pathExtension }.sorted(),
                       ["json", "sqlite"], "one entry of findings")
        let reusedRules = { try self.report("out/rules.report.json")["reusedRules"] as? Int }

        // A note edited: the rules over `stop` alone replay their findings; the SQL rule, which may read `note`, and
        // the note's pattern are checked again.
        try "note b\nremark b, edited\n".write(to: file("rules/notes/b.txt"), atomically: true, encoding: .utf8)
        var (run, _) = try buildAndCompare("rules", "out/rules.sqlite", "a note edited")
        let stopRules = try XCTUnwrap(try ManifestLoader.load(file("rules").path)).manifest.tables[0]
        XCTAssertTrue(run.stderr.contains("reused from the build cache (the same rows, not checked again): the findings of "), run.stderr)
        _ = try build("rules", "out/rules.sqlite", "--no-cache")
        try "note b\nremark b, edited again\n".write(to: file("rules/notes/b.txt"), atomically: true, encoding: .utf8)
        _ = try build("rules", "out/rules.sqlite")
        let overStops = try XCTUnwrap(try reusedRules(), "the rules over stop")
        // The key rule and the pattern rule of `stop` have findings to replay; at most its not-null rules besides.
        XCTAssertTrue((2...(2 + stopRules.columns.count)).contains(overStops), "\(overStops)")

        // A stop edited: nothing is replayed but what reads only `note` (its pattern rule).
        try replace("Στάση 1; 100001;", with: "Στάση Ένα; 100001;", in: "rules/stops.txt")
        (run, _) = try buildAndCompare("rules", "out/rules.sqlite", "a stop renamed")
        _ = try build("rules", "out/rules.sqlite", "--no-cache")
        try replace("Στάση Ένα; 100001;", with: "Στάση Δύο; 100001;", in: "rules/stops.txt")
        _ = try build("rules", "out/rules.sqlite")
        XCTAssertEqual(try reusedRules(), 1, "the pattern of note.text")

        // The SQL rule edited, nothing else: every other rule replays, the edited one is checked.
        try replace("length(name) > 24", with: "length(name) > 20", in: "rules/kiln.json5")
        (run, _) = try buildAndCompare("rules", "out/rules.sqlite", "a rule edited")
        _ = try build("rules", "out/rules.sqlite", "--no-cache")
        try replace("length(name) > 20", with: "length(name) > 22", in: "rules/kiln.json5")
        _ = try build("rules", "out/rules.sqlite")
        XCTAssertEqual(try reusedRules(), overStops + 1, "all but the SQL rule")

        // The entry edited behind Kiln's back: not trusted, every rule checked, and said so.
        try "note b\nremark b, edited a third time\n".write(to: file("rules/notes/b.txt"), atomically: true, encoding: .utf8)
        let database = try XCTUnwrap(try FileManager.default.contentsOfDirectory(at: entry, includingPropertiesForKeys: nil).first { $0.pathExtension == "sqlite" })
        let edit = try program("/usr/bin/env", ["python3", "-c", "import sqlite3,sys; d=sqlite3.connect(sys.argv[1]); d.execute('UPDATE rule_findings SET findings = ?', (sys.argv[2],)); d.commit()",
                                                database.path, #"{"notStored":[],"stored":[]}"#])
        XCTAssertEqual(edit.status, 0, edit.stderr)
        run = try build("rules", "out/rules.sqlite")
        XCTAssertTrue(run.stderr.contains("of the rules' findings is damaged or was edited (its SHA-256 is not the one recorded): every rule was checked again"), run.stderr)
        XCTAssertNil(try reusedRules())
        let damagedReport = try XCTUnwrap(try report("out/rules.report.json")["diagnostics"] as? [[String: Any]]).filter { $0["code"] as? String != "build.cache" }
        _ = try build("rules", "fresh/rules.sqlite", "--no-cache")
        let fullReport = try XCTUnwrap(try report("fresh/rules.report.json")["diagnostics"] as? [[String: Any]])
        XCTAssertEqual(NSArray(array: damagedReport), NSArray(array: fullReport), "no made-up finding reached the report")
        // The next build trusts the entry that build wrote.
        try "note b\nremark b, edited a fourth time\n".write(to: file("rules/notes/b.txt"), atomically: true, encoding: .utf8)
        (run, _) = try buildAndCompare("rules", "out/rules.sqlite", "after a damaged entry")
        XCTAssertTrue(run.stderr.contains("not checked again"), run.stderr)
    }

    /// The bundle's first tables, whose rows are those of the last build, come from the file the last build kept
    /// after them (`BundlePrefixCache`), and the bundle is still the bytes of a full build: after an edit of the third
    /// table's source, of the second's, of the first's; after the first table's declaration changed; and after the
    /// kept file was edited behind Kiln's back (a `build.cache` info, the tables written again).
    func testTheBundlesFirstTablesComeFromTheFileKeptAfterThemAndTheBytesStayAFullBuilds() throws {
        _ = try writePipeline("kept", manifest: """
            { bundle: "kept", schemaVersion: 1,
              tables: [{ name: "stop", columns: [{ name: "code", type: "text" }, { name: "name", type: "text", notNull: true }],
                         primaryKey: ["code"], fullText: { name: "stop_search", columns: ["name"], unindexed: ["code"] } },
                       { name: "note", columns: [{ name: "file", type: "text" }, { name: "text", type: "text" }] },
                       { name: "line", columns: [{ name: "number", type: "integer" }, { name: "name", type: "text" }], primaryKey: ["number"] }],
              sources: [{ name: "stops", format: "delimited", path: "stops.txt", options: { fields: ["name", "code"] }, into: "stop",
                          columns: { code: "code", name: "name" } },
                        { name: "notes", format: "delimited", path: "notes/*.txt", options: { fields: ["text"] }, into: "note",
                          columns: { file: "_file", text: "text" } },
                        { name: "lines", format: "delimited", path: "lines.txt", options: { fields: ["number", "name"] }, into: "line",
                          columns: { number: "number", name: "name" } }] }
            """)
        try (0..<3000).map { "Στάση Πανεπιστημίου \($0); \(100_000 + $0)\n" }.joined().write(to: file("kept/stops.txt"), atomically: true, encoding: .utf8)
        try FileManager.default.createDirectory(at: file("kept/notes"), withIntermediateDirectories: true)
        for name in ["a", "b"] { try "note \(name)\n".write(to: file("kept/notes/\(name).txt"), atomically: true, encoding: .utf8) }
        try "1; Πανεπιστήμιο\n2; Ρίο\n".write(to: file("kept/lines.txt"), atomically: true, encoding: .utf8)
        _ = try build("kept", "out/kept.sqlite", "--no-cache")
        let kept = file("out/\(KilnFileNames.cacheFolder)/kept.sqlite/tables")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: kept.path).map { URL(fileURLWithPath: $0).pathExtension }.sorted(),
                       ["json", "json", "sqlite", "sqlite"], "a file kept after `stop` and one after `note`, none after the last table")
        let reusedTables = { try self.report("out/kept.report.json")["reusedTables"] as? [String] }

        try "1; Πανεπιστήμιο\n2; Ρίο\n3; Πάτρα\n".write(to: file("kept/lines.txt"), atomically: true, encoding: .utf8)
        var (run, _) = try buildAndCompare("kept", "out/kept.sqlite", "a line added")
        XCTAssertTrue(run.stderr.contains("reused from the build cache (the same rows, not written again): the bundle's tables through note\n"), run.stderr)
        _ = try build("kept", "out/kept.sqlite")
        try "1; Πανεπιστήμιο\n".write(to: file("kept/lines.txt"), atomically: true, encoding: .utf8)
        _ = try build("kept", "out/kept.sqlite")
        XCTAssertEqual(try reusedTables(), ["stop", "note"])

        try "note b, edited\n".write(to: file("kept/notes/b.txt"), atomically: true, encoding: .utf8)
        (run, _) = try buildAndCompare("kept", "out/kept.sqlite", "a note edited")
        XCTAssertTrue(run.stderr.contains("the bundle's tables through stop\n"), run.stderr)

        try replace("Στάση Πανεπιστημίου 1500;", with: "Στάση Ρίου 1500;", in: "kept/stops.txt")
        (run, _) = try buildAndCompare("kept", "out/kept.sqlite", "a stop renamed")
        XCTAssertFalse(run.stderr.contains("not written again"), run.stderr)

        try replace(#"{ name: "name", type: "text", notNull: true }"#, with: #"{ name: "name", type: "text", notNull: true, description: "as posted" }"#, in: "kept/kiln.json5")
        _ = try build("kept", "out/kept.sqlite")
        XCTAssertNil(try reusedTables(), "the first table's declaration changed")
        try compareWithFullBuild("kept", "out/kept.sqlite", "a table declaration changed")

        // The file kept after `stop` edited behind Kiln's back: not trusted, the tables written again, and said so.
        try "note b, edited again\n".write(to: file("kept/notes/b.txt"), atomically: true, encoding: .utf8)
        var damaged = 0
        for entry in try FileManager.default.contentsOfDirectory(at: kept, includingPropertiesForKeys: nil) where entry.pathExtension == "json" {
            let record = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(contentsOf: entry)) as? [String: Any])
            guard record["name"] as? String == "through stop" else { continue }
            let database = entry.deletingPathExtension().appendingPathExtension("sqlite")
            let edit = try program("/usr/bin/env", ["python3", "-c", "import sqlite3,sys; d=sqlite3.connect(sys.argv[1]); d.execute(\"UPDATE stop SET name = 'x' WHERE code = '100007'\"); d.commit()",
                                                    database.path])
            XCTAssertEqual(edit.status, 0, edit.stderr)
            damaged += 1
        }
        XCTAssertEqual(damaged, 1)
        run = try build("kept", "out/kept.sqlite")
        XCTAssertTrue(run.stderr.contains("of the bundle's tables through stop is damaged or was edited (its SHA-256 is not the one recorded): those tables were written again"),
                      run.stderr)
        XCTAssertNil(try reusedTables())
        try compareWithFullBuild("kept", "out/kept.sqlite", "no tampered table reached the bundle")
        let search = try program("/usr/bin/env", ["python3", "-c", "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute(\"SELECT count(*) FROM stop WHERE name = 'x'\").fetchone()[0])",
                                                  file("out/kept.sqlite").path])
        XCTAssertEqual(search.stdout.trimmingCharacters(in: .whitespacesAndNewlines), "0", search.stderr)
    }

    /// The real Patras stop list (in code order) split into 12 files of one source filling a table keyed by the code,
    /// with names that must not be NULL: the rebuild after an edit takes the other 11 files from the cache, and what
    /// it knows of their rows (`StagedTableFacts`, stored per file) must give the findings and bytes of a full build,
    /// whether the edit keeps the order, breaks it at the file's first line, repeats the key of the line before the
    /// file or blanks a name.
    func testAKeyedTableFromManyFilesGetsAFullBuildsFindingsAfterEachEdit() throws {
        let lines = try String(contentsOf: CLITestCase.repositoryRoot.appendingPathComponent("raw/patras/StopsUTF8.txt"), encoding: .utf8)
            .split(separator: "\n").map(String.init)
        let parts = stride(from: 0, to: lines.count, by: 14).map { Array(lines[$0..<min(lines.count, $0 + 14)]) }
        XCTAssertEqual(parts.count, 12)
        func write(_ part: Int, _ lines: [String]) throws {
            try (lines.joined(separator: "\n") + "\n").write(to: file("stops/parts/part-\(String(format: "%02d", part)).txt"), atomically: true, encoding: .utf8)
        }
        try FileManager.default.createDirectory(at: file("stops/parts"), withIntermediateDirectories: true)
        for (index, part) in parts.enumerated() { try write(index, part) }
        try """
            { bundle: "stops", schemaVersion: 1,
              tables: [{ name: "stop", columns: [{ name: "code", type: "text" }, { name: "name", type: "text", notNull: true },
                                                 { name: "longitude", type: "real" }, { name: "latitude", type: "real" }],
                         primaryKey: ["code"] }],
              sources: [{ name: "stops", format: "delimited", path: "parts/*.txt", options: { fields: ["name", "code", "longitude", "latitude"] },
                          into: "stop", columns: { code: "code", name: { field: "name", normalize: ["trim", "emptyToNull"] }, longitude: "longitude", latitude: "latitude" } }] }
            """.write(to: file("stops/kiln.json5"), atomically: true, encoding: .utf8)
        _ = try build("stops", "out/stops.sqlite")

        func name(_ line: String) -> String { String(line.split(separator: ";")[0]) }
        let edits: [(what: String, part: Int, lines: [String], finding: DiagnosticCode?)] = [
            ("a name changed", 5, parts[5].enumerated().map { $0 == 3 ? $1.replacingOccurrences(of: name($1), with: name($1) + " Α") : $1 }, nil),
            ("a line of an earlier file first, under another name", 6, [parts[1][2].replacingOccurrences(of: name(parts[1][2]), with: "Άλλη")] + parts[6],
             .duplicateKey),
            // The last line of the file before repeated with a name that sorts after its own: still in order.
            ("the key before the file repeated", 6, [parts[5][13].replacingOccurrences(of: name(parts[5][13]), with: "Ωραίο όνομα")] + parts[6], .duplicateKey),
            ("a name blanked", 8, parts[8].enumerated().map { $0 == 0 ? ";" + $1.split(separator: ";", omittingEmptySubsequences: false).dropFirst().joined(separator: ";") : $1 },
             .notNull),
        ]
        for edit in edits {
            for (index, part) in parts.enumerated() { try write(index, part) }
            try write(edit.part, edit.lines)
            let (run, reuse) = try buildAndCompare("stops", "out/stops.sqlite", edit.what)
            XCTAssertEqual(reuse["stops"]?[1], 12, edit.what)
            XCTAssertGreaterThanOrEqual(reuse["stops"]?[0] ?? 0, 10, "\(edit.what): only the edited files were read")
            if let finding = edit.finding {
                XCTAssertEqual(run.status, 1, edit.what)
                XCTAssertTrue(run.stderr.contains("  \(finding.rawValue) (error) ×1\n"), "\(edit.what): \(run.stderr)")
            } else {
                XCTAssertEqual(run.status, 0, "\(edit.what): \(run.stderr)")
            }
        }
    }

    /// The entry files of the source named `name` (`SourceCache`: the first 16 hex digits of the SHA-256 of its name).
    private func entryDatabase(of name: String, in folder: URL) throws -> URL {
        folder.appendingPathComponent(try entryID(name) + ".sqlite")
    }

    private func entryRecord(of name: String, in folder: URL) throws -> URL {
        folder.appendingPathComponent(try entryID(name) + ".json")
    }

    private func entryID(_ name: String) throws -> String {
        let run = try program("/usr/bin/env", ["python3", "-c", "import hashlib,sys; print(hashlib.sha256(sys.argv[1].encode()).hexdigest()[:16])", name])
        return run.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
