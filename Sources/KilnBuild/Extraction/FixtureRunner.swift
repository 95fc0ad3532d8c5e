import Foundation
import KilnC
import KilnCore
import KilnManifest
import KilnReaders

/// Runs a manifest's fixtures: each example input goes through its source's reader, and the records and unmatched
/// lines are compared with the expected JSON file. A difference is shown as a readable line diff.
public struct FixtureRunner {
    public let pipeline: CompiledPipeline

    public init(pipeline: CompiledPipeline) {
        self.pipeline = pipeline
    }

    /// The outcome of one fixture.
    public struct Outcome: Sendable {
        public var fixture: FixtureSpec
        /// Diff lines (`- expected`, `+ actual`, `  context`); empty when the extraction matches.
        public var differences: [String]
        /// True when the expected file did not exist.
        public var missingExpectation: Bool
        public var passed: Bool { differences.isEmpty && !missingExpectation }
    }

    /// Runs every fixture; with `update`, writes the expected files from what is extracted now.
    /// - Throws: `KilnError.manifest` for a fixture path outside the pipeline, `KilnError.io` when a file cannot be read.
    public func run(update: Bool = false) throws -> [Outcome] {
        let manifest = pipeline.manifest
        let resolver = InputResolver(directory: manifest.directory)
        if update { try checkExpectedFiles(resolver) }
        return try manifest.fixtures.enumerated().map { index, fixture in
            let (source, kind) = try pipeline.source(named: fixture.source)
            let input = try resolver.resolve(fixture.input) { pipeline.issue("fixtures[\(index)].input", $0) }[0]
            let extraction = try Extraction.run(source, kind: kind, files: [input.url], displayNames: [input.relativePath])
            let actual = FixtureRunner.lines(of: extraction)
            let expectedURL = manifest.directory.appendingPathComponent(fixture.expected)
            guard !fixture.expected.hasPrefix("/"), !fixture.expected.split(separator: "/").contains("..") else {
                throw pipeline.issue("fixtures[\(index)].expected", "\"\(fixture.expected)\" leaves the pipeline folder")
            }
            if update {
                try FixtureRunner.write(extraction, to: expectedURL)
                return Outcome(fixture: fixture, differences: [], missingExpectation: false)
            }
            guard let data = FileManager.default.contents(atPath: expectedURL.path) else {
                return Outcome(fixture: fixture, differences: [], missingExpectation: true)
            }
            let expected = try FixtureRunner.lines(ofExpected: data, file: fixture.expected)
            return Outcome(fixture: fixture, differences: LineDiff.changes(from: expected, to: actual), missingExpectation: false)
        }
    }

    /// Refuses, before anything is written, an expected file that is not a regular file or is the manifest or an input.
    /// - Throws: `KilnError.manifest` at the fixture's `expected`.
    private func checkExpectedFiles(_ resolver: InputResolver) throws {
        let manifest = pipeline.manifest
        var protected = [OutputPath.Protected(manifest.file, "the manifest")]
        for file in pipeline.sources.flatMap(\.files) { protected.append(OutputPath.Protected(file.url, "the input \(file.relativePath)")) }
        for (index, fixture) in manifest.fixtures.enumerated() {
            for input in (try? resolver.resolve(fixture.input) { pipeline.issue("fixtures[\(index)].input", $0) }) ?? [] {
                protected.append(OutputPath.Protected(input.url, "the fixture input \(input.relativePath)"))
            }
        }
        let root = manifest.directory.resolvingSymlinksInPath().standardizedFileURL.path
        for (index, fixture) in manifest.fixtures.enumerated() {
            let expected = manifest.directory.appendingPathComponent(fixture.expected)
            // A folder on the way that is a link leading out of the pipeline would take the write outside it.
            let folder = expected.deletingLastPathComponent().resolvingSymlinksInPath().standardizedFileURL.path
            let escapes = fixture.expected.hasPrefix("/") || fixture.expected.split(separator: "/").contains("..")
            guard escapes || folder == root || folder.hasPrefix(root + "/") else {
                throw pipeline.issue("fixtures[\(index)].expected", "\"\(fixture.expected)\" is in a folder that leads out of the pipeline folder (\(folder))")
            }
            do {
                try OutputPath.checkFile(expected, named: "the expected file", protected: protected)
            } catch let error as KilnError {
                throw pipeline.issue("fixtures[\(index)].expected", error.description)
            }
        }
    }

