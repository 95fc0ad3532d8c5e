// kiln-bench: the pieces of a build measured alone, for scripts/bench. Not part of the user-facing CLI.
//   kiln-bench read PIPELINE SOURCE   reads one source's files, counting records (no staging)
//   kiln-bench stage PIPELINE         reads and stages every source (no rules, no bundle)
// Prints one JSON object: {"records": N, "bytes": N, "diagnostics": N}. The `KILN_*` thread variables apply as to
// `kiln build` (`ThreadSettings(environment:)`).
import Foundation
import KilnKit

let threads = ThreadSettings(environment: ProcessInfo.processInfo.environment)

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("Error: \(message)\nUsage: kiln-bench read PIPELINE SOURCE | kiln-bench stage PIPELINE\n".utf8))
    exit(64)
}

func measure() throws -> (records: Int, bytes: Int, diagnostics: Int) {
    let arguments = Array(CommandLine.arguments.dropFirst())
    guard arguments.count >= 2 else { fail("missing arguments") }
    let pipeline = try ManifestLoader.load(arguments[1])
    switch arguments[0] {
    case "read":
        guard arguments.count == 3 else { fail("read needs PIPELINE SOURCE") }
        guard let source = pipeline.sources.first(where: { $0.spec.name == arguments[2] }) else { fail("no source \(arguments[2])") }
        let log = DiagnosticLog()
        var records = 0, bytes = 0
        for listed in source.files {
            var file = listed
            file.threads = threads
            try source.reader.read(file, log: log) { _ in records += 1 }
            bytes += (try FileManager.default.attributesOfItem(atPath: file.url.path)[.size] as? Int) ?? 0
        }
        return (records, bytes, log.diagnostics.count)
    case "stage":
        let url = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("kiln-bench-\(ProcessInfo.processInfo.processIdentifier).sqlite")
        defer { try? FileManager.default.removeItem(at: url) }
        let statistics = try pipeline.stage(into: url, threads: threads)
        return (statistics.records, statistics.bytes, statistics.diagnostics)
    default:
        fail("unknown command \(arguments[0])")
    }
}

do {
    let result = try measure()
    print("{\"records\": \(result.records), \"bytes\": \(result.bytes), \"diagnostics\": \(result.diagnostics)}")
} catch {
    FileHandle.standardError.write(Data("Error: \(error)\n".utf8))
    exit(1)
}
