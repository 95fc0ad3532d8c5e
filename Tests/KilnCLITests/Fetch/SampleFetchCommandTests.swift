import Foundation
import XCTest
import KilnKit
import KilnTestSupport

/// The sample apps that came from the web declare where their files come from; here their files are served from a
/// site on 127.0.0.1 with the URL layout the manifests declare (`--mirror`), and `kiln fetch` then `kiln build` give
/// the rows `kiln build` gives from `raw/`; a second fetch finds nothing new and builds the same bytes.
final class SampleFetchCommandTests: CLITestCase {
    /// `derived`: the folder (relative to the sample) of the files whose URLs the manifest derives rather than lists.
    private func fetchedSample(_ name: String, host: String, derived: String? = nil) throws {
        let raw = CLITestCase.repositoryRoot.appendingPathComponent("raw/\(name)")
        let site = try TestSite(root: raw, folder: file("site-state"))
        defer { site.stop() }
        let copy = try copy("raw/\(name)", to: name)
        var manifest = try String(contentsOf: copy.appendingPathComponent("kiln.json5"), encoding: .utf8)
        // Politeness towards the test's own site only: the sample's one request a second would take half a minute.
        let start = try XCTUnwrap(manifest.range(of: "\n{\n"))
        manifest.replaceSubrange(start, with: "\n{\n  fetch: { delay: 0.02, concurrency: 4 },\n")
        try manifest.write(to: copy.appendingPathComponent("kiln.json5"), atomically: true, encoding: .utf8)
        // Every file a URL names is removed from the copy: only kiln fetch brings it back.
        var fetched = manifest.components(separatedBy: "\"" + host).dropFirst().map { String($0.prefix { $0 != "\"" }) }
            .filter { !$0.contains("{") }
        // A checksum file is read, not saved.
        let checksums = Set(manifest.components(separatedBy: "checksum: { url: \"" + host).dropFirst().map { String($0.prefix { $0 != "\"" }) })
        fetched.removeAll { checksums.contains($0) }
        XCTAssertGreaterThan(fetched.count, 0)
        if let derived {
            let names = try FileManager.default.contentsOfDirectory(atPath: raw.appendingPathComponent(derived).path).sorted()
            XCTAssertGreaterThan(names.count, 1)
            fetched += names.map { derived + "/" + $0 }
        }
        for path in fetched { try FileManager.default.removeItem(at: copy.appendingPathComponent(path)) }
        if name == "patras-web" {
            // The pipeline shares its exports with raw/patras, as a sibling folder.
            _ = try self.copy("raw/patras", to: "patras")
        }
        let mirror = "\(host)=\(site.origin)/"
        let first = try kiln("fetch", name, "--mirror", mirror)
        XCTAssertEqual(first.status, 0, first.stdout + first.stderr)
        XCTAssertTrue(first.stdout.hasPrefix("fetched \(fetched.count), unchanged 0, failed 0"), first.stdout)
        for path in fetched {
            XCTAssertEqual(try Data(contentsOf: copy.appendingPathComponent(path)), try Data(contentsOf: raw.appendingPathComponent(path)), path)
        }
        XCTAssertEqual(try kiln("build", raw.path, "--out", "from-raw/\(name).sqlite", "--no-cache").status, 0)
        let build = try kiln("build", name, "--out", "fetched/\(name).sqlite")
        XCTAssertEqual(build.status, 0, build.stdout + build.stderr)
        // The same rows in every shipped table; only the capture metadata differs.
        let tables = try program("/usr/bin/sqlite3", [file("from-raw/\(name).sqlite").path,
                                                      "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'kiln_%' AND name NOT LIKE '%search%' ORDER BY name"])
        let names = tables.stdout.split(separator: "\n").map(String.init)
        XCTAssertGreaterThan(names.count, 3)
        for table in names {
            let query = "SELECT * FROM \"\(table)\" ORDER BY 1, 2"
            let expected = try program("/usr/bin/sqlite3", [file("from-raw/\(name).sqlite").path, query]).stdout
            XCTAssertEqual(try program("/usr/bin/sqlite3", [file("fetched/\(name).sqlite").path, query]).stdout, expected, table)
        }
        let metadata = try program("/usr/bin/sqlite3", [file("fetched/\(name).sqlite").path, "SELECT key FROM kiln_metadata WHERE key LIKE 'source.%' ORDER BY key"])
        XCTAssertTrue(metadata.stdout.contains(".urls\n") && metadata.stdout.contains(".captured\n"), metadata.stdout)
        // A second fetch: all conditional, nothing new, and the build in full gives the same bytes.
        try site.clearLog()
        let second = try kiln("fetch", name, "--mirror", mirror)
        if !checksums.isEmpty {
            // A dump whose saved copy has the published digest costs the checksum file only.
            let paths = try site.requests().map(\.path).filter { $0 != "/robots.txt" }
            XCTAssertEqual(Set(paths), Set(checksums.map { "/" + $0 }))
        }
        XCTAssertTrue(second.stdout.hasPrefix("fetched 0, unchanged \(fetched.count), failed 0"), second.stdout)
        XCTAssertEqual(try kiln("build", name, "--out", "again/\(name).sqlite", "--no-cache").status, 0)
        XCTAssertEqual(try sha256("again/\(name).sqlite"), try sha256("fetched/\(name).sqlite"))
    }

    func testPatrasWebPagesFetchedBuildTheSameRows() throws {
        // The timetable pages' URLs are derived from the fetched lines.xml, one per line id.
        try fetchedSample("patras-web", host: "https://bus.patras.example/", derived: "timetables")
    }

    func testTravelGuideDumpFetchedWithItsPublishedChecksumBuildsTheSameRows() throws {
        try fetchedSample("itravel", host: "https://dumps.itravel.example/")
    }

    func testMuseumCalendarsFetchedBuildTheSameRows() throws {
        try fetchedSample("museum", host: "https://calendar.museum.example/")
    }
}
