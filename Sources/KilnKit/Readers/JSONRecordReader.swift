import Foundation

/// Reads records from JSON files, streaming through yajl (`JSONStream`): the objects at the `records` path
/// (`exhibits/*`, `spaces/*/hotspots/*`; `*` is any array element or member) are records, each field is a key path
/// inside the record (`id`, `position/ath`), and `context` gives records members of the objects around them
/// (`{"spaces/*": {space: "name"}}`; members written before the records). Numbers keep their text (integers beyond
/// 2^53 stay exact), booleans become 1/0, an object or array field its compact JSON. Every record also carries
/// `_ordinal` and `_position`, as in the XML reader. Files of any size stream in bounded memory.
public struct JSONRecordReader: ConfigurableReader {
    public static let format = "json"

    /// The options a manifest gives a `json` source.
    public struct Options: Decodable {
        var records: String
        var fields: [String: String]
        var context: [String: [String: String]] = [:]

        enum CodingKeys: String, CodingKey, CaseIterable { case records, fields, context }

        public init(from decoder: Decoder) throws {
            let c = try decoder.strictContainer(keyedBy: CodingKeys.self)
            records = try c.decode(String.self, forKey: .records)
            fields = try c.decode([String: String].self, forKey: .fields)
            context = try c.decodeIfPresent([String: [String: String]].self, forKey: .context) ?? [:]
            let pattern = KeyPath(records)
            var seen = Set(fields.keys)
            for name in fields.keys.sorted() where name.hasPrefix("_") || fields[name]!.isEmpty {
                throw DecodingError.dataCorrupted(.init(codingPath: c.codingPath + [CodingKeys.fields, AnyKey(stringValue: name)], debugDescription:
                    "field names starting with \"_\" are Kiln's own (\(RecordOrder.fieldNames.joined(separator: ", "))), and a key path is not empty"))
            }
            for path in context.keys.sorted() {
                let enclosing = KeyPath(path)
                guard enclosing.segments.count < pattern.segments.count,
                      zip(enclosing.segments, pattern.segments).allSatisfy({ $0 == $1 }) else {
                    throw DecodingError.dataCorrupted(.init(codingPath: c.codingPath + [CodingKeys.context, AnyKey(stringValue: path)], debugDescription:
                        "a context path names an object around the records: a beginning of \"\(records)\""))
                }
                for name in context[path]!.keys.sorted() where !seen.insert(name).inserted || name.hasPrefix("_") {
                    throw DecodingError.dataCorrupted(.init(codingPath: c.codingPath + [CodingKeys.context, AnyKey(stringValue: path), AnyKey(stringValue: name)],
                                                            debugDescription: "the field \"\(name)\" is already declared; every field and context field needs its own name"))
                }
            }
        }
    }

    /// A `/`-separated path of member names, where `*` is any array element or member.
    struct KeyPath: Equatable {
        let segments: [String]
        init(_ text: String) { segments = text.split(separator: "/", omittingEmptySubsequences: true).map(String.init) }

        func matches(_ path: ArraySlice<String?>) -> Bool {
            guard path.count == segments.count else { return false }
            return zip(segments, path).allSatisfy { segment, step in segment == "*" || segment == step }
        }
    }

    public let kinds: [RecordKind]
    private let options: Options
    /// The longest field key path, and the depths at which context objects can be.
    private let longestFieldPath: Int
    private let contextDepths: Set<Int>
    private let recordPath: KeyPath
    private let fieldPaths: [(name: String, path: [String])]
    private let contextLevels: [(path: KeyPath, fields: [(name: String, key: String)])]

