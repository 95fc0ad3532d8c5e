// Over 500 lines on purpose: one streaming state machine over yajl's events (records, mapped fields, the parts left
// unread), whose states share the path and the budgets; splitting it would pass that state between files.
import Foundation
import KilnC
import KilnCore
import KilnManifest

/// Reads records from JSON files, streaming through yajl (`JSONStream`): the objects at the `records` path
/// (`exhibits/*`, `spaces/*/hotspots/*`, `""` for the whole file; `*` is any array element or member) are records,
/// each field is a key path inside the record (`id`, `position/ath`), `@key`, the record's own member name, or `.`, the
/// record's own value (with such a field every value at the path is a record: an array of names gives one each), and
/// `context` gives records members (or the member name) of the objects around them (`{"spaces/*": {space: "name"}}`).
/// Context members written after the records are read too: the records wait, up to `pendingLimit` bytes, until their
/// enclosing object closes; beyond that bound they are let go and read again in a second pass over the file, with the
/// values the first pass found at the end of each object (`json.late-context`, info).
/// Numbers keep their text (integers beyond 2^53 stay exact), booleans become 1/0, an object or array field its
/// compact JSON. Every record also carries `_ordinal` and `_position`, as in the XML reader.
public struct JSONRecordReader: ConfigurableReader {
    public static let format = "json"
    public static let acceptedMediaTypes = MediaTypes.json

    /// The field path (and context member) that stands for a member name: the record's, or the context object's.
    package static let memberName = "@key"
    /// The field path that stands for the record's own value: a string, number or boolean at the records path
    /// (`"via": ["Osterburken", "Heilbronn"]` with `records: "via/*"`), or an object's or array's compact JSON.
    package static let ownValue = "."

    /// How many bytes of records may wait for context members written after them, by default (16 MiB).
    public static let defaultPendingLimit = WaitingRecords.defaultLimit

    /// The options a manifest gives a `json` source.
    public struct Options: Decodable, Sendable {
        package var records: String
        package var fields: [String: String]
        package var context: [String: [String: String]] = [:]

        package enum CodingKeys: String, CodingKey, CaseIterable { case records, fields, context }

        public init(from decoder: Decoder) throws {
            let c = try decoder.strictContainer(keyedBy: CodingKeys.self)
            records = try c.decode(String.self, forKey: .records)
            fields = try c.decode([String: String].self, forKey: .fields)
            context = try c.decodeIfPresent([String: [String: String]].self, forKey: .context) ?? [:]
            let pattern = KeyPath(records)
            var seen = Set(fields.keys)
            func fail(_ path: [CodingKey], _ message: String) -> DecodingError {
                DecodingError.dataCorrupted(.init(codingPath: c.codingPath + path, debugDescription: message))
            }
            for name in fields.keys.sorted() {
                let path = fields[name]!, at: [CodingKey] = [CodingKeys.fields, AnyKey(stringValue: name)]
                if name.hasPrefix("_") || path.isEmpty {
                    throw fail(at, "field names starting with \"_\" are Kiln's own (\(RecordOrder.fieldNames.joined(separator: ", "))), and a key path is not empty")
                }
                if path == JSONRecordReader.memberName, pattern.segments.isEmpty {
                    throw fail(at, "\"@key\" is the member name of each record, and the records at \"\(records)\" are the whole file, which has none")
                }
                if path != JSONRecordReader.memberName, !path.hasPrefix("/"), KeyPath(path).segments.contains(JSONRecordReader.memberName) {
                    throw fail(at, "\"@key\" stands alone: it is the member name of the record itself (a member named \"@key\" is read with \"/@key\")")
                }
            }
            for path in context.keys.sorted() {
                let enclosing = KeyPath(path)
                guard enclosing.segments.count < pattern.segments.count,
                      zip(enclosing.segments, pattern.segments).allSatisfy({ $0 == $1 }) else {
                    throw fail([CodingKeys.context, AnyKey(stringValue: path)], "a context path names an object around the records: a beginning of \"\(records)\"")
                }
                for name in context[path]!.keys.sorted() {
                    let member = context[path]![name]!, at: [CodingKey] = [CodingKeys.context, AnyKey(stringValue: path), AnyKey(stringValue: name)]
                    if !seen.insert(name).inserted || name.hasPrefix("_") {
                        throw fail(at, "the field \"\(name)\" is already declared; every field and context field needs its own name")
                    }
                    if member == JSONRecordReader.memberName, enclosing.segments.isEmpty {
                        throw fail(at, "\"@key\" is the member name of the object at \"\(path)\", and the whole file has none")
                    }
                    if member != JSONRecordReader.memberName, KeyPath(member).segments.count != 1 {
                        throw fail(at, "a context field names one member of the object at \"\(path)\" (\"name\"), or \"@key\" for the object's own member name")
                    }
                    if KeyPath(member).segments == [pattern.segments[enclosing.segments.count]] {
                        throw fail(at, "the member \"\(member)\" holds the records (\"\(records)\"); a context field names another member of the object")
                    }
                }
            }
        }
    }

