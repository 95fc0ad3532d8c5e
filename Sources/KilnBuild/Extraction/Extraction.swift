import Foundation
import KilnC
import KilnCore
import KilnManifest
import KilnReaders

/// What one source extracts from some files: the records with their fields, and every finding — above all the
/// lines that looked like data but no pattern captured (`extract.unmatched`).
public struct Extraction: Sendable {
    /// One extracted record: the file it came from, its line and its field values.
    public struct Item: Sendable, Equatable {
        public var file: String
        public var line: Int
        public var values: [String?]

        /// The item with only the values at `indices`, in that order (`nil` where it has none).
        package func selecting(_ indices: [Int]) -> Item {
            Item(file: file, line: line, values: indices.map { $0 < values.count ? values[$0] : nil })
        }
    }

    /// The source's field names, aligned with each item's values.
    public var fieldNames: [String]
    public var items: [Item]
    public var diagnostics: [Diagnostic]
    /// Where each file `kiln fetch` saved came from, by the name the file is shown under.
    public var fetched: [String: FetchOrigin] = [:]

    /// The URL a fetched file was saved from, and when its bytes were captured.
    public struct FetchOrigin: Sendable, Equatable, Encodable {
        public var url: String
        public var capturedAt: String?

        public init(url: String, capturedAt: String?) {
            self.url = url
            self.capturedAt = capturedAt
        }
    }

    /// The findings about lines no pattern captured.
    public var unmatched: [Diagnostic] { diagnostics.filter { $0.code == DiagnosticCode.extractUnmatched.rawValue } }

    /// Runs `source`'s reader over `files` (paths as the user gave them; they need not be inside the pipeline),
    /// keeping the records of `kind` (the source's only mapped kind when `nil`).
    /// - Throws: `KilnError.io` when a file cannot be read, `KilnError.usage` for a kind the source does not map.
    public static func run(_ source: CompiledSource, kind: String? = nil, files: [URL], displayNames: [String]? = nil) throws -> Extraction {
        let kind = try source.extractedKind(kind)
        let reader = source.reader.restricted(to: [kind.name])
        let log = DiagnosticLog()
        // Every unmatched line is shown and compared with fixtures: no cap here (the files are the user's samples).
        log.tally = DiagnosticTally(examplesPerCode: .max)
        log.readingSource = source.spec.name
        var items: [Item] = []
        try forEachItem(in: files, displayNames: displayNames, kind: kind.name, reader: reader, log: log) { items.append($0) }
        return Extraction(fieldNames: kind.fieldNames, items: items, diagnostics: log.sorted)
    }

    /// Reads `files` in order with `reader` (findings to `log`), handing `body` each record of `kind` as an item.
    /// - Throws: `KilnError.io` for a file that is not a regular file or cannot be read; what `body` throws.
    package static func forEachItem(in files: [URL], displayNames: [String]?, kind: String, reader: RecordReader, log: DiagnosticLog,
                            _ body: (Item) throws -> Void) throws {
        for (index, url) in files.enumerated() {
            let name = displayNames?[index] ?? url.relativePath
            if let entry = OutputPath.entryKind(url, followingLinks: true), entry != .regular {
                throw KilnError.io("\(name) is \(entry.phrase), not a file to extract from")
            }
            guard FileManager.default.isReadableFile(atPath: url.path) else { throw CannotRead.error(url, named: name) }
            try reader.read(InputFile(url: url, relativePath: name), log: log) { record in
                guard record.kind.name == kind else { return }
                try body(Item(file: name, line: record.line, values: record.values))
            }
        }
    }

    /// The records as objects (`_file`, `_line`, then each field), for JSON output and fixtures.
    public var recordObjects: [[String: JSONValue]] {
        items.map { Extraction.object($0, fieldNames: fieldNames) }
    }

    /// One record as an object: `_file`, `_line`, then each field.
    package static func object(_ item: Item, fieldNames: [String]) -> [String: JSONValue] {
        var object: [String: JSONValue] = ["_file": .string(item.file), "_line": .number(Double(item.line))]
        for (name, value) in zip(fieldNames, item.values) { object[name] = value.map(JSONValue.string) ?? .null }
        return object
    }

    /// Everything as JSON: `fields`, `records`, `unmatched` and `diagnostics`, keys sorted.
    public func json() throws -> Data { try json(records: recordObjects) }

