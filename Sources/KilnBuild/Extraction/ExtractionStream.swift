import Foundation
import KilnC
import KilnCore
import KilnManifest
import KilnReaders

/// `kiln extract` on files of any size: each record is formatted as it is read and spooled to a temporary file
/// (the table's column widths and the findings that come first in the JSON are known only at the end), then the
/// output is written from the spool. Memory stays flat however many records there are; the output is the same as
/// `Extraction.table()` and `Extraction.json()` give.
public enum ExtractionStream {
    /// The output formats.
    public enum Format: Sendable { case table, json }

    /// Runs `source`'s reader over `files` (as `Extraction.run`) and writes the result in `format` to `output`:
    /// only the `fields` named (all when `nil`; called `fieldsName` in messages), and a table no wider than `width` (`Extraction.table(width:)`).
    /// `sanitize` is applied to each line of the table (the terminal-safety filter of the command line).
    /// - Throws: `KilnError.io` when a file cannot be read or the spool cannot be written, `KilnError.usage` for a
    ///   kind the source does not map or a field it does not have (`Extraction.fieldIndices`).
    public static func write(_ source: CompiledSource, kind: String? = nil, files: [URL], displayNames: [String]? = nil,
                             fields: [String]? = nil, fieldsName: String = "the field list", width: Int? = nil,
                             format: Format, to output: FileHandle, sanitize: (String) -> String = { $0 }) throws {
        let kind = try source.extractedKind(kind)
        let selection = try fields.map { try Extraction.fieldIndices($0, in: kind.fieldNames, of: source.spec.name + "." + kind.name, listName: fieldsName) }
        let fieldNames = selection.map { $0.map { kind.fieldNames[$0] } } ?? kind.fieldNames
        let reader = source.reader.restricted(to: [kind.name])
        let log = DiagnosticLog()
        log.tally = DiagnosticTally(examplesPerCode: .max)
        log.readingSource = source.spec.name
        let spoolURL = FileManager.default.temporaryDirectory
            .appendingPathComponent("kiln-extract-\(ProcessInfo.processInfo.processIdentifier)-\(UUID().uuidString).spool")
        TemporaryFiles.shared.register(spoolURL)
        defer {
            try? FileManager.default.removeItem(at: spoolURL)
            TemporaryFiles.shared.unregister(spoolURL)
        }
        let spool = try Spool(url: spoolURL)
        let recordJSON = try RecordJSON(fieldNames: fieldNames)
        var widths = (["file:line"] + fieldNames).map(\.count)
        var count = 0
        // The files are parsed on a thread of their own while this one formats the records they give.
        let items = ExtractedItems(reading: files, displayNames: displayNames, kind: kind.name, with: reader, log: log)
        defer { items.cancel() }
        while let batch = try items.next() {
            for read in batch {
                let item = selection.map { read.selecting($0) } ?? read
                switch format {
                case .table:
                    let cells = Extraction.cells(item)
                    for (column, cell) in cells.enumerated() { widths[column] = max(widths[column], cell.count) }
                    try spool.append(cells.joined(separator: "\t") + "\n")
                case .json:
                    try spool.append((count == 0 ? "" : ",\n") + recordJSON.format(item))
                }
                count += 1
            }
        }
        try spool.close()
        var summary = Extraction(fieldNames: fieldNames, items: [], diagnostics: log.sorted)
        // A file kiln fetch saved for this source shows the URL it came from.
        let fetchedFiles = Dictionary(source.files.compactMap { input in input.fetchedFrom.map { (input.url.standardizedFileURL.path, (input.relativePath, $0, input.capturedAt)) } },
                                      uniquingKeysWith: { first, _ in first })
        for (index, file) in files.enumerated() {
            guard let (_, url, captured) = fetchedFiles[file.standardizedFileURL.path] else { continue }
            summary.fetched[displayNames?[index] ?? file.relativePath] = Extraction.FetchOrigin(url: url, capturedAt: captured)
        }
        let writer = BufferedOutput(output)
        switch format {
        case .table:
            let natural = widths
            widths = Extraction.fittedWidths(natural, into: width)
            let cut = widths != natural
            let headers = ["file:line"] + fieldNames
            try writer.write(sanitize(Extraction.formatRow(cut ? Extraction.fitted(headers, to: widths) : headers, widths: widths)) + "\n")
            try writer.write(Extraction.formatRow(widths.map { String(repeating: "-", count: $0) }, widths: widths) + "\n")
            let lines = try LineReader(url: spoolURL)
            var plain: [UInt8] = []
            while let line = try lines.next() {
                let cellBytes = line.bytes.split(separator: 0x09, omittingEmptySubsequences: false)
                // Most rows are padded as bytes; a row that starts like a workflow command, or that formatRow would cut
                // or trim, is formatted as a string.
                if !ExtractionStream.mayBeWorkflowCommand(line.bytes), Extraction.appendPlainRow(cellBytes, widths: widths, to: &plain) {
                    if plain.count >= 1 << 16 {
                        try writer.write(Data(plain))
                        plain.removeAll(keepingCapacity: true)
                    }
                    continue
                }
                try writer.write(Data(plain))
                plain.removeAll(keepingCapacity: true)
                let cells = cellBytes.map { String(decoding: $0, as: UTF8.self) }
                let row = Extraction.formatRow(cut ? Extraction.fitted(cells, to: widths) : cells, widths: widths)
                // The cells are escaped already; only a workflow command at the start of the line is left to neutralise.
                try writer.write((ExtractionStream.mayBeWorkflowCommand(row) ? sanitize(row) : row) + "\n")
            }
            try writer.write(Data(plain))
            try writer.write(sanitize(summary.tableFooter(count: count, cutTo: cut ? width : nil)))
        case .json:
            let marker = "kiln-extract-records-\(UUID().uuidString)"
            let text = String(decoding: try summary.json(records: count == 0 ? [] : [["_file": .string(marker)]]), as: UTF8.self)
            guard count > 0 else {
                try writer.write(text + "\n")
                break
            }
            // The records' place: the lines of the one marker object, replaced by the spooled objects.
            var lines = text.split(separator: "\n", omittingEmptySubsequences: false)
            guard let markerLine = lines.firstIndex(where: { $0.contains(marker) }) else {
                throw KilnError.io("cannot place the records in the JSON output")
            }
            let before = lines[..<(markerLine - 1)].joined(separator: "\n")
            let after = lines[(markerLine + 2)...].joined(separator: "\n")
            lines.removeAll()
            try writer.write(before + "\n")
            let handle = try FileHandle(forReadingFrom: spoolURL)
            defer { try? handle.close() }
            while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty { try writer.write(chunk) }
            try writer.write("\n" + after + "\n")
        }
        try writer.flush()
    }
}

