import Foundation
import XCTest
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

final class ManifestLoaderTests: KilnTestCase {
    /// A small valid manifest; each test changes one thing in it. Line numbers are found by a unique marker.
    private let valid = """
        // A tiny pipeline.
        {
          bundle: "tiny",
          schemaVersion: 1,
          tables: [
            {
              name: "stop",
              columns: [
                { name: "code", type: "text", pattern: "^[0-9]{4}$" },
                { name: "name", type: "text", notNull: true },
              ],
              primaryKey: ["code"],
            },
          ],
          sources: [
            {
              name: "stops",
              format: "delimited",
              path: "stops.txt",
              options: { fields: ["name", "code"] },
              into: "stop",
              columns: { code: "code", name: "name" },
            },
          ],
        }
        """

    /// Writes `manifest` and its input into `folder` (inside the temporary folder) and returns the folder's path.
    @discardableResult
    private func pipeline(_ manifest: String, folder: String = "pipe", input: Bool = true) throws -> String {
        try write(manifest, to: "\(folder)/kiln.json5")
        if input { try write("Πάτρα; 0102\n", to: "\(folder)/stops.txt") }
        return temporaryDirectory.appendingPathComponent(folder).path
    }

    /// The manifest with `old` replaced by `new` (which must occur exactly once).
    private func valid(replacing old: String, with new: String) -> String {
        XCTAssertEqual(valid.components(separatedBy: old).count, 2, "\"\(old)\" must occur once")
        return valid.replacingOccurrences(of: old, with: new)
    }

    /// The 1-based line of `text` holding `marker`, which must occur on exactly one line.
    private func line(of marker: String, in text: String) -> Int {
        let lines = text.components(separatedBy: "\n")
        let found = lines.indices.filter { lines[$0].contains(marker) }
        XCTAssertEqual(found.count, 1, "\"\(marker)\" must be on exactly one line")
        return (found.first ?? -1) + 1
    }

    /// Loads the pipeline at `path` and returns the manifest issue it must fail with.
    private func issue(_ path: String, file: StaticString = #filePath, line: UInt = #line) -> ManifestIssue? {
        do {
            _ = try ManifestLoader.load(path)
            XCTFail("the manifest loaded, but should have failed", file: file, line: line)
        } catch KilnError.manifest(let issue) {
            return issue
        } catch {
            XCTFail("expected KilnError.manifest, got \(error)", file: file, line: line)
        }
        return nil
    }

    private func assertIssue(_ manifest: String, keyPath: String, marker: String, message: String,
                             file: StaticString = #filePath, line: UInt = #line) throws {
        let path = try pipeline(manifest)
        guard let found = issue(path, file: file, line: line) else { return }
        XCTAssertEqual(found.keyPath, keyPath, file: file, line: line)
        XCTAssertEqual(found.line, self.line(of: marker, in: manifest), file: file, line: line)
        XCTAssertTrue(found.message.contains(message), "message: \(found.message)", file: file, line: line)
        XCTAssertEqual(found.file, URL(fileURLWithPath: path).appendingPathComponent("kiln.json5").standardizedFileURL.path,
                       file: file, line: line)
    }

    func testValidManifestLoads() throws {
        let pipeline = try ManifestLoader.load(try self.pipeline(valid))
        XCTAssertEqual(pipeline.manifest.bundle, "tiny")
        XCTAssertEqual(pipeline.manifest.schemaVersion, 1)
        XCTAssertEqual(pipeline.manifest.tables.map(\.name), ["stop"])
        XCTAssertEqual(pipeline.manifest.table("stop")?.primaryKey, ["code"])
        XCTAssertEqual(pipeline.sources.count, 1)
        XCTAssertEqual(pipeline.sources[0].reader.fieldNames, ["name", "code"])
        XCTAssertEqual(pipeline.sources[0].files.map(\.relativePath), ["stops.txt"])
        // A string mapping trims by default.
        XCTAssertEqual(pipeline.manifest.sources[0].targets[0].columns["code"]?.normalize, [.named("trim")])
    }

