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
    public static let acceptedMediaTypes = MediaTypes.markup

    /// The options a manifest gives an `xml` source.
    public struct Options: Decodable, Sendable {
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