extension ExtractionStream {
    /// True when `line` starts, after blanks, with `::` or `##[` (what `TerminalText.sanitize` neutralises).
    package static func mayBeWorkflowCommand(_ line: String) -> Bool {
        mayBeWorkflowCommand(line.utf8)
    }

    /// `mayBeWorkflowCommand` on a line's UTF-8 bytes.
    package static func mayBeWorkflowCommand<Bytes: Collection>(_ line: Bytes) -> Bool where Bytes.Element == UInt8 {
        let body = line.drop { $0 == 0x20 || $0 == 0x09 }
        return body.starts(with: "::".utf8) || body.starts(with: "##[".utf8)
    }
}

/// The items of one kind of record in `files`, read on a thread of their own, in order, and handed over in batches
/// through a bounded queue (memory stays flat). The thread alone uses the reader and the log until it has finished;
/// a file that cannot be read ends the items with its error, at its place.
private final class ExtractedItems: Sendable {
    private enum Message: Sendable {
        case items([Extraction.Item])
        case failed(Handoff<Error>)
    }

    private let queue = BoundedQueue<Message>(capacity: 8)
    /// True once the reading thread has ended.
    private let ended = ConditionLock(false)
    private static let batchSize = 512

    package init(reading files: [URL], displayNames: [String]?, kind: String, with reader: RecordReader, log: DiagnosticLog) {
        // The reader and the log go to the reading thread, which alone uses them until it ends.
        let handedOver = Handoff((reader: reader, log: log))
        DetachedThread.start(name: "kiln extract reader") { [self] in
            let reader = handedOver.value.reader, log = handedOver.value.log
            defer {
                queue.finish()
                ended.change { $0 = true }
            }
            var batch: [Extraction.Item] = []
            do {
                try Extraction.forEachItem(in: files, displayNames: displayNames, kind: kind, reader: reader, log: log) { item in
                    batch.append(item)
                    if batch.count >= ExtractedItems.batchSize {
                        guard queue.push(.items(batch)) else { throw CancellationError() }
                        batch = []
                    }
                }
                if !batch.isEmpty { _ = queue.push(.items(batch)) }
            } catch is CancellationError {
                return
            } catch {
                if !batch.isEmpty { _ = queue.push(.items(batch)) }
                _ = queue.push(.failed(Handoff(error)))
            }
        }
    }