    /// Everything as JSON, with `records` in place of the items' objects.
    package func json(records: [[String: JSONValue]]) throws -> Data {
        struct Output: Encodable {
            var fields: [String]
            var records: [[String: JSONValue]]
            var unmatched: [[String: JSONValue]]
            var diagnostics: [Diagnostic]
            var fetched: [String: FetchOrigin]?
        }
        return try KilnJSON.encode(Output(fields: fieldNames, records: records,
                                         unmatched: unmatched.map(Extraction.object), diagnostics: diagnostics, fetched: fetched.isEmpty ? nil : fetched))
    }

    /// An unmatched-line finding as `{file, line, text}`.
    package static func object(_ diagnostic: Diagnostic) -> [String: JSONValue] {
        [
            "file": .string(diagnostic.provenance?.file ?? ""),
            "line": .number(Double(diagnostic.provenance?.line ?? 0)),
            "message": .string(diagnostic.message),
        ]
    }

    /// A plain-text table of the records, then the unmatched lines and other findings, for tuning a pattern. With a
    /// `width`, the field columns are narrowed so that each line fits it (`fittedWidths`) and the cells cut end in `…`.
    public func table(width: Int? = nil) -> String {
        let headers = ["file:line"] + fieldNames
        let rows = items.map(Extraction.cells)
        let natural = headers.indices.map { column in
            ([headers[column]] + rows.map { $0[column] }).map { $0.count }.max() ?? 0
        }
        let widths = Extraction.fittedWidths(natural, into: width)
        let fit = { (cells: [String]) in widths == natural ? cells : Extraction.fitted(cells, to: widths) }
        var lines = [fit(headers), widths.map { String(repeating: "-", count: $0) }].map { Extraction.formatRow($0, widths: widths) }
        lines += rows.map { Extraction.formatRow(fit($0), widths: widths) }
        return lines.joined(separator: "\n") + "\n" + tableFooter(count: items.count, cutTo: widths == natural ? nil : width)
    }

    /// The extraction with only the fields at `indices` (from `fieldIndices`), in that order.
    public func selecting(_ indices: [Int]) -> Extraction {
        Extraction(fieldNames: indices.map { fieldNames[$0] }, items: items.map { $0.selecting(indices) }, diagnostics: diagnostics)
    }

    /// The positions in `fieldNames` of the fields `requested` (`kiln extract --fields a,b`), in the order asked.
    /// - Throws: `KilnError.usage` for an empty list, a field given twice, or a name that is not one of `fieldNames`
    ///   (the message lists them).
    /// `listName` is what messages call the list (the command line: `--fields`).
    public static func fieldIndices(_ requested: [String], in fieldNames: [String], of source: String,
                                    listName: String = "the field list") throws -> [Int] {
        let known = "the fields of \(source) are: \(fieldNames.joined(separator: ", "))"
        guard !requested.isEmpty else { throw KilnError.usage("\(listName) needs at least one field name; \(known)") }
        var indices: [Int] = []
        for name in requested {
            guard let index = fieldNames.firstIndex(of: name) else {
                throw KilnError.usage("\(listName): unknown field \"\(name)\"; \(known)")
            }
            guard !indices.contains(index) else { throw KilnError.usage("\(listName): \"\(name)\" is given twice; give it once") }
            indices.append(index)
        }
        return indices
    }

    /// The narrowest a field column is made to fit a line: three characters and the `…`.
    package static let narrowestColumn = 4

    /// Column widths that fit a line of `width` (the columns are two spaces apart): the first column
    /// (`file:line`) is kept whole and the widest field columns are narrowed to one common width, the largest that
    /// fits, but not below `narrowestColumn` (a line may then stay wider). `nil` or a table that fits: unchanged.
    package static func fittedWidths(_ widths: [Int], into width: Int?) -> [Int] {
        guard let width, widths.count > 1 else { return widths }
        let spaces = 2 * (widths.count - 1)
        func total(_ cap: Int) -> Int { widths[0] + spaces + widths.dropFirst().reduce(0) { $0 + min($1, cap) } }
        let widest = widths.dropFirst().max() ?? 0
        guard total(widest) > width else { return widths }
        var cap = widest
        while cap > narrowestColumn, total(cap) > width { cap -= 1 }
        return [widths[0]] + widths.dropFirst().map { min($0, cap) }
    }

    /// Each cell `fitted` to its column's width.
    package static func fitted(_ cells: [String], to widths: [Int]) -> [String] {
        zip(cells, widths).map { fitted($0, to: $1) }
    }

    /// `cell` cut to `width` UTF-16 units (as `formatRow` counts), its last kept character followed by `…`;
    /// unchanged when it fits.
    package static func fitted(_ cell: String, to width: Int) -> String {
        guard cell.utf16.count > width else { return cell }
        var kept = "", length = 0
        for character in cell {
            let units = character.utf16.count
            guard length + units <= width - 1 else { break }
            kept.append(character)
            length += units
        }
        return kept + "…"
    }

