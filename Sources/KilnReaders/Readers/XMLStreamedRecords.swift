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
    /// What the file's records hold that no field read, and which fields read nothing (`RecordCoverage`).
    package var coverage: RecordCoverage { withScan { $0.coverage } }

    /// The open elements and context values (with the records waiting for a context child element).
    package var stack: ElementStack { withScan { $0.stack } }

    package init(fields: [StreamedField], path: ElementPath, stack: ElementStack, kind: RecordKind,
         emit: @escaping (Record) throws -> Void) {
        self.emit = emit
        // Unsafe only as `scan` skips the exclusivity check (see `withScan`).
        unsafe scan = RecordScan(fields: fields, path: path, stack: stack, kind: kind)
    }

    /// The one access to `scan`: `@exclusivity(unchecked)` is memory-unsafe only when two accesses overlap, and the
    /// events come one at a time from the parsing thread.
    private func withScan<Result>(_ body: (inout RecordScan) throws -> Result) rethrows -> Result {
        try unsafe body(&scan)
    }

    package func start(_ tag: XMLStartTag) -> Bool {
        withScan { $0.start(tag) }
        return true
    }

    package func end() -> Bool {
        do {
            try withScan { try $0.end(emit: handOver) }
            return true
        } catch {
            failure = error
            return false
        }
    }

    package func text(_ text: XMLText) { withScan { $0.text(text) } }

    /// The file ended: the records still waiting for a context child element go out with what was read.
    package func finishFile() throws {
        try withScan { try $0.stack.finishFile(emit: handOver) }
    }

    private func handOver(_ record: Record) throws {
        try emit(record)
        records += 1
    }
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
    package var coverage: RecordCoverage

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
        coverage = RecordCoverage(fields: fields, fieldCount: fields.count)
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
            coverage.enter(tag, depth: current)
            return
        }
        guard path.matches(tag, within: stack.names) else {
            if ordinal == 0, coverage.recordNamespace == nil, path.hasOtherNamespace(tag) {
                coverage.recordNamespace = (tag.namespace, tag.line)
            }
            _ = stack.push(tag.localName, tag.namespace, line: tag.line, ordinal: ordinal) { tag.attribute($0, namespace: $1) }
            return
        }
        depth = 0
        ordinal += 1
        position = stack.countRecordChild()
        line = tag.line
        collecting = 0
        coverage.beginRecord()
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

    /// The innermost open element ends; the record goes out (or waits for its context) when it was a record's
    /// element.
    package mutating func end(emit: (Record) throws -> Void) throws {
        guard let current = depth else {
            try stack.pop(emit: emit)
            return
        }
        if collecting > 0 {
            for index in fields.indices where collectingDepth[index] == current {
                values[index] = String(decoding: texts[index], as: UTF8.self)
                found[index] = true
                collectingDepth[index] = -1
                collecting -= 1
            }
        }
        coverage.leave(depth: current)
        guard current == 0 else {
            for index in fields.indices where matched[index] == current { matched[index] = current - 1 }
            depth = current - 1
            return
        }
        depth = nil
        for index in fields.indices where found[index] { coverage.matched[index] = true }
        // The values move into the record, which has room for the rest: no string is copied or retained.
        var record = Self.noValues(fields.count, room: kind.fieldNames.count)
        swap(&record, &values)
        try stack.finish(&record, kind: kind, ordinal: ordinal, position: position, line: line, emit: emit)
    }

    package mutating func text(_ text: XMLText) {
        // A context field's element may hold records: their text is its text too.
        stack.text(text)
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

/// What one file's records hold that no field of an `xml` source reads, and which fields read nothing in it: the
/// elements no field's path reaches (each once per place and name, the first of a subtree; at most
/// `maximumUnread`), the fields that matched in no record, and, when no record matched, an element with the record's
/// name in another namespace. An element with the name a field expects at that place but in another namespace (GPX
/// 1.0 for 1.1, `…/cache/1/0/1` for `…/cache/1/0`) is a near miss of that field. Both readers of an `xml` source
/// feed it the elements of each record (`beginRecord`, `enter`, `leave`), so they report the same.
package struct RecordCoverage {
    /// An element of the records that no field reads.
    package struct Unread {
        /// Its path below the record element, by local names (`location/note`).
        package let path: String
        package let namespace: String?
        package let line: Int
        /// The fields whose element this one would be, but for its namespace, and the namespace they expect.
        package let nearMiss: [Int]
        package let expectedNamespace: String?
        fileprivate let depth: Int
        fileprivate let parentField: Int
        fileprivate let localName: [UInt8]
        fileprivate let uri: [UInt8]?
    }

    package static let maximumUnread = 100
    private let fields: [StreamedField]
    /// For each field: how many of its element steps the open elements match, whether or not it has its value
    /// already (a second `name` is on the path of the field `name` too).
    private var onPath: [Int]
    /// For each open element of the record (the record's own first): what the fields read of it.
    private var reading: [Reading] = []
    package var records = 0
    /// For each field: whether it had a value in some record.
    package var matched: [Bool]
    package private(set) var unread: [Unread] = []
    /// An element outside the records with the record's local name but another namespace, and its line.
    package var recordNamespace: (namespace: String?, line: Int)?

    /// What the fields read of an element inside a record.
    private enum Reading {
        /// The element is on the path of a field (`field`: the first such; -1 for the record's element).
        case passing(field: Int)
        /// A field takes the element's whole text: everything below it is read.
        case whole
        /// No field reads the element, nor anything below it.
        case unread
    }

    /// - Parameter fields: the fields as simple paths, to find what no field reads; empty when some field needs
    ///   XPath (then only the fields' matches, `fieldCount` of them, are counted).
    package init(fields: [StreamedField], fieldCount: Int) {
        self.fields = fields
        matched = Array(repeating: false, count: fieldCount)
        onPath = Array(repeating: 0, count: fields.count)
    }

    /// A record's element starts.
    mutating func beginRecord() {
        records += 1
        for index in onPath.indices { onPath[index] = 0 }
        reading.removeAll(keepingCapacity: true)
        reading.append(fields.contains { $0.elements.isEmpty && $0.attribute == nil } ? .whole : .passing(field: -1))
    }

    /// An element starts at `depth` (1: a child of the record's element).
    mutating func enter(_ tag: XMLStartTag, depth: Int) {
        reading.append(read(tag, depth: depth))
    }

    /// The element at `depth` ends (0: the record's own).
    mutating func leave(depth: Int) {
        reading.removeLast()
        for index in onPath.indices where onPath[index] == depth { onPath[index] = depth - 1 }
    }

    /// What the fields read of the element that starts at `depth` below the record's (its parent's reading is the
    /// last of `reading`); an element no field reads is noted in `coverage`, once per place and name.
    private mutating func read(_ tag: XMLStartTag, depth current: Int) -> Reading {
        let parentField: Int
        switch reading.last {
        case .whole?: return .whole
        case .unread?, nil: return .unread
        case .passing(let field)?: parentField = field
        }
        var passing: Int?
        var nearMiss: [Int] = []
        for index in fields.indices where onPath[index] == current - 1 {
            let elements = fields[index].elements
            guard current <= elements.count, tag.hasLocalName(elements[current - 1].localName) else { continue }
            guard tag.hasNamespace(elements[current - 1].uri) else {
                nearMiss.append(index)
                continue
            }
            onPath[index] = current
            if current == elements.count, fields[index].attribute == nil { return .whole }
            passing = passing ?? index
        }
        if let passing { return .passing(field: passing) }
        noteUnread(tag, depth: current, parentField: parentField, nearMiss: nearMiss)
        return .unread
    }


    /// Notes the element `tag`, at `depth` below the record's element inside an element on the path of field
    /// `parentField` (-1: the record's element), which no field reads.
    private mutating func noteUnread(_ tag: XMLStartTag, depth: Int, parentField: Int, nearMiss: [Int]) {
        for known in unread where known.depth == depth && known.parentField == parentField
            && tag.hasLocalName(known.localName) && tag.hasNamespace(known.uri) { return }
        guard unread.count < Self.maximumUnread else { return }
        let parents = parentField < 0 ? [] : fields[parentField].elements.prefix(depth - 1).map { String(decoding: $0.localName.dropLast(), as: UTF8.self) }
        let namespace = tag.namespace
        unread.append(Unread(path: (parents + [tag.localName]).joined(separator: "/"), namespace: namespace, line: tag.line,
                             nearMiss: nearMiss, expectedNamespace: nearMiss.first.flatMap { fields[$0].elements[depth - 1].uri }
                                .map { String(decoding: $0.dropLast(), as: UTF8.self) }, depth: depth, parentField: parentField, localName: Array(tag.localName.utf8) + [0],
                             uri: namespace.map { Array($0.utf8) + [0] }))
    }
}

/// Namespace URIs of versioned vocabularies.
package enum NamespaceVersion {
    /// True when `a` and `b` differ, and only in segments that are version numbers (`1`, `0`, `2.2`, `v3`):
    /// `http://www.topografix.com/GPX/1/0` and `…/GPX/1/1`, `…/cache/1/0` and `…/cache/1/0/1`.
    package static func differOnlyInVersion(_ a: String, _ b: String) -> Bool {
        func unversioned(_ uri: String) -> [Substring] {
            uri.split(separator: "/", omittingEmptySubsequences: false).filter { segment in
                let digits = segment.first == "v" || segment.first == "V" ? segment.dropFirst() : segment[...]
                return !(digits.first?.isNumber == true && digits.allSatisfy { $0.isNumber || $0 == "." })
            }
        }
        return a != b && unversioned(a) == unversioned(b)
    }
}
