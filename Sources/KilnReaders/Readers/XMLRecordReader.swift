import KilnC
import KilnCore
import KilnManifest

/// Reads records from XML files with libxml2's streaming reader: each element matching `record` is one record, and
/// each field is an XPath expression evaluated on that element (`@code`, `name`, `s:location/@lat`). `record` is an
/// element name (`stop`, `s:stop`) or a path of them (`route/stop`: a `stop` whose parent is a `route`;
/// `/body/route/stop` from the document element). Fields of enclosing elements are declared as `context`
/// (`{route: {routeTag: "@tag"}}`) and kept on a stack while streaming; every record also carries `_ordinal` (its
/// position among the file's records) and `_position` (among its parent's). Files of any size stream in bounded
/// memory. Safe by default: no network, no entity expansion, no external DTD, libxml2's depth limit; each refused
/// construct is a diagnostic, and XPath that streaming cannot evaluate correctly is refused at load (`XPathGuard`).
/// When every field is a simple path, a file is read from libxml2's SAX events without a tree (`StreamedRecords`),
/// with the same records; a file with a DOCTYPE, or a field that needs XPath, goes through the tree reader.
public struct XMLRecordReader: ConfigurableReader {
    public static let format = "xml"

    /// The options a manifest gives an `xml` source.
    public struct Options: Decodable {
        /// The record element or path of elements: `name` (any namespace), `prefix:name`, `a/b`, `/a/b`.
        package var record: String
        package var namespaces: [String: String] = [:]
        package var fields: [String: NodeSelector]
        /// Fields of enclosing elements: element name → field name → `@attribute`.
        package var context: [String: [String: String]] = [:]
        /// Overrides the encoding the document declares.
        package var encoding: String?

        package enum CodingKeys: String, CodingKey, CaseIterable { case record, namespaces, fields, context, encoding }

        public init(from decoder: Decoder) throws {
            let c = try decoder.strictContainer(keyedBy: CodingKeys.self)
            record = try c.decode(String.self, forKey: .record)
            namespaces = try c.decodeIfPresent([String: String].self, forKey: .namespaces) ?? [:]
            fields = try c.decode([String: NodeSelector].self, forKey: .fields)
            context = try c.decodeIfPresent([String: [String: String]].self, forKey: .context) ?? [:]
            encoding = try c.decodeIfPresent(String.self, forKey: .encoding)
            try MarkupFieldCheck(namespaces: namespaces, scope: .streamedRecord, codingPath: c.codingPath)
                .check(fields: fields, key: CodingKeys.fields, context: context, contextKey: CodingKeys.context)
        }
    }

    public let kinds: [RecordKind]
    private let options: Options
    private let path: ElementPath
    private let expressions: [XPathExpression]
    private let context: [ContextElement]
    /// The fields as simple paths, when every one is: records are then read from libxml2's SAX events without a tree
    /// (`StreamedRecords`); nil when some field needs XPath.
    private let streamedFields: [StreamedField]?
    /// False to read every file with the tree reader (tests compare the two).
    package var readsWithoutTree = true
    /// How many bytes of records may wait for a context field's child element written after them.
    package var waitingLimit = WaitingRecords.defaultLimit

    public init(options: Options) throws {
        try options.encoding.map(LegacyTextDecoder.check)
        self.options = options
        path = try ElementPath(options.record, namespaces: options.namespaces)
        let fieldNames = options.fields.keys.sorted()
        expressions = try fieldNames.map { try options.fields[$0]!.compile() }
        context = try options.context.keys.sorted().map { element in
            try ContextElement(element, fields: options.context[element]!, namespaces: options.namespaces)
        }
        kinds = [RecordKind(fields: fieldNames + context.flatMap { $0.fields.map(\.name) } + RecordOrder.fieldNames)]
        let streamed = expressions.compactMap { StreamedField($0, namespaces: options.namespaces) }
        streamedFields = streamed.count == expressions.count ? streamed : nil
    }

