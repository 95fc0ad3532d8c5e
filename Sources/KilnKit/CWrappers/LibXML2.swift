import CLibXML2
import Foundation

/// Process-wide libxml2 set-up: silence its stderr printing and refuse every external entity.
enum LibXML2 {
    /// Call before any parse; runs once.
    static let setUp: Void = {
        xmlInitParser()
        kiln_xml_silence()
        kiln_xml_refuse_external_entities()
    }()

    /// Parser options for XML: no network, CDATA as text, line numbers past 65 535; never NOENT (entity
    /// substitution), DTDLOAD or HUGE, so entities are not expanded, external DTDs are not read and libxml2's depth
    /// limit (256) holds.
    static let xmlOptions = Int32(XML_PARSE_NONET.rawValue | XML_PARSE_NOCDATA.rawValue | XML_PARSE_COMPACT.rawValue
                                  | XML_PARSE_BIG_LINES.rawValue)

    /// Parser options for HTML: recover from real pages, no network, no printed errors, big line numbers.
    static let htmlOptions = Int32(HTML_PARSE_RECOVER.rawValue | HTML_PARSE_NONET.rawValue | HTML_PARSE_NOERROR.rawValue
                                   | HTML_PARSE_NOWARNING.rawValue | HTML_PARSE_COMPACT.rawValue | XML_PARSE_BIG_LINES.rawValue)

    /// libxml2's message as a user reads it: the advice to set `XML_PARSE_HUGE` (an option Kiln never sets, on
    /// purpose) becomes "libxml2's limit", and "Document is empty" (said of any file that holds no element, such as
    /// plain text or random bytes) says so.
    static func userMessage(_ message: String) -> String {
        if message.hasPrefix("Document is empty") {
            return "the file holds no XML element: is it XML at all? (libxml2: Document is empty)"
        }
        for advice in [", use XML_PARSE_HUGE option", " use XML_PARSE_HUGE option"] where message.contains(advice) {
            return message.replacingOccurrences(of: advice, with: "") + " (libxml2's limit, which Kiln keeps)"
        }
        return message
    }

    /// Takes ownership of a libxml2 string, frees it, and returns it as a Swift string.
    static func take(_ pointer: UnsafeMutablePointer<xmlChar>?) -> String? {
        guard let pointer else { return nil }
        defer { kiln_xml_free(pointer) }
        return String(cString: pointer)
    }

    static func string(_ pointer: UnsafePointer<xmlChar>?) -> String? {
        pointer.map { String(cString: $0) }
    }

    /// libxml2's last error message, trimmed.
    static func lastErrorMessage() -> String {
        guard let error = xmlGetLastError(), let message = error.pointee.message else { return "unknown error" }
        return String(cString: message).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

/// A problem libxml2 reported, or a construct Kiln refused, with its place in the file.
public struct XMLIssue: Sendable, Equatable {
    /// What kind of problem.
    public enum Kind: Sendable, Equatable {
        /// libxml2 could not parse the document; reading stops here.
        case malformed
        /// A warning libxml2 gave while going on.
        case warning
        /// The document declares entities (a billion-laughs bomb or an external entity); reading stops.
        case entityDeclarations
        /// A reference to an entity that is not defined; reading stops.
        case undefinedEntity
        /// The document names an external DTD, which is never loaded.
        case externalDTD
    }

    public let kind: Kind
    public let message: String
    public let line: Int?
    public let column: Int?
}

/// A compiled XPath 1.0 expression. Not `Sendable`: it wraps a libxml2 structure.
public final class XPathExpression {
    /// The expression as written.
    public let source: String
    fileprivate let compiled: OpaquePointer
    /// For the common paths fields use (`name`, `@code`, `s:location/@lat`): the steps, so that they can be followed
    /// directly instead of through the XPath engine, with the same result.
    let simplePath: SimplePath?
    /// For a simple CSS selector (`td.content`): the test that gives the same elements as `source` by walking an
    /// HTML page's tree instead of through the XPath engine.
    let descendantTest: DescendantElementTest?

    /// Compiles `source`.
    /// - Throws: `XPathError` with libxml2's message.
    public convenience init(_ source: String) throws {
        try self.init(source, descendantTest: nil)
    }

    /// Compiles `source`; `descendantTest`, when given, must select exactly the nodes `source` selects in an HTML
    /// document (`CSSSelector.descendantTest` gives it so).
    /// - Throws: `XPathError` with libxml2's message.
    init(_ source: String, descendantTest: DescendantElementTest?) throws {
        _ = LibXML2.setUp
        xmlResetLastError()
        guard let compiled = xmlXPathCompile(source) else {
            throw XPathError(expression: source, message: LibXML2.lastErrorMessage())
        }
        self.source = source
        self.compiled = compiled
        simplePath = SimplePath(source)
        self.descendantTest = descendantTest
    }

    deinit { xmlXPathFreeCompExpr(compiled) }
}

/// A location path of child element steps and an optional final attribute step, each a plain or prefixed name
/// (`a/b/@c`), or the context node itself (`.`): no axes, predicates or functions.
struct SimplePath {
    struct Name {
        var prefix: String?
        /// The local name, NUL-terminated, for comparing with libxml2's names in place.
        var local: [UInt8]

        init(prefix: String?, local: String) {
            self.prefix = prefix
            self.local = Array(local.utf8) + [0]
        }
    }

    var elements: [Name]
    var attribute: Name?
    /// The namespace URI of each step when no step has a prefix: none at all.
    private(set) var unprefixedURIs: [[UInt8]?]?

    init?(_ source: String) {
        if source == "." {
            elements = []
            attribute = nil
            unprefixedURIs = []
            return
        }
        let steps = source.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard !steps.isEmpty else { return nil }
        var elements: [Name] = []
        var attribute: Name?
        for (index, step) in steps.enumerated() {
            let isAttribute = step.hasPrefix("@")
            guard let name = SimplePath.name(isAttribute ? String(step.dropFirst()) : step) else { return nil }
            if isAttribute {
                guard index == steps.count - 1 else { return nil }
                attribute = name
            } else {
                elements.append(name)
            }
        }
        self.elements = elements
        self.attribute = attribute
        let names = elements + (attribute.map { [$0] } ?? [])
        unprefixedURIs = names.allSatisfy { $0.prefix == nil } ? names.map { _ -> [UInt8]? in nil } : nil
    }

    private static func name(_ text: String) -> Name? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        let valid: (String) -> Bool = { part in
            guard let first = part.unicodeScalars.first, first.properties.isAlphabetic || first == "_" else { return false }
            return part.unicodeScalars.allSatisfy { $0.properties.isAlphabetic || $0.properties.numericType != nil || "_-.".unicodeScalars.contains($0) }
        }
        guard parts.allSatisfy(valid) else { return nil }
        switch parts.count {
        case 1: return Name(prefix: nil, local: parts[0])
        case 2: return Name(prefix: parts[0], local: parts[1])
        default: return nil
        }
    }
}

/// The descendant elements of the context node (not the node itself) with an element name, a set of classes and a
/// set of ids, as the XPath `.//name[@class and contains(concat(' ', normalize-space(@class), ' '), ' c ')][@id='i']`
/// selects them in an HTML document: names and attributes compared byte for byte and without a namespace, the
/// classes among the tokens of the first `class` attribute split on XML white space, each id equal to the value of
/// an `id` attribute.
struct DescendantElementTest: Sendable, Equatable {
    /// The element name, NUL-terminated; `nil` for any element (`*`).
    let name: [UInt8]?
    let classes: [[UInt8]]
    let ids: [[UInt8]]

