import KilnC
import KilnCore

/// An enclosing element whose attributes or child elements records carry (`context: {route: {routeTag: "@tag"}}`,
/// `{"s:EstimatedVehicleJourney": {journey: "s:DatedVehicleJourneyRef"}}`).
package struct ContextElement {
    /// What a context field takes: an attribute of the element, or the first node a simple path below it reaches (the
    /// text of an element, or an attribute of one): `s:DatedVehicleJourneyRef`, `JourneyPatternRef/@ref`.
    package struct Field {
        package let name: String
        /// The field's text in the manifest, for messages.
        package let selector: String
        /// The element steps below the context element, empty for its own attribute; then the attribute, if any.
        package let steps: [(localName: String, namespace: String?)]
        package let attribute: (localName: String, namespace: String?)?
        /// True when the value comes from a child element, so that a record may end before it is read.
        package var isChild: Bool { !steps.isEmpty }
    }

    package let localName: String
    package let namespace: String?
    /// The element as the manifest names it, for messages.
    package let declared: String
    package let fields: [Field]

    /// - Throws: `KilnError.usage` for an undeclared prefix.
    package init(_ element: String, fields: [String: String], namespaces: [String: String]) throws {
        let step = try ElementPath(element, namespaces: namespaces).steps.last!
        localName = step.localName
        namespace = step.namespace
        declared = element
        func resolve(_ name: String, _ text: Substring) throws -> (String, String?) {
            let parts = text.split(separator: ":", maxSplits: 1).map(String.init)
            guard parts.count == 2 else { return (String(text), nil) }
            guard let uri = namespaces[parts[0]] else {
                throw KilnError.usage("the context field \"\(name)\" uses the prefix \"\(parts[0])\", which namespaces does not declare")
            }
            return (parts[1], uri)
        }
        self.fields = try fields.keys.sorted().map { name in
            let selector = fields[name]!
            var parts = selector.split(separator: "/", omittingEmptySubsequences: false)
            var attribute: (String, String?)?
            if let last = parts.last, last.hasPrefix("@") {
                attribute = try resolve(name, last.dropFirst())
                parts.removeLast()
            }
            return Field(name: name, selector: selector, steps: try parts.map { try resolve(name, $0) }, attribute: attribute)
        }
    }
}