    public func read(_ input: InputFile, log: DiagnosticLog, emit: (Record) throws -> Void) throws {
        if BlankFile.reportIfBlank(input, as: .xml, log: log) { return }
        EncodingMismatch.checkMarkup(input, override: options.encoding, log: log)
        var stack = ElementStack(context: context, waitingLimit: waitingLimit)
        let (coverage, issues) = try pass(input, stack: &stack, log: log, emit: emit)
        if let overflow = stack.overflow {
            // More records waited for a context child than the bound allows: they were let go, and are read again
            // with the values the first pass found at the end of each element.
            var replay = ElementStack(context: context, waitingLimit: waitingLimit, replayingFrom: overflow.ordinal, finals: stack.finals)
            // The first pass reported any damage of a compressed file; the second reads the same bytes again.
            _ = try pass(input, stack: &replay, log: nil, emit: emit)
            log.report(.xmlLateContext, "more than \(stack.waitingLimitText) of records waited for a context element written after them: the records "
                           + "from line \(overflow.line) on (\(stack.records - overflow.ordinal + 1) of \(stack.records)) were read in a second pass over the file, with it",
                       at: input.at(overflow.line))
        }
        finish(input, coverage: coverage, issues: issues, log: log)
        reportContext(stack, input: input, log: log)
    }

    /// Reads `input` once, its records to `emit` through `stack` (which holds what the pass found); returns what the
    /// records hold that no field reads and libxml2's issues. `log` is nil for a second pass.
    /// - Throws: what `emit` throws, `KilnError.io` when the file cannot be read.
    private func pass(_ input: InputFile, stack: inout ElementStack, log: DiagnosticLog?,
                      emit: (Record) throws -> Void) throws -> (coverage: RecordCoverage, issues: [XMLIssue]) {
        if readsWithoutTree, let streamedFields {
            let start = stack
            let (outcome, coverage, issues, streamed) = try withoutActuallyEscaping(emit) { emit in
                let records = StreamedRecords(fields: streamedFields, path: path, stack: start, kind: kinds[0], emit: emit)
                let source = try input.bytes(log: log)
                let parser = XMLEventParser(source: source, path: input.url.path, encoding: options.encoding, handler: records)
                let outcome = try parser.parse()
                if outcome == .documentType { source.close() }
                if let failure = records.failure { throw failure }
                if outcome == .read { try records.finishFile() }
                return (outcome, records.coverage, parser.issues, records.stack)
            }
            // A document type declaration is checked by the tree reader, which reads the file from its start.
            if outcome == .read {
                stack = streamed
                return (coverage, issues)
            }
        }
        let reader = try XMLStreamReader(source: input.bytes(log: log), path: input.url.path, encoding: options.encoding, namespaces: options.namespaces)
        var ordinal = 0
        var expandFailed = false
        var coverage = RecordCoverage(fields: streamedFields ?? [], fieldCount: expressions.count)
        reading: while let event = reader.next() {
            switch event {
            case .start(let name, let namespace, _):
                if path.matches(name, namespace, within: stack.names) {
                    guard let element = reader.expand() else {
                        // The record's own block failed to parse: what follows it in the tree is not in order.
                        expandFailed = true
                        break reading
                    }
                    ordinal += 1
                    coverage.beginRecord()
                    if streamedFields != nil {
                        var depth = 0
                        element.replayElements(start: { tag in
                            depth += 1
                            coverage.enter(tag, depth: depth)
                        }, end: {
                            coverage.leave(depth: depth)
                            depth -= 1
                        })
                    }
                    let position = stack.countRecordChild()
                    var values: [String?] = []
                    values.reserveCapacity(kinds[0].fieldNames.count)
                    for (index, expression) in expressions.enumerated() {
                        let value = element.string(expression)
                        if value != nil { coverage.matched[index] = true }
                        values.append(value)
                    }
                    try stack.finish(&values, kind: kinds[0], ordinal: ordinal, position: position, line: element.line, emit: emit)
                } else {
                    if ordinal == 0, coverage.recordNamespace == nil, let last = path.steps.last, let uri = last.namespace,
                       last.localName == name, namespace != uri {
                        coverage.recordNamespace = (namespace, reader.elementLine)
                    }
                    if stack.push(name, namespace, line: reader.elementLine, ordinal: ordinal, attribute: { reader.attribute($0, namespace: $1) }) {
                        // A context field takes this element's text; what it holds is still read.
                        stack.takeText(reader.textKeepingElement())
                    }
                }
            case .end:
                try stack.pop(emit: emit)
            }
        }
        try stack.finishFile(emit: emit)
        // A second pass has given the records salvaged after an error already.
        if !expandFailed, !stack.replays, let last = path.steps.last {
            for element in reader.salvagedElements(localName: last.localName, namespace: last.namespace) {
                ordinal += 1
                let values = expressions.map { element.string($0) }
                coverage.beginRecord()
                for (index, value) in values.enumerated() where value != nil { coverage.matched[index] = true }
                try emit(Record(kinds[0], values: values + stack.contextValues.map { _ in nil } + [String(ordinal), nil], line: element.line))
            }
        }
        return (coverage, reader.issues)
    }

