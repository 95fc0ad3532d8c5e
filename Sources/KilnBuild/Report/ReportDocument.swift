import Foundation
import KilnC
import KilnCore
import KilnManifest
import KilnReaders

/// A build's JSON report (`BuildReport`) read back, for the HTML report. What older reports did not record
/// (Kiln's version, the manifest's digest, the inputs' sizes, the codes' meanings, the tables' descriptions) is `nil`.
public struct ReportDocument: Decodable, Sendable {
    /// A shipped table: its rows, its bytes (when the bundle was written) and the manifest's description of it.
    public struct Table: Decodable, Sendable {
        public var name: String
        public var rows: Int
        public var bytes: TableBytes?
        public var description: String?
    }

    /// The manifest file's name and the SHA-256 of its bytes.
    public struct ManifestFile: Decodable, Sendable {
        public var file: String
        public var sha256: String
    }

    /// Findings counted but not listed, per code and severity.
    public struct NotStored: Decodable, Sendable {
        public var code: String
        public var severity: String
        public var count: Int
    }

    /// One finding.
    public struct Finding: Decodable, Sendable {
        public var code: String
        public var severity: String
        public var message: String
        public var file: String?
        public var line: Int?
        /// The URL the file was fetched from (reports of builds without fetched files have none).
        public var url: String?
    }

    /// A fetched file as the report records it: where it came from, when, with what status, and the rows it gave.
    public struct FetchedFile: Decodable, Sendable {
        public var url: String
        public var capturedAt: String
        public var status: Int?
        public var rows: Int
    }

    /// Per table, the comparison with a baseline.
    public struct TableChange: Decodable, Sendable {
        public var name: String
        public var oldRows: Int
        public var newRows: Int
        public var added: Int
        public var removed: Int
        public var changed: Int
    }

    public var bundle: String
    public var built: Bool
    public var output: String
    public var kilnVersion: String?
    public var manifest: ManifestFile?
    public var tables: [Table]
    /// The bundle's size in bytes, and the part no table owns (absent in reports of builds that wrote none).
    public var bundleBytes: Int?
    public var otherBytes: Int?
    public var summary: [String: Int]
    public var inputs: [String: String]
    public var inputSizes: [String: Int]?
    /// The fetched files by path (reports of builds without fetched files have none).
    public var fetched: [String: FetchedFile]?
    /// What each code among the findings means.
    public var codes: [String: String]?
    public var diagnostics: [Finding]
    public var notStored: [NotStored]?
    /// The manifest's `bounds` rules, whose flagged points the maps show in red.
    public var boundsRules: [BoundsRule]?
    /// A failed build's maps of its staged rows (reports of builds that wrote a bundle, or of an older Kiln, have none).
    public var stagedMaps: [StagedMap]?
    public var baseline: [TableChange]?

    /// What `code` means: as the report says, else (a report from an older Kiln) the catalogue's meaning.
    public func meaning(of code: String) -> String? {
        codes?[code] ?? DiagnosticCode.named(code)?.meaning
    }

    /// Reads the report at `url`.
    /// - Throws: `KilnError.io` when it cannot be read, `KilnError.validation` when it is not a Kiln build report.
    public static func read(_ url: URL) throws -> ReportDocument {
        if let kind = OutputPath.entryKind(url, followingLinks: true), kind != .regular {
            throw KilnError.io("\(url.relativePath) is \(kind.phrase), not a report file")
        }
        let data: Data
        do { data = try Data(contentsOf: url) } catch {
            throw CannotRead.error(url, error)
        }
        do {
            return try JSONDecoder().decode(ReportDocument.self, from: data)
        } catch {
            throw KilnError.validation("\(url.relativePath) is not a Kiln build report (the JSON kiln build writes): \(KilnJSON.reason(error))")
        }
    }
}
