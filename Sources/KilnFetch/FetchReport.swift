import Foundation
import KilnCore
import KilnManifest
import KilnBuild

/// What became of one URL.
public struct URLResult: Sendable, Equatable, Encodable {
    /// How a URL's fetch ended.
    public enum Outcome: String, Sendable, Encodable {
        /// New bytes arrived and replaced the saved file (or made it).
        case fetched
        /// The server answered 304, or sent the bytes already saved: the file was left as it was.
        case unchanged
        /// The response was refused or the transfer failed; an earlier copy, if any, was kept.
        case failed
        /// robots.txt disallows the URL: no request was made.
        case disallowed
        /// `--dry-run`: the request that would be made.
        case planned
    }

    public var source: String
    public var url: String
    public var file: String
    public var outcome: Outcome
    /// The last response's status, when there was one.
    public var status: Int?
    /// Why it failed, or what a planned request would send.
    public var reason: String?
    /// Whether an earlier copy of the file was kept in place of a failed response.
    public var keptPrevious = false
    /// Body bytes transferred for it (Content-Encoding included), over every attempt.
    public var transferredBytes: Int64 = 0
    /// Requests made for it (retries and redirects included).
    public var requests = 0

    /// The finding a failed or disallowed URL is reported as; `nil` for one that was fetched or unchanged.
    public var finding: Diagnostic? {
        let place = Provenance(file: file, url: url)
        switch outcome {
        case .failed where keptPrevious:
            return Diagnostic(code: .fetchKept, message: "\(url): \(reason ?? "failed"); the earlier copy of \(file) is kept", provenance: place)
        case .failed:
            return Diagnostic(code: .fetchFailed, message: "\(url): \(reason ?? "failed"); there is no earlier copy of \(file)", provenance: place)
        case .disallowed:
            return Diagnostic(code: .fetchDisallowed, message: "\(url): robots.txt disallows it for this User-Agent; no request was made\(keptPrevious ? " (the earlier copy of \(file) is kept)" : "")", provenance: place)
        case .fetched, .unchanged, .planned:
            return nil
        }
    }
}

/// What `kiln fetch` did: every URL's result, the capture record it wrote, and the totals its summary prints.
public struct FetchReport: Sendable, Encodable {
    /// Every URL's result, sorted by source and URL.
    public var results: [URLResult]
    /// The robots.txt files read, by origin, with the status they were answered with (0: not reachable).
    public var robots: [String: Int]
    /// True for `--dry-run`.
    public var dryRun: Bool
    /// What file paths are prefixed with when printed: the pipeline folder as seen from the current folder.
    public var filePrefix = ""
    /// The WARC file written (`--warc`), and the records it holds.
    public var warc: String?
    public var warcRecords = 0
    /// What an import from WARC files (`--from-warc`) read.
    public var imported: WARCImportCounts?
    /// The findings of derived URLs that could not be made (`fetch.derivation`): each fails the fetch.
    public var problems: [Diagnostic] = []
    /// What `--dry-run` says of each source whose URLs are derived: from what, and whether they are known yet.
    public var derivations: [String] = []

    private enum CodingKeys: String, CodingKey { case results, robots, dryRun, warc, warcRecords, imported, problems, derivations }

    /// The number of URLs with `outcome`.
    public func count(_ outcome: URLResult.Outcome) -> Int { results.lazy.filter { $0.outcome == outcome }.count }

    /// Body bytes transferred in all.
    public var transferredBytes: Int64 { results.reduce(0) { $0 + $1.transferredBytes } }

    /// True when every URL was fetched or unchanged.
    public var succeeded: Bool { problems.isEmpty && results.allSatisfy { $0.outcome != .failed && $0.outcome != .disallowed } }

    /// The findings of the failed and disallowed URLs, in the results' order, then those of derived URLs.
    public var findings: [Diagnostic] { results.compactMap(\.finding) + problems }

