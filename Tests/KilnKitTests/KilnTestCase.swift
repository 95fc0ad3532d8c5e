import Foundation
import XCTest
import KilnTestSupport
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

/// Gives each test its own temporary folder, and paths into the repository's sample data and fixtures.
class KilnTestCase: XCTestCase {
    /// Set in the fast tier once an oracle's skip surfaced inside an assertion (`TestTier.swallows`).
    private var skippedByTier = false

    override func recordFailure(withDescription description: String, inFile filePath: String, atLine lineNumber: Int, expected: Bool) {
        if TestTier.swallows(description, skipped: &skippedByTier) { return }
        super.recordFailure(withDescription: description, inFile: filePath, atLine: lineNumber, expected: expected)
    }

    /// A fresh folder for this test, removed afterwards.
    private(set) var temporaryDirectory: URL!

    /// The repository's top folder.
    static let repositoryRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    override func setUpWithError() throws {
        temporaryDirectory = FileManager.default.temporaryDirectory
            .appendingPathComponent("kiln-tests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: temporaryDirectory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: temporaryDirectory)
    }

    /// Runs `executable` with `arguments` and returns what it printed; a non-zero exit fails the test.
    func standardOutput(of executable: URL, _ arguments: [String], file: StaticString = #filePath, line: UInt = #line) throws -> Data {
        let (data, status) = try ExternalProgram.run(executable, arguments)
        XCTAssertEqual(status, 0, "\(executable.lastPathComponent) \(arguments)", file: file, line: line)
        return data
    }

    /// Writes `text` (UTF-8) to `name` inside the temporary folder and returns its URL.
    @discardableResult
    func write(_ text: String, to name: String) throws -> URL {
        try write(Data(text.utf8), to: name)
    }

    /// Writes raw bytes to `name` inside the temporary folder and returns its URL.
    @discardableResult
    func write(_ data: Data, to name: String) throws -> URL {
        let url = temporaryDirectory.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try data.write(to: url)
        return url
    }

    /// Loads a pipeline written for the test: `manifest` as `pipeline/kiln.json5` and its one input `rows` as
    /// `pipeline/rows.txt` in the temporary folder.
    func loadPipeline(manifest: String, rows: String) throws -> CompiledPipeline {
        try write(rows, to: "pipeline/rows.txt")
        let folder = try write(manifest, to: "pipeline/kiln.json5").deletingLastPathComponent()
        return try ManifestLoader.load(folder.path)
    }

    /// Copies a folder of the repository (e.g. `raw/patras`) into the temporary folder under `name`.
    func copyRepositoryFolder(_ path: String, as name: String) throws -> URL {
        let destination = temporaryDirectory.appendingPathComponent(name)
        try FileManager.default.copyItem(at: KilnTestCase.repositoryRoot.appendingPathComponent(path), to: destination)
        return destination
    }

    /// Runs `reader` over the file `name` holding `text`; returns the records and the log.
    func read(_ reader: RecordReader, _ text: String, name: String = "input.txt") throws -> (records: [Record], log: DiagnosticLog) {
        let url = try write(text, to: name)
        return try read(reader, url: url)
    }

    /// Runs `reader` over the file at `url`; returns the records and the log.
    func read(_ reader: RecordReader, url: URL) throws -> (records: [Record], log: DiagnosticLog) {
        let log = DiagnosticLog()
        var records: [Record] = []
        try reader.read(InputFile(url: url, relativePath: url.lastPathComponent), log: log) { records.append($0) }
        return (records, log)
    }
}

extension Record {
    /// The values of the fields the reader was asked for, without Kiln's own `_ordinal` and `_position`, which
    /// tests of those fields check by name.
    var declaredValues: [String?] {
        zip(kind.fieldNames, values).filter { !$0.0.hasPrefix("_") }.map(\.1)
    }
}

/// Tests write Kiln's codes as they appear in reports; a code not in the catalogue stops the test.
extension DiagnosticCode: ExpressibleByStringLiteral {
    public init(stringLiteral value: String) {
        guard let code = DiagnosticCode.named(value) else { preconditionFailure("\(value) is not in DiagnosticCode.catalogue") }
        self = code
    }
}
