import Foundation
import KilnC
import KilnCore
import KilnManifest
import KilnReaders

/// Something in a bundle's schema that a target's SQLite does not have: a virtual-table module, a tokenizer option,
/// a function in a view or trigger, or a piece of syntax, with the table (or view, trigger, index) it is in.
public struct TargetProblem: Sendable, Equatable {
    /// The schema object that uses the feature.
    public var table: String
    /// The feature, e.g. `virtual-table module fts5`, `STRICT table`, `function iif()`.
    public var feature: String
    /// What the feature needs, e.g. `SQLite 3.32.0`, `SQLite built with FTS5`.
    public var needs: String
    /// `SQLiteTarget.name`.
    public var target: String

    public var sentence: String { "\(table) uses \(feature), which needs \(needs); the target \(target) lacks it" }
}

/// Checks a bundle's schema (`sqlite_schema`: tables, virtual tables, indexes, views, triggers) against a target's
/// SQLite (`SQLiteTarget`): each module, tokenizer option, function of a view or trigger and syntax feature must
/// exist there. The rules read the SQL text (string literals and quoted names blanked out first), so they find what
/// SQLite would refuse when it reads the schema on the device.
public enum TargetCompatibility {
    /// One row of `sqlite_schema`.
    public struct Entry: Sendable {
        public var type: String
        public var name: String
        public var sql: String
        public init(type: String, name: String, sql: String) {
            (self.type, self.name, self.sql) = (type, name, sql)
        }
    }

    /// The schema of the database attached as `schema`, shadow tables of virtual tables and `sqlite_*` left out.
    /// - Throws: `SQLiteError`.
    package static func entries(of database: Database, schema: String = "main") throws -> [Entry] {
        let prefix = quoteIdentifier(schema)
        let shadows = Set(try database.rows("SELECT name FROM pragma_table_list WHERE schema = ? AND type = 'shadow'", [.text(schema)]).compactMap { $0.values.first?.textValue })
        return try database.rows("SELECT type, name, sql FROM \(prefix).sqlite_schema WHERE sql IS NOT NULL ORDER BY name").compactMap { row in
            guard let type = row.values[0].textValue, let name = row.values[1].textValue, let sql = row.values[2].textValue,
                  !name.hasPrefix("sqlite_"), !shadows.contains(name) else { return nil }
            return Entry(type: type, name: name, sql: sql)
        }
    }

    /// The version from which a virtual-table module exists, and the build option it needs.
    package static let modules: [String: (SQLiteVersion, SQLiteOption)] = [
        "fts3": (SQLiteVersion(3, 5, 0), .fts3), "fts4": (SQLiteVersion(3, 7, 4), .fts4),
        "fts5": (SQLiteVersion(3, 9, 0), .fts5), "rtree": (SQLiteVersion(3, 5, 0), .rtree),
    ]

    /// Functions that are not in every SQLite Kiln targets, with the version that brought them (SQLite's release
    /// notes) and the build option they need beyond it.
    package static let functions: [String: (SQLiteVersion, SQLiteOption?)] = {
        var table: [String: (SQLiteVersion, SQLiteOption?)] = [
            "iif": (SQLiteVersion(3, 32), nil), "format": (SQLiteVersion(3, 38), nil), "unixepoch": (SQLiteVersion(3, 38), nil),
            "printf": (SQLiteVersion(3, 8, 3), nil), "instr": (SQLiteVersion(3, 7, 15), nil), "sign": (SQLiteVersion(3, 35), nil),
            "concat": (SQLiteVersion(3, 44), nil), "concat_ws": (SQLiteVersion(3, 44), nil), "string_agg": (SQLiteVersion(3, 44), nil),
            "octet_length": (SQLiteVersion(3, 43), nil), "timediff": (SQLiteVersion(3, 43), nil), "substring": (SQLiteVersion(3, 34), nil),
            "likelihood": (SQLiteVersion(3, 8, 1), nil), "likely": (SQLiteVersion(3, 8, 1), nil), "unlikely": (SQLiteVersion(3, 8, 1), nil),
        ]
        for name in ["row_number", "rank", "dense_rank", "percent_rank", "cume_dist", "ntile", "lag", "lead", "first_value", "last_value", "nth_value"] {
            table[name] = (SQLiteVersion(3, 25), nil)
        }
        for name in ["json", "json_array", "json_array_length", "json_extract", "json_insert", "json_object", "json_patch", "json_remove",
                     "json_replace", "json_set", "json_type", "json_valid", "json_quote", "json_group_array", "json_group_object", "json_each", "json_tree"] {
            table[name] = (SQLiteVersion(3, 9), .json)
        }
        return table
    }()