    /// A `/`-separated path of member names, where `*` is any array element or member.
    package struct KeyPath: Equatable {
        package let segments: [String]
        package init(_ text: String) { segments = text.split(separator: "/", omittingEmptySubsequences: true).map(String.init) }

        package func matches(_ path: ArraySlice<String?>) -> Bool {
            guard path.count == segments.count else { return false }
            return zip(segments, path).allSatisfy { segment, step in segment == "*" || segment == step }
        }
    }

    /// One field of a context level: the record's field name, and the member it takes (`nil` for `@key`).
    package struct ContextField {
        package let name: String
        package let member: String?
    }

    public let kinds: [RecordKind]
    private let options: Options
    /// The longest field key path, and the depths at which context objects can be.
    private let longestFieldPath: Int
    private let contextDepths: Set<Int>
    private let recordPath: KeyPath
    private let fieldPaths: [(name: String, path: [String])]
    /// The fields that take the record's member name (`@key`).
    private let keyFields: [String]
    /// The fields that take the record's own value (`.`).
    private let valueFields: [String]
    private let contextLevels: [(path: KeyPath, fields: [ContextField])]
    /// How many bytes of records may wait for context members written after them before a second pass is needed.
    package let pendingLimit: Int

    public init(options: Options) throws {
        try self.init(options: options, pendingLimit: JSONRecordReader.defaultPendingLimit)
    }

    /// As `init(options:)`, with another bound on the records waiting for late context members.
    package init(options: Options, pendingLimit: Int) throws {
        self.options = options
        self.pendingLimit = pendingLimit
        recordPath = KeyPath(options.records)
        let names = options.fields.keys.sorted()
        keyFields = names.filter { options.fields[$0] == JSONRecordReader.memberName }
        valueFields = names.filter { options.fields[$0] == JSONRecordReader.ownValue }
        fieldPaths = names.filter { ![JSONRecordReader.memberName, JSONRecordReader.ownValue].contains(options.fields[$0]) }
            .map { ($0, KeyPath(options.fields[$0]!).segments) }
        contextLevels = options.context.keys.sorted().map { path in
            (KeyPath(path), options.context[path]!.keys.sorted().map { name in
                let member = options.context[path]![name]!
                return ContextField(name: name, member: member == JSONRecordReader.memberName ? nil : KeyPath(member).segments[0])
            })
        }
        longestFieldPath = fieldPaths.map(\.path.count).max() ?? 0
        contextDepths = Set(contextLevels.map(\.path.segments.count))
        kinds = [RecordKind(fields: names + contextLevels.flatMap { $0.fields.map(\.name) } + RecordOrder.fieldNames)]
    }