/// The open elements while streaming, with the context values they set and how many records each holds so far.
/// A context field from a child element (`s:DatedVehicleJourneyRef`) is known only once that child has been read,
/// which may be after records inside the context element have ended: such records wait (`WaitingRecords`, the
/// `json` reader's) until the context element ends, and go out in document order. Beyond the bound they are let go
/// (`overflow`): the rest of the pass only notes the final child values of the elements records waited for
/// (`finals`), and a second pass (`replayingFrom`) emits the records from the first one let go with them.
package struct ElementStack {
    /// A context field from a child element being looked for inside an open context element.
    private struct Watch {
        /// The index of the value in `contextValues`, and the field in its `ContextElement`.
        let value: Int
        let element: Int
        let field: Int
        /// The depth (`names.count`) of the context element, and how many steps the open elements below it match.
        let depth: Int
        var matched = 0
        var found = false
        /// While the text of the element the path reaches is collected: its depth.
        var collecting: Int?
        var text: [UInt8] = []
    }

    /// An open context element with child fields: the serial that keys its records' waits, where they start.
    private struct Frame {
        var restores: [(index: Int, previous: String?)]
        var records: Int
        var serial: Int?
        var firstOrdinal = 0
        var line = 0
        var watches: Range<Int>?
        /// How many records ended before a child value of this element was read.
        var waited = 0
    }

    private let context: [ContextElement]
    /// The index in `contextValues` of each element's first field.
    private let offsets: [Int]
    /// For each value of `contextValues`: its field's name, element and place there.
    private let owners: [(name: String, element: Int, field: Int)]
    package private(set) var names: [(name: String, namespace: String?)] = []
    private var frames: [Frame] = []
    /// The current value of every context field, in declaration order.
    package private(set) var contextValues: [String?]
    private var topLevelRecords = 0
    private var watches: [Watch] = []
    private var collecting = 0
    private var serials = 0
    /// The records waiting for a child element of a context element.
    private var waiting: WaitingRecords
    /// The first record let go when the records waiting exceeded the bound: its ordinal and line.
    package private(set) var overflow: (ordinal: Int, line: Int)?
    /// The final child values (by index in `contextValues`) of the context elements records waited for, by serial.
    package private(set) var finals: [Int: [Int: String?]]
    /// In a second pass: the ordinal of the first record to emit.
    private let replayingFrom: Int?
    /// The last record's ordinal.
    package private(set) var records = 0
    /// For each context field from a child element that an element of the file did not hold although records in it
    /// needed it: how many such elements, the first one's line, and how many records have it NULL.
    package private(set) var neverFound: [Int: (elements: Int, line: Int, records: Int)] = [:]
    /// True when some context field comes from a child element.
    package let hasChildFields: Bool

    /// - Parameters:
    ///   - replayingFrom: for a second pass, the ordinal of the first record to emit, with the child values of
    ///     `finals` (the first pass's) where a record ends before its element's child is read.
    package init(context: [ContextElement], waitingLimit: Int = WaitingRecords.defaultLimit, replayingFrom: Int? = nil,
                 finals: [Int: [Int: String?]] = [:]) {
        self.context = context
        self.replayingFrom = replayingFrom
        self.finals = finals
        var offsets: [Int] = []
        var owners: [(name: String, element: Int, field: Int)] = []
        for (position, element) in context.enumerated() {
            offsets.append(owners.count)
            owners += element.fields.indices.map { (element.fields[$0].name, position, $0) }
        }
        self.offsets = offsets
        self.owners = owners
        contextValues = Array(repeating: nil, count: owners.count)
        waiting = WaitingRecords(limit: waitingLimit)
        hasChildFields = context.contains { $0.fields.contains(where: \.isChild) }
    }

    /// An element that is not a record starts: its context fields (when declared) take its attributes, and it may be
    /// (or lead to) a child element a context field reads. Returns true when the caller must give the element's text
    /// (`text(_:)` until it ends, or `takeText(_:)` at once).
    /// - Parameter attribute: the value of the element's attribute with a local name and namespace, or nil.
    package mutating func push(_ name: String, _ namespace: String?, line: @autoclosure () -> Int, ordinal: Int,
                               attribute: (String, String?) -> String?) -> Bool {
        let depth = names.count + 1
        var wantsText = false
        for index in watches.indices where !watches[index].found && watches[index].collecting == nil
            && watches[index].matched == depth - watches[index].depth - 1 {
            let field = context[watches[index].element].fields[watches[index].field]
            guard watches[index].matched < field.steps.count else { continue }
            let step = field.steps[watches[index].matched]
            guard step.localName == name, step.namespace == nil ? namespace == nil : step.namespace == namespace else { continue }
            watches[index].matched += 1
            guard watches[index].matched == field.steps.count else { continue }
            if let wanted = field.attribute {
                if let value = attribute(wanted.localName, wanted.namespace) {
                    contextValues[watches[index].value] = value
                    watches[index].found = true
                }
            } else {
                watches[index].collecting = depth
                watches[index].text.removeAll(keepingCapacity: true)
                collecting += 1
                wantsText = true
            }
        }
        var frame = Frame(restores: [], records: 0)
        let firstWatch = watches.count
        for (position, element) in context.enumerated() {
            guard element.localName == name, element.namespace == nil || element.namespace == namespace else { continue }
            for (offset, field) in element.fields.enumerated() {
                let index = offsets[position] + offset
                frame.restores.append((index, contextValues[index]))
                contextValues[index] = field.isChild ? nil : field.attribute.flatMap { attribute($0.localName, $0.namespace) }
                if field.isChild { watches.append(Watch(value: index, element: position, field: offset, depth: depth)) }
            }
        }
        if watches.count > firstWatch {
            serials += 1
            frame.serial = serials
            frame.firstOrdinal = ordinal + 1
            frame.line = line()
            frame.watches = firstWatch..<watches.count
        }
        names.append((name, namespace))
        frames.append(frame)
        return wantsText
    }

    /// Text inside the open elements: kept for the context fields whose element it is in.
    package mutating func text(_ text: XMLText) {
        guard collecting > 0 else { return }
        for index in watches.indices where watches[index].collecting != nil { text.append(to: &watches[index].text) }
    }

    /// The whole text of the element that just started (the tree reader's; its end still comes).
    package mutating func takeText(_ text: String) {
        for index in watches.indices where watches[index].collecting == names.count { watches[index].text = Array(text.utf8) }
    }

    /// The innermost open element ends: the context values it set go back to what they were, a context field's
    /// element gives its text, and the records that waited for the element's child fields go out.
    package mutating func pop(emit: (Record) throws -> Void) throws {
        guard let frame = frames.popLast() else { return }
        let depth = names.count
        names.removeLast()
        if collecting > 0 {
            for index in watches.indices where watches[index].collecting == depth {
                contextValues[watches[index].value] = String(decoding: watches[index].text, as: UTF8.self)
                watches[index].found = true
                watches[index].collecting = nil
                collecting -= 1
            }
        }
        for index in watches.indices where !watches[index].found && watches[index].matched == depth - watches[index].depth {
            watches[index].matched -= 1
        }
        if let serial = frame.serial, let range = frame.watches {
            if frame.waited > 0, replayingFrom == nil {
                for watch in watches[range] where !watch.found {
                    let before = neverFound[watch.value]
                    neverFound[watch.value] = ((before?.elements ?? 0) + 1, before?.line ?? frame.line, (before?.records ?? 0) + frame.waited)
                }
                // Records of this element may still wait (for an outer one), or were let go: a second pass needs its values.
                finals[serial] = Dictionary(uniqueKeysWithValues: watches[range].map { ($0.value, contextValues[$0.value]) })
            }
            if replayingFrom == nil, overflow == nil {
                let values = contextValues, owners = owners
                let over = try waiting.settle(key: serial, firstOrdinal: frame.firstOrdinal, emit: emit) { record, value in
                    record[owners[value].name] = values[value]
                }.overflow
                letGo(over)
            }
            watches.removeSubrange(range)
        }
        for restore in frame.restores.reversed() { contextValues[restore.index] = restore.previous }
    }

    /// A record ends (`values` its declared fields, in order): it takes the context values, and goes out unless a
    /// child element a context field reads is still to come in an open context element (or an earlier record
    /// waits).
    package mutating func finish(_ values: inout [String?], kind: RecordKind, ordinal: Int, position: Int, line: Int,
                                 emit: (Record) throws -> Void) throws {
        records = ordinal
        let declared = values.count
        values.append(contentsOf: contextValues)
        values.append(String(ordinal))
        values.append(String(position))
        guard hasChildFields else { return try emit(Record(kind, values: values, line: line)) }
        if let from = replayingFrom {
            // A second pass: the records before the first let go went out in the first.
            guard ordinal >= from else { return }
            var shadowed = Set<Int>()
            for frame in frames.reversed() {
                guard let serial = frame.serial, let range = frame.watches else { continue }
                for watch in watches[range] where shadowed.insert(watch.value).inserted && !watch.found {
                    values[declared + watch.value] = finals[serial]?[watch.value] ?? nil
                }
            }
            return try emit(Record(kind, values: values, line: line))
        }
        // The innermost element of a context field gives its value (an element inside another of its name hides it).
        var missing: [(key: Int, field: Int)] = []
        var shadowed = Set<Int>()
        for index in frames.indices.reversed() {
            guard let serial = frames[index].serial, let range = frames[index].watches else { continue }
            let before = missing.count
            for watch in watches[range] where shadowed.insert(watch.value).inserted && !watch.found { missing.append((serial, watch.value)) }
            if missing.count > before { frames[index].waited += 1 }
        }
        // Beyond the bound, this pass only notes the final values (`finals`) for the second.
        guard overflow == nil else { return }
        letGo(try waiting.add(Record(kind, values: values, line: line), ordinal: ordinal, missing: missing, emit: emit))
    }

    /// The file ended (or stopped): the records still waiting go out with what was read.
    package mutating func finishFile(emit: (Record) throws -> Void) throws {
        try waiting.flush(all: true, emit: emit)
    }

    /// The bound on the records waiting, for messages.
    package var waitingLimitText: String { waiting.limitText }

    /// Beyond the bound (`first`, the first record waiting), the records waiting are let go for a second pass;
    /// once none waits, the final values kept for them are dropped.
    private mutating func letGo(_ first: WaitingRecords.Entry?) {
        if let first {
            overflow = (first.ordinal, first.record.line)
            waiting.letGo()
        } else if waiting.isEmpty, overflow == nil {
            finals.removeAll()
        }
    }

    /// True in a second pass.
    package var replays: Bool { replayingFrom != nil }

    /// The context field whose value is `contextValues[index]`: its element and field.
    package func contextField(at index: Int) -> (element: ContextElement, field: ContextElement.Field) {
        (context[owners[index].element], context[owners[index].element].fields[owners[index].field])
    }

    /// A record starts in the innermost open element: its 1-based position among that element's records.
    package mutating func countRecordChild() -> Int {
        guard !frames.isEmpty else {
            topLevelRecords += 1
            return topLevelRecords
        }
        frames[frames.count - 1].records += 1
        return frames[frames.count - 1].records
    }
}