    /// Functions every SQLite Kiln targets has (core, date and aggregate functions).
    package static let coreFunctions: Set<String> = [
        "abs", "changes", "char", "coalesce", "glob", "hex", "ifnull", "last_insert_rowid", "length", "like", "lower", "ltrim",
        "max", "min", "nullif", "quote", "random", "randomblob", "replace", "round", "rtrim", "soundex", "sqlite_version",
        "substr", "total_changes", "trim", "typeof", "unicode", "upper", "zeroblob", "date", "time", "datetime", "julianday",
        "strftime", "avg", "count", "group_concat", "sum", "total", "sqlite_source_id",
    ]

    /// Words that precede `(` without being a function call.
    private static let keywords: Set<String> = [
        "in", "exists", "values", "check", "key", "unique", "as", "over", "filter", "using", "on", "and", "or", "not", "when",
        "then", "else", "select", "from", "where", "join", "cast", "between", "is", "references", "table", "into", "index",
        "view", "trigger", "begin", "with", "recursive", "match", "case", "end", "by", "distinct", "all", "union", "except",
        "intersect", "limit", "offset", "order", "group", "having", "window", "partition", "rows", "range", "groups", "set",
        "update", "insert", "delete", "of", "primary", "foreign", "default", "collate", "conflict", "do", "if", "raise", "return",
    ]
    /// Words after which `name (` names a table, view or column list, not a function.
    private static let nameBefore: Set<String> = ["into", "table", "on", "references", "from", "join", "update", "view", "index", "trigger", "of", "exists", "with"]

