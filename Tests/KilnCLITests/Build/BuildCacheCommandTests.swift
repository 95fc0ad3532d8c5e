import Foundation
import XCTest
import KilnKit
import KilnTestSupport

/// The build cache through `kiln build`: a build where nothing changed keeps the bundle and report in place (the
/// same bytes a full build writes), any edit of an input, the manifest or a vocabulary builds again, and a cache that
/// cannot be trusted is an info finding and a full build.
final class BuildCacheCommandTests: CLITestCase {
    static let samples = ["patras", "patras-web", "itravel", "museum", "atlas"]

    /// Device and inode of a file: the same while it has not been replaced.
    private func identity(_ path: String) throws -> [UInt64] {
        let attributes = try FileManager.default.attributesOfItem(atPath: file(path).path)
        return [(attributes[.systemNumber] as? NSNumber)?.uint64Value ?? 0, (attributes[.systemFileNumber] as? NSNumber)?.uint64Value ?? 0]
    }

    func testNothingChangedKeepsEverySampleBundleAndReportAsAFullBuildWritesThem() throws {
        for sample in BuildCacheCommandTests.samples {
            try copy("raw/\(sample)", to: sample)
            let bundle = "out/\(sample).sqlite", report = "out/\(sample).report.json"
            let first = try build(sample, bundle)
            XCTAssertTrue(first.stderr.hasPrefix("built \(bundle) "), first.stderr)
            let built = try sha256(bundle), builtReport = try sha256(report), inode = try identity(bundle)

            let again = try build(sample, bundle)
            XCTAssertTrue(again.stderr.hasPrefix("up to date: \(bundle) (bundle "), again.stderr)
            XCTAssertTrue(again.stderr.components(separatedBy: "\n")[0].contains("every source reused ("), again.stderr)
            XCTAssertEqual(again.stderr.components(separatedBy: "\n").dropFirst().joined(separator: "\n"),
                           first.stderr.components(separatedBy: "\n").dropFirst().joined(separator: "\n"), "\(sample): the same summary")
            XCTAssertEqual(try identity(bundle), inode, "\(sample): the bundle was not replaced")
            XCTAssertEqual(try sha256(report), builtReport, sample)

            let json = try kiln("build", sample, "--out", bundle, "--format", "json")
            XCTAssertEqual(json.stdout, try String(contentsOf: file(report), encoding: .utf8) + "\n", "\(sample): --format json prints the kept report")

            let full = try build(sample, bundle, "--no-cache")
            XCTAssertTrue(full.stderr.hasPrefix("built \(bundle) "), "\(sample): --no-cache builds in full: \(full.stderr)")
            XCTAssertNotEqual(try identity(bundle), inode, "\(sample): --no-cache wrote the bundle again")
            XCTAssertEqual(try sha256(bundle), built, "\(sample): a full build gives the kept bytes")
            XCTAssertEqual(try sha256(report), builtReport, sample)
        }
    }