    /// Reports what the context fields from child elements missed in a file: elements that held no such child
    /// although records in them needed it (`xml.context-missing`).
    private func reportContext(_ stack: ElementStack, input: InputFile, log: DiagnosticLog) {
        for (index, missed) in stack.neverFound.sorted(by: { $0.key < $1.key }) {
            let (element, field) = stack.contextField(at: index)
            log.report(.xmlContextMissing, "context field \"\(field.name)\" (\"\(field.selector)\" of \"\(element.declared)\"): "
                           + "\(missed.elements == 1 ? "an element" : "\(missed.elements) elements") \"\(element.declared)\" (first at line \(missed.line)) "
                           + "\(missed.elements == 1 ? "holds" : "hold") no \"\(field.selector)\"; "
                           + "\(missed.records == 1 ? "its record has" : "their \(missed.records) records have") it NULL", at: input.at(missed.line))
        }
    }

    /// Reports what reading a file found: libxml2's issues, that no element matched the record, the elements of
    /// the records no field reads (once per source), elements a field would read but for their namespace, and the
    /// fields that matched in no record.
    private func finish(_ input: InputFile, coverage: RecordCoverage, issues: [XMLIssue], log: DiagnosticLog) {
        let fieldNames = options.fields.keys.sorted()
        if coverage.records == 0, issues.isEmpty {
            log.report(.sourceEmpty, "the file gives no record: no element matches the record \"\(options.record)\"", at: input.at(nil))
            if let declared = path.steps.last?.namespace, let found = coverage.recordNamespace {
                log.report(.xmlNamespaceMismatch, "the record \"\(options.record)\" is in the namespace \"\(declared)\", but this file's "
                               + "\"\(path.steps.last!.localName)\" elements are in \(Self.describe(found.namespace, against: declared)); "
                               + "declare that URI (a source of its own for these files) to read them", at: input.at(found.line))
            }
        }
        let source = log.readingSource.map { "source \"\($0)\"" } ?? "this source"
        var nearMissed = Set<Int>()
        for element in coverage.unread {
            let namespace = element.namespace.map { "namespace \"\($0)\"" } ?? "no namespace"
            if !element.nearMiss.isEmpty {
                let declared = element.expectedNamespace ?? ""
                let names = element.nearMiss.map { "\"\(fieldNames[$0])\"" }
                nearMissed.formUnion(element.nearMiss)
                log.report(.xmlNamespaceMismatch, "\(names.count == 1 ? "field" : "fields") \(names.joined(separator: ", ")) "
                               + "\(names.count == 1 ? "reads" : "read") \"\(element.path)\" in the namespace \"\(declared)\", but this "
                               + "file's records have it in \(Self.describe(element.namespace, against: declared)), which no field reads: "
                               + "\(names.count == 1 ? "it is" : "they are") NULL here; declare that URI (a source of its own for these files) to read them",
                           at: input.at(element.line))
            }
            let message = "no field of \(source) reads the element \"\(element.path)\" (\(namespace)) of its records (\"\(options.record)\"); "
                + "reported once for the source, at its first file and line"
            log.report(Diagnostic(code: .xmlUnread, message: message, provenance: input.at(element.line)),
                       once: [DiagnosticCode.xmlUnread.rawValue, log.readingSource ?? "", options.record, element.path,
                              element.namespace ?? ""].joined(separator: "\u{1F}"))
        }
        if coverage.records > 0, issues.isEmpty {
            for (index, name) in fieldNames.enumerated() where !coverage.matched[index] && !nearMissed.contains(index) {
                log.report(.sourceFieldUnmatched, "field \"\(name)\" (\"\((try? options.fields[name]!.xpathText()) ?? "")\") matched nothing in "
                               + "\(coverage.records == 1 ? "the record" : "any of the \(coverage.records) records") of this file: it is NULL in each",
                           at: input.at(nil))
            }
        }
        XMLIssueReport.report(issues, in: input, log: log)
    }