    public init(options: Options) throws {
        self.options = options
        recordPath = KeyPath(options.records)
        fieldPaths = options.fields.keys.sorted().map { ($0, KeyPath(options.fields[$0]!).segments) }
        contextLevels = options.context.keys.sorted().map { path in
            (KeyPath(path), options.context[path]!.keys.sorted().map { ($0, options.context[path]![$0]!) })
        }
        longestFieldPath = fieldPaths.map(\.path.count).max() ?? 0
        contextDepths = Set(contextLevels.map(\.path.segments.count))
        kinds = [RecordKind(fields: fieldPaths.map(\.name) + contextLevels.flatMap { $0.fields.map(\.name) } + RecordOrder.fieldNames)]
    }

    public func read(_ input: InputFile, log: DiagnosticLog, emit: (Record) throws -> Void) throws {
        if BlankFile.reportIfBlank(input, log: log) { return }
        var state = StreamState(reader: self)
        var failure: Error?
        let error = try JSONStream.parse(input.bytes(log: log)) { event, line in
            do {
                try state.handle(event, line: line, input: input, log: log, emit: emit)
                return true
            } catch {
                failure = error
                return false
            }
        }
        if let failure { throw failure }
        if let error {
            log.report(.jsonMalformed, .error, "malformed JSON: \(error.message); the rest of this file is not read", at: input.at(error.line))
        }
        if state.records == 0, error == nil {
            log.report(.jsonNoRecords, .warning, "no value at \"\(options.records)\" in this file", at: input.at(nil))
        }
        for (member, line) in state.unread.sorted(by: { $0.value < $1.value }) {
            log.report(.jsonUnread, .info, "records have a member \"\(member)\" that no field reads (first at line \(line)); it is not shipped",
                       at: input.at(line))
        }
        for (message, line) in state.notObjects.prefix(20) {
            log.report(.jsonNotObject, .error, message, at: input.at(line))
        }
        if state.notObjects.count > 20 {
            log.report(.jsonNotObject, .error, "\(state.notObjects.count - 20) more values at \"\(options.records)\" are not objects; none is read",
                       at: input.at(state.notObjects[20].1))
        }
    }

    /// The open containers and the record being read, while the document streams.
    private struct StreamState {
        struct Frame {
            var isArray: Bool
            var key: String?
            var index = -1
            /// For a context object: its level in `contextLevels`, and the values it replaced.
            var context: (level: Int, restores: [(Int, String?)])?
            var recordChildren = 0
        }

        /// A field whose value is an object or array, being written out as JSON.
        struct Capture {
            var field: Int
            var depth: Int
            var text: String
            var needsComma: [Bool]
        }

        let reader: JSONRecordReader
        var stack: [Frame] = []
        var record: Record?
        var recordDepth = 0
        var capture: Capture?
        var contextValues: [String?]
        var records = 0
        var unread: [String: Int] = [:]
        var notObjects: [(String, Int)] = []

        init(reader: JSONRecordReader) {
            self.reader = reader
            contextValues = Array(repeating: nil, count: reader.contextLevels.reduce(0) { $0 + $1.fields.count })
        }

        /// The steps from the `from`-th open container to the value about to start (each container's current key or
        /// index). Built only for the few depths a path can match, so deep nesting stays linear.
        func path(from start: Int = 0) -> ArraySlice<String?> {
            stack[start...].map { $0.isArray ? String($0.index) : $0.key }[...]
        }

