import Foundation
import KilnC
import KilnCore
import KilnManifest
import KilnReaders

/// A bundle's data dictionary (`kiln export docs BUNDLE --out DIR`: `<bundle>.md` and a self-contained
/// `<bundle>.html`), from the manifest's descriptions, rules and sources and the bundle's schema and row counts.
/// Both renderings come from one list of blocks, so they cannot say different things.
package struct DataDictionary {
    private enum Block {
        case heading(Int, String)
        case paragraph(String)
        case table([String], [[String]])
    }

    package let description: BundleDescription

    package init(_ description: BundleDescription) {
        self.description = description
    }

    private var blocks: [Block] {
        var blocks: [Block] = [.heading(1, "\(description.bundle): data dictionary")]
        if let text = description.description { blocks.append(.paragraph(text)) }
        blocks.append(.paragraph("Schema version \(description.schemaVersion); content digest \(description.contentDigest)."))
        blocks.append(.table(["table", "rows", "what a row is"], description.tables.map { [$0.name, String($0.rows), $0.description ?? ""] }))
        for table in description.tables {
            blocks.append(.heading(2, table.name))
            if let text = table.description { blocks.append(.paragraph(text)) }
            var facts: [String] = ["\(table.rows) rows"]
            if !table.primaryKey.isEmpty { facts.append("key (\(table.primaryKey.joined(separator: ", ")))") }
            if table.userFilled { facts.append("filled by the app (userFilled): shipped empty or with defaults, kept across versions") }
            if let fullText = table.fullText {
                facts.append("full-text search: \(fullText.name) over \(fullText.columns.joined(separator: ", ")) (tokenizer \(fullText.tokenize))")
            }
            if let spatial = table.spatial { facts.append("region queries: R*Tree \(spatial.name) over \(spatial.latitude), \(spatial.longitude)") }
            blocks.append(.paragraph(facts.joined(separator: "; ") + "."))
            blocks.append(.table(["column", "type", "null", "meaning", "constraints"], table.columns.map { column in
                [column.name, column.type, column.notNull ? "no" : "yes", column.description ?? "", constraints(column, in: table)]
            }))
            if let query = table.query { blocks.append(.paragraph("Filled by a query over the staged tables: \(query)")) }
            if !table.sources.isEmpty {
                blocks.append(.paragraph("Sources:"))
                blocks.append(.table(["source", "format", "files", "about"], table.sources.map { [$0.name, $0.format, $0.path, $0.description ?? ""] }))
            }
            if !table.rules.isEmpty {
                blocks.append(.paragraph("Rules:"))
                blocks.append(.table(["code", "kind", "severity", "columns", "meaning"], table.rules.map { rule in
                    [rule.code, rule.kind.rawValue, (description.manifest.severity[rule.code] ?? rule.severity).rawValue,
                     rule.check.columns.joined(separator: ", "), rule.description ?? ""]
                }))
            }
        }
        let sqlRules = description.manifest.rules.filter { $0.check.table == nil }
        if !sqlRules.isEmpty {
            blocks.append(.heading(2, "Rules across tables"))
            blocks.append(.table(["code", "severity", "meaning"], sqlRules.map { [$0.code, (description.manifest.severity[$0.code] ?? $0.severity).rawValue, $0.description ?? ""] }))
        }
        return blocks
    }

    /// What the manifest holds the column to: key, unique, reference, range, allowed values, pattern.
    private func constraints(_ column: BundleDescription.Column, in table: BundleDescription.Table) -> String {
        var parts: [String] = []
        if table.primaryKey.contains(column.name) { parts.append("key") }
        guard let spec = column.spec else { return parts.joined(separator: "; ") }
        if spec.unique { parts.append("unique") }
        if let reference = spec.references { parts.append("→ \(reference.table).\(reference.column)") }
        for key in table.foreignKeys where key.columns.count > 1 && key.columns.contains(column.name) {
            parts.append("(\(key.columns.joined(separator: ", "))) → \(key.table) (\(key.referencedColumns.joined(separator: ", ")))")
        }
        if let range = spec.range {
            parts.append("\(range.min.map(sqlNumber) ?? "…") to \(range.max.map(sqlNumber) ?? "…")")
        }
        if let allowed = spec.allowed { parts.append("one of " + allowed.joined(separator: ", ")) }
        if let pattern = spec.pattern { parts.append("matches \(pattern)") }
        return parts.joined(separator: "; ")
    }

    /// The dictionary as Markdown.
    package func markdown() -> String {
        func cell(_ text: String) -> String {
            text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "|", with: "\\|").replacingOccurrences(of: "\n", with: " ")
        }
        var lines: [String] = []
        for block in blocks {
            switch block {
            case .heading(let level, let text): lines += [String(repeating: "#", count: level) + " " + text, ""]
            case .paragraph(let text): lines += [text, ""]
            case .table(let header, let rows):
                lines.append("| " + header.map(cell).joined(separator: " | ") + " |")
                lines.append("|" + String(repeating: " --- |", count: header.count))
                lines += rows.map { "| " + $0.map(cell).joined(separator: " | ") + " |" }
                lines.append("")
            }
        }
        return lines.joined(separator: "\n")
    }

    /// The dictionary as one self-contained HTML page (inline CSS, no script).
    package func html() -> String {
        var html = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width\">"
            + "<title>\(HTML.escape(description.bundle)): data dictionary</title><style>body{font:15px/1.4 system-ui,sans-serif;margin:1.5em auto;max-width:70em;padding:0 1em}"
            + "table{border-collapse:collapse;margin:.5em 0 1em}th,td{border:1px solid #ccc;padding:.2em .5em;text-align:left;vertical-align:top}th{background:#f3f3f3}</style></head><body>\n"
        for block in blocks {
            switch block {
            case .heading(let level, let text): html += "<h\(level)\(level == 2 ? " id=\"\(HTML.escape(text))\"" : "")>\(HTML.escape(text))</h\(level)>\n"
            case .paragraph(let text): html += "<p>\(HTML.escape(text))</p>\n"
            case .table(let header, let rows):
                html += "<table><thead><tr>" + header.map { "<th>\(HTML.escape($0))</th>" }.joined() + "</tr></thead><tbody>"
                html += rows.map { "<tr>" + $0.map { "<td>\(HTML.escape($0))</td>" }.joined() + "</tr>" }.joined()
                html += "</tbody></table>\n"
            }
        }
        return html + "</body></html>\n"
    }
}