    /// A namespace found where `declared` was expected, for a message.
    private static func describe(_ found: String?, against declared: String) -> String {
        guard let found else { return "no namespace" }
        return NamespaceVersion.differOnlyInVersion(found, declared)
            ? "\"\(found)\" (the same vocabulary, another version)" : "\"\(found)\""
    }
}

/// The fields every record of a markup source carries besides its declared ones: `_ordinal`, its 1-based position
/// among the records of its file, and `_position`, among the records that share its parent element — so that the
/// order of stops along a route never has to be rebuilt from line numbers (which a one-line file does not have).
public enum RecordOrder {
    public static let fieldNames = ["_ordinal", "_position"]
}

/// A `record` option: element steps, each a local name with an optional namespace; a leading `/` anchors the path
/// at the document element.
package struct ElementPath {
    package struct Step {
        package var localName: String
        package var namespace: String?
    }

    package let steps: [Step]
    package let anchored: Bool
    /// The last step's local name in UTF-8 with a final NUL.
    private let lastLocalName: [UInt8]

    /// - Throws: `KilnError.usage` for a prefix the source does not declare or an empty step.
    package init(_ text: String, namespaces: [String: String]) throws {
        anchored = text.hasPrefix("/")
        let parts = text.split(separator: "/", omittingEmptySubsequences: false).dropFirst(text.hasPrefix("/") ? 1 : 0)
        steps = try parts.map { part in
            guard !part.isEmpty, !part.contains("["), !part.contains("@") else {
                throw KilnError.usage("the record \"\(text)\" must be element names separated by \"/\" (e.g. \"route/stop\"), "
                                          + "without predicates or attributes; select values with fields")
            }
            let names = part.split(separator: ":", maxSplits: 1).map(String.init)
            guard names.count == 2 else { return Step(localName: names[0], namespace: nil) }
            guard let uri = namespaces[names[0]] else {
                throw KilnError.usage("the record \"\(text)\" uses the prefix \"\(names[0])\", which namespaces does not declare")
            }
            return Step(localName: names[1], namespace: uri)
        }
        lastLocalName = Array((steps.last?.localName ?? "").utf8) + [0]
    }

    /// True when an element `name` (in `namespace`) that starts inside the open elements `ancestors` (outermost
    /// first) is a record.
    package func matches(_ name: String, _ namespace: String?, within ancestors: [(name: String, namespace: String?)]) -> Bool {
        guard let last = steps.last, last.localName == name, last.namespace == nil || last.namespace == namespace else { return false }
        return parentsMatch(ancestors)
    }

    /// True when `tag` has the last step's local name but not its namespace, and is not a record for that alone.
    package func hasOtherNamespace(_ tag: XMLStartTag) -> Bool {
        guard let uri = steps.last?.namespace, tag.hasLocalName(lastLocalName) else { return false }
        return tag.namespace != uri
    }

    /// `matches` for a start tag of `XMLEventParser`: its names are made into strings only for a record.
    package func matches(_ tag: XMLStartTag, within ancestors: [(name: String, namespace: String?)]) -> Bool {
        guard tag.hasLocalName(lastLocalName) else { return false }
        if let uri = steps.last?.namespace, tag.namespace != uri { return false }
        return parentsMatch(ancestors)
    }

    private func parentsMatch(_ ancestors: [(name: String, namespace: String?)]) -> Bool {
        let parents = steps.dropLast()
        if anchored, ancestors.count != parents.count { return false }
        guard ancestors.count >= parents.count else { return false }
        for (step, open) in zip(parents.reversed(), ancestors.reversed()) {
            guard step.localName == open.name, step.namespace == nil || step.namespace == open.namespace else { return false }
        }
        return true
    }
}

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