    public func read(_ input: InputFile, log: DiagnosticLog, emit: (Record) throws -> Void) throws {
        if BlankFile.reportIfBlank(input, as: .json, log: log) { return }
        var state = StreamState(reader: self)
        let error = try stream(input, &state, log: log, emit: emit)
        // Records still waiting when the document stops early (malformed) go out with what was read.
        try state.flush(all: true, emit: emit)
        if case .overflowed(let resume, let line) = state.mode {
            // More records waited than the bound allows: they were let go, and are read again with the context
            // values the first pass found at the end of each object.
            var replay = StreamState(reader: self)
            replay.mode = .replaying(from: resume, finals: state.finals)
            // The first pass reported any damage of a compressed file; the second reads the same bytes again.
            _ = try stream(input, &replay, log: nil, emit: emit)
            let bound = pendingLimit >= 1 << 20 ? "\(pendingLimit >> 20) MiB" : "\(pendingLimit) bytes"
            log.report(.jsonLateContext, "more than \(bound) of records waited for a context member written after them: the records from line \(line) on "
                           + "(\(state.records - resume + 1) of \(state.records)) were read in a second pass over the file, with it", at: input.at(line))
        }
        if let error, error.tooLong {
            log.report(.jsonTooLong, "\(error.message): the rest of this file is not read", at: input.at(error.line))
        } else if let error {
            log.report(.jsonMalformed, "malformed JSON: \(error.message); the rest of this file is not read", at: input.at(error.line))
        }
        for (field, line) in state.tooLong.prefix(20) {
            log.report(.jsonTooLong, "the JSON of field \"\(field)\" is longer than \(JSONStream.maximumTokenBytes >> 20) MiB; the field is NULL in this record",
                       at: input.at(line))
        }
        if state.tooLong.count > 20 {
            log.report(.jsonTooLong, "\(state.tooLong.count - 20) more fields are longer than \(JSONStream.maximumTokenBytes >> 20) MiB; each is NULL",
                       at: input.at(state.tooLong[20].1))
        }
        if state.records == 0, error == nil {
            log.report(.jsonNoRecords, "no value at \"\(options.records)\" in this file", at: input.at(nil))
        }
        reportUnread(state.unread, input: input, log: log)
        for (message, line) in state.notObjects.prefix(20) {
            log.report(.jsonNotObject, message, at: input.at(line))
        }
        if state.notObjects.count > 20 {
            log.report(.jsonNotObject, "\(state.notObjects.count - 20) more values at \"\(options.records)\" are not objects; none is read",
                       at: input.at(state.notObjects[20].1))
        }
        for (what, use) in state.withoutName.sorted(by: { $0.value.line < $1.value.line }) {
            log.report(.jsonNoMemberName, "\(use.count) \(what) \(use.count == 1 ? "is an element" : "are elements") of an array (first at line \(use.line)), "
                           + "which has no member name: \"@key\" gives NULL there", at: input.at(use.line))
        }
    }

    /// Streams `input`'s events (decompressed when the file is compressed; damage reported to `log`) into `state`;
    /// returns yajl's error, if any.
    /// - Throws: what `emit` throws, `KilnError.io` when the file cannot be read.
    private func stream(_ input: InputFile, _ state: inout StreamState, log: DiagnosticLog?,
                        emit: (Record) throws -> Void) throws -> JSONParseError? {
        var failure: Error?
        let error = try JSONStream.parse(input.bytes(log: log)) { event, line in
            do {
                try state.handle(event, line: line, emit: emit)
                return true
            } catch {
                failure = error
                return false
            }
        }
        if let failure { throw failure }
        return error
    }