    /// `nil` unless every class is a non-empty token without XML white space and every id is non-empty.
    init?(name: String?, classes: [String], ids: [String]) {
        let isToken: ([UInt8]) -> Bool = { !$0.isEmpty && !$0.contains(where: DescendantElementTest.isXMLSpace) }
        let classes = classes.map { Array($0.utf8) }
        let ids = ids.map { Array($0.utf8) }
        guard classes.allSatisfy(isToken), ids.allSatisfy({ !$0.isEmpty && !$0.contains(0) }) else { return nil }
        if let name {
            guard !name.isEmpty, !name.utf8.contains(0) else { return nil }
            self.name = Array(name.utf8) + [0]
        } else {
            self.name = nil
        }
        self.classes = classes
        self.ids = ids
    }

    /// White space as XPath's `normalize-space` takes it (libxml2's `IS_BLANK_CH`).
    static func isXMLSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }

    /// Whether `token` is one of the XML-white-space-separated tokens of `value` (a class attribute's classes).
    static func hasToken(_ token: [UInt8], in value: UnsafeBufferPointer<UInt8>) -> Bool {
        var start = 0
        while start < value.count {
            while start < value.count, isXMLSpace(value[start]) { start += 1 }
            var end = start
            while end < value.count, !isXMLSpace(value[end]) { end += 1 }
            if end > start, end - start == token.count, value[start..<end].elementsEqual(token) { return true }
            start = end
        }
        return false
    }
}

/// An XPath expression that does not compile or cannot be evaluated.
public struct XPathError: Error, CustomStringConvertible, Sendable {
    public let expression: String
    public let message: String
    public var description: String { "invalid XPath \"\(expression)\": \(message)" }
}

/// Evaluates XPath expressions against one document, with namespace prefixes registered — or against the document of
/// whichever node it is given, when made without one (`HTMLPages`).
/// Not `Sendable`: it owns a libxml2 context.
final class XPathEvaluator {
    private let context: UnsafeMutablePointer<xmlXPathContext>
    private let namespaces: [String: String]
    /// The namespace URIs of each simple path's steps, resolved once per expression.
    private var resolvedURIs: [ObjectIdentifier: [[UInt8]?]] = [:]

    init?(document: UnsafeMutablePointer<xmlDoc>?, namespaces: [String: String]) {
        self.namespaces = namespaces
        guard let context = xmlXPathNewContext(document) else { return nil }
        for (prefix, uri) in namespaces.sorted(by: { $0.key < $1.key }) { xmlXPathRegisterNs(context, prefix, uri) }
        self.context = context
    }

    deinit { xmlXPathFreeContext(context) }

    /// The string value of `expression` evaluated at `node`; `nil` when it selects no node.
    func string(_ expression: XPathExpression, at node: UnsafeMutablePointer<xmlNode>) -> String? {
        if let path = expression.simplePath, let value = follow(expression, path, from: node) { return value }
        guard let result = evaluate(expression, at: node) else { return nil }
        defer { xmlXPathFreeObject(result) }
        if result.pointee.type == XPATH_NODESET, (result.pointee.nodesetval?.pointee.nodeNr ?? 0) == 0 { return nil }
        return LibXML2.take(xmlXPathCastToString(result))
    }

