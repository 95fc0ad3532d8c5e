import Foundation
import XCTest
import KilnC
import KilnKit

/// The core redesign through the binary: sources that fill several tables in one pass, context fields and ordinals on
/// one-line XML, XPath and manifest mistakes refused at load with the manifest line, the code catalogue, command-line
/// options declared once, and `kiln check` with only the manifest and the bundle.
final class OnePassCommandTests: CLITestCase {
    /// Writes a pipeline `name` with `manifest` and files, returning its folder.
    @discardableResult
    private func pipeline(_ name: String, _ manifest: String, files: [String: String] = [:]) throws -> URL {
        let folder = file(name)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try manifest.write(to: folder.appendingPathComponent("kiln.json5"), atomically: true, encoding: .utf8)
        for (path, text) in files { try text.write(to: folder.appendingPathComponent(path), atomically: true, encoding: .utf8) }
        return folder
    }

    /// The 1-based line of the first line holding `marker`.
    private func line(of marker: String, in text: String) -> Int {
        (text.components(separatedBy: "\n").firstIndex { $0.contains(marker) } ?? -1) + 1
    }

    private let routeConfig = #"<body><route tag="N" title="Judah"><stop tag="a"/><stop tag="b"/><stop tag="c"/></route><route tag="J" title="Church"><stop tag="x"/><stop tag="y"/></route></body>"#

    private func nextBusManifest(fields: String = #"stop: "@tag""#, context: String = #"context: { route: { route: "@tag" } },"#) -> String {
        """
        {
          bundle: "nextbus", schemaVersion: 1,
          tables: [{ name: "route_stop", columns: [
            { name: "route", type: "text", notNull: true }, { name: "stop", type: "text", notNull: true },
            { name: "position", type: "integer", notNull: true }, { name: "ordinal", type: "integer" } ],
            primaryKey: ["route", "position"] }],
          sources: [{
            name: "stops", format: "xml", path: "routeConfig.xml",
            options: {
              record: "route/stop",
              fields: { \(fields) },
              \(context)
            },
            into: "route_stop",
            columns: { route: "route", stop: "stop", position: "_position", ordinal: "_ordinal" },
          }],
        }
        """
    }

    func testContextFieldsAndOrdinalsOnOneLineXMLReachTheBundle() throws {
        try pipeline("nextbus", nextBusManifest(), files: ["routeConfig.xml": routeConfig])
        let run = try kiln("build", "nextbus")
        XCTAssertEqual(run.status, 0, run.stderr)
        let database = try Database(path: file("build/nextbus.sqlite").path, mode: .readOnly)
        let rows = try database.rows("SELECT route, stop, position, ordinal FROM route_stop ORDER BY ordinal")
        XCTAssertEqual(rows.map { $0.values.map { $0.textValue ?? "∅" }.joined(separator: " ") },
                       ["N a 1 1", "N b 2 2", "N c 3 3", "J x 1 4", "J y 2 5"])
    }