    /// One `json.unread` per member for the whole source (the log keeps the first, at its first file and line).
    private func reportUnread(_ unread: [String: Int], input: InputFile, log: DiagnosticLog) {
        let source = log.readingSource.map { "source \"\($0)\"" } ?? "this source"
        let records = recordPath.segments.isEmpty ? "each file's root object" : "its records (\"\(options.records)\")"
        for (member, line) in unread.sorted(by: { $0.value < $1.value }) {
            let message = "no field of \(source) reads the member \"\(member)\" of \(records); "
                + "reported once for the source, at its first file and line"
            log.report(Diagnostic(code: .jsonUnread, message: message, provenance: input.at(line)),
                       once: [DiagnosticCode.jsonUnread.rawValue, log.readingSource ?? "", options.records, member].joined(separator: "\u{1F}"))
        }
    }

    /// The open containers and the record being read, while the document streams.
    private struct StreamState {
        /// An object at a context path: the values of its level's fields as its members arrive.
        package struct ContextFrame {
            package var level: Int
            package var values: [String?]
            package var seen: [Bool]
            /// The ordinal the first record inside it gets.
            package var firstOrdinal: Int
            /// True once a record inside it ended before all its context members were read.
            package var waitedFor = false
            /// The how-manieth context object of the file (the same in both passes).
            package var serial: Int
        }

        /// How records leave: in document order as their context completes; after the bound was exceeded, not at
        /// all (the first pass only collects the final values of the objects records waited for); in the second
        /// pass, from the first record let go, with those values.
        package enum Mode {
            case streaming
            case overflowed(from: Int, line: Int)
            case replaying(from: Int, finals: [Int: [String?]])
        }

        package struct Frame {
            package var isArray: Bool
            package var key: String?
            package var index = -1
            package var context: ContextFrame?
            package var recordChildren = 0
        }

        /// A field (or context member) whose value is an object or array, being written out as JSON. Mutated only in
        /// place (`captures[i].…`): a copy would copy the text at every event, which made deep nesting quadratic.
        package struct Capture {
            /// The record's field, or (`nil`) the context member of the object below the captured value.
            package var field: Int?
            package var depth: Int
            package var text: String
            package var needsComma: [Bool]
            /// The line the value starts on, and whether its JSON grew past `JSONStream.maximumTokenBytes` (the text
            /// is then dropped and the field is NULL).
            package var line: Int
            package var tooLong = false
            /// True for the record's own value (the `.` fields).
            package var ownValue = false

            package mutating func add(_ piece: String) {
                guard !tooLong else { return }
                text += piece
                if text.utf8.count > JSONStream.maximumTokenBytes {
                    tooLong = true
                    text = ""
                }
            }
        }

        package let reader: JSONRecordReader
        package var stack: [Frame] = []
        package var record: Record?
        package var recordDepth = 0
        /// The values being written out as JSON, outermost first: a field inside another field's object
        /// (`properties/tags` inside `properties`) is captured as well, at its depth.
        package var captures: [Capture] = []
        package var records = 0
        package var unread: [String: Int] = [:]
        package var notObjects: [(String, Int)] = []
        /// Fields (or context members) whose JSON was longer than `JSONStream.maximumTokenBytes`, with their lines.
        package var tooLong: [(String, Int)] = []
        /// What asked for a member name where there is none (records or context objects in arrays): count, first line.
        package var withoutName: [String: (count: Int, line: Int)] = [:]
        /// The records waiting for context members written after them (keyed by context level).
        package var waiting: WaitingRecords
        package var mode = Mode.streaming
        package var contextObjects = 0
        /// The final values of the closed context objects that waiting records (or, after the bound, the second
        /// pass) still need, by serial: as many as there are such objects, never more than records waiting.
        package var finals: [Int: [String?]] = [:]

        package init(reader: JSONRecordReader) {
            self.reader = reader
            waiting = WaitingRecords(limit: reader.pendingLimit)
        }

        /// The steps from the `from`-th open container to the value about to start (each container's current key or
        /// index). Built only for the few depths a path can match, so deep nesting stays linear.
        package func path(from start: Int = 0) -> ArraySlice<String?> {
            stack[start...].map { $0.isArray ? String($0.index) : $0.key }[...]
        }

