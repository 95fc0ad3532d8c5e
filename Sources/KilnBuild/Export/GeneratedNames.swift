import KilnCore

/// The names one scope of generated code hands out — the types of a Kotlin package or of the Swift namespace, the
/// properties of a row type, the query functions of the Swift reader — each with what owns it. A name the generated
/// code declares or refers to itself is reserved (with what it is there); a second owner of any name is refused,
/// naming both, so that `kiln export room` and `kiln export swift` never write code that declares a name twice or
/// shadows one of their own (a table `value` beside the Swift reader's `Value`, tables `a_b` and `a__b`).
package struct GeneratedNames {
    /// What claims a name: a table, a column of a table, or a query function of a table.
    package enum Owner: Equatable {
        case table(String)
        case column(String, table: String)
        case query(String, table: String)

        var phrase: String {
            switch self {
            case .table(let name): "table \"\(name)\""
            case .column(let name, let table): "column \"\(name)\" of table \(table)"
            case .query(let kind, let table): "the \(kind) of table \(table)"
            }
        }
    }

    /// What a name stands for in the language: `Kotlin class`, `Swift type`, `Swift property`.
    private let kind: String
    /// True when names differing only in case clash (one file per class, on a file system that may ignore case).
    private let ignoringCase: Bool
    private var reserved: [String: String]
    private var owners: [String: (name: String, owner: Owner)] = [:]

    /// `reserved`: name → what the generated code uses it for (`the database class`).
    package init(_ kind: String, ignoringCase: Bool = false, reserved: [String: String] = [:]) {
        self.kind = kind
        self.ignoringCase = ignoringCase
        self.reserved = [:]
        for (name, use) in reserved { self.reserved[key(name)] = use }
    }

    private func key(_ name: String) -> String {
        let bare = name.replacingOccurrences(of: "`", with: "")
        return ignoringCase ? bare.lowercased() : bare
    }

    /// Reserves one more name after the fact (the Kotlin search object, once it is known there is one).
    package mutating func reserve(_ name: String, for use: String) {
        reserved[key(name)] = use
    }

    /// Gives `name` (backticks aside) to `owner`.
    /// - Throws: `KilnError.validation` naming the owner, the name and what else is called so.
    package mutating func claim(_ name: String, for owner: Owner) throws {
        let key = key(name), shown = name.replacingOccurrences(of: "`", with: "")
        if let use = reserved[key] {
            throw KilnError.validation("\(owner.phrase) would be the \(kind) \(shown), which is \(use) in the generated code: rename it in the manifest")
        }
        if let other = owners[key] {
            let both: String
            switch (other.owner, owner) {
            case (.table(let first), .table(let second)): both = "tables \"\(first)\" and \"\(second)\""
            case (.column(let first, let table), .column(let second, let other)) where table == other:
                both = "columns \"\(first)\" and \"\(second)\" of table \(table)"
            default: both = "\(other.owner.phrase) and \(owner.phrase)"
            }
            let caseOnly = other.name == shown ? "" : " (\(other.name) differs from it only in case)"
            throw KilnError.validation("\(both) would both be the \(kind) \(shown)\(caseOnly): rename one in the manifest")
        }
        owners[key] = (shown, owner)
    }
}