    /// The nodes `expression` selects at `node`, in document order.
    func nodes(_ expression: XPathExpression, at node: UnsafeMutablePointer<xmlNode>) -> [UnsafeMutablePointer<xmlNode>] {
        if let test = expression.descendantTest, node.pointee.type == XML_ELEMENT_NODE,
           node.pointee.doc?.pointee.type == XML_HTML_DOCUMENT_NODE {
            return descendants(of: node, passing: test)
        }
        guard let result = evaluate(expression, at: node) else { return [] }
        defer { xmlXPathFreeObject(result) }
        guard result.pointee.type == XPATH_NODESET, let set = result.pointee.nodesetval, let table = set.pointee.nodeTab else { return [] }
        return (0..<Int(set.pointee.nodeNr)).compactMap { table[$0] }
    }

    /// The string value of a simple path, as XPath's `string()` gives it: the first matching node in document order.
    /// `.some(nil)` when nothing matches; `nil` when a prefix is not declared (the XPath engine then reports it).
    private func follow(_ expression: XPathExpression, _ path: SimplePath, from node: UnsafeMutablePointer<xmlNode>) -> String?? {
        if let uris = path.unprefixedURIs { return .some(first(path, uris, from: node)) }
        let key = ObjectIdentifier(expression)
        if resolvedURIs[key] == nil {
            var uris: [[UInt8]?] = []
            for name in path.elements + (path.attribute.map { [$0] } ?? []) {
                guard let prefix = name.prefix else { uris.append(nil); continue }
                guard let uri = namespaces[prefix] else { return nil }
                uris.append(Array(uri.utf8) + [0])
            }
            resolvedURIs[key] = uris
        }
        return .some(first(path, resolvedURIs[key]!, from: node))
    }

    /// The string value of the first node `path` (its steps' namespace URIs `uris`) reaches from `element`.
    private func first(_ path: SimplePath, _ uris: [[UInt8]?], from node: UnsafeMutablePointer<xmlNode>) -> String? {
        func same(_ name: UnsafePointer<xmlChar>?, _ expected: [UInt8]?) -> Bool {
            guard let expected else { return name == nil }
            return expected.withUnsafeBufferPointer { xmlStrEqual(name, $0.baseAddress) } == 1
        }
        func first(from element: UnsafeMutablePointer<xmlNode>, step: Int) -> String? {
            if step == path.elements.count {
                guard let attribute = path.attribute else { return LibXML2.take(xmlNodeGetContent(element)) ?? "" }
                var property = element.pointee.properties
                while let current = property {
                    if same(current.pointee.name, attribute.local), same(current.pointee.ns?.pointee.href, uris[step]) {
                        return LibXML2.take(xmlNodeGetContent(UnsafeMutablePointer<xmlNode>(OpaquePointer(current)))) ?? ""
                    }
                    property = current.pointee.next
                }
                return nil
            }
            var child = element.pointee.children
            while let current = child {
                if current.pointee.type == XML_ELEMENT_NODE, same(current.pointee.name, path.elements[step].local),
                   same(current.pointee.ns?.pointee.href, uris[step]), let value = first(from: current, step: step + 1) {
                    return value
                }
                child = current.pointee.next
            }
            return nil
        }
        return first(from: node, step: 0)
    }

    /// The descendants of `node` that pass `test`, in document order (a walk of the tree in pre-order). An HTML
    /// page has no entity references or DTD nodes below its root, which are the nodes XPath's descendant axis treats
    /// apart.
    private func descendants(of node: UnsafeMutablePointer<xmlNode>, passing test: DescendantElementTest) -> [UnsafeMutablePointer<xmlNode>] {
        var found: [UnsafeMutablePointer<xmlNode>] = []
        var next = node.pointee.children
        while let current = next {
            if current.pointee.type == XML_ELEMENT_NODE, passes(current, test) { found.append(current) }
            if let child = current.pointee.children {
                next = child
                continue
            }
            var done = current
            next = nil
            while done != node {
                if let sibling = done.pointee.next {
                    next = sibling
                    break
                }
                guard let parent = done.pointee.parent else { break }
                done = parent
            }
        }
        return found
    }

    private func passes(_ element: UnsafeMutablePointer<xmlNode>, _ test: DescendantElementTest) -> Bool {
        if let name = test.name {
            guard element.pointee.ns == nil, name.withUnsafeBufferPointer({ xmlStrEqual(element.pointee.name, $0.baseAddress) }) == 1 else { return false }
        }
        if !test.classes.isEmpty {
            guard let attribute = XPathEvaluator.attribute("class", of: element),
                  XPathEvaluator.withValue(of: attribute, { value in test.classes.allSatisfy { DescendantElementTest.hasToken($0, in: value) } })
            else { return false }
        }
        for id in test.ids {
            var attribute = element.pointee.properties
            var equal = false
            while let current = attribute, !equal {
                if current.pointee.ns == nil, xmlStrEqual(current.pointee.name, "id") == 1 {
                    equal = XPathEvaluator.withValue(of: current) { $0.elementsEqual(id) }
                }
                attribute = current.pointee.next
            }
            guard equal else { return false }
        }
        return true
    }