        /// The member name of the value about to start, `nil` for an array element or the root.
        private var memberName: String? {
            guard let parent = stack.last, !parent.isArray else { return nil }
            return parent.key
        }

        package mutating func handle(_ event: JSONEvent, line: Int, emit: (Record) throws -> Void) throws {
            if case .key(let key) = event {
                stack[stack.count - 1].key = key
                for index in captures.indices {
                    let comma = captures[index].needsComma[captures[index].needsComma.count - 1]
                    captures[index].add((comma ? "," : "") + JSONText.string(key) + ":")
                    captures[index].needsComma[captures[index].needsComma.count - 1] = false
                }
                return
            }
            if case .endObject = event { try close(emit: emit); return }
            if case .endArray = event { try close(emit: emit); return }
            // A value starts.
            if let last = stack.indices.last, stack[last].isArray { stack[last].index += 1 }
            let isContainer = event == .startObject || event == .startArray
            if !captures.isEmpty {
                append(event)
                // A field may name a member inside the object another field takes whole: both are read.
                if record != nil, captures[0].field != nil || captures[0].ownValue, stack.count - (recordDepth - 1) <= reader.longestFieldPath {
                    take(event, into: fieldsMatching(Array(path(from: recordDepth - 1))), line: line)
                }
                if isContainer { stack.append(Frame(isArray: event == .startArray)) }
                return
            }
            if record != nil {
                let relativeDepth = stack.count - (recordDepth - 1)
                guard relativeDepth <= reader.longestFieldPath || relativeDepth == 1 else {
                    if isContainer { stack.append(Frame(isArray: event == .startArray)) }
                    return
                }
                let relative = Array(path(from: recordDepth - 1))
                let matching = fieldsMatching(relative)
                if !matching.isEmpty {
                    take(event, into: matching, line: line)
                } else if relative.count == 1, let member = relative[0], !reader.fieldPaths.contains(where: { $0.path.first == member || $0.path.first == "*" }) {
                    if unread[member] == nil { unread[member] = line }
                }
            } else if stack.count == reader.recordPath.segments.count, reader.recordPath.matches(path()) {
                if event == .startObject || (isContainer && !reader.valueFields.isEmpty) {
                    startRecord(line: line)
                    if !reader.valueFields.isEmpty { takeOwnValue(event, line: line) }
                } else if !reader.valueFields.isEmpty {
                    // A string, number, boolean or null is a record of its own value.
                    startRecord(line: line)
                    for field in reader.valueFields { record![field] = scalar(event) }
                    let finished = record!
                    record = nil
                    try finish(finished, emit: emit)
                } else {
                    notObjects.append(("the value at \"\(reader.options.records)\" is not an object; it is not read as a record "
                                       + "(a field \".\" reads each value there as a record of its own)", line))
                }
            } else if let parent = stack.indices.last, let context = stack[parent].context, let key = stack[parent].key,
                      reader.contextLevels[context.level].fields.contains(where: { $0.member == key }) {
                if isContainer {
                    // The object or array the records are in is read as records, not as one value.
                    if !leadsToRecords {
                        captures.append(Capture(field: nil, depth: stack.count + 1, text: "", needsComma: [], line: line))
                        append(event)
                    }
                } else {
                    setContext(of: parent, member: key, to: scalar(event))
                }
            }
            guard isContainer else { return }
            var frame = Frame(isArray: event == .startArray)
            if record == nil, event == .startObject, reader.contextDepths.contains(stack.count),
               let level = reader.contextLevels.firstIndex(where: { $0.path.matches(path()) }) {
                let fields = reader.contextLevels[level].fields
                contextObjects += 1
                var context = ContextFrame(level: level, values: Array(repeating: nil, count: fields.count),
                                           seen: Array(repeating: false, count: fields.count), firstOrdinal: records + 1,
                                           serial: contextObjects)
                for (index, field) in fields.enumerated() where field.member == nil {
                    context.values[index] = memberName
                    context.seen[index] = true
                    if memberName == nil {
                        withoutName["objects at \"\(reader.contextLevels[level].path.segments.joined(separator: "/"))\" (context field \"\(field.name)\")", default: (0, line)].count += 1
                    }
                }
                frame.context = context
            }
            stack.append(frame)
        }

