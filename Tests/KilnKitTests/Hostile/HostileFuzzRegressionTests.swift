import Foundation
import XCTest
import KilnTestSupport
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

/// Every input the fuzzers found a problem with (`Tests/Fixtures/fuzz/TARGET/`) goes again through the readers of
/// its target (`Fuzz/targets/TARGET.json5`, as `scripts/fuzz` runs them): each must return, whatever it reports.
/// And every target file must still load, so that `scripts/fuzz` keeps working as readers change.
final class HostileFuzzRegressionTests: HostileTestCase {
    private static let targets = repositoryRoot.appendingPathComponent("Fuzz/targets")
    private static let regressions = repositoryRoot.appendingPathComponent("Tests/Fixtures/fuzz")

    /// A target file as JSON values.
    private func target(_ url: URL) throws -> [String: JSONValue] {
        let decoder = JSONDecoder()
        decoder.allowsJSON5 = true
        guard case .object(let target) = try decoder.decode(JSONValue.self, from: Data(contentsOf: url)) else {
            throw KilnError.usage("\(url.lastPathComponent) is not an object")
        }
        return target
    }

    /// The readers a target file declares.
    private func readers(ofTarget url: URL) throws -> [RecordReader] {
        guard case .array(let sources)? = try target(url)["sources"] else { throw KilnError.usage("\(url.lastPathComponent) has no sources") }
        return try sources.map { source in
            guard case .object(let fields) = source, case .string(let format)? = fields["format"] else {
                throw KilnError.usage("\(url.lastPathComponent): a source without a format")
            }
            return try ReaderRegistry.makeReader(format: format, options: fields["options"] ?? .object([:]), codingPath: [])
        }
    }

    private func targetFiles() throws -> [URL] {
        try FileManager.default.contentsOfDirectory(at: Self.targets, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "json5" }.sorted { $0.path < $1.path }
    }

    /// True for a target whose inputs are manifests.
    private func isManifestTarget(_ url: URL) throws -> Bool { try target(url)["manifest"] == .bool(true) }

    func testEveryFuzzTargetLoads() throws {
        let names = try targetFiles().map { $0.deletingPathExtension().lastPathComponent }
        XCTAssertTrue(Set(["delimited", "routes", "timetable", "xml", "html", "regex-block", "wikitext"]).isSubset(of: names), "\(names)")
        for target in try targetFiles() where !(try isManifestTarget(target)) {
            XCTAssertFalse(try readers(ofTarget: target).isEmpty, target.lastPathComponent)
        }
        // The manifest target's own seed is a manifest that loads.
        XCTAssertNoThrow(try loadManifest(Self.targets.deletingLastPathComponent().appendingPathComponent("seeds/manifest.json5")))
    }

    /// Loads `input` as the manifest of a pipeline folder holding the small inputs the harness gives it.
    private func loadManifest(_ input: URL) throws {
        try write(Data(contentsOf: input), to: "pipeline/kiln.json5")
        try write("Ακτή Δυμαίων; 0102; 21.73; 38.24\n", to: "pipeline/in.txt")
        try write("<r><rec a=\"1\">x</rec></r>\n", to: "pipeline/in.xml")
        try write("<html><body><p>06:00 07:00 20</p></body></html>\n", to: "pipeline/in.html")
        _ = try ManifestLoader.load(temporaryDirectory.appendingPathComponent("pipeline").path)
    }

    func testEveryFuzzFindingReturns() throws {
        var count = 0
        for target in try targetFiles() {
            let name = target.deletingPathExtension().lastPathComponent
            let folder = Self.regressions.appendingPathComponent(name)
            guard let inputs = try? FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil) else { continue }
            if try isManifestTarget(target) {
                for input in inputs { _ = returnsPromptly { try? loadManifest(input) } }
                count += inputs.count
                continue
            }
            let readers = try readers(ofTarget: target)
            let container = try self.target(target)["wrap"]
            for input in inputs.sorted(by: { $0.path < $1.path }) {
                let url = try container.map { try wrapped(input, in: $0) } ?? input
                for reader in readers {
                    _ = try returnsPromptly { try read(reader, url: url) }
                }
                count += 1
            }
        }
        XCTAssertGreaterThan(count, 0, "no regression inputs found in \(Self.regressions.path)")
    }

    /// The first finding: `XMLStreamReader` asked libxml2's reader for its document (to evaluate XPath), which makes
    /// the caller the document's owner, and never freed it — every XML and KML file leaked its tree. LeakSanitizer saw
    /// it under `scripts/fuzz xml`; here, the reader is run many times and must not keep memory per file.
    func testXMLReaderFreesEachDocument() throws {
        let input = Self.regressions.appendingPathComponent("xml/leak-current-document.xml")
        let reader = try reader("xml", #"{ record: "rec", fields: { v: "." } }"#)
        // Distinct names fill the document's dictionary, which went with it.
        let big = try write("<r>" + (1...2000).map { "<rec><name\($0) attribute\($0)=\"\($0)\"/></rec>" }.joined() + "</r>", to: "big.xml")
        XCTAssertEqual(try read(reader, url: input).records.map(\.declaredValues), [["1"]])
        _ = try read(reader, url: big)
        let before = residentMemory()
        let files = TestTier.size(300, fast: 100)
        for _ in 0..<files { _ = try read(reader, url: big) }
        let grown = residentMemory() - before
        // Each leaked document kept its dictionary, about 150 KB here: 300 files would have kept some 45 MB (the
        // fast tier's 100, 15 MB), over the bound of 100 KB a file.
        XCTAssertLessThan(grown, (30 << 20) * files / 300, "resident memory grew by \(grown >> 20) MB over \(files) files")
    }

    /// The input as `scripts/fuzz` hands it to a target with a `wrap`: XML text between the prefix and the suffix.
    private func wrapped(_ input: URL, in container: JSONValue) throws -> URL {
        guard case .object(let parts) = container, case .string(let prefix)? = parts["prefix"], case .string(let suffix)? = parts["suffix"] else {
            throw KilnError.usage("a wrap needs a prefix and a suffix")
        }
        let text = String(decoding: try Data(contentsOf: input), as: UTF8.self).unicodeScalars.map { scalar -> String in
            if scalar == "&" { return "&amp;" }
            if scalar == "<" { return "&lt;" }
            if scalar == ">" { return "&gt;" }
            let allowed = scalar.value >= 0x20 || ["\t", "\n", "\r"].contains(scalar)
            return allowed && !(0xFFFE...0xFFFF).contains(scalar.value) ? String(scalar) : " "
        }.joined()
        return try write(prefix + text + suffix, to: "wrapped-\(input.lastPathComponent).xml")
    }

    /// The resident set size of this process, from /proc (0 where there is none).
    private func residentMemory() -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
              let kilobytes = Int(line.split(separator: " ").dropFirst().first ?? "") else { return 0 }
        return kilobytes << 10
    }
}