    /// The next batch, in file and record order; `nil` once every file is read (the log is then complete).
    /// - Throws: what reading a file threw, after the items before it.
    package func next() throws -> [Extraction.Item]? {
        switch queue.pop() {
        case .items(let items): return items
        case .failed(let box): throw box.value
        case nil:
            ended.wait(until: { $0 })
            return nil
        }
    }

    /// Stops the reading thread (it stops at its next batch) and waits for it.
    package func cancel() {
        queue.cancel()
        ended.wait(until: { $0 })
    }
}

/// Formats one record as `KilnJSON.encode` formats it inside `records` (pretty-printed, four spaces in), without
/// a JSONEncoder per record: the keys in the order the encoder sorts them (found once by encoding a template),
/// strings escaped as it escapes them. `ExtractionStreamTests` compares the two.
private struct RecordJSON {
    /// Each key as written, and where its value comes from: a field's index, or nil for `_file` / `_line`.
    private let entries: [(key: String, field: Int?, name: String)]

    package init(fieldNames: [String]) throws {
        var sources: [String: Int?] = ["_file": nil, "_line": nil]
        for (index, name) in fieldNames.enumerated() { sources[name] = index }
        let template = try KilnJSON.encode(sources.mapValues { _ in JSONValue.null })
        let text = String(decoding: template, as: UTF8.self)
        let keys = sources.keys.map { (name: $0, key: "\"" + RecordJSON.escape($0) + "\"") }
        entries = keys.map { entry -> (position: String.Index, key: String, field: Int?, name: String) in
            let position = text.range(of: "\n  " + entry.key + " : ")?.lowerBound ?? text.endIndex
            return (position, entry.key, sources[entry.name] ?? nil, entry.name)
        }.sorted { $0.position < $1.position }.map { ($0.key, $0.field, $0.name) }
    }

    package func format(_ item: Extraction.Item) -> String {
        var text = "    {\n"
        for (offset, entry) in entries.enumerated() {
            text += "      " + entry.key + " : "
            if let field = entry.field {
                if field < item.values.count, let value = item.values[field] { text += "\"" + RecordJSON.escape(value) + "\"" } else { text += "null" }
            } else if entry.name == "_line" {
                text += String(item.line)
            } else {
                text += "\"" + RecordJSON.escape(item.file) + "\""
            }
            text += offset == entries.count - 1 ? "\n" : ",\n"
        }
        return text + "    }"
    }

    /// A JSON string's contents as Foundation's encoder writes them (`JSONText.escaped`).
    package static func escape(_ value: String) -> String { JSONText.escaped(value) }
}

/// Appends text to a file through a buffer.
private final class Spool {
    private let handle: FileHandle
    private let url: URL
    private var buffer = Data()

    package init(url: URL) throws {
        self.url = url
        guard FileManager.default.createFile(atPath: url.path, contents: nil),
              let handle = try? FileHandle(forWritingTo: url) else {
            throw KilnError.io("cannot write the temporary file \(url.path)")
        }
        self.handle = handle
    }

    package func append(_ text: String) throws {
        buffer.append(contentsOf: text.utf8)
        if buffer.count >= 1 << 20 { try flush() }
    }

    package func close() throws {
        try flush()
        try? handle.close()
    }

    private func flush() throws {
        do { try DescriptorWrite.write(buffer, to: handle.fileDescriptor) } catch {
            throw KilnError.io(.written("cannot write the temporary file \(url.path) (set TMPDIR to a folder with room)", path: url.path, error))
        }
        buffer.removeAll(keepingCapacity: true)
    }
}

/// Writes to a file handle in large pieces; a failed write is an I/O error naming the output (`DescriptorWrite`).
private final class BufferedOutput {
    private let handle: FileHandle
    private var buffer = Data()

    package init(_ handle: FileHandle) { self.handle = handle }

    package func write(_ text: String) throws { try write(Data(text.utf8)) }

    package func write(_ data: Data) throws {
        buffer.append(data)
        if buffer.count >= 1 << 20 { try flush() }
    }

    package func flush() throws {
        defer { buffer.removeAll(keepingCapacity: true) }
        if handle.fileDescriptor == 1 {
            try StandardOutput.write(buffer)
            return
        }
        do { try DescriptorWrite.write(buffer, to: handle.fileDescriptor) } catch {
            throw KilnError.io(.written("cannot write the extraction's output", path: nil, error))
        }
    }
}