        /// The fields whose key paths match `relative` (the steps from the record to the value about to start): a
        /// value two paths name (`p/*` and `p/name`) goes to both.
        private func fieldsMatching(_ relative: [String?]) -> [Int] {
            reader.fieldPaths.indices.filter { index in
                let path = reader.fieldPaths[index].path
                return path.count == relative.count && zip(path, relative).allSatisfy { $0 == "*" || $0 == $1 }
            }
        }

        /// Gives the value `event` starts to `fields`: a scalar at once, an object or array as the JSON written out
        /// until it closes.
        private mutating func take(_ event: JSONEvent, into fields: [Int], line: Int) {
            for field in fields {
                guard event == .startObject || event == .startArray else {
                    record![reader.fieldPaths[field].name] = scalar(event)
                    continue
                }
                var capture = Capture(field: field, depth: stack.count + 1, text: "", needsComma: [], line: line)
                capture.add(event == .startArray ? "[" : "{")
                capture.needsComma.append(false)
                captures.append(capture)
            }
        }

        /// The record that `event` starts (an object or array) is the value of the `.` fields: its JSON is written
        /// out until it closes.
        private mutating func takeOwnValue(_ event: JSONEvent, line: Int) {
            var capture = Capture(field: nil, depth: stack.count + 1, text: "", needsComma: [], line: line)
            capture.ownValue = true
            capture.add(event == .startArray ? "[" : "{")
            capture.needsComma.append(false)
            captures.append(capture)
        }

        /// True when the value about to start is on the way to the records (a beginning of the `records` path).
        private var leadsToRecords: Bool {
            let steps = path()
            return steps.count < reader.recordPath.segments.count
                && zip(reader.recordPath.segments, steps).allSatisfy { $0 == "*" || $0 == $1 }
        }

        /// A member of the context object at `index` in the stack has been read.
        private mutating func setContext(of index: Int, member: String, to value: String?) {
            guard let level = stack[index].context?.level else { return }
            for (field, declared) in reader.contextLevels[level].fields.enumerated() where declared.member == member {
                stack[index].context!.values[field] = value
                stack[index].context!.seen[field] = true
            }
        }

        private mutating func startRecord(line: Int) {
            records += 1
            var position = 1
            if let parent = stack.indices.last {
                stack[parent].recordChildren += 1
                position = stack[parent].recordChildren
            }
            var fresh = Record(reader.kinds[0], line: line)
            if !reader.keyFields.isEmpty {
                let name = memberName
                for field in reader.keyFields { fresh[field] = name }
                if name == nil { withoutName["records at \"\(reader.options.records)\" (field \"\(reader.keyFields[0])\")", default: (0, line)].count += 1 }
            }
            fresh["_ordinal"] = String(records)
            fresh["_position"] = String(position)
            record = fresh
            recordDepth = stack.count + 1
        }