    func testManifestFileCanBeNamedDirectly() throws {
        let folder = try pipeline(valid)
        let pipeline = try ManifestLoader.load(folder + "/kiln.json5")
        XCTAssertEqual(pipeline.manifest.directory.standardizedFileURL.path, URL(fileURLWithPath: folder).standardizedFileURL.path)
    }

    func testMissingPipelineIsAUsageError() throws {
        XCTAssertThrowsError(try ManifestLoader.load(temporaryDirectory.appendingPathComponent("nowhere").path)) { error in
            guard case KilnError.usage(let message) = error else { return XCTFail("got \(error)") }
            XCTAssertTrue(message.hasPrefix("no pipeline at "), message)
        }
        try FileManager.default.createDirectory(at: temporaryDirectory.appendingPathComponent("empty"), withIntermediateDirectories: true)
        XCTAssertThrowsError(try ManifestLoader.load(temporaryDirectory.appendingPathComponent("empty").path)) { error in
            guard case KilnError.usage(let message) = error else { return XCTFail("got \(error)") }
            XCTAssertTrue(message.hasPrefix("no kiln.json5 in "), message)
        }
    }

    func testUnknownTopLevelKey() throws {
        let manifest = valid(replacing: "  schemaVersion: 1,\n", with: "  schemaVersion: 1,\n  colour: \"red\",\n")
        try assertIssue(manifest, keyPath: "colour", marker: "colour:", message: "unknown key \"colour\"; expected one of: bundle, schemaVersion")
    }

    func testUnknownKeyInsideAColumn() throws {
        let manifest = valid(replacing: #"{ name: "name", type: "text", notNull: true },"#,
                             with: "{ name: \"name\", type: \"text\",\n          nullable: false },")
        try assertIssue(manifest, keyPath: "tables[0].columns[1].nullable", marker: "nullable:",
                        message: "unknown key \"nullable\"; expected one of: name, description, type, notNull")
    }

    func testWrongType() throws {
        let manifest = valid(replacing: "schemaVersion: 1,", with: "schemaVersion: \"one\",")
        try assertIssue(manifest, keyPath: "schemaVersion", marker: "schemaVersion:", message: "wrong type: expected a number")
    }

    func testWrongTypeDeepInside() throws {
        let manifest = valid(replacing: "notNull: true", with: "notNull: \"yes\"")
        try assertIssue(manifest, keyPath: "tables[0].columns[1].notNull", marker: "notNull:", message: "wrong type: expected true or false")
    }