    func testXPathThatStreamingCannotEvaluateIsRefusedWithTheManifestLine() throws {
        let cases: [(fields: String, key: String, expected: String)] = [
            (#"stop: "@tag", order: "count(preceding-sibling::stop)""#, "fields.order", #"use the field "_position""#),
            (#"stop: "@tag", route: "ancestor::route/@tag""#, "fields.route", #"a "context" field declared on the enclosing element"#),
            (#"stop: "normalise-space(@tag)""#, "fields.stop", "normalise-space() is not an XPath 1.0 function (did you mean normalize-space()?)"),
            (#"stop: "@tag", first: "position()""#, "fields.first", #"use the field "_position""#),
        ]
        for (index, item) in cases.enumerated() {
            let manifest = nextBusManifest(fields: item.fields)
            try pipeline("refused\(index)", manifest, files: ["routeConfig.xml": routeConfig])
            let run = try kiln("build", "refused\(index)")
            XCTAssertEqual(run.status, 64, run.stderr)
            let fieldLine = line(of: "fields: {", in: manifest)
            XCTAssertTrue(run.stderr.contains("kiln.json5:\(fieldLine): manifest error at sources[0].options.\(item.key): "), run.stderr)
            XCTAssertTrue(run.stderr.contains(item.expected), run.stderr)
            XCTAssertFalse(FileManager.default.fileExists(atPath: file("build/nextbus.sqlite").path))
        }
    }

    /// A context field is an attribute of the enclosing element or a simple path below it; anything more (a predicate,
    /// a step up) is refused when the manifest loads.
    func testAContextFieldMustBeAnAttributeOrASimplePath() throws {
        let manifest = nextBusManifest(context: #"context: { route: { title: "../title[1]" } },"#)
        try pipeline("context", manifest, files: ["routeConfig.xml": routeConfig])
        let run = try kiln("build", "context")
        XCTAssertEqual(run.status, 64)
        XCTAssertTrue(run.stderr.contains("manifest error at sources[0].options.context.route.title: a context field is an attribute"), run.stderr)
    }

    /// The Patras manifest with `old` replaced by `new`, in a pipeline folder of its own.
    private func patras(_ name: String, replacing old: String, with new: String) throws -> String {
        let folder = try copy("raw/patras", to: name)
        let url = folder.appendingPathComponent("kiln.json5")
        let text = try String(contentsOf: url, encoding: .utf8)
        XCTAssertTrue(text.contains(old), "the sample manifest holds \(old)")
        let changed = text.replacingOccurrences(of: old, with: new)
        try changed.write(to: url, atomically: true, encoding: .utf8)
        return changed
    }

    func testManifestMistakesAreRefusedAtLoadWithTheirLine() throws {
        let cases: [(old: String, new: String, key: String, expected: String)] = [
            (#""duplicate-row": "warning","#, #""dupliate-row": "warning","#, "severity.dupliate-row",
             #"no finding has the code "dupliate-row": it is neither one of Kiln's codes (kiln codes lists them)"#),
            (#"{ name: "latitude", type: "real", notNull: true"#, #"{ name: "latitude", type: "float", notNull: true"#, "tables[0].columns[3].type",
             #""float" is not accepted here; expected one of: text, integer, real, blob"#),
            (#"but its route's first stop is {first_stop}""#, #"but its route's first stop is {first_stp}""#, ".message",
             #"the message names {first_stp}, which the query does not return"#),
            (#"bundle: "patras","#, "bundle: \"patras\",\n  bundle: \"patras2\",", "bundle", "this key is written twice in one object"),
        ]
        for (index, item) in cases.enumerated() {
            let manifest = try patras("p\(index)", replacing: item.old, with: item.new)
            let run = try kiln("build", "p\(index)")
            XCTAssertEqual(run.status, 64, run.stderr)
            XCTAssertTrue(run.stderr.contains(item.expected), run.stderr)
            XCTAssertTrue(run.stderr.contains(item.key), run.stderr)
            let marker = item.new.components(separatedBy: "\n").last!
            XCTAssertTrue(run.stderr.hasPrefix("Error: ") && run.stderr.contains("kiln.json5:\(line(of: marker, in: manifest)): "), run.stderr)
        }
    }

    func testARangeWhoseMinimumIsAboveItsMaximumIsRefused() throws {
        let manifest = try patras("range", replacing: "range: { min: 1, max: 180 }", with: "range: { min: 180, max: 1 }")
        let run = try kiln("build", "range")
        XCTAssertEqual(run.status, 64, run.stderr)
        XCTAssertTrue(run.stderr.contains("kiln.json5:\(line(of: "min: 180", in: manifest)): manifest error at rules["), run.stderr)
        XCTAssertTrue(run.stderr.contains("min 180 is above max 1: no value could pass this range"), run.stderr)
    }

    func testAMultiKindSourceMustMapEachKind() throws {
        try copy("raw/itravel", to: "itravel")
        let url = file("itravel/kiln.json5")
        var text = try String(contentsOf: url, encoding: .utf8)
        text = text.replacingOccurrences(of: "        alias: { table: \"alias_entry\", columns: { alias: \"title\", target: \"target\" } },",
                                         with: "        aliases: { table: \"alias_entry\", columns: { alias: \"title\", target: \"target\" } },")
        try text.write(to: url, atomically: true, encoding: .utf8)
        let run = try kiln("build", "itravel")
        XCTAssertEqual(run.status, 64)
        XCTAssertTrue(run.stderr.contains("manifest error at sources[0].into.aliases: the mediawiki reader has no kind of record \"aliases\"; kinds: page, section, listing, alias"),
                      run.stderr)

        let extract = try kiln("extract", "guide", "itravel/itravel-export.xml", "--manifest", "raw-itravel-missing")
        XCTAssertEqual(extract.status, 64)
        try copy("raw/itravel", to: "guide")
        let noKind = try kiln("extract", "guide", "guide/itravel-export.xml", "--manifest", "guide")
        XCTAssertEqual(noKind.status, 64)
        XCTAssertTrue(noKind.stderr.contains("the source \"guide\" fills several tables; name the kind of record: guide.alias, guide.listing, guide.page, guide.section"),
                      noKind.stderr)
    }

    func testTheGuideDumpIsReadOnceForEveryTable() throws {
        try copy("raw/itravel", to: "raw/itravel")
        let run = try kiln("build", "raw/itravel", "--format", "json")
        XCTAssertEqual(run.status, 0, run.stderr)
        let report = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        let tables = try XCTUnwrap(report["tables"] as? [[String: Any]])
        let counts = Dictionary(uniqueKeysWithValues: tables.map { ($0["name"] as? String ?? "", $0["rows"] as? Int ?? -1) })
        // The four kinds of one pass landed in their four staging tables, and from them in the shipped ones.
        for table in ["page", "section", "listing", "page_alias"] { XCTAssertGreaterThan(counts[table] ?? 0, 0, table) }
        let diagnostics = try XCTUnwrap(report["diagnostics"] as? [[String: Any]])
        let malformed = diagnostics.filter { ($0["code"] as? String) == "source.unmapped-kind" }
        XCTAssertEqual(malformed.count, 0, "every kind is mapped")
    }

    func testCheckWithOnlyTheManifestAndTheBundle() throws {
        try copy("raw/patras", to: "raw/patras")
        XCTAssertEqual(try kiln("build", "raw/patras").status, 0)
        // An app's repository: the manifest and the shipped bundle, no raw inputs.
        let app = file("app")
        try FileManager.default.createDirectory(at: app, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: file("raw/patras/kiln.json5"), to: app.appendingPathComponent("kiln.json5"))
        try FileManager.default.copyItem(at: file("build/patras.sqlite"), to: app.appendingPathComponent("patras.sqlite"))
        let check = try kiln(in: app, ["check", "patras.sqlite"])
        XCTAssertEqual(check.status, 0, check.stdout + check.stderr)
        let export = try kiln(in: app, ["export", "legacy-text", "patras.sqlite", "--out", "text"])
        XCTAssertEqual(export.status, 0, export.stderr)
        XCTAssertTrue(FileManager.default.fileExists(atPath: app.appendingPathComponent("text/StopsUTF8.txt").path))
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: app.path).sorted(), ["kiln.json5", "patras.sqlite", "text"])
    }

    func testABundleNameThatWouldLeaveRawIsNotUsedInAPath() throws {
        try copy("raw/patras", to: "raw/patras")
        XCTAssertEqual(try kiln("build", "raw/patras").status, 0)
        let database = try Database(path: file("build/patras.sqlite").path)
        try database.execute("UPDATE kiln_metadata SET value = '../../etc' WHERE key = 'bundle.name'")
        try database.close()
        let run = try kiln("check", "build/patras.sqlite")
        XCTAssertEqual(run.status, 1, run.stderr)
        XCTAssertTrue(run.stdout.contains(#"records the bundle name "../../etc", which is not a plain name"#), run.stdout)
    }

    func testOptionsAreDeclaredOnce() throws {
        let help = try kiln("help", "build")
        XCTAssertEqual(help.status, 0)
        XCTAssertTrue(help.stdout.contains("[--allow-path PATH]"), "the usage line lists every option")
        XCTAssertTrue(help.stdout.contains("  --allow-path PATH"), "the OPTIONS section too")
        for command in ["build", "check", "diff", "export", "extract", "test", "codes", "report"] {
            let text = try kiln("help", command).stdout
            let usage = try XCTUnwrap(text.components(separatedBy: "\n").first { $0.hasPrefix("Usage: ") })
            for option in text.components(separatedBy: "\n").compactMap({ line -> String? in
                guard line.hasPrefix("  --") else { return nil }
                return line.dropFirst(2).split(separator: " ").first.map(String.init)
            }) {
                XCTAssertTrue(usage.contains(option), "\(command): \(option) is in OPTIONS but not in the usage line")
            }
        }
        let twice = try kiln("build", "raw/patras", "--out", "a.sqlite", "--out", "b.sqlite")
        XCTAssertEqual(twice.status, 64)
        XCTAssertTrue(twice.stderr.hasPrefix("Error: --out is given twice; give it once\nUsage: kiln build"), twice.stderr)
        let version = try kiln("--version", "--bogus")
        XCTAssertEqual(version.status, 64)
        XCTAssertTrue(version.stderr.hasPrefix("Error: --version takes no argument"), version.stderr)
    }

    func testCodesListsTheCatalogue() throws {
        let run = try kiln("codes", "--format", "json")
        XCTAssertEqual(run.status, 0, run.stderr)
        let entries = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [[String: String]])
        XCTAssertEqual(entries.map { $0["code"] ?? "" }, DiagnosticCode.catalogue.map(\.rawValue))
        XCTAssertTrue(entries.allSatisfy { !($0["meaning"] ?? "").isEmpty && Severity(rawValue: $0["severity"] ?? "") != nil })
        let text = try kiln("codes")
        XCTAssertTrue(text.stdout.contains("xml.malformed"), text.stdout)
    }
}