        private mutating func close(emit: (Record) throws -> Void) throws {
            let depth = stack.count
            let frame = stack.removeLast()
            if !captures.isEmpty {
                for index in captures.indices {
                    captures[index].add(frame.isArray ? "]" : "}")
                    captures[index].needsComma.removeLast()
                }
                while let last = captures.last, last.depth == depth {
                    let current = captures.removeLast()
                    let value = current.tooLong ? nil : current.text
                    if current.ownValue {
                        for field in reader.valueFields { record![field] = value }
                        if current.tooLong { tooLong.append((reader.valueFields[0], current.line)) }
                    } else if let field = current.field {
                        record![reader.fieldPaths[field].name] = value
                        if current.tooLong { tooLong.append((reader.fieldPaths[field].name, current.line)) }
                    } else if let key = stack[stack.count - 1].key {
                        setContext(of: stack.count - 1, member: key, to: value)
                        if current.tooLong { tooLong.append((key, current.line)) }
                    }
                }
                // The record whose own value was captured ends here too.
                guard record != nil, depth == recordDepth else { return }
            }
            if let finished = record, depth == recordDepth {
                record = nil
                try finish(finished, emit: emit)
            } else if let context = frame.context, context.waitedFor {
                if case .overflowed = mode {
                    finals[context.serial] = context.values
                } else {
                    try settle(context, emit: emit)
                }
            }
        }

        /// A record has ended: it takes the context values read so far, and goes out unless a context member is
        /// still to come (or an earlier record waits: records go out in document order).
        private mutating func finish(_ finished: Record, emit: (Record) throws -> Void) throws {
            var finished = finished
            var missing: [(level: Int, field: Int)] = []
            var replayFinals: [Int: [String?]]?
            if case .replaying(let from, let finals) = mode {
                guard records >= from else { return }
                replayFinals = finals
            }
            for index in stack.indices {
                guard let context = stack[index].context else { continue }
                for (field, declared) in reader.contextLevels[context.level].fields.enumerated() {
                    if context.seen[field] {
                        finished[declared.name] = context.values[field]
                    } else if let replayFinals {
                        finished[declared.name] = replayFinals[context.serial]?[field]
                    } else {
                        missing.append((context.level, field))
                        stack[index].context!.waitedFor = true
                    }
                }
            }
            if case .overflowed = mode { return }
            if replayFinals != nil {
                try emit(finished)
                return
            }
            overflow(try waiting.add(finished, ordinal: records, missing: missing.map { (key: $0.level, field: $0.field) }, emit: emit))
        }

        /// A context object a record waited for has closed: its values are final (an absent member is NULL).
        private mutating func settle(_ context: ContextFrame, emit: (Record) throws -> Void) throws {
            let fields = reader.contextLevels[context.level].fields
            let over = try waiting.settle(key: context.level, firstOrdinal: context.firstOrdinal, emit: emit) { record, field in
                record[fields[field].name] = context.values[field]
            }.overflow
            // Records of this object still wait (for an outer one): a second pass would need its values.
            if let last = waiting.lastOrdinal, last >= context.firstOrdinal {
                finals[context.serial] = context.values
            }
            overflow(over)
        }

        /// Emits the waiting records whose context is complete, in order (with `all`, every one: the document ended
        /// early).
        package mutating func flush(all: Bool, emit: (Record) throws -> Void) throws {
            overflow(try waiting.flush(all: all, emit: emit))
        }

        /// Beyond the bound (`first`, the first record waiting), the waiting records are let go for a second pass
        /// (`Mode.overflowed`); once none waits, the final values kept for them are dropped.
        private mutating func overflow(_ first: WaitingRecords.Entry?) {
            if let first {
                mode = .overflowed(from: first.ordinal, line: first.record.line)
                waiting.letGo()
            } else if waiting.isEmpty, case .streaming = mode {
                finals.removeAll()
            }
        }

        private mutating func append(_ event: JSONEvent) {
            for index in captures.indices {
                if let last = captures[index].needsComma.indices.last {
                    if captures[index].needsComma[last] { captures[index].add(",") }
                    captures[index].needsComma[last] = true
                }
                switch event {
                case .startObject: captures[index].add("{"); captures[index].needsComma.append(false)
                case .startArray: captures[index].add("["); captures[index].needsComma.append(false)
                case .string(let text): captures[index].add(JSONText.string(text))
                case .number(let text): captures[index].add(text)
                case .bool(let value): captures[index].add(value ? "true" : "false")
                case .null: captures[index].add("null")
                default: break
                }
            }
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