    /// The first attribute of `element` named `name` without a namespace, as XPath's `@name` takes it.
    private static func attribute(_ name: String, of element: UnsafeMutablePointer<xmlNode>) -> UnsafeMutablePointer<xmlAttr>? {
        var attribute = element.pointee.properties
        while let current = attribute {
            if current.pointee.ns == nil, xmlStrEqual(current.pointee.name, name) == 1 { return current }
            attribute = current.pointee.next
        }
        return nil
    }

    /// `body` given the attribute's string value, read in place when it is one text node.
    private static func withValue<Result>(of attribute: UnsafeMutablePointer<xmlAttr>, _ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        if let text = attribute.pointee.children, text.pointee.next == nil, text.pointee.type == XML_TEXT_NODE {
            guard let content = text.pointee.content else { return body(UnsafeBufferPointer(start: nil, count: 0)) }
            return body(UnsafeBufferPointer(start: content, count: Int(xmlStrlen(content))))
        }
        guard let value = xmlNodeGetContent(UnsafeMutablePointer<xmlNode>(OpaquePointer(attribute))) else {
            return body(UnsafeBufferPointer(start: nil, count: 0))
        }
        defer { kiln_xml_free(value) }
        return body(UnsafeBufferPointer(start: value, count: Int(xmlStrlen(value))))
    }

    private func evaluate(_ expression: XPathExpression, at node: UnsafeMutablePointer<xmlNode>) -> UnsafeMutablePointer<xmlXPathObject>? {
        context.pointee.doc = node.pointee.doc
        context.pointee.node = node
        return xmlXPathCompiledEval(expression.compiled, context)
    }
}

/// Streams an XML file with libxml2's reader: records are found element by element and each is expanded on its
/// own, so memory stays bounded whatever the file's size. Safe by default: no network, no entity expansion, no
/// external DTD, libxml2's depth limit. Not `Sendable`: it owns a reader.
public final class XMLStreamReader {
    private let reader: OpaquePointer
    private let source: ByteStream
    private let namespaces: [String: String]
    private var evaluator: XPathEvaluator?
    private let issueBox = XMLIssueCollector()
    private var stopped = false
    private var skipPending = false
    private var lastExpanded: UnsafeMutablePointer<xmlNode>?
    private var salvaged: [UnsafeMutablePointer<xmlNode>]?
    private var pendingEnd: Event?

    /// The problems found so far, in order.
    public var issues: [XMLIssue] { XMLIssue.withCut(issueBox.issues, guarded.overfull) }
    /// The bytes as libxml2 gets them: cut before an element with too many attributes.
    private let guarded: AttributeGuardedStream


    /// Reads the document `source` gives (the bytes of the file at `path`, decompressed when it is compressed:
    /// libxml2 is fed those bytes and never opens the file, so it inflates nothing on its own); `encoding` overrides
    /// the document's declaration when given.
    /// - Throws: `LibraryFailure` when libxml2 cannot start.
    init(source: ByteStream, path: String, encoding: String? = nil, namespaces: [String: String] = [:]) throws {
        _ = LibXML2.setUp
        let guarded = AttributeGuardedStream(source)
        self.guarded = guarded
        let feed = Unmanaged.passRetained(XMLFeed(guarded)).toOpaque()
        // libxml2 calls the close callback (which releases the feed) also when it cannot make the reader.
        guard let reader = xmlReaderForIO({ context, buffer, length in
            guard let context, let buffer else { return -1 }
            return Unmanaged<XMLFeed>.fromOpaque(context).takeUnretainedValue().read(into: buffer, length: Int(length))
        }, { context in
            if let context { Unmanaged<XMLFeed>.fromOpaque(context).release() }
            return 0
        }, feed, path, encoding, LibXML2.xmlOptions) else {
            throw LibraryFailure("libxml2 could not start reading \(path)")
        }
        self.reader = reader
        self.source = source
        self.namespaces = namespaces
        xmlTextReaderSetStructuredErrorHandler(reader, { context, error in
            guard let context, let error else { return }
            Unmanaged<XMLIssueCollector>.fromOpaque(context).takeUnretainedValue().record(error.pointee)
        }, Unmanaged.passUnretained(issueBox).toOpaque())
    }

    deinit {
        // Once asked for its document (XPath evaluation needs it), the reader leaves freeing it to its caller.
        let document = xmlTextReaderCurrentDoc(reader)
        xmlFreeTextReader(reader)
        if let document { xmlFreeDoc(document) }
    }

    /// One step of the stream: an element starting or ending.
    public enum Event: Equatable, Sendable {
        case start(localName: String, namespace: String?, depth: Int)
        case end(localName: String, namespace: String?, depth: Int)
    }

    /// The next element start or end, or `nil` at the end of the document or when reading stopped on an error.
    /// After `expand()`, the expanded element's subtree is skipped.
    public func next() -> Event? {
        if let end = pendingEnd {
            pendingEnd = nil
            return end
        }
        while !stopped {
            let result = skipPending ? xmlTextReaderNext(reader) : xmlTextReaderRead(reader)
            skipPending = false
            guard result == 1 else {
                stopped = true
                return nil
            }
            let type = xmlTextReaderNodeType(reader)
            let name = LibXML2.string(xmlTextReaderConstLocalName(reader)) ?? ""
            let namespace = LibXML2.string(xmlTextReaderConstNamespaceUri(reader))
            let depth = Int(xmlTextReaderDepth(reader))
            switch type {
            case Int32(XML_READER_TYPE_DOCUMENT_TYPE.rawValue):
                checkDocumentType()
            case Int32(XML_READER_TYPE_ELEMENT.rawValue):
                if xmlTextReaderIsEmptyElement(reader) == 1 { pendingEnd = .end(localName: name, namespace: namespace, depth: depth) }
                return .start(localName: name, namespace: namespace, depth: depth)
            case Int32(XML_READER_TYPE_END_ELEMENT.rawValue):
                return .end(localName: name, namespace: namespace, depth: depth)
            default:
                continue
            }
        }
        return nil
    }