    /// The summary printed at the end: one line of totals, then each finding.
    public var summary: String {
        if dryRun {
            var text = "kiln fetch --dry-run: \(results.count) requests would be made"
            text += robots.isEmpty ? "\n" : " after the robots.txt of \(robots.keys.sorted().joined(separator: ", "))\n"
            for result in results { text += "  GET \(result.url) -> \(result.file)\(result.reason.map { " (\($0))" } ?? "")\n" }
            for note in derivations { text += "  \(note)\n" }
            for problem in problems { text += "  " + located(problem).formatted + "\n" }
            return text
        }
        var text: String
        if let imported {
            text = "imported \(count(.fetched)), unchanged \(count(.unchanged)), failed \(count(.failed)) (\(results.count) URLs"
            text += " from \(imported.records) WARC records in \(imported.files) files; \(imported.unwanted) records of URLs no source wants)\n"
        } else {
            text = "fetched \(count(.fetched)), unchanged \(count(.unchanged)), failed \(count(.failed)), refused by robots.txt \(count(.disallowed))"
            text += " (\(results.count) URLs, \(ByteCount.phrase(transferredBytes)) transferred)\n"
        }
        if let warc { text += "wrote \(warc) (\(warcRecords) WARC records)\n" }
        for finding in findings { text += "  " + located(finding).formatted + "\n" }
        return text
    }

    /// The report as JSON (`--format json`): keys sorted, byte-stable for the same results.
    public func jsonData() throws -> Data { try KilnJSON.encode(self) }
}

/// What `kiln fetch --from-warc` read: the files, their records, and how many concerned no source.
public struct WARCImportCounts: Sendable, Encodable, Equatable {
    /// WARC files read.
    public var files = 0
    /// Records read, of every type.
    public var records = 0
    /// Revisit records resolved to the record they refer to.
    public var revisitsResolved = 0
    /// The indexed records (response, resource, revisit with a URL), by file and number, and those a URL used, kept
    /// so that the rounds of an import (`Fetcher.runInRounds`) add up.
    var indexed: Set<String> = []
    var used: Set<String> = []

    /// Response, resource and revisit records whose URL no source (nor a redirect from one) wants.
    public var unwanted: Int { indexed.subtracting(used).count }

    private enum CodingKeys: String, CodingKey { case files, records, unwanted, revisitsResolved }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(files, forKey: .files)
        try container.encode(records, forKey: .records)
        try container.encode(unwanted, forKey: .unwanted)
        try container.encode(revisitsResolved, forKey: .revisitsResolved)
    }

    /// The counts of two rounds of one import: the same files read again, the records either round used.
    func merged(with other: WARCImportCounts) -> WARCImportCounts {
        var merged = self
        merged.used.formUnion(other.used)
        merged.indexed.formUnion(other.indexed)
        merged.revisitsResolved += other.revisitsResolved
        return merged
    }
}

/// Byte counts as the summaries print them.
enum ByteCount {
    /// `1.2 MB`, `512 bytes`.
    static func phrase(_ bytes: Int64) -> String {
        if bytes < 1000 { return "\(bytes) bytes" }
        let units = ["kB", "MB", "GB", "TB"]
        var value = Double(bytes) / 1000
        var unit = 0
        while value >= 1000, unit < units.count - 1 { value /= 1000; unit += 1 }
        return String(format: "%.1f %@", value, units[unit])
    }
}

extension FetchReport: RenderableReport {
    /// The summary (`summary`).
    public var text: String { summary }

    /// The report as JSON text.
    public var json: String {
        get throws { String(decoding: try jsonData(), as: UTF8.self) + "\n" }
    }

    /// One JUnit case per URL, in a suite per source: a failed or disallowed URL without an earlier copy fails.
    public var junit: String {
        let suites = Dictionary(grouping: results, by: \.source).keys.sorted().map { source in
            JUnitSuite(name: "fetch.\(source)", cases: results.filter { $0.source == source }.map { result in
                JUnitCase(classname: "fetch.\(source)", name: result.url, findings: result.finding.map { [located($0)] } ?? [])
            })
        }
        let derived = problems.isEmpty ? [] : [JUnitSuite(name: "fetch.derived", cases: problems.map { problem in
            JUnitCase(classname: "fetch.derived", name: problem.provenance?.location ?? problem.code, findings: [located(problem)])
        })]
        return junitXML(name: "kiln fetch", suites: suites + derived)
    }

    /// A GitHub annotation per failed or disallowed URL, then a notice with the totals.
    public var github: String {
        var lines = findings.map { githubAnnotation(located($0)) }
        lines.append("::notice title=kiln fetch::" + summary.split(separator: "\n").first.map(String.init)!)
        return lines.joined(separator: "\n") + "\n"
    }

    /// `finding` with its file as a path from the current folder (`filePrefix`).
    private func located(_ finding: Diagnostic) -> Diagnostic {
        guard let place = finding.provenance else { return finding }
        var located = finding
        located.provenance?.file = filePrefix + place.file
        return located
    }
}
