import KilnC
import KilnCore

/// Checks the SQL rules of a manifest when it loads, against one empty database shaped like the staging area: SQLite
/// must accept each query as one statement that only reads (`Database.prepareQuery`), and every `{placeholder}` of
/// its message must be a column the query returns — a misspelt one would otherwise print as written in every finding.
/// Not `Sendable`: it owns a connection.
package final class SQLRuleCheck {
    private let manifest: Manifest
    /// The empty staging-shaped database, made on the first rule that needs it (or why it could not be made).
    private lazy var database: Result<Database, Error> = Result {
        let database = try Database(path: ":memory:", functions: KilnSQLFunctions.all)
        try SchemaSQL.createStagingTables(manifest.tables, in: database)
        return database
    }

    package init(manifest: Manifest) {
        self.manifest = manifest
    }

    /// What is wrong, and whether it is in the message (else in the query); `nil` when the rule is sound.
    package func problem(query: String, message: String) -> (text: String, inMessage: Bool)? {
        let columns: [String]
        do {
            columns = try database.get().prepareQuery(query).columnNames
        } catch let error as SQLiteError {
            return ("SQLite refuses the rule's query: \(error.message)", false)
        } catch {
            return ("the rule's query cannot be prepared: \(error)", false)
        }
        for placeholder in SQLRuleCheck.placeholders(in: message) where !columns.contains(placeholder) {
            return ("the message names {\(placeholder)}, which the query does not return; its columns: \(columns.joined(separator: ", "))", true)
        }
        return nil
    }

    /// Why `query` (a query table's, an export's) would give another result in another build — it calls `random()`
    /// or reads the clock (`Database.prepareQuery`) — else `nil`; any other problem is left to the query's own run,
    /// which reports it as before.
    package func nondeterminism(in query: String) -> String? {
        guard case .success(let database) = database else { return nil }
        do {
            _ = try database.prepareQuery(query)
        } catch let error as SQLiteError where error.isNotDeterministic {
            return "SQLite refuses the query: \(error.message)"
        } catch {}
        return nil
    }

    /// The result column names of `query` over the staged tables, or `nil` when SQLite cannot prepare it (its own
    /// run reports why).
    package func resultColumns(of query: String) -> [String]? {
        guard case .success(let database) = database else { return nil }
        return try? database.prepareQuery(query).columnNames
    }

    /// The columns of the tables that nothing fills, in declaration order, each with its manifest key path: no source
    /// maps it (a field or a constant) and the table's query does not select it. Tables the app fills are left out.
    package func unfilledColumns() -> [(table: String, column: String, keyPath: String)] {
        var found: [(String, String, String)] = []
        for (tableIndex, table) in manifest.tables.enumerated() where !table.userFilled {
            let filled: Set<String>
            if let query = table.query {
                guard let columns = resultColumns(of: query) else { continue }
                filled = Set(columns)
            } else {
                filled = Set(manifest.sources.flatMap(\.targets).filter { $0.table == table.name }.flatMap(\.columns.keys))
            }
            for (columnIndex, column) in table.columns.enumerated() where !filled.contains(column.name) {
                found.append((table.name, column.name, "tables[\(tableIndex)].columns[\(columnIndex)]"))
            }
        }
        return found
    }

    /// The names between braces in `message`, in order.
    package static func placeholders(in message: String) -> [String] {
        var names: [String] = []
        var rest = Substring(message)
        while let open = rest.firstIndex(of: "{"), let close = rest[open...].firstIndex(of: "}") {
            names.append(String(rest[rest.index(after: open)..<close]))
            rest = rest[rest.index(after: close)...]
        }
        return names
    }
}