    /// The next start of an element named `localName` (in `namespace`, or in any namespace when `nil`), expanded.
    /// After an error, the complete elements parsed before it are still returned.
    public func nextElement(localName: String, namespace: String?) -> XMLElementCursor? {
        while let event = next() {
            if case .start(localName, let found, _) = event, namespace == nil || found == namespace { return expand() }
        }
        if salvaged == nil {
            let malformed = issueBox.issues.contains { $0.kind == .malformed || $0.kind == .undefinedEntity }
            let refused = issueBox.issues.contains { $0.kind == .entityDeclarations }
            salvaged = malformed && !refused ? salvage(localName: localName, namespace: namespace) : []
        }
        guard let node = salvaged?.first, let evaluator = makeEvaluator() else { return nil }
        salvaged?.removeFirst()
        return XMLElementCursor(node: node, evaluator: evaluator)
    }

    /// The value of the attribute `localName` (in `namespace` when given) of the element that just started, without
    /// expanding it; `nil` when the element has no such attribute.
    public func attribute(_ localName: String, namespace: String? = nil) -> String? {
        if let namespace { return LibXML2.take(xmlTextReaderGetAttributeNs(reader, localName, namespace)) }
        return LibXML2.take(xmlTextReaderGetAttribute(reader, localName))
    }

    /// After the stream stopped on a malformed document: the complete elements named `localName` that libxml2 had
    /// parsed but the reader never handed over (see `nextElement`); empty when the document was well formed.
    public func salvagedElements(localName: String, namespace: String?) -> [XMLElementCursor] {
        let malformed = issueBox.issues.contains { $0.kind == .malformed || $0.kind == .undefinedEntity }
        let refused = issueBox.issues.contains { $0.kind == .entityDeclarations }
        guard malformed, !refused, let evaluator = makeEvaluator() else { return [] }
        return salvage(localName: localName, namespace: namespace).map { XMLElementCursor(node: $0, evaluator: evaluator) }
    }

    /// The element that just started, expanded so that XPath can be evaluated on its subtree.
    /// Its subtree and its end are then skipped: the next event is what follows the element.
    public func expand() -> XMLElementCursor? {
        guard let node = xmlTextReaderExpand(reader), let evaluator = makeEvaluator() else {
            stopped = true
            return nil
        }
        lastExpanded = node
        skipPending = true
        pendingEnd = nil
        return XMLElementCursor(node: node, evaluator: evaluator)
    }

    /// The text content of the element that just started (its subtree is then skipped).
    public func text() -> String {
        guard let cursor = expand() else { return "" }
        return cursor.text
    }

    /// The complete elements named `localName` that libxml2 parsed before an error but the reader never handed
    /// over: libxml2 parses 512-byte chunks ahead, and its reader gives up on the whole chunk that holds an error.
    /// The tree built so far still holds them. Elements on its rightmost path were still open when parsing stopped
    /// and are left out; so is everything up to the last element already returned.
    private func salvage(localName: String, namespace: String?) -> [UnsafeMutablePointer<xmlNode>] {
        guard let document = xmlTextReaderCurrentDoc(reader), let root = xmlDocGetRootElement(document) else { return [] }
        var open: Set<UnsafeMutablePointer<xmlNode>> = []
        var spine: UnsafeMutablePointer<xmlNode>? = root
        while let node = spine {
            open.insert(node)
            spine = node.pointee.last
        }
        var found: [UnsafeMutablePointer<xmlNode>] = []
        var passedLast = lastExpanded == nil
        func walk(_ node: UnsafeMutablePointer<xmlNode>) {
            var child: UnsafeMutablePointer<xmlNode>? = node
            while let current = child {
                if current == lastExpanded {
                    passedLast = true
                } else if current.pointee.type == XML_ELEMENT_NODE {
                    let matches = LibXML2.string(current.pointee.name) == localName
                        && (namespace == nil || LibXML2.string(current.pointee.ns?.pointee.href) == namespace)
                    if matches, passedLast, !open.contains(current) {
                        found.append(current)
                    } else if let first = current.pointee.children {
                        walk(first)
                    }
                }
                child = current.pointee.next
            }
        }
        walk(root)
        // Records already returned were freed by the reader, so when the last one is gone, all that is left comes after it.
        if !passedLast { passedLast = true; found = []; walk(root) }
        return found
    }

    private func makeEvaluator() -> XPathEvaluator? {
        if let evaluator { return evaluator }
        guard let document = xmlTextReaderCurrentDoc(reader) else { return nil }
        evaluator = XPathEvaluator(document: document, namespaces: namespaces)
        return evaluator
    }