    /// One line per record (`line 14: days="Καθημερινές" every="20" …`) and per unmatched line, so that a diff
    /// reads naturally.
    package static func lines(of extraction: Extraction) -> [String] {
        let records = extraction.items.map { item in
            "record at line \(item.line): " + zip(extraction.fieldNames, item.values)
                .map { "\($0)=\($1.map { "\"\($0)\"" } ?? "null")" }.joined(separator: " ")
        }
        let unmatched = extraction.unmatched.map { "unmatched at line \($0.provenance?.line ?? 0): \($0.message)" }
        return records + unmatched
    }

    /// The same lines from an expected file.
    /// - Throws: `KilnError.io` when the file is not the JSON `kiln test --update` writes.
    package static func lines(ofExpected data: Data, file: String) throws -> [String] {
        struct Expected: Decodable {
            var fields: [String]
            var records: [[String: JSONValue]]
            var unmatched: [[String: JSONValue]]
        }
        let expected: Expected
        do { expected = try JSONDecoder().decode(Expected.self, from: data) } catch {
            throw KilnError.io("\(file) is not a fixture file (expected the JSON object {fields, records, unmatched} that kiln test --update writes): \(KilnJSON.reason(error))")
        }
        let records = expected.records.map { record in
            "record at line \(record["_line"]?.scalarText ?? "?"): " + expected.fields
                .map { name in "\(name)=\(record[name]?.scalarText.map { "\"\($0)\"" } ?? "null")" }.joined(separator: " ")
        }
        let unmatched = expected.unmatched.map { "unmatched at line \($0["line"]?.scalarText ?? "?"): \($0["message"]?.scalarText ?? "")" }
        return records + unmatched
    }

    /// Writes an extraction as a fixture file.
    /// - Throws: `KilnError.io` when it cannot be written.
    package static func write(_ extraction: Extraction, to url: URL) throws {
        struct Output: Encodable {
            var fields: [String]
            var records: [[String: JSONValue]]
            var unmatched: [[String: JSONValue]]
        }
        let records = extraction.recordObjects.map { $0.filter { $0.key != "_file" } }
        let unmatched = extraction.unmatched.map { Extraction.object($0).filter { $0.key != "file" } }
        let json = try KilnJSON.encode(Output(fields: extraction.fieldNames, records: records, unmatched: unmatched))
        try AtomicFile.write(json + Data("\n".utf8), to: url)
    }
}

/// A line diff by longest common subsequence: `- ` lines only in the old text, `+ ` lines only in the new one.
package enum LineDiff {
    /// The changed lines, in order; empty when the texts are equal.
    package static func changes(from old: [String], to new: [String]) -> [String] {
        if old == new { return [] }
        var table = Array(repeating: Array(repeating: 0, count: new.count + 1), count: old.count + 1)
        for i in stride(from: old.count - 1, through: 0, by: -1) {
            for j in stride(from: new.count - 1, through: 0, by: -1) {
                table[i][j] = old[i] == new[j] ? table[i + 1][j + 1] + 1 : max(table[i + 1][j], table[i][j + 1])
            }
        }
        var result: [String] = []
        var i = 0, j = 0
        while i < old.count || j < new.count {
            if i < old.count, j < new.count, old[i] == new[j] {
                i += 1
                j += 1
            } else if j < new.count, i == old.count || table[i][j + 1] >= table[i + 1][j] {
                result.append("+ " + new[j])
                j += 1
            } else {
                result.append("- " + old[i])
                i += 1
            }
        }
        return result
    }
}
