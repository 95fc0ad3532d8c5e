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
        if readsWithoutTree, let streamedFields {
            let (outcome, coverage, issues) = try withoutActuallyEscaping(emit) { emit in
                let records = StreamedRecords(fields: streamedFields, path: path, context: context, kind: kinds[0], emit: emit)
                let source = try input.bytes(log: log)
                let parser = XMLEventParser(source: source, path: input.url.path, encoding: options.encoding, handler: records)
                let outcome = try parser.parse()
                if outcome == .documentType { source.close() }
                if let failure = records.failure { throw failure }
                return (outcome, records.coverage, parser.issues)
            }
            // A document type declaration is checked by the tree reader, which reads the file from its start.
            if outcome == .read {
                finish(input, coverage: coverage, issues: issues, log: log)
                return
            }
        }
        let reader = try XMLStreamReader(source: input.bytes(log: log), path: input.url.path, encoding: options.encoding, namespaces: options.namespaces)
        var stack = ElementStack(context: context)
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
                    values.append(contentsOf: stack.contextValues)
                    values.append(String(ordinal))
                    values.append(String(position))
                    try emit(Record(kinds[0], values: values, line: element.line))
                } else {
                    if ordinal == 0, coverage.recordNamespace == nil, let last = path.steps.last, let uri = last.namespace,
                       last.localName == name, namespace != uri {
                        coverage.recordNamespace = (namespace, reader.elementLine)
                    }
                    stack.push(name, namespace) { reader.attribute($0, namespace: $1) }
                }
            case .end:
                stack.pop()
            }
        }
        if !expandFailed, let last = path.steps.last {
            for element in reader.salvagedElements(localName: last.localName, namespace: last.namespace) {
                ordinal += 1
                let values = expressions.map { element.string($0) }
                coverage.beginRecord()
                for (index, value) in values.enumerated() where value != nil { coverage.matched[index] = true }
                try emit(Record(kinds[0], values: values + stack.contextValues.map { _ in nil } + [String(ordinal), nil], line: element.line))
            }
        }
        finish(input, coverage: coverage, issues: reader.issues, log: log)
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

/// An enclosing element whose attributes records carry (`context: {route: {routeTag: "@tag"}}`).
package struct ContextElement {
    package let localName: String
    package let namespace: String?
    /// Field name, attribute local name and namespace.
    package let fields: [(name: String, attribute: String, namespace: String?)]

    /// - Throws: `KilnError.usage` for an undeclared prefix.
    package init(_ element: String, fields: [String: String], namespaces: [String: String]) throws {
        let step = try ElementPath(element, namespaces: namespaces).steps.last!
        localName = step.localName
        namespace = step.namespace
        self.fields = try fields.keys.sorted().map { name in
            let attribute = String(fields[name]!.dropFirst())
            let parts = attribute.split(separator: ":", maxSplits: 1).map(String.init)
            guard parts.count == 2 else { return (name, attribute, nil) }
            guard let uri = namespaces[parts[0]] else {
                throw KilnError.usage("the context field \"\(name)\" uses the prefix \"\(parts[0])\", which namespaces does not declare")
            }
            return (name, parts[1], uri)
        }
    }
}

/// The open elements while streaming, with the context values they set and how many records each holds so far.
package struct ElementStack {
    private let context: [ContextElement]
    package private(set) var names: [(name: String, namespace: String?)] = []
    /// For each open element: the context values it set (index into `contextValues`, previous value), its record count.
    private var frames: [(restores: [(index: Int, previous: String?)], records: Int)] = []
    /// The current value of every context field, in declaration order.
    package private(set) var contextValues: [String?]
    private var topLevelRecords = 0

    package init(context: [ContextElement]) {
        self.context = context
        contextValues = Array(repeating: nil, count: context.reduce(0) { $0 + $1.fields.count })
    }

    /// An element that is not a record starts: its context fields (when declared) take its attributes.
    /// - Parameter attribute: the value of the element's attribute with a local name and namespace, or nil.
    package mutating func push(_ name: String, _ namespace: String?, attribute: (String, String?) -> String?) {
        var restores: [(index: Int, previous: String?)] = []
        var index = 0
        for element in context {
            if element.localName == name, element.namespace == nil || element.namespace == namespace {
                for (offset, field) in element.fields.enumerated() {
                    restores.append((index + offset, contextValues[index + offset]))
                    contextValues[index + offset] = attribute(field.attribute, field.namespace)
                }
            }
            index += element.fields.count
        }
        names.append((name, namespace))
        frames.append((restores, 0))
    }

    /// The innermost open element ends: the context values it set go back to what they were.
    package mutating func pop() {
        guard let frame = frames.popLast() else { return }
        names.removeLast()
        for restore in frame.restores.reversed() { contextValues[restore.index] = restore.previous }
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
                guard selector.hasPrefix("@"), !selector.dropFirst().contains(where: { "/[(@ ".contains($0) }) else {
                    throw DecodingError.dataCorrupted(.init(codingPath: path, debugDescription:
                        "a context field is an attribute of the enclosing element (\"@name\"): when a record starts, only the "
                            + "attributes of the elements around it have been read; found \"\(selector)\""))
                }
                guard seen.insert(name).inserted, !name.hasPrefix("_") else {
                    throw DecodingError.dataCorrupted(.init(codingPath: path, debugDescription:
                        "the field \"\(name)\" is already declared; every field and context field needs its own name"))
                }
            }
        }
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
