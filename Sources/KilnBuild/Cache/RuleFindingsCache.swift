import Foundation
import KilnC
import KilnCore
import KilnManifest

/// Keeps the findings of each rule a build checked in the build cache, so that a later build whose rule reads tables
/// that would hold the same rows replays them instead of checking the rule again (`RuleEngine.known`).
///
/// A rule's key covers Kiln's environment, the rule and where the manifest declares it, the manifest's severities and
/// the findings kept per code, and for each table it reads, the table's declaration and what decides its rows
/// (`SourceCache.rowsDescription`: the sources that fill it, by key, and their files' SHA-256). A built-in rule reads
/// its table (and, for a reference, the table referred to); a manifest's SQL rule may read any, so its key covers
/// every table. A rule reading a query table, or a table no source fills, has no key and is always checked. Only the
/// findings of a rule checked to its end are kept (not those of one stopped by the time limit or an error), and only
/// for a build whose sources staged without an error.
///
/// The findings live in one entry (`rules/`, written like the other entries: `CacheEntryFolder`), a database of
/// `(key, findings)` rows, rewritten on a thread of its own with the findings of this build's rules alone when any
/// was checked; one whose record or database does not match is a `build.cache` info, and every rule is checked.
/// Not `Sendable`: one build uses it on its own thread; the thread writing the entry gets its rows handed over.
package final class RuleFindingsCache {
    /// The format of the entry this Kiln writes; an entry of another is written again.
    package static let currentFormat = 1
    private static let entryName = "findings"
    /// The entry: `<bundle folder>/.kiln-cache/<bundle file>/rules`.
    private let entries: CacheEntryFolder
    private let pipeline: CompiledPipeline
    private let examplesPerCode: Int
    private let entryKey: String
    /// How many rules this build took the findings of from the cache.
    package private(set) var reused = 0
    /// True when the entry was found damaged: the build says so (a `build.cache` info).
    package private(set) var foundDamaged = false
    private var storing: BackgroundThread<Void>?

    package init(cache: BuildCache, pipeline: CompiledPipeline, examplesPerCode: Int) {
        entries = CacheEntryFolder("rules", of: cache, format: RuleFindingsCache.currentFormat)
        self.pipeline = pipeline
        self.examplesPerCode = examplesPerCode
        entryKey = SHA256Digest.hex(of: Data("kiln rule findings cache \(RuleFindingsCache.currentFormat)\n\(BuildCache.environment)".utf8))
    }

    /// The key of each of `rules` (by position) whose tables' rows the files `digests` gives (SHA-256 by relative
    /// path) decide; a rule without one is left out.
    package func keys(of rules: [(rule: RuleSpec, keyPath: String)], digests: [String: String]) -> [Int: String] {
        let manifest = pipeline.manifest
        var described: [String: [String]?] = [:]
        func description(_ name: String) -> [String]? {
            if let known = described[name] { return known }
            let lines = manifest.table(name).flatMap { table in
                SourceCache.rowsDescription(of: table, in: pipeline, digests: digests, examplesPerCode: examplesPerCode)
                    .map { ["table \(String(reflecting: table))"] + $0 }
            }
            described[name] = .some(lines)
            return lines
        }
        let common = ["kiln rule findings \(RuleFindingsCache.currentFormat)", BuildCache.environment,
                      "severity " + manifest.severity.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value.rawValue)" }.joined(separator: " "),
                      "examples \(examplesPerCode)"]
        var keys: [Int: String] = [:]
        for (position, (rule, keyPath)) in rules.enumerated() {
            let names = rule.check.tablesRead.map { Array(Set($0)).sorted() } ?? manifest.tables.map(\.name)
            var lines = common + ["rule \(keyPath) \(String(reflecting: rule))"]
            var complete = true
            for name in names {
                guard let table = description(name) else {
                    complete = false
                    break
                }
                lines += table
            }
            if complete { keys[position] = SHA256Digest.hex(of: Data(lines.joined(separator: "\n").utf8)) }
        }
        return keys
    }

    /// The kept findings of the rules whose key (`keys`, by position) the entry holds; a damaged entry is reported
    /// into `log` and gives none.
    package func known(_ keys: [Int: String], log: DiagnosticLog) -> [Int: ReplayableFindings] {
        guard !keys.isEmpty else { return [:] }
        switch entries.lookup(RuleFindingsCache.entryName, key: entryKey) {
        case .absent: return [:]
        case .damaged(let file, let why):
            reportDamaged(file, why, log)
            return [:]
        case .found(let url):
            do {
                let kept = try RuleFindingsCache.read(url)
                var known: [Int: ReplayableFindings] = [:]
                for (position, key) in keys {
                    if let findings = kept[key] { known[position] = findings }
                }
                reused = known.count
                return known
            } catch {
                reportDamaged(url, "it cannot be read: \(error)", log)
                return [:]
            }
        }
    }

    private func reportDamaged(_ file: URL, _ why: String, _ log: DiagnosticLog) {
        foundDamaged = true
        log.report(.buildCache, "the build cache entry \(displayPath(file)) of the rules' findings is damaged or was edited (\(why)): "
                       + "every rule was checked again")
    }

    /// Keeps the findings of this build's rules, `known` (replayed from the entry) and `found` (checked now), by
    /// position, under their `keys`, replacing the entry on a thread of its own; nothing is written when no rule was
    /// checked now (the entry holds them all already).
    package func keep(known: [Int: ReplayableFindings], found: [Int: ReplayableFindings], keys: [Int: String]) {
        guard entries.usable, found.contains(where: { keys[$0.key] != nil }) else { return }
        var rows: [String: Data] = [:]
        for (position, findings) in known.merging(found, uniquingKeysWith: { _, new in new }) {
            guard let key = keys[position], let data = try? KilnJSON.encode(findings) else { continue }
            rows[key] = data
        }
        let handoff = Handoff(rows.sorted { $0.key < $1.key })
        let entries = entries, name = RuleFindingsCache.entryName, key = entryKey
        storing = BackgroundThread(name: "kiln rule findings") {
            ThreadPriority.stepBack()
            let rows = handoff.value
            entries.store(name, key: key) { database in try RuleFindingsCache.write(rows, to: database) }
        }
    }

    /// Waits for the entry being written.
    package func wait() {
        try? storing?.wait()
    }

    /// Writes `rows` (key, JSON of its findings) as the entry database `destination`, through a temporary file synced
    /// and renamed.
    private static func write(_ rows: [(key: String, value: Data)], to destination: URL) throws {
        try FileSync.write(destination) { temporary in
            let database = try Database(path: temporary.path)
            do {
                try database.execute("PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF")
                try database.execute("CREATE TABLE rule_findings (key TEXT PRIMARY KEY, findings TEXT NOT NULL) WITHOUT ROWID; BEGIN")
                let insert = try database.prepare("INSERT INTO rule_findings (key, findings) VALUES (?, ?)")
                for (key, findings) in rows { try insert.run([.text(key), .text(String(decoding: findings, as: UTF8.self))]) }
                try database.execute("COMMIT")
                try database.close()
            } catch {
                try? database.close()
                throw error
            }
        }
    }

    /// The findings the entry database `url` holds, by rule key.
    private static func read(_ url: URL) throws -> [String: ReplayableFindings] {
        let database = try Database(path: url.path, mode: .readOnly)
        defer { try? database.close() }
        var kept: [String: ReplayableFindings] = [:]
        let decoder = JSONDecoder()
        try database.forEachRow("SELECT key, findings FROM rule_findings") { row in
            guard case .text(let key) = row.values[0], case .text(let json) = row.values[1] else {
                throw KilnError.io("a row of rule_findings is not two texts")
            }
            kept[key] = try decoder.decode(ReplayableFindings.self, from: Data(json.utf8))
        }
        return kept
    }
}