    func testAnEditedInputManifestOrVocabularyIsBuiltAgainAsAFullBuildWould() throws {
        try copy("raw/patras-web", to: "web")
        _ = try build("web", "out/web.sqlite")
        let original = try sha256("out/web.sqlite")
        // Each edit, and whether it changes the bundle.
        let edits: [(what: String, path: String, old: String, new: String, changes: Bool)] = [
            ("an input", "web/stops-2.xml", "<name>Νοσοκομείο Ρίου</name>", "<name>Νοσοκομείο Ρίου Α</name>", true),
            ("a vocabulary", "web/kiln.json5", #"code: "weekdays""#, #"code: "weekday""#, true),
            ("a comment in the manifest", "web/kiln.json5", "  vocabularies: {", "  // edited\n  vocabularies: {", false),
        ]
        var previous = original
        for edit in edits {
            try replace(edit.old, with: edit.new, in: edit.path)
            let run = try build("web", "out/web.sqlite")
            XCTAssertTrue(run.stderr.hasPrefix("built out/web.sqlite "), "\(edit.what): \(run.stderr)")
            _ = try build("web", "fresh/web.sqlite", "--no-cache")
            XCTAssertEqual(try sha256("out/web.sqlite"), try sha256("fresh/web.sqlite"), "\(edit.what): the bytes of a full build")
            XCTAssertEqual(try sha256("out/web.sqlite") != previous, edit.changes, edit.what)
            previous = try sha256("out/web.sqlite")
            XCTAssertTrue(try build("web", "out/web.sqlite").stderr.hasPrefix("up to date: "), edit.what)
        }

        // An edit of the same length with the modification time set back is still seen (its status-change time moved).
        let path = "web/stops-2.xml"
        var status = stat()
        XCTAssertEqual(stat(file(path).path, &status), 0)
        try replace("Πλατεία Ρίου", with: "Πλατεία Ρίοθ", in: path)
        XCTAssertEqual(utimensat(AT_FDCWD, file(path).path, [status.st_atim, status.st_mtim], 0), 0, "the time set back to the nanosecond")
        let run = try build("web", "out/web.sqlite")
        XCTAssertTrue(run.stderr.hasPrefix("built out/web.sqlite "), run.stderr)
        XCTAssertNotEqual(try sha256("out/web.sqlite"), previous)
        _ = try build("web", "fresh/web.sqlite", "--no-cache")
        XCTAssertEqual(try sha256("out/web.sqlite"), try sha256("fresh/web.sqlite"))
    }

    func testADamagedCacheOrAChangedBundleIsAnInfoFindingAndAFullBuild() throws {
        try copy("raw/patras", to: "patras")
        _ = try build("patras", "out/app.sqlite")
        let built = try sha256("out/app.sqlite"), report = try sha256("out/app.report.json")
        let record = "out/\(KilnFileNames.cacheFolder)/app.sqlite/build.json"
        try replace("\"rows\" : 168", with: "\"rows\" : 169", in: record)

        let damaged = try build("patras", "out/app.sqlite")
        XCTAssertTrue(damaged.stderr.hasPrefix("built out/app.sqlite "), damaged.stderr)
        XCTAssertTrue(damaged.stderr.contains("diagnostics: 0 errors, 1 warning, 1 info\n"), damaged.stderr)
        XCTAssertTrue(damaged.stderr.contains("  build.cache (info) ×1\n    the build cache out/.kiln-cache/app.sqlite/build.json is damaged or was edited"), damaged.stderr)
        XCTAssertTrue(damaged.stderr.contains("  stop            168 rows\n"), "the recorded counts were not trusted: \(damaged.stderr)")
        XCTAssertEqual(try sha256("out/app.sqlite"), built)
        let findings = try XCTUnwrap((try JSONSerialization.jsonObject(with: Data(contentsOf: file("out/app.report.json"))) as? [String: Any])?["diagnostics"] as? [[String: Any]])
        XCTAssertEqual(findings.filter { $0["code"] as? String == "build.cache" }.map { $0["severity"] as? String }, ["info"])
        // That report is not reused: the next build is built (its sources' rows taken from their cache entries, which
        // its report lists besides what a full build says), and the one after it reuses that one's.
        XCTAssertTrue(try build("patras", "out/app.sqlite").stderr.hasPrefix("built "))
        var rebuiltReport = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(contentsOf: file("out/app.report.json"))) as? [String: Any])
        XCTAssertNotNil(rebuiltReport.removeValue(forKey: "reusedSources"))
        XCTAssertEqual(rebuiltReport.removeValue(forKey: "reusedIndexes") as? [String], ["stop_search"], "the stops' rows are the same")
        XCTAssertEqual(rebuiltReport.removeValue(forKey: "reusedTables") as? [String], ["stop"], "the bundle's first table, before the query table `line`")
        XCTAssertNotNil(rebuiltReport.removeValue(forKey: "reusedRules"), "the rules over the tables no query fills")
        _ = try build("patras", "fresh/app.sqlite", "--no-cache")
        // The same report but for the paths of its bundles.
        let freshText = try String(contentsOf: file("fresh/app.report.json"), encoding: .utf8).replacingOccurrences(of: "\"fresh/", with: "\"out/")
        let fresh = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(freshText.utf8)) as? [String: Any])
        XCTAssertEqual(NSDictionary(dictionary: rebuiltReport), NSDictionary(dictionary: fresh))
        _ = report
        XCTAssertTrue(try build("patras", "out/app.sqlite").stderr.hasPrefix("up to date: "))

        // The list of inputs beside the record, edited (one digest's last digit), is not trusted either.
        let list = "out/\(KilnFileNames.cacheFolder)/app.sqlite/inputs.txt"
        var listText = try String(contentsOf: file(list), encoding: .utf8)
        let tab = try XCTUnwrap(listText.range(of: "\t"))
        let digit = listText.index(before: tab.lowerBound)
        listText.replaceSubrange(digit...digit, with: listText[digit] == "0" ? "1" : "0")
        try listText.write(to: file(list), atomically: false, encoding: .utf8)
        let edited = try build("patras", "out/app.sqlite")
        XCTAssertTrue(edited.stderr.hasPrefix("built out/app.sqlite "), edited.stderr)
        XCTAssertTrue(edited.stderr.contains("  build.cache (info) ×1\n    the build cache's list of inputs out/.kiln-cache/app.sqlite/inputs.txt is missing, damaged or was edited"), edited.stderr)
        XCTAssertEqual(try sha256("out/app.sqlite"), built)
        XCTAssertTrue(try build("patras", "out/app.sqlite").stderr.hasPrefix("built "))
        XCTAssertTrue(try build("patras", "out/app.sqlite").stderr.hasPrefix("up to date: "))

        // A bundle changed since it was written (one byte appended) is not kept.
        let handle = try FileHandle(forWritingTo: file("out/app.sqlite"))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data([0]))
        try handle.close()
        let changed = try build("patras", "out/app.sqlite")
        XCTAssertTrue(changed.stderr.contains("the bundle out/app.sqlite is not the one the build cache out/.kiln-cache/app.sqlite/build.json recorded"), changed.stderr)
        XCTAssertEqual(try sha256("out/app.sqlite"), built)

        // A cache removed, or a bundle removed, is an ordinary full build.
        XCTAssertTrue(try build("patras", "out/app.sqlite").stderr.hasPrefix("built "))
        try FileManager.default.removeItem(at: file("out/\(KilnFileNames.cacheFolder)"))
        XCTAssertTrue(try build("patras", "out/app.sqlite").stderr.contains("0 info"))
        try FileManager.default.removeItem(at: file("out/app.sqlite"))
        let rebuilt = try build("patras", "out/app.sqlite")
        XCTAssertTrue(rebuilt.stderr.hasPrefix("built ") && rebuilt.stderr.contains("0 info"), rebuilt.stderr)
        XCTAssertEqual(try sha256("out/app.sqlite"), built)
    }

    /// A build killed while writing a cache entry leaves its temporary files (`.<id>.json.<pid>.tmp`,
    /// `.<id>.sqlite.<pid>.tmp`) in the entries' folder; the next build removes them as it opens the folder.
    func testTheTemporaryFilesOfAKilledEntryWriteAreRemovedWhenTheEntryIsWrittenAgain() throws {
        try copy("raw/patras-web", to: "web")
        _ = try build("web", "out/web.sqlite")
        let sources = file("out/\(KilnFileNames.cacheFolder)/web.sqlite/sources")
        let records = try FileManager.default.contentsOfDirectory(atPath: sources.path).filter { $0.hasSuffix(".json") }
        XCTAssertFalse(records.isEmpty)
        func contents(_ name: String) -> Data? { FileManager.default.contents(atPath: sources.appendingPathComponent(name).path) }
        let before = Dictionary(uniqueKeysWithValues: records.map { ($0, contents($0)) })
        let dead = 2_000_000_000  // above Linux's pid_max: no process has it
        let stale = records.flatMap { record in
            let id = record.dropLast(".json".count)
            return [".\(id).json.\(dead).tmp", ".\(id).sqlite.\(dead).tmp"]
        }
        for name in stale { XCTAssertTrue(FileManager.default.createFile(atPath: sources.appendingPathComponent(name).path, contents: Data("x".utf8))) }
        try replace("<name>Πλατεία Ρίου</name>", with: "<name>Ρίο</name>", in: "web/stops-2.xml")
        let run = try build("web", "out/web.sqlite")
        XCTAssertEqual(run.status, 0, run.stderr)
        let rewritten = records.filter { contents($0) != before[$0] }
        XCTAssertFalse(rewritten.isEmpty, "the edited source's entry is written again")
        let left = Set(try FileManager.default.contentsOfDirectory(atPath: sources.path))
        for record in records {
            let id = record.dropLast(".json".count)
            let temporaries = [".\(id).json.\(dead).tmp", ".\(id).sqlite.\(dead).tmp"]
            if rewritten.contains(record) {
                XCTAssertTrue(left.isDisjoint(with: temporaries), "\(record): \(left.sorted())")
            }
        }
    }

    func testKilledAndSimultaneousBuildsLeaveTheBundleAFullBuildWrites() throws {
        try TestTier.requireFull("a loop of killed builds")
        try copy("raw/patras-web", to: "web")
        _ = try build("web", "reference/old.sqlite", "--no-cache")
        try replace("<name>Πλατεία Ρίου</name>", with: "<name>Ρίο</name>", in: "web/stops-2.xml")
        _ = try build("web", "reference/new.sqlite", "--no-cache")
        let new = try sha256("reference/new.sqlite")
        try replace("<name>Ρίο</name>", with: "<name>Πλατεία Ρίου</name>", in: "web/stops-2.xml")
        _ = try build("web", "out/web.sqlite")
        let old = try sha256("reference/old.sqlite")
        XCTAssertEqual(try sha256("out/web.sqlite"), old)
        let started = Date()
        _ = try build("web", "timing/web.sqlite")
        let duration = Date().timeIntervalSince(started)

        // Killed at points spread over a build, alternating the input between the two versions.
        var killed = 0
        for round in 0..<8 {
            let newer = round % 2 == 0
            try replace(newer ? "<name>Πλατεία Ρίου</name>" : "<name>Ρίο</name>",
                        with: newer ? "<name>Ρίο</name>" : "<name>Πλατεία Ρίου</name>", in: "web/stops-2.xml")
            let process = try start(["build", "web", "--out", "out/web.sqlite", "--quiet"])
            usleep(useconds_t(duration * Double(round + 1) / 8 * 1_000_000))
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            if process.terminationReason == .uncaughtSignal { killed += 1 }
            _ = try build("web", "out/web.sqlite")
            XCTAssertEqual(try sha256("out/web.sqlite"), newer ? new : old, "round \(round): the next build writes what a full build does")
            XCTAssertTrue(try build("web", "out/web.sqlite").stderr.hasPrefix("up to date: "), "round \(round)")
        }
        XCTAssertGreaterThan(killed, 0, "no build was killed before it ended")
        let cache = file("out/\(KilnFileNames.cacheFolder)/web.sqlite").path
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: cache).sorted(), ["build.json", "fulltext", "inputs.txt", "rules", "sources", "tables"])
        for folder in ["sources", "fulltext", "tables", "rules"] {
            let entries = try FileManager.default.contentsOfDirectory(atPath: cache + "/" + folder)
            XCTAssertFalse(entries.contains { !$0.hasSuffix(".json") && !$0.hasSuffix(".sqlite") }, "no temporary file left in the cache: \(entries)")
        }

        // Two builds at once, after an edit: both succeed and leave the full build's bytes.
        try replace("<name>Πλατεία Ρίου</name>", with: "<name>Ρίο</name>", in: "web/stops-2.xml")
        let first = try start(["build", "web", "--out", "out/web.sqlite", "--quiet"])
        let second = try start(["build", "web", "--out", "out/web.sqlite", "--quiet"])
        first.waitUntilExit()
        second.waitUntilExit()
        XCTAssertEqual([first.terminationStatus, second.terminationStatus], [0, 0])
        XCTAssertEqual(try sha256("out/web.sqlite"), new)
        XCTAssertTrue(try build("web", "out/web.sqlite").stderr.hasPrefix("up to date: "))
    }

    /// A baseline (on the command line, or the manifest's, as docs/guide/ci.md recommends) is compared on every build,
    /// so the bundle is never kept whole as "up to date"; but every source, the full-text index, the bundle's tables
    /// and the rules' findings come from the cache, and the summary says so. The bundle is the one --no-cache writes.
    func testABuildWithABaselineIsNeverReusedWholeButTakesItsPartsFromTheCache() throws {
        try copy("raw/patras", to: "patras")
        _ = try build("patras", "out/app.sqlite")
        try FileManager.default.copyItem(at: file("out/app.sqlite"), to: file("release.sqlite"))
        let reusedLines = ["reused from the build cache (unchanged files, not read again): stops (1 of 1 file), lines (1 of 1 file)",
                           "reused from the build cache (the same rows, not indexed again): full-text index stop_search",
                           "reused from the build cache (the same rows, not checked again): the findings of "]
        for _ in 0..<2 {
            let run = try build("patras", "out/app.sqlite", "--baseline", "release.sqlite")
            XCTAssertTrue(run.stderr.hasPrefix("built out/app.sqlite "), run.stderr)
            for line in reusedLines { XCTAssertTrue(run.stderr.contains(line), run.stderr) }
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: file("out/\(KilnFileNames.cacheFolder)/app.sqlite/build.json").path),
                       "a build compared with a baseline leaves no record")
        XCTAssertTrue(try build("patras", "out/app.sqlite").stderr.hasPrefix("built "), "the record was removed when the baseline build replaced the bundle")
        XCTAssertTrue(try build("patras", "out/app.sqlite").stderr.hasPrefix("up to date: "))
        // The manifest's baseline, as the CI guide recommends declaring it.
        let manifest = file("patras/kiln.json5")
        let text = try String(contentsOf: manifest, encoding: .utf8)
        try text.replacingOccurrences(of: "  schemaVersion: 1,", with: "  schemaVersion: 1,\n  baseline: \"../release.sqlite\",")
            .write(to: manifest, atomically: true, encoding: .utf8)
        _ = try build("patras", "out/app.sqlite")
        let declared = try build("patras", "out/app.sqlite")
        XCTAssertTrue(declared.stderr.hasPrefix("built out/app.sqlite "), declared.stderr)
        for line in reusedLines { XCTAssertTrue(declared.stderr.contains(line), declared.stderr) }
        let cached = try sha256("out/app.sqlite")
        XCTAssertEqual(try kiln("build", "patras", "--out", "out/app.sqlite", "--no-cache", "--quiet").status, 0)
        XCTAssertEqual(try sha256("out/app.sqlite"), cached, "the bundle taken from the cache is the one a full build writes")
    }

    func testACacheThatIsALinkOrAFIFOIsNeitherReadNorWritten() throws {
        try copy("raw/patras", to: "patras")
        try FileManager.default.createDirectory(at: file("elsewhere"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: file("out"), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(at: file("out/\(KilnFileNames.cacheFolder)"), withDestinationURL: file("elsewhere"))
        for _ in 0..<2 {
            let run = try build("patras", "out/app.sqlite")
            XCTAssertTrue(run.stderr.hasPrefix("built ") && run.stderr.contains("is not a folder holding a regular file: it is not used"), run.stderr)
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: file("elsewhere").path), [], "nothing written through the link")

        try FileManager.default.removeItem(at: file("out/\(KilnFileNames.cacheFolder)"))
        try FileManager.default.createDirectory(at: file("out/\(KilnFileNames.cacheFolder)/app.sqlite"), withIntermediateDirectories: true)
        XCTAssertEqual(mkfifo(file("out/\(KilnFileNames.cacheFolder)/app.sqlite/build.json").path, 0o644), 0)
        let fifo = try build("patras", "out/app.sqlite")
        XCTAssertTrue(fifo.stderr.contains("is not a folder holding a regular file"), "the FIFO is not opened: \(fifo.stderr)")
        XCTAssertEqual(OutputPathKind.of(file("out/\(KilnFileNames.cacheFolder)/app.sqlite/build.json")), S_IFIFO, "and not removed")
    }

    func testATargetsOwnBundleIsCheckedLikeTheMainOne() throws {
        try copy("raw/itravel", to: "itravel")
        _ = try build("itravel", "out/app.sqlite")
        let android = file("out/app.android.sqlite")
        let original = try Data(contentsOf: android)
        XCTAssertTrue(try build("itravel", "out/app.sqlite").stderr.hasPrefix("up to date: out/app.sqlite "))
        // The Android bundle changed since the build recorded it: built in full, and said so.
        try (original + Data([0])).write(to: android)
        let changed = try build("itravel", "out/app.sqlite")
        XCTAssertTrue(changed.stderr.hasPrefix("built out/app.sqlite "), changed.stderr)
        XCTAssertTrue(changed.stderr.contains("the android bundle out/app.android.sqlite is not the one the build cache"), changed.stderr)
        XCTAssertEqual(try Data(contentsOf: android), original, "the full build wrote the Android bundle again")
        // Removed: built in full again, and the file is back.
        try FileManager.default.removeItem(at: android)
        XCTAssertTrue(try build("itravel", "out/app.sqlite").stderr.hasPrefix("built out/app.sqlite "))
        XCTAssertEqual(try Data(contentsOf: android), original)
    }
}