import Foundation
import XCTest
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

/// The base of the hostile-input tests: readers built from manifest-style options, findings as exact lines, and
/// inputs too large to commit, generated in the test's folder.
class HostileTestCase: KilnTestCase {
    /// A reader built the way a manifest builds it: `format` and its `options` as JSON5.
    func reader(_ format: String, _ options: String = "{}") throws -> RecordReader {
        let decoder = JSONDecoder()
        decoder.allowsJSON5 = true
        let value = try decoder.decode(JSONValue.self, from: Data(options.utf8))
        return try ReaderRegistry.makeReader(format: format, options: value, codingPath: [])
    }

    /// Every finding as `file:line:column: severity: message [code]`, in the order reported.
    func findings(_ log: DiagnosticLog) -> [String] { log.diagnostics.map(\.formatted) }

    /// Runs `reader` over `bytes` written to `name`; returns the records' values and the findings.
    func run(_ reader: RecordReader, _ bytes: [UInt8], name: String = "input.txt") throws -> (values: [[String?]], findings: [String]) {
        let (records, log) = try read(reader, url: try write(Data(bytes), to: name))
        return (records.map(\.declaredValues), findings(log))
    }

    /// Runs `reader` over `text` (UTF-8) written to `name`.
    func run(_ reader: RecordReader, _ text: String, name: String = "input.txt") throws -> (values: [[String?]], findings: [String]) {
        try run(reader, Array(text.utf8), name: name)
    }

    /// Writes `prefix`, then `count` bytes `filler`, then `suffix` to `name`, in 1 MiB pieces.
    @discardableResult
    func writeLarge(_ name: String, prefix: String = "", filler: UInt8 = UInt8(ascii: "a"), count: Int, suffix: String = "") throws -> URL {
        let url = temporaryDirectory.appendingPathComponent(name)
        guard FileManager.default.createFile(atPath: url.path, contents: Data(prefix.utf8)) else { throw CocoaError(.fileWriteUnknown) }
        let handle = try FileHandle(forWritingTo: url)
        defer { try? handle.close() }
        try handle.seekToEnd()
        let piece = Data(repeating: filler, count: 1 << 20)
        var left = count
        while left > 0 {
            try handle.write(contentsOf: left >= piece.count ? piece : piece.prefix(left))
            left -= piece.count
        }
        try handle.write(contentsOf: Data(suffix.utf8))
        return url
    }

    /// Asserts that `findings` is exactly one finding, at `place` (`file:line`, then a column: libxml2's columns are
    /// its own read-ahead position, not asserted) and holding `text`.
    func assertOneFinding(_ findings: [String], at place: String, _ text: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(findings.count, 1, "\(findings)", file: file, line: line)
        XCTAssertTrue(findings.first.map { $0.hasPrefix(place + ":") && $0.contains(text) } == true, "\(findings)", file: file, line: line)
    }

    /// Runs `body` and fails when it takes more than `seconds`: a generous bound that only a hang breaks.
    func returnsPromptly<T>(within seconds: TimeInterval = 30, _ body: () throws -> T,
                            file: StaticString = #filePath, line: UInt = #line) rethrows -> T {
        let start = Date()
        let result = try body()
        XCTAssertLessThan(Date().timeIntervalSince(start), seconds, "took too long: a hang?", file: file, line: line)
        return result
    }
}