    /// Refuses entity declarations (they are how billion-laughs bombs and external entities work) and notes an
    /// external DTD, which libxml2 does not load with these options.
    private func checkDocumentType() {
        let line = DocumentTypeLocator.line(in: source.leadingBytes(DocumentTypeLocator.searchedLength))
        guard let document = xmlTextReaderCurrentDoc(reader) else { return }
        if let subset = document.pointee.intSubset, subset.pointee.entities != nil || subset.pointee.pentities != nil {
            if !issueBox.issues.contains(where: { $0.kind == .entityDeclarations }) {
                issueBox.issues.append(XMLIssue(kind: .entityDeclarations,
                                                message: "the document declares entities; Kiln does not expand entities (they can read local files or explode in size)",
                                                line: line, column: nil))
            }
            stopped = true
            return
        }
        let subset = document.pointee.intSubset
        if let system = LibXML2.string(subset?.pointee.SystemID), !system.isEmpty {
            issueBox.issues.append(XMLIssue(kind: .externalDTD, message: "external DTD \"\(system)\" is not loaded",
                                            line: line, column: nil))
        }
    }
}

/// What libxml2's reader pulls a document's bytes from (`xmlReaderForIO`): a `ByteStream`, and the error that
/// stopped it, if any (libxml2 then reports an I/O error of its own).
private final class XMLFeed {
    let source: ByteStream
    private var chunk: [UInt8] = []

    init(_ source: ByteStream) { self.source = source }

    /// Copies up to `length` next bytes into `buffer`; their count, 0 at the end, -1 when reading failed.
    func read(into buffer: UnsafeMutablePointer<CChar>, length: Int) -> Int32 {
        chunk.removeAll(keepingCapacity: true)
        guard let count = try? source.read(into: &chunk, upTo: length) else { return -1 }
        chunk.withUnsafeBytes { bytes in
            if let base = bytes.baseAddress { UnsafeMutableRawPointer(buffer).copyMemory(from: base, byteCount: count) }
        }
        return Int32(count)
    }
}

/// Collects libxml2's structured errors while an XML document is read (the first error, and warnings); a class so
/// that the C callback can reach it through a pointer.
final class XMLIssueCollector {
    var issues: [XMLIssue] = []

    func record(_ error: xmlError) {
        let message = LibXML2.userMessage(error.message.map { String(cString: $0).trimmingCharacters(in: .whitespacesAndNewlines) } ?? "error \(error.code)")
        let line = error.line > 0 ? Int(error.line) : nil
        let kind: XMLIssue.Kind
        if error.level == XML_ERR_WARNING {
            kind = .warning
        } else if error.code == Int32(XML_ERR_ENTITY_LOOP.rawValue) {
            kind = .entityDeclarations
        } else if message.lowercased().contains("entity") {
            kind = .undefinedEntity
        } else {
            kind = .malformed
        }
        add(XMLIssue(kind: kind, message: message, line: line, column: error.int2 > 0 ? Int(error.int2) : nil))
    }

    /// Keeps `issue` unless it is a second error: reading stops at the first, and what libxml2 says after it follows
    /// from it.
    func add(_ issue: XMLIssue) {
        if issue.kind != .warning, issues.contains(where: { $0.kind != .warning }) { return }
        issues.append(issue)
    }
}

/// One expanded element of an `XMLStreamReader`; valid until the reader moves on.
/// Not `Sendable`: it points into the reader's document.
public final class XMLElementCursor {
    private let node: UnsafeMutablePointer<xmlNode>
    private let evaluator: XPathEvaluator

    fileprivate init(node: UnsafeMutablePointer<xmlNode>, evaluator: XPathEvaluator) {
        self.node = node
        self.evaluator = evaluator
    }

    /// The element's text content.
    public var text: String { LibXML2.take(xmlNodeGetContent(node)) ?? "" }

    /// The line the element starts on.
    public var line: Int { Int(xmlGetLineNo(node)) }

    /// The string value of `expression` evaluated on this element; `nil` when it selects nothing.
    public func string(_ expression: XPathExpression) -> String? { evaluator.string(expression, at: node) }

    /// The string value of each node `expression` selects on this element, in document order.
    public func strings(_ expression: XPathExpression) -> [String] {
        evaluator.nodes(expression, at: node).map { LibXML2.take(xmlNodeGetContent($0)) ?? "" }
    }

    /// The number `expression` gives on this element (`count(…)`), or 0 when it is not a number.
    public func number(_ expression: XPathExpression) -> Int { Int(evaluator.string(expression, at: node) ?? "") ?? 0 }

    /// The element's local name (`Track` for `gx:Track`).
    public var localName: String { LibXML2.string(node.pointee.name) ?? "" }

    /// The element's name as the file writes it, with its namespace prefix (`gx:Track`).
    public var qualifiedName: String {
        guard let prefix = node.pointee.ns.flatMap({ LibXML2.string($0.pointee.prefix) }) else { return localName }
        return prefix + ":" + localName
    }

    /// The elements `expression` selects on this element, in document order (other nodes it selects are left out).
    public func elements(_ expression: XPathExpression) -> [XMLElementCursor] {
        evaluator.nodes(expression, at: node).filter { $0.pointee.type == XML_ELEMENT_NODE }
            .map { XMLElementCursor(node: $0, evaluator: evaluator) }
    }
}

/// A parsed HTML page (libxml2's tolerant HTML parser: unclosed tags, entities, `<meta>` charset).
/// Not `Sendable`: it owns the document.
public final class HTMLDocument {
    private let document: UnsafeMutablePointer<xmlDoc>
    private lazy var evaluator = shared?.evaluator ?? XPathEvaluator(document: document, namespaces: [:])
    private let shared: HTMLPages?