        mutating func handle(_ event: JSONEvent, line: Int, input: InputFile, log: DiagnosticLog, emit: (Record) throws -> Void) throws {
            if case .key(let key) = event {
                stack[stack.count - 1].key = key
                if var capture {
                    capture.text += (capture.needsComma[capture.needsComma.count - 1] ? "," : "") + JSONText.string(key) + ":"
                    capture.needsComma[capture.needsComma.count - 1] = false
                    self.capture = capture
                }
                return
            }
            if case .endObject = event { try close(emit: emit); return }
            if case .endArray = event { try close(emit: emit); return }
            // A value starts.
            if let last = stack.indices.last, stack[last].isArray { stack[last].index += 1 }
            let isContainer = event == .startObject || event == .startArray
            if capture != nil {
                append(event)
                if isContainer { stack.append(Frame(isArray: event == .startArray)) }
                return
            }
            if record != nil {
                let relativeDepth = stack.count - (recordDepth - 1)
                guard relativeDepth <= reader.longestFieldPath else {
                    if isContainer { stack.append(Frame(isArray: event == .startArray)) }
                    return
                }
                let relative = Array(path(from: recordDepth - 1))
                if let field = reader.fieldPaths.firstIndex(where: { $0.path.count == relative.count && zip($0.path, relative).allSatisfy { $0 == "*" || $0 == $1 } }) {
                    if isContainer {
                        capture = Capture(field: field, depth: stack.count + 1, text: "", needsComma: [])
                        append(event)
                    } else {
                        record![reader.fieldPaths[field].name] = scalar(event)
                    }
                } else if relative.count == 1, let member = relative[0], !reader.fieldPaths.contains(where: { $0.path.first == member || $0.path.first == "*" }) {
                    if unread[member] == nil { unread[member] = line }
                }
            } else if stack.count == reader.recordPath.segments.count, reader.recordPath.matches(path()) {
                if event == .startObject {
                    records += 1
                    var position = 1
                    if let parent = stack.indices.last {
                        stack[parent].recordChildren += 1
                        position = stack[parent].recordChildren
                    }
                    var fresh = Record(reader.kinds[0], line: line)
                    var index = 0
                    for level in reader.contextLevels {
                        for field in level.fields { fresh[field.name] = contextValues[index]; index += 1 }
                    }
                    fresh["_ordinal"] = String(records)
                    fresh["_position"] = String(position)
                    record = fresh
                    recordDepth = stack.count + 1
                } else {
                    notObjects.append(("the value at \"\(reader.options.records)\" is not an object; it is not read as a record", line))
                }
            } else if !isContainer, let parent = stack.indices.last, let context = stack[parent].context, let key = stack[parent].key {
                var index = reader.contextLevels[..<context.level].reduce(0) { $0 + $1.fields.count }
                for field in reader.contextLevels[context.level].fields {
                    if field.key == key {
                        stack[parent].context!.restores.append((index, contextValues[index]))
                        contextValues[index] = scalar(event)
                    }
                    index += 1
                }
            }
            guard isContainer else { return }
            var frame = Frame(isArray: event == .startArray)
            if record == nil, event == .startObject, reader.contextDepths.contains(stack.count),
               let level = reader.contextLevels.firstIndex(where: { $0.path.matches(path()) }) {
                frame.context = (level, [])
            }
            stack.append(frame)
        }

        private mutating func close(emit: (Record) throws -> Void) throws {
            let depth = stack.count
            let frame = stack.removeLast()
            if let context = frame.context {
                for (index, previous) in context.restores.reversed() { contextValues[index] = previous }
            }
            if var current = capture {
                current.text += frame.isArray ? "]" : "}"
                current.needsComma.removeLast()
                if depth == current.depth {
                    record![reader.fieldPaths[current.field].name] = current.text
                    capture = nil
                } else {
                    capture = current
                }
                return
            }
            if let finished = record, depth == recordDepth {
                record = nil
                try emit(finished)
            }
        }

        private mutating func append(_ event: JSONEvent) {
            guard var current = capture else { return }
            if let last = current.needsComma.indices.last {
                if current.needsComma[last] { current.text += "," }
                current.needsComma[last] = true
            }
            switch event {
            case .startObject: current.text += "{"; current.needsComma.append(false)
            case .startArray: current.text += "["; current.needsComma.append(false)
            case .string(let text): current.text += JSONText.string(text)
            case .number(let text): current.text += text
            case .bool(let value): current.text += value ? "true" : "false"
            case .null: current.text += "null"
            default: break
            }
            capture = current
        }

        private func scalar(_ event: JSONEvent) -> String? {
            switch event {
            case .string(let text): return text
            case .number(let text): return text
            case .bool(let value): return value ? "1" : "0"
            default: return nil
            }
        }
    }
}
