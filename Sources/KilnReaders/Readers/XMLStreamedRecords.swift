import KilnC
import KilnCore
import KilnManifest

/// One field of an `xml` source read without a tree: a simple path (`name`, `@code`, `s:location/@lat`, `.`) as the
/// names and namespace URIs of its steps, in UTF-8 with a final NUL, to compare with libxml2's names in place.
package struct StreamedField {
    package struct Step {
        package let localName: [UInt8]
        /// The namespace URI the step requires; nil: no namespace.
        package let uri: [UInt8]?
    }

    package let elements: [Step]
    package let attribute: Step?

    /// Nil when the path is not simple, or uses a prefix the source does not declare.
    package init?(_ expression: XPathExpression, namespaces: [String: String]) {
        guard let path = expression.simplePath else { return nil }
        func step(_ name: SimplePath.Name) -> Step? {
            guard let prefix = name.prefix else { return Step(localName: name.local, uri: nil) }
            guard let uri = namespaces[prefix] else { return nil }
            return Step(localName: name.local, uri: Array(uri.utf8) + [0])
        }
        var elements: [Step] = []
        for name in path.elements {
            guard let element = step(name) else { return nil }
            elements.append(element)
        }
        self.elements = elements
        if let name = path.attribute {
            guard let attribute = step(name) else { return nil }
            self.attribute = attribute
        } else {
            attribute = nil
        }
    }
}

/// Turns the events of an `XMLEventParser` into an `xml` source's records when every field is a `StreamedField`:
/// the same records, values, lines, `_ordinal` and `_position` as the tree reader gives (`XPathEvaluator`'s simple
/// paths), without building a tree. A field's value is that of the first node its path reaches in document order:
/// steps are matched as elements start, an attribute is read from the start tag, and an element's text is collected
/// until it ends.
package final class StreamedRecords: XMLEventHandler {
    private let emit: (Record) throws -> Void
    /// All the mutable state in one value. Only the parsing thread's events touch it, one at a time: no run-time
    /// exclusivity check per event.
    @exclusivity(unchecked) private var scan: RecordScan

    /// Records handed over so far.
    package private(set) var records = 0
    /// What `emit` threw; the parse stopped there.
    package private(set) var failure: Error?

    package init(fields: [StreamedField], path: ElementPath, context: [ContextElement], kind: RecordKind,
         emit: @escaping (Record) throws -> Void) {
        self.emit = emit
        // Unsafe only as `scan` skips the exclusivity check (see `withScan`).
        unsafe scan = RecordScan(fields: fields, path: path, stack: ElementStack(context: context), kind: kind)
    }

    /// The one access to `scan`: `@exclusivity(unchecked)` is memory-unsafe only when two accesses overlap, and the
    /// events come one at a time from the parsing thread.
    private func withScan<Result>(_ body: (inout RecordScan) -> Result) -> Result {
        unsafe body(&scan)
    }

    package func start(_ tag: XMLStartTag) -> Bool {
        withScan { $0.start(tag) }
        return true
    }

    package func end() -> Bool {
        guard let record = withScan({ $0.end() }) else { return true }
        do {
            try emit(record)
            records += 1
            return true
        } catch {
            failure = error
            return false
        }
    }

    package func text(_ text: XMLText) { withScan { $0.text(text) } }
}

/// The state of `StreamedRecords` between events.
private struct RecordScan {
    package let fields: [StreamedField]
    package let path: ElementPath
    package let kind: RecordKind
    package var stack: ElementStack
    package var ordinal = 0

    /// Inside a record: how deep the innermost open element is below the record's element (0: the record's own);
    /// nil between records.
    private var depth: Int?
    private var line = 0
    private var position = 0
    /// For each field: how many of its element steps the open elements match.
    private var matched: [Int]
    private var values: [String?]
    private var found: [Bool]
    /// For each field whose text is being collected: the depth of its element; -1 for the others.
    private var collectingDepth: [Int]
    private var collecting = 0
    private var texts: [[UInt8]]

    package init(fields: [StreamedField], path: ElementPath, stack: ElementStack, kind: RecordKind) {
        self.fields = fields
        self.path = path
        self.stack = stack
        self.kind = kind
        matched = Array(repeating: 0, count: fields.count)
        values = Self.noValues(fields.count, room: kind.fieldNames.count)
        found = Array(repeating: false, count: fields.count)
        collectingDepth = Array(repeating: -1, count: fields.count)
        texts = Array(repeating: [], count: fields.count)
    }

    package mutating func start(_ tag: XMLStartTag) {
        if let open = depth {
            let current = open + 1
            depth = current
            for index in fields.indices where !found[index] && matched[index] == current - 1 {
                let elements = fields[index].elements
                guard current <= elements.count, tag.hasLocalName(elements[current - 1].localName),
                      tag.hasNamespace(elements[current - 1].uri) else { continue }
                matched[index] = current
                if current == elements.count { reach(index, tag, depth: current) }
            }
            return
        }
        guard path.matches(tag, within: stack.names) else {
            stack.push(tag.localName, tag.namespace) { tag.attribute($0, namespace: $1) }
            return
        }
        depth = 0
        ordinal += 1
        position = stack.countRecordChild()
        line = tag.line
        collecting = 0
        for index in fields.indices {
            matched[index] = 0
            values[index] = nil
            found[index] = false
            collectingDepth[index] = -1
            if fields[index].elements.isEmpty { reach(index, tag, depth: 0) }
        }
    }

    /// `count` nil values in an array with room for `room`.
    private static func noValues(_ count: Int, room: Int) -> [String?] {
        var values: [String?] = []
        values.reserveCapacity(room)
        values.append(contentsOf: repeatElement(nil, count: count))
        return values
    }

    /// The innermost open element ends; the record when it was a record's element.
    package mutating func end() -> Record? {
        guard let current = depth else {
            stack.pop()
            return nil
        }
        if collecting > 0 {
            for index in fields.indices where collectingDepth[index] == current {
                values[index] = String(decoding: texts[index], as: UTF8.self)
                found[index] = true
                collectingDepth[index] = -1
                collecting -= 1
            }
        }
        guard current == 0 else {
            for index in fields.indices where matched[index] == current { matched[index] = current - 1 }
            depth = current - 1
            return nil
        }
        depth = nil
        // The values move into the record, which has room for the rest: no string is copied or retained.
        var record = values
        values = Self.noValues(fields.count, room: kind.fieldNames.count)
        record.append(contentsOf: stack.contextValues)
        record.append(String(ordinal))
        record.append(String(position))
        return Record(kind, values: record, line: line)
    }

    package mutating func text(_ text: XMLText) {
        guard collecting > 0 else { return }
        for index in fields.indices where collectingDepth[index] >= 0 { text.append(to: &texts[index]) }
    }

    /// The element that just started is the one field `index`'s element steps lead to.
    private mutating func reach(_ index: Int, _ tag: XMLStartTag, depth: Int) {
        if let attribute = fields[index].attribute {
            if let value = tag.attribute(attribute.localName, namespace: attribute.uri) {
                values[index] = value
                found[index] = true
            }
        } else {
            texts[index].removeAll(keepingCapacity: true)
            collectingDepth[index] = depth
            collecting += 1
        }
    }
}