    /// What of `entries` the target lacks, in schema order.
    public static func problems(_ entries: [Entry], target: SQLiteTarget) -> [TargetProblem] {
        var found: [TargetProblem] = []
        func need(_ entry: Entry, _ feature: String, _ version: SQLiteVersion, _ option: SQLiteOption? = nil) {
            if !target.has(version) {
                found.append(TargetProblem(table: entry.name, feature: feature, needs: "SQLite \(version)", target: target.name))
            } else if let option, !target.has(option) {
                found.append(TargetProblem(table: entry.name, feature: feature, needs: "SQLite built with \(option.rawValue.uppercased())", target: target.name))
            }
        }
        for entry in entries {
            let text = blankQuoted(entry.sql).lowercased()
            let words = tokens(text)
            switch entry.type {
            case "table" where words.starts(with: ["create", "virtual", "table"]):
                guard let using = words.firstIndex(of: "using"), using + 1 < words.count else { continue }
                let module = words[using + 1]
                guard let (version, option) = modules[module] else {
                    found.append(TargetProblem(table: entry.name, feature: "virtual-table module \(module)", needs: "a module Kiln knows no target to have", target: target.name))
                    continue
                }
                need(entry, "virtual-table module \(module)", version, option)
                guard target.supports(module: module) else { continue }
                let original = entry.sql.lowercased()
                if module == "fts5" {
                    if original.range(of: #"remove_diacritics\s+2"#, options: .regularExpression) != nil { need(entry, "tokenizer option remove_diacritics 2", SQLiteVersion(3, 27)) }
                    if original.contains("trigram") { need(entry, "tokenizer trigram", SQLiteVersion(3, 34)) }
                    if original.contains("contentless_delete") { need(entry, "option contentless_delete", SQLiteVersion(3, 43)) }
                    if original.contains("content_rowid") || original.contains("content=") || original.contains("content =") { need(entry, "external content", SQLiteVersion(3, 9)) }
                }
                if module == "fts4" || module == "fts3" {
                    if original.contains("unicode61") { need(entry, "tokenizer unicode61", SQLiteVersion(3, 7, 13)) }
                    if original.contains("remove_diacritics=2") { need(entry, "tokenizer option remove_diacritics=2", SQLiteVersion(3, 27)) }
                    if original.contains("notindexed") { need(entry, "option notindexed", SQLiteVersion(3, 8, 0)) }
                    if original.contains("content=") || original.contains("content =") { need(entry, "external content", SQLiteVersion(3, 7, 9)) }
                }
            case "table":
                if text.range(of: #"\)\s*(,\s*without\s+rowid\s*)?,?\s*strict\s*(,\s*without\s+rowid\s*)?$"#, options: .regularExpression) != nil {
                    need(entry, "STRICT table", SQLiteVersion(3, 37))
                }
                if text.range(of: #"without\s+rowid"#, options: .regularExpression) != nil { need(entry, "WITHOUT ROWID", SQLiteVersion(3, 8, 2)) }
                if text.range(of: #"generated\s+always|\bas\s*\("#, options: .regularExpression) != nil { need(entry, "generated column", SQLiteVersion(3, 31)) }
            case "index":
                if words.contains("where") { need(entry, "partial index", SQLiteVersion(3, 8)) }
                if let on = text.range(of: #"\bon\s+\S+\s*\("#, options: .regularExpression), text[on.upperBound...].dropLast().contains("(") {
                    need(entry, "index on an expression", SQLiteVersion(3, 9))
                }
            default:
                syntax(entry, text, words, need: need)
                for name in calledFunctions(words) where !coreFunctions.contains(name) {
                    if let (version, option) = functions[name] {
                        need(entry, "function \(name)()", version, option)
                    } else {
                        found.append(TargetProblem(table: entry.name, feature: "function \(name)()", needs: "a function SQLite itself defines (an app's own function is not there when the bundle is opened elsewhere)", target: target.name))
                    }
                }
            }
        }
        return found
    }

    /// The syntax of views and triggers newer than some targets.
    private static func syntax(_ entry: Entry, _ text: String, _ words: [String], need: (Entry, String, SQLiteVersion, SQLiteOption?) -> Void) {
        if words.contains("over") { need(entry, "window function (OVER)", SQLiteVersion(3, 25), nil) }
        if text.range(of: #"\bfilter\s*\(\s*where"#, options: .regularExpression) != nil { need(entry, "aggregate FILTER clause", SQLiteVersion(3, 30), nil) }
        if text.range(of: #"\bnulls\s+(first|last)\b"#, options: .regularExpression) != nil { need(entry, "NULLS FIRST/LAST", SQLiteVersion(3, 30), nil) }
        if words.contains("returning") { need(entry, "RETURNING", SQLiteVersion(3, 35), nil) }
        if text.range(of: #"\bon\s+conflict\b[^;]*?\bdo\s+(update|nothing)\b"#, options: .regularExpression) != nil { need(entry, "UPSERT (ON CONFLICT … DO)", SQLiteVersion(3, 24), nil) }
        if text.contains("->") { need(entry, "JSON operator ->", SQLiteVersion(3, 38), .json) }
        if text.range(of: #"\(\s*[a-z_0-9.]+\s*,\s*[a-z_0-9.]+\s*\)\s*(=|<>|<|>|in)\s*\("#, options: .regularExpression) != nil {
            need(entry, "row values", SQLiteVersion(3, 15), nil)
        }
    }

    /// The names called as functions (`name (`) in the words of a statement.
    package static func calledFunctions(_ words: [String]) -> [String] {
        var names: [String] = []
        for index in words.indices.dropLast() where words[index + 1] == "(" {
            let word = words[index]
            guard let first = word.unicodeScalars.first, CharacterSet.letters.contains(first) || first == "_" else { continue }
            if keywords.contains(word) { continue }
            if index > 0, nameBefore.contains(words[index - 1]) { continue }
            if !names.contains(word) { names.append(word) }
        }
        return names
    }

    /// The statement with the insides of string literals and quoted names blanked out (`'…'`, `"…"`, `` `…` ``, `[…]`), so
    /// that nothing in a value or a name is taken for a keyword.
    package static func blankQuoted(_ sql: String) -> String {
        var result = "", closing: Character? = nil
        for character in sql {
            if let close = closing {
                if character == close { closing = nil; result.append(character) } else { result.append("x") }
            } else {
                switch character {
                case "'", "\"", "`": closing = character
                case "[": closing = "]"
                default: break
                }
                result.append(character)
            }
        }
        return result
    }

    /// Words, numbers, `(`, `)`, `,` and `->` of a blanked statement; quoted names count as one word (`"x"`).
    private static func tokens(_ text: String) -> [String] {
        var words: [String] = [], current = ""
        func flush() { if !current.isEmpty { words.append(current); current = "" } }
        for character in text {
            if character.isLetter || character.isNumber || character == "_" || character == "\"" || character == "'" || character == "`" || character == "[" || character == "]" {
                current.append(character)
            } else {
                flush()
                if "(),".contains(character) { words.append(String(character)) }
            }
        }
        flush()
        return words
    }
}

extension SQLiteTarget {
    /// True when the target has the virtual-table module `module` (`fts5`, `rtree`…): its build option and version.
    public func supports(module: String) -> Bool {
        guard let (version, option) = TargetCompatibility.modules[module] else { return false }
        return has(version) && has(option)
    }
}