    /// Parses an HTML fragment (such as a KML description) given as text.
    /// - Throws: `HTMLParseError` when libxml2 makes nothing of it.
    public convenience init(fragment: String) throws {
        try self.init(bytes: Array(fragment.utf8), encoding: "UTF-8", name: "fragment")
    }

    /// True when the page holds no element at all (only a byte-order mark, white space or comments).
    public var isEmpty: Bool { xmlDocGetRootElement(document) == nil }

    /// Where libxml2 stopped before the end of the page, or went on reading it garbled; empty when it read the whole
    /// page as it is.
    let problems: [HTMLParser.Problem]

    /// Parses a page whose bytes the caller read; `name` is for the error. Pages parsed with the same `pages`
    /// share what does not depend on the page.
    /// - Throws: `HTMLParseError` when libxml2 makes nothing of the bytes.
    public init(bytes: [UInt8], encoding: String?, name: String, pages: HTMLPages? = nil) throws {
        let (parsed, problems) = HTMLParser.parse(bytes, encoding: encoding)
        shared = pages
        guard let parsed else { throw HTMLParseError(name: name) }
        document = parsed
        self.problems = problems
    }

    deinit { xmlFreeDoc(document) }

    /// The root element as a Swift tree, or an empty element for an empty page.
    public var root: MarkupNode {
        guard let element = xmlDocGetRootElement(document) else { return .element(name: "", attributes: [:], line: 0, children: []) }
        return HTMLDocument.tree(element)
    }

    /// The elements `expression` selects (from the document root), as Swift trees.
    public func select(_ expression: XPathExpression) -> [MarkupNode] {
        nodes(expression).map { HTMLDocument.tree($0.node) }
    }

    /// The nodes `expression` selects (from the document root), in document order, as they are in libxml2's tree.
    public func nodes(_ expression: XPathExpression) -> [HTMLNode] {
        guard let evaluator, let root = xmlDocGetRootElement(document) else { return [] }
        return evaluator.nodes(expression, at: root).map { HTMLNode(node: $0, document: self) }
    }

    /// The root element, or `nil` for an empty page.
    public var rootNode: HTMLNode? {
        xmlDocGetRootElement(document).map { HTMLNode(node: $0, document: self) }
    }

    /// For each node `records` selects, in document order: its line, its 1-based position among the selected
    /// nodes with the same parent, and the string value of each of `fields` evaluated on it (`nil` where a field
    /// selects nothing).
    public func records(_ records: XPathExpression, fields: [XPathExpression]) -> [(line: Int, position: Int, values: [String?])] {
        guard let evaluator, let root = xmlDocGetRootElement(document) else { return [] }
        var countByParent: [UnsafeMutablePointer<xmlNode>?: Int] = [:]
        return evaluator.nodes(records, at: root).map { node in
            let position = (countByParent[node.pointee.parent] ?? 0) + 1
            countByParent[node.pointee.parent] = position
            return (Int(xmlGetLineNo(node)), position, fields.map { evaluator.string($0, at: node) })
        }
    }

    /// The string value of `expression` evaluated on the document root; `nil` when it selects nothing.
    public func string(_ expression: XPathExpression) -> String? {
        guard let evaluator, let root = xmlDocGetRootElement(document) else { return nil }
        return evaluator.string(expression, at: root)
    }

    /// Copies a libxml2 subtree into Swift values; comments and processing instructions are left out.
    fileprivate static func tree(_ node: UnsafeMutablePointer<xmlNode>) -> MarkupNode {
        switch node.pointee.type {
        case XML_TEXT_NODE, XML_CDATA_SECTION_NODE:
            let text = LibXML2.string(node.pointee.content) ?? ""
            return .text(text, line: LibXML2TextNode.located(Array(text.utf8), nodeLine: Int(xmlGetLineNo(node))).1)
        default:
            var attributes: [String: String] = [:]
            var attribute = node.pointee.properties
            while let current = attribute {
                if let name = LibXML2.string(current.pointee.name) {
                    attributes[name] = LibXML2.take(xmlNodeGetContent(UnsafeMutablePointer<xmlNode>(OpaquePointer(current)))) ?? ""
                }
                attribute = current.pointee.next
            }
            var children: [MarkupNode] = []
            var child = node.pointee.children
            while let current = child {
                if [XML_ELEMENT_NODE, XML_TEXT_NODE, XML_CDATA_SECTION_NODE].contains(current.pointee.type) {
                    children.append(tree(current))
                }
                child = current.pointee.next
            }
            return .element(name: (LibXML2.string(node.pointee.name) ?? "").lowercased(), attributes: attributes,
                            line: Int(xmlGetLineNo(node)), children: children)
        }
    }
}

/// What the pages of one source share: one XPath context (libxml2 registers every XPath function in a new one, which
/// costs as much as selecting a small page's records). Not `Sendable`: it owns the context.
public final class HTMLPages {
    fileprivate let evaluator = XPathEvaluator(document: nil, namespaces: [:])

    public init() {}
}

/// Receives a subtree of an HTML page from `HTMLNode.walk`, node by node in document order.
public protocol MarkupVisitor {
    /// An element starts (its name in lower case); returning false skips its content and its end.
    mutating func startElement(_ name: String) -> Bool
    /// The innermost element started, and not skipped, ends.
    mutating func endElement(_ name: String)
    /// A text node: its UTF-8 bytes (valid UTF-8) and the line its first visible character is on.
    mutating func text(_ bytes: [UInt8], line: Int)
}