/// Checks a markup source's field and context declarations when the manifest loads: XPath that the source cannot
/// evaluate correctly (`XPathGuard`), context fields that are not attributes, and names that clash.
package struct MarkupFieldCheck {
    package let namespaces: [String: String]
    package let scope: XPathGuard.Scope
    package let codingPath: [CodingKey]

    /// - Throws: `DecodingError.dataCorrupted` at the offending field, naming the supported alternative.
    package func check(fields: [String: NodeSelector], key: CodingKey, context: [String: [String: String]] = [:], contextKey: CodingKey? = nil) throws {
        let guardian = XPathGuard(scope: scope, prefixes: Set(namespaces.keys))
        for name in fields.keys.sorted() {
            let path = codingPath + [key, AnyKey(stringValue: name)]
            if name.hasPrefix("_") {
                throw DecodingError.dataCorrupted(.init(codingPath: path, debugDescription:
                    "field names starting with \"_\" are Kiln's own (\(RecordOrder.fieldNames.joined(separator: ", "))); choose another name"))
            }
            guard case .xpath(let text) = fields[name]! else { continue }
            if let problem = guardian.problem(in: text) {
                throw DecodingError.dataCorrupted(.init(codingPath: path, debugDescription: "field \"\(name)\" (\"\(text)\"): \(problem)"))
            }
        }
        guard let contextKey else { return }
        var seen = Set(fields.keys)
        for element in context.keys.sorted() {
            for name in context[element]!.keys.sorted() {
                let path = codingPath + [contextKey, AnyKey(stringValue: element), AnyKey(stringValue: name)]
                let selector = context[element]![name]!
                guard Self.isContextPath(selector) else {
                    throw DecodingError.dataCorrupted(.init(codingPath: path, debugDescription:
                        "a context field is an attribute of the enclosing element (\"@name\") or a simple path below it to an element "
                            + "whose text it takes (\"ServiceCode\", \"s:FramedVehicleJourneyRef/s:DatedVehicleJourneyRef\") or to an "
                            + "attribute (\"JourneyPatternRef/@ref\"); found \"\(selector)\""))
                }
                guard seen.insert(name).inserted, !name.hasPrefix("_") else {
                    throw DecodingError.dataCorrupted(.init(codingPath: path, debugDescription:
                        "the field \"\(name)\" is already declared; every field and context field needs its own name"))
                }
            }
        }
    }
}

extension MarkupFieldCheck {
    /// True for a context field's selector: `@name`, or element names separated by `/` (each `name` or
    /// `prefix:name`), optionally ending in `@name`.
    static func isContextPath(_ selector: String) -> Bool {
        let steps = selector.split(separator: "/", omittingEmptySubsequences: false)
        func isName(_ step: Substring) -> Bool {
            let parts = step.split(separator: ":", omittingEmptySubsequences: false)
            return parts.count <= 2 && parts.allSatisfy { part in
                !part.isEmpty && !part.contains(where: { "[]()@*. '\"=|$,".contains($0) || $0.isWhitespace })
                    && !(part.first!.isNumber || part.first == "-")
            }
        }
        for (index, step) in steps.enumerated() {
            if step.hasPrefix("@") {
                guard index == steps.count - 1, isName(step.dropFirst()) else { return false }
            } else if !isName(step) {
                return false
            }
        }
        return true
    }
}

/// Turns libxml2's findings into diagnostics.
package enum XMLIssueReport {
    package static func report(_ issues: [XMLIssue], in input: InputFile, log: DiagnosticLog) {
        for issue in issues {
            let place = input.at(issue.line, column: issue.column)
            switch issue.kind {
            case .malformed:
                log.report(.xmlMalformed, "malformed XML: \(issue.message); the rest of this file is not read", at: place)
            case .warning:
                log.report(.xmlWarning, "libxml2: \(issue.message)", at: place)
            case .entityDeclarations, .undefinedEntity:
                log.report(.xmlEntity, "\(issue.message); the rest of this file is not read", at: place)
            case .externalDTD:
                log.report(.xmlExternalDTD, issue.message, at: place)
            }
        }
    }
}