    /// One record's cells in the table: `file:line`, then each field (`∅` for none), escaped for a terminal.
    package static func cells(_ item: Item) -> [String] {
        [TerminalText.escape("\(item.file):\(item.line)")] + item.values.map { $0.map(TerminalText.escape) ?? "∅" }
    }

    /// One line of the table: the cells padded to `widths`, without trailing white space.
    package static func formatRow(_ cells: [String], widths: [Int]) -> String {
        var line = ""
        for (index, (cell, width)) in zip(cells, widths).enumerated() {
            if index > 0 { line += "  " }
            let length = cell.utf16.count
            if index == min(cells.count, widths.count) - 1 {
                line += cell  // its padding would be trimmed below
            } else if length <= width {
                line += cell + String(repeating: " ", count: width - length)
            } else {
                line += cell.padding(toLength: width, withPad: " ", startingAt: 0)
            }
        }
        if let lastCell = cells.last, cells.count <= widths.count, lastCell.utf16.count > widths[cells.count - 1] {
            // Cut to its width as the other cells are (the padding that NSString does counts UTF-16 units).
            return formatRowSlowly(cells, widths: widths)
        }
        guard let last = line.unicodeScalars.last, last.properties.isWhitespace else { return line }
        return line.replacingOccurrences(of: "\\s+$", with: "", options: .regularExpression)
    }

    /// `formatRow` for cells given as their UTF-8 bytes, appended to `output` with a line break, when the answer is
    /// plain: as many cells as widths, each within its width (in UTF-16 units, as `formatRow` pads), and the line
    /// ending in a visible ASCII character, so that nothing is cut or trimmed. Returns false, appending nothing, for
    /// any other line: the caller formats it with `formatRow`. Works on bytes: no string is made for the cells.
    package static func appendPlainRow(_ cells: [ArraySlice<UInt8>], widths: [Int], to output: inout [UInt8]) -> Bool {
        guard cells.count == widths.count, !cells.isEmpty else { return false }
        let start = output.count
        for (index, cell) in cells.enumerated() {
            if index > 0 { output.append(contentsOf: [0x20, 0x20]) }
            // UTF-16 units: one per scalar (each byte that does not continue a sequence), two for a 4-byte one.
            var length = 0
            for byte in cell where byte & 0xC0 != 0x80 { length += byte >= 0xF0 ? 2 : 1 }
            guard length <= widths[index] else {
                output.removeSubrange(start...)
                return false
            }
            output.append(contentsOf: cell)
            if index < cells.count - 1 { output.append(contentsOf: repeatElement(0x20, count: widths[index] - length)) }
        }
        guard let last = output.last, start < output.count, last > 0x20, last < 0x7F else {
            output.removeSubrange(start...)
            return false
        }
        output.append(0x0A)
        return true
    }

    private static func formatRowSlowly(_ cells: [String], widths: [Int]) -> String {
        zip(cells, widths).map { $0.padding(toLength: $1, withPad: " ", startingAt: 0) }.joined(separator: "  ")
            .replacingOccurrences(of: "\\s+$", with: "", options: .regularExpression)
    }

    /// What the table shows after the records: their count (and, when cells were cut to fit `cutTo` columns,
    /// that once), the unmatched lines and the other findings.
    package func tableFooter(count: Int, cutTo width: Int? = nil) -> String {
        var lines = ["\(count) record\(count == 1 ? "" : "s")"]
        if let width {
            lines.append("(cells cut to fit \(width) columns end in …; --fields A,B shows fewer fields, --width 0 every cell whole)")
        }
        let misses = unmatched
        lines.append("")
        lines.append(misses.isEmpty ? "no unmatched candidate lines" : "\(misses.count) unmatched candidate line\(misses.count == 1 ? "" : "s"):")
        for miss in misses { lines.append("  \(TerminalText.escape(miss.provenance?.location ?? "")): \(TerminalText.escape(miss.message))") }
        let others = diagnostics.filter { $0.code != DiagnosticCode.extractUnmatched.rawValue }
        if !others.isEmpty {
            lines.append("")
            lines.append("other findings:")
            for finding in others { lines.append("  " + finding.displayLine) }
        }
        if !fetched.isEmpty {
            lines.append("")
            for (file, origin) in fetched.sorted(by: { $0.key < $1.key }) {
                lines.append(TerminalText.escape("\(file) was fetched from \(origin.url)\(origin.capturedAt.map { ", captured \($0)" } ?? "")"))
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