    func testUnknownColumnType() throws {
        let manifest = valid(replacing: #"{ name: "name", type: "text", notNull: true },"#, with: #"{ name: "name", type: "varchar", notNull: true },"#)
        try assertIssue(manifest, keyPath: "tables[0].columns[1].type", marker: "varchar", message: "varchar")
    }

    func testMissingRequiredKey() throws {
        let manifest = valid(replacing: "      into: \"stop\",\n", with: "")
        let path = try pipeline(manifest)
        let found = try XCTUnwrap(issue(path))
        XCTAssertEqual(found.keyPath, "sources[0].into")
        XCTAssertEqual(found.message, "missing required key \"into\"")
        // The key is absent, so the line is that of its object.
        XCTAssertEqual(found.line, line(of: "name: \"stops\",", in: manifest) - 1)
    }

    func testUnknownColumnInASourceMapping() throws {
        let manifest = valid(replacing: #"columns: { code: "code", name: "name" },"#,
                             with: "columns: {\n        code: \"code\",\n        name: \"name\",\n        colour: \"name\",\n      },")
        try assertIssue(manifest, keyPath: "sources[0].columns.colour", marker: "colour:",
                        message: "table \"stop\" has no column \"colour\"; columns: code, name")
    }

    func testMappingToAFieldTheReaderDoesNotHave() throws {
        let manifest = valid(replacing: #"columns: { code: "code", name: "name" },"#,
                             with: "columns: {\n        code: \"kode\",\n        name: \"name\",\n      },")
        try assertIssue(manifest, keyPath: "sources[0].columns.code", marker: "\"kode\"",
                        message: "the delimited reader has no field \"kode\"; fields: name, code, _file")
    }

    func testIntoAnUnknownTable() throws {
        let manifest = valid(replacing: "into: \"stop\",", with: "into: \"stops\",")
        try assertIssue(manifest, keyPath: "sources[0].into", marker: "into:", message: "no table named \"stops\"; tables: stop")
    }

    func testUnknownFormat() throws {
        let manifest = valid(replacing: "format: \"delimited\",", with: "format: \"csv\",")
        try assertIssue(manifest, keyPath: "sources[0].format", marker: "format:",
                        message: "unknown format \"csv\"; expected one of: delimited, routes, timetable")
    }

    func testUnknownReaderOption() throws {
        let manifest = valid(replacing: #"options: { fields: ["name", "code"] },"#,
                             with: "options: {\n        fields: [\"name\", \"code\"],\n        delimiter: \",\",\n      },")
        try assertIssue(manifest, keyPath: "sources[0].options.delimiter", marker: "delimiter:",
                        message: "unknown key \"delimiter\"; expected one of: separator, fields, tail")
    }

    func testMissingReaderOption() throws {
        let manifest = valid(replacing: #"options: { fields: ["name", "code"] },"#, with: "options: { header: true },")
        let found = try XCTUnwrap(issue(try pipeline(manifest)))
        XCTAssertEqual(found.keyPath, "sources[0].options.fields")
        XCTAssertEqual(found.message, "missing required key \"fields\"")
        XCTAssertEqual(found.line, line(of: "header: true", in: manifest))
    }

    func testMissingInputFile() throws {
        let manifest = valid(replacing: "path: \"stops.txt\",", with: "path: \"nope.txt\",")
        try assertIssue(manifest, keyPath: "sources[0].path", marker: "nope.txt", message: "input file \"nope.txt\" does not exist in ")
    }

    func testGlobMatchingNothing() throws {
        let manifest = valid(replacing: "path: \"stops.txt\",", with: "path: \"stops-*.csv\",")
        try assertIssue(manifest, keyPath: "sources[0].path", marker: "stops-*", message: "no file matches \"stops-*.csv\"")
    }

    func testGlobMatchesFilesSortedAndSkipsHiddenOnes() throws {
        let manifest = valid(replacing: "path: \"stops.txt\",", with: "path: \"data/stops-*.txt\",")
        try write("b; 0002\n", to: "pipe/data/stops-b.txt")
        try write("a; 0001\n", to: "pipe/data/stops-a.txt")
        try write("h; 0003\n", to: "pipe/data/.stops-hidden.txt")
        let loaded = try ManifestLoader.load(try pipeline(manifest))
        XCTAssertEqual(loaded.sources[0].files.map(\.relativePath), ["data/stops-a.txt", "data/stops-b.txt"])
    }

    func testPathLeavingTheFolder() throws {
        try write("x; 0001\n", to: "outside.txt")
        let manifest = valid(replacing: "path: \"stops.txt\",", with: "path: \"../outside.txt\",")
        try assertIssue(manifest, keyPath: "sources[0].path", marker: "outside.txt", message: "\"../outside.txt\" leaves the pipeline folder")
    }

    func testAbsolutePath() throws {
        let outside = try write("x; 0001\n", to: "outside.txt")
        let manifest = valid(replacing: "path: \"stops.txt\",", with: "path: \"\(outside.path)\",")
        try assertIssue(manifest, keyPath: "sources[0].path", marker: "outside.txt",
                        message: "\"\(outside.path)\" is an absolute path; source paths are relative to the pipeline folder")
    }

    func testSymlinkLeadingOutside() throws {
        let outside = try write("x; 0001\n", to: "outside.txt")
        let manifest = valid(replacing: "path: \"stops.txt\",", with: "path: \"link.txt\",")
        let folder = try pipeline(manifest)
        try FileManager.default.createSymbolicLink(atPath: folder + "/link.txt", withDestinationPath: outside.path)
        let found = try XCTUnwrap(issue(folder))
        XCTAssertEqual(found.keyPath, "sources[0].path")
        XCTAssertEqual(found.line, line(of: "link.txt", in: manifest))
        XCTAssertTrue(found.message.hasPrefix("\"link.txt\" leads outside the pipeline folder (to "), found.message)
        XCTAssertTrue(found.message.contains(outside.lastPathComponent), found.message)
    }

    func testRelativeSymlinkLeadingOutside() throws {
        try write("x; 0001\n", to: "outside.txt")
        let manifest = valid(replacing: "path: \"stops.txt\",", with: "path: \"link.txt\",")
        let folder = try pipeline(manifest)
        try FileManager.default.createSymbolicLink(atPath: folder + "/link.txt", withDestinationPath: "../outside.txt")
        let found = try XCTUnwrap(issue(folder))
        XCTAssertEqual(found.keyPath, "sources[0].path")
        XCTAssertTrue(found.message.contains("leads outside the pipeline folder"), found.message)
    }

    func testSymlinkStayingInsideIsAccepted() throws {
        let manifest = valid(replacing: "path: \"stops.txt\",", with: "path: \"link.txt\",")
        let folder = try pipeline(manifest)
        try FileManager.default.createSymbolicLink(atPath: folder + "/link.txt", withDestinationPath: "stops.txt")
        let loaded = try ManifestLoader.load(folder)
        XCTAssertEqual(loaded.sources[0].files.map(\.relativePath), ["link.txt"])
    }

    func testPipelineFolderReachedThroughASymlinkLoads() throws {
        let folder = try pipeline(valid)
        let link = temporaryDirectory.appendingPathComponent("linked-pipe")
        try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: folder)
        let loaded = try ManifestLoader.load(link.path)
        XCTAssertEqual(loaded.sources[0].files.map(\.relativePath), ["stops.txt"])
    }

    func testSymlinkToASiblingFolderWithTheSamePrefixIsOutside() throws {
        // "pipe-other" starts with "pipe" but is not inside it.
        let sibling = try write("x; 0001\n", to: "pipe-other/stops.txt")
        let manifest = valid(replacing: "path: \"stops.txt\",", with: "path: \"link.txt\",")
        let folder = try pipeline(manifest)
        try FileManager.default.createSymbolicLink(atPath: folder + "/link.txt", withDestinationPath: sibling.path)
        let found = try XCTUnwrap(issue(folder))
        XCTAssertTrue(found.message.contains("leads outside the pipeline folder"), found.message)
    }

    func testTableNameThatIsNotAnIdentifier() throws {
        let manifest = valid(replacing: "name: \"stop\",", with: "name: \"stop; DROP\",")
            .replacingOccurrences(of: "into: \"stop\",", with: "into: \"stop; DROP\",")
        try assertIssue(manifest, keyPath: "tables[0].name", marker: "name: \"stop; DROP\"",
                        message: "\"stop; DROP\" is not a plain identifier (ASCII letters, digits and \"_\", not starting with a digit)")
    }

    func testColumnNameStartingWithADigit() throws {
        let manifest = valid(replacing: #"{ name: "name", type: "text", notNull: true },"#, with: #"{ name: "1name", type: "text" },"#)
        try assertIssue(manifest, keyPath: "tables[0].columns[1].name", marker: "1name", message: "is not a plain identifier")
    }

    func testReservedTableName() throws {
        // SQLite compares names without case: `SQLITE_x` and `Kiln_metadata` failed late, at staging or in the bundle.
        for name in ["kiln_stop", "Kiln_metadata", "SQLITE_stat1", "sqlite_x"] {
            let manifest = valid(replacing: "name: \"stop\",", with: "name: \"\(name)\",")
                .replacingOccurrences(of: "into: \"stop\",", with: "into: \"\(name)\",")
            try assertIssue(manifest, keyPath: "tables[0].name", marker: "name: \"\(name)\"",
                            message: "table names starting with \"kiln_\" or \"sqlite_\" (in any case) are reserved")
        }
    }

    func testInvalidRegexInAColumnPattern() throws {
        let manifest = valid(replacing: #"pattern: "^[0-9]{4}$""#, with: #"pattern: "^[0-9{4}$""#)
        try assertIssue(manifest, keyPath: "tables[0].columns[0].pattern", marker: "pattern:", message: "invalid regular expression at offset ")
    }

    func testInvalidRegexInACaptureNormalizer() throws {
        let manifest = valid(replacing: #"columns: { code: "code", name: "name" },"#,
                             with: "columns: {\n        code: { field: \"code\", normalize: [{ capture: \"(\" }] },\n        name: \"name\",\n      },")
        try assertIssue(manifest, keyPath: "sources[0].columns.code.normalize[0]", marker: "capture:", message: "offset")
    }

    func testReferenceToAnUnknownColumn() throws {
        let manifest = valid(replacing: #"{ name: "name", type: "text", notNull: true },"#,
                             with: #"{ name: "name", type: "text", references: "stop.title" },"#)
        try assertIssue(manifest, keyPath: "tables[0].columns[1].references", marker: "stop.title",
                        message: "table \"stop\" has no column \"title\"")
    }

    func testPrimaryKeyNamingAnUnknownColumn() throws {
        let manifest = valid(replacing: #"primaryKey: ["code"],"#, with: #"primaryKey: ["id"],"#)
        try assertIssue(manifest, keyPath: "tables[0].primaryKey", marker: "primaryKey:", message: "table \"stop\" has no column \"id\"")
    }

    func testInvalidJSON5Syntax() throws {
        // The comma after the bundle name is missing.
        let manifest = valid(replacing: "bundle: \"tiny\",", with: "bundle: \"tiny\"")
        let found = try XCTUnwrap(issue(try pipeline(manifest)))
        XCTAssertEqual(found.keyPath, "")
        XCTAssertTrue(found.message.contains("not valid JSON"), found.message)
        XCTAssertNotNil(found.line)
    }

    /// What Foundation refuses in a string with "The given data was not valid JSON" at line 1 is named, with its place
    /// and line: a NUL (escaped any way), half a surrogate pair, a control character written as it is.
    func testAStringHoldingWhatNoManifestMayHoldIsNamedAtItsLine() throws {
        let cases: [(String, String)] = [
            (#""stop\u0000x""#, "the string at tables[0].name holds a NUL character (\\u0000), which a manifest may not hold"),
            (#""stop\x00""#, "the string at tables[0].name holds a NUL character (\\x00), which a manifest may not hold"),
            (#""stop\0""#, "the string at tables[0].name holds a NUL character (\\0), which a manifest may not hold"),
            (#""stop\uD800""#, "the string at tables[0].name holds \\uD800, half of a UTF-16 surrogate pair without its other half, which is no character; write the character itself, or both halves (\\uD83D\\uDE00)"),
            (#"'\uDE00stop'"#, "the string at tables[0].name holds \\uDE00, half of a UTF-16 surrogate pair without its other half, which is no character; write the character itself, or both halves (\\uD83D\\uDE00)"),
            ("\"stop\u{01}\"", "the string at tables[0].name holds the control character U+0001 written as it is, which JSON5 does not allow; write it as the escape \\u0001"),
            ("\"st\top\"", "the string at tables[0].name holds the control character U+0009 written as it is, which JSON5 does not allow; write it as the escape \\t"),
            ("\"stop\u{00}\"", "the string at tables[0].name holds a NUL character (U+0000), which a manifest may not hold"),
        ]
        for (written, message) in cases {
            let manifest = valid(replacing: #"name: "stop","#, with: "name: \(written),")
            let found = try XCTUnwrap(issue(try pipeline(manifest)), written)
            XCTAssertEqual(found.message, "not valid JSON5: " + message, written)
            XCTAssertEqual(found.line, line(of: "name: \(written),", in: manifest), written)
        }
        // In a key too; and the escapes Foundation reads are read.
        let key = valid(replacing: #"bundle: "tiny","#, with: "\"bun\\u0000dle\": \"tiny\",")
        XCTAssertEqual(try XCTUnwrap(issue(try pipeline(key))).message, "not valid JSON5: a key of the manifest holds a NUL character (\\u0000), which a manifest may not hold")
        XCTAssertNoThrow(try ManifestLoader.load(try pipeline(valid(replacing: #"bundle: "tiny","#, with: #"bundle: "tiny", description: "\uD83D\uDE00 \u0001 \x41 \n","#))))
    }

    func testUnterminatedManifest() throws {
        let manifest = "{\n  bundle: \"tiny\",\n  schemaVersion: 1,\n  tables: [\n"
        let found = try XCTUnwrap(issue(try pipeline(manifest)))
        XCTAssertEqual(found.keyPath, "")
        XCTAssertTrue(found.message.contains("not valid JSON"), found.message)
        XCTAssertNotNil(found.line)
    }

    func testIssueDescriptionNamesFileLineAndKeyPath() throws {
        let manifest = valid(replacing: "format: \"delimited\",", with: "format: \"csv\",")
        let folder = try pipeline(manifest)
        do {
            _ = try ManifestLoader.load(folder)
            XCTFail("loaded")
        } catch let error as KilnError {
            guard case .manifest = error else { return XCTFail("\(error)") }
            let file = URL(fileURLWithPath: folder).appendingPathComponent("kiln.json5").standardizedFileURL.path
            XCTAssertTrue(error.description.hasPrefix("\(file):\(line(of: "format:", in: manifest)): manifest error at sources[0].format: unknown format"),
                          error.description)
        }
    }

    func testManifestIssueDescriptions() {
        let issue = ManifestIssue(file: "kiln.json5", line: 3, keyPath: "bundle", message: "bad")
        XCTAssertEqual(KilnError.manifest(issue).description, "kiln.json5:3: manifest error at bundle: bad")
        XCTAssertEqual(ManifestIssue(file: "k", line: nil, keyPath: "", message: "m").description, "k: manifest error: m")
    }

    func testRealPatrasManifestLoads() throws {
        let folder = try copyRepositoryFolder("raw/patras", as: "patras")
        let pipeline = try ManifestLoader.load(folder.path)
        XCTAssertEqual(pipeline.manifest.bundle, "patras")
        XCTAssertEqual(pipeline.manifest.schemaVersion, 1)
        XCTAssertEqual(pipeline.sources.count, 7)
        XCTAssertEqual(pipeline.sources.map(\.spec.name),
                       ["stops", "lines", "starting-points", "routes", "stops-of-lines", "lines-of-stops", "timetables"])
        XCTAssertEqual(pipeline.sources.map { $0.files.map(\.relativePath) },
                       [["StopsUTF8.txt"], ["linesutf8.txt"], ["StartingPoints.txt"], ["Routes_UTF8.txt"],
                        ["stops_linesutf8.txt"], ["lines_stopsutf8.txt"], ["Timetables_UTF8.txt"]])
        XCTAssertEqual(pipeline.manifest.tables.count, 10)
        XCTAssertEqual(pipeline.manifest.tables.filter(\.ship).map(\.name),
                       ["stop", "line", "route_stop", "line_stop", "timetable", "line_timetable"])
        XCTAssertEqual(pipeline.manifest.severity, ["duplicate-row": .warning])
        XCTAssertEqual(pipeline.manifest.exports.map(\.name), ["legacy-text", "gtfs"])
        XCTAssertEqual(pipeline.manifest.exports.map(\.files.count), [7, 9])
        XCTAssertEqual(pipeline.manifest.exports.last?.archive, "patras-gtfs.zip")
        XCTAssertEqual(pipeline.manifest.exports.last?.servicePeriod, ServicePeriodSpec(start: "2026-01-01", end: "2026-12-31"))
        XCTAssertEqual(pipeline.manifest.rules.count, 12)
        // The locator finds the lines of nested keys in the real file.
        let text = try String(contentsOf: folder.appendingPathComponent("kiln.json5"), encoding: .utf8)
        XCTAssertEqual(pipeline.locator.line(of: "tables[0].fullText"), line(of: "fullText: { name: \"stop_search\"", in: text))
    }

    func testJSON5LocatorLinesWithCommentsAndMultilineStrings() {
        let text = """
            // comment with { braces [ and "quotes"
            {
              /* block
                 comment */ a: 1,
              'b': "two // not a comment",
              c: [
                { d: true },
                // between
                { e: [1, 2] },
              ],
              "f.g": null,
            }
            """
        let locator = JSON5Locator(text: text)
        XCTAssertEqual(locator.line(of: ""), 2)
        XCTAssertEqual(locator.line(of: "a"), 4)
        XCTAssertEqual(locator.line(of: "b"), 5)
        XCTAssertEqual(locator.line(of: "c"), 6)
        XCTAssertEqual(locator.line(of: "c[0]"), 7)
        XCTAssertEqual(locator.line(of: "c[0].d"), 7)
        XCTAssertEqual(locator.line(of: "c[1].e"), 9)
        XCTAssertEqual(locator.line(of: "c[1].e[1]"), 9)
        XCTAssertEqual(locator.line(of: "f.g"), 11)
        // A path that is not there falls back to its nearest ancestor.
        XCTAssertEqual(locator.line(of: "c[1].missing"), 9)
        XCTAssertEqual(locator.line(of: "zzz"), 2)
    }

    func testExportsFromAddsTheOtherManifestsExportsAfterItsOwn() throws {
        let patras = try copyRepositoryFolder("raw/patras", as: "patras")
        let web = try copyRepositoryFolder("raw/patras-web", as: "patras-web")
        let loaded = try ManifestLoader.load(web.path, resolvingInputs: false).manifest
        XCTAssertEqual(loaded.exports.count, 0, "read only when exports are needed")
        let shared = try ManifestLoader.withSharedExports(loaded)
        let own = try ManifestLoader.load(patras.path, resolvingInputs: false).manifest
        XCTAssertEqual(shared.exports.map(\.name), own.exports.map(\.name))
        XCTAssertEqual(shared.exports.map(\.declaredIndex), Array(own.exports.indices))
        XCTAssertEqual(shared.exports.first?.declaredIn?.file, own.file)
        XCTAssertNil(own.exports.first?.declaredIn)
        XCTAssertEqual(shared.exports.map { $0.files.map(\.query) }, own.exports.map { $0.files.map(\.query) })
    }

    func testExportsFromItselfIsRefused() throws {
        let folder = try copyRepositoryFolder("raw/patras", as: "self")
        let file = folder.appendingPathComponent("kiln.json5")
        let text = try String(contentsOf: file, encoding: .utf8)
        try text.replacingOccurrences(of: #"bundle: "patras","#, with: #"bundle: "patras", exportsFrom: "./kiln.json5","#)
            .write(to: file, atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try ManifestLoader.withSharedExports(ManifestLoader.load(folder.path, resolvingInputs: false).manifest)) { error in
            XCTAssertTrue("\(error)".contains("manifest error at exportsFrom: a manifest cannot take the exports of itself"), "\(error)")
        }
    }

    /// `enum` values are strings or numbers (kept as their text); anything else is a wrong type at its key path.
    func testEnumValuesAreStringsOrNumbers() throws {
        let manifest = #"{ bundle: "b", schemaVersion: 1, tables: [{ name: "t", columns: [{ name: "n", type: "integer", enum: [1, "2", 2.5] }] }] }"#
        let loaded = try ManifestLoader.load(try write(manifest, to: "kiln.json5").path, resolvingInputs: false).manifest
        XCTAssertEqual(loaded.tables[0].columns[0].allowed, ["1", "2", "2.5"])
        let bad = #"{ bundle: "b", schemaVersion: 1, tables: [{ name: "t", columns: [{ name: "n", type: "integer", enum: [true] }] }] }"#
        XCTAssertThrowsError(try ManifestLoader.load(try write(bad, to: "bad/kiln.json5").path, resolvingInputs: false)) { error in
            XCTAssertTrue("\(error)".contains("tables[0].columns[0].enum[0]"), "\(error)")
        }
    }
}
