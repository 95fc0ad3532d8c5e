import Foundation

/// A build's JSON report (`BuildReport`) read back, for the HTML report.
public struct ReportDocument: Decodable, Sendable {
    /// One finding.
    public struct Finding: Decodable, Sendable {
        public var code: String
        public var severity: String
        public var message: String
        public var file: String?
        public var line: Int?
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
    public var tables: [TableCount]
    /// The bundle's size in bytes, and the part no table owns (absent in reports of builds that wrote none).
    public var bundleBytes: Int?
    public var otherBytes: Int?
    public var summary: [String: Int]
    public var inputs: [String: String]
    public var diagnostics: [Finding]
    public var baseline: [TableChange]?

    /// Reads the report at `url`.
    /// - Throws: `KilnError.io` when it cannot be read, `KilnError.validation` when it is not a Kiln build report.
    public static func read(_ url: URL) throws -> ReportDocument {
        if let kind = OutputPath.entryKind(url, followingLinks: true), kind != .regular {
            throw KilnError.io("\(url.relativePath) is \(kind.phrase), not a report file")
        }
        let data: Data
        do { data = try Data(contentsOf: url) } catch {
            throw KilnError.io("cannot read \(url.relativePath): \(error.localizedDescription)")
        }
        do {
            return try JSONDecoder().decode(ReportDocument.self, from: data)
        } catch {
            throw KilnError.validation("\(url.relativePath) is not a Kiln build report (the JSON kiln build writes): \(KilnJSON.reason(error))")
        }
    }
}