/// One node of a parsed page, in libxml2's tree; it keeps its document alive.
/// Not `Sendable`: it points into the document.
public struct HTMLNode {
    fileprivate let node: UnsafeMutablePointer<xmlNode>
    private let document: HTMLDocument

    fileprivate init(node: UnsafeMutablePointer<xmlNode>, document: HTMLDocument) {
        self.node = node
        self.document = document
    }

    /// The node as a Swift tree (what `HTMLDocument.select` gives).
    public var tree: MarkupNode { HTMLDocument.tree(node) }

    /// Reports this node and everything under it to `visitor`, in document order, straight from libxml2's tree: the
    /// elements, the text and CDATA nodes; not comments, processing instructions or attributes. It gives what a walk
    /// over `tree` would, without making it.
    public func walk<Visitor: MarkupVisitor>(_ visitor: inout Visitor) {
        var bytes: [UInt8] = []
        func isText(_ node: UnsafeMutablePointer<xmlNode>) -> Bool {
            node.pointee.type == XML_TEXT_NODE || node.pointee.type == XML_CDATA_SECTION_NODE
        }
        func reportText(_ node: UnsafeMutablePointer<xmlNode>) {
            bytes.removeAll(keepingCapacity: true)
            if let content = node.pointee.content {
                bytes.append(contentsOf: UnsafeBufferPointer(start: content, count: Int(xmlStrlen(content))))
            }
            let (text, line) = LibXML2TextNode.located(bytes, nodeLine: Int(xmlGetLineNo(node)))
            visitor.text(text, line: line)
        }
        /// The node itself or the first of its following siblings that the walk reports.
        func reported(from node: UnsafeMutablePointer<xmlNode>?) -> UnsafeMutablePointer<xmlNode>? {
            var candidate = node
            while let current = candidate {
                if current.pointee.type == XML_ELEMENT_NODE || isText(current) { return current }
                candidate = current.pointee.next
            }
            return nil
        }
        if isText(node) { return reportText(node) }
        // A namespace node only looks like a node: it has no name or children to read.
        guard node.pointee.type != XML_NAMESPACE_DECL else { return }
        var names = [HTMLNode.name(of: node)]
        guard visitor.startElement(names[0]) else { return }
        var open = node
        var next = reported(from: node.pointee.children)
        while true {
            if let current = next {
                if isText(current) {
                    reportText(current)
                } else {
                    let name = HTMLNode.name(of: current)
                    if visitor.startElement(name) {
                        if let first = reported(from: current.pointee.children) {
                            names.append(name)
                            open = current
                            next = first
                            continue
                        }
                        visitor.endElement(name)
                    }
                }
                next = reported(from: current.pointee.next)
            } else {
                visitor.endElement(names.removeLast())
                guard open != node, let parent = open.pointee.parent else { return }
                next = reported(from: open.pointee.next)
                open = parent
            }
        }
    }

    /// An element's name as `tree` gives it: lower case.
    private static func name(of node: UnsafeMutablePointer<xmlNode>) -> String {
        let name = LibXML2.string(node.pointee.name) ?? ""
        return name.utf8.contains(where: { $0 >= 0x41 && $0 <= 0x5A || $0 >= 0x80 }) ? name.lowercased() : name
    }
}

/// A page libxml2's HTML parser could make nothing of (an empty file, for one).
public struct HTMLParseError: Error, CustomStringConvertible, Sendable {
    public let name: String
    public var description: String { "\(name) holds no HTML that can be parsed (is it empty?)" }

    /// The page called `name` could not be parsed.
    public init(name: String) { self.name = name }
}

/// Finds the line of a document's `<!DOCTYPE`: libxml2's reader knows only how far it has read ahead.
enum DocumentTypeLocator {
    /// How much of a document's start is searched: 1 MiB.
    static let searchedLength = 1 << 20

    /// The 1-based line of `<!DOCTYPE` within `prefix`, the first `searchedLength` bytes of a document, or `nil`.
    static func line(in prefix: [UInt8]) -> Int? {
        let marker = Array("<!DOCTYPE".utf8)
        guard prefix.count >= marker.count else { return nil }
        for index in 0...(prefix.count - marker.count) where prefix[index] == marker[0] && Array(prefix[index..<index + marker.count]) == marker {
            return prefix[..<index].reduce(1) { $1 == 0x0A ? $0 + 1 : $0 }
        }
        return nil
    }
}

/// An HTML element or text as Swift values, with the line it starts on.
public indirect enum MarkupNode: Sendable, Equatable {
    case element(name: String, attributes: [String: String], line: Int, children: [MarkupNode])
    case text(String, line: Int)
}

extension XMLIssue {
    /// `issues` with the cut of an element with too many attributes (`MarkupAttributeScan`) as their error: what
    /// libxml2 says of the document it was given, which ends before that element, follows from the cut.
    static func withCut(_ issues: [XMLIssue], _ cut: MarkupAttributeScan.Overfull?) -> [XMLIssue] {
        guard let cut else { return issues }
        let message = "an element has more than \(MarkupAttributeScan.maximumAttributes) attributes (libxml2's check of them is quadratic)"
        return issues.filter { $0.kind == .warning && ($0.line ?? 0) <= cut.line }
            + [XMLIssue(kind: .malformed, message: message, line: cut.line, column: nil)]
    }
}
