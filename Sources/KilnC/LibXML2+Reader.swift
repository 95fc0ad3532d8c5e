internal import CLibXML2
import Foundation

/// Streams an XML file with libxml2's reader: records are found element by element and each is expanded on its
/// own, so memory stays bounded whatever the file's size. Safe by default: no network, no entity expansion, no
/// external DTD, libxml2's depth limit. Not `Sendable`: it owns a reader.
package final class XMLStreamReader {
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
    package var issues: [XMLIssue] { XMLIssue.withCut(issueBox.issues, guarded.overfull) }
    /// The bytes as libxml2 gets them: cut before an element with too many attributes.
    private let guarded: AttributeGuardedStream


    /// Reads the document `source` gives (the bytes of the file at `path`, decompressed when it is compressed:
    /// libxml2 is fed those bytes and never opens the file, so it inflates nothing on its own); `encoding` overrides
    /// the document's declaration when given.
    /// - Throws: `LibraryFailure` when libxml2 cannot start.
    package init(source: ByteStream, path: String, encoding: String? = nil, namespaces: [String: String] = [:]) throws {
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
    package enum Event: Equatable, Sendable {
        case start(localName: String, namespace: String?, depth: Int)
        case end(localName: String, namespace: String?, depth: Int)
    }

    /// The next element start or end, or `nil` at the end of the document or when reading stopped on an error.
    /// After `expand()`, the expanded element's subtree is skipped.
    package func next() -> Event? {
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
    package func nextElement(localName: String, namespace: String?) -> XMLElementCursor? {
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

    /// The line of the element that just started, as the tree gives it (0 when there is none).
    package var elementLine: Int { xmlTextReaderCurrentNode(reader).map { Int(xmlGetLineNo($0)) } ?? 0 }

    /// The value of the attribute `localName` (in `namespace` when given) of the element that just started, without
    /// expanding it; `nil` when the element has no such attribute.
    package func attribute(_ localName: String, namespace: String? = nil) -> String? {
        if let namespace { return LibXML2.take(xmlTextReaderGetAttributeNs(reader, localName, namespace)) }
        return LibXML2.take(xmlTextReaderGetAttribute(reader, localName))
    }

    /// After the stream stopped on a malformed document: the complete elements named `localName` that libxml2 had
    /// parsed but the reader never handed over (see `nextElement`); empty when the document was well formed.
    package func salvagedElements(localName: String, namespace: String?) -> [XMLElementCursor] {
        let malformed = issueBox.issues.contains { $0.kind == .malformed || $0.kind == .undefinedEntity }
        let refused = issueBox.issues.contains { $0.kind == .entityDeclarations }
        guard malformed, !refused, let evaluator = makeEvaluator() else { return [] }
        return salvage(localName: localName, namespace: namespace).map { XMLElementCursor(node: $0, evaluator: evaluator) }
    }

    /// The element that just started, expanded so that XPath can be evaluated on its subtree.
    /// Its subtree and its end are then skipped: the next event is what follows the element.
    package func expand() -> XMLElementCursor? {
        guard let node = xmlTextReaderExpand(reader), let evaluator = makeEvaluator() else {
            stopped = true
            return nil
        }
        lastExpanded = node
        skipPending = true
        pendingEnd = nil
        return XMLElementCursor(node: node, evaluator: evaluator)
    }

    /// The text content of the element that just started, which is not skipped: its children and its end are the
    /// next events (for a value taken from an element that may hold records).
    package func textKeepingElement() -> String {
        guard let node = xmlTextReaderExpand(reader) else {
            stopped = true
            return ""
        }
        return LibXML2.take(xmlNodeGetContent(node)) ?? ""
    }

    /// The text content of the element that just started (its subtree is then skipped).
    package func text() -> String {
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

    /// Refuses entity declarations (they are how billion-laughs bombs and external entities work) and the DOCTYPE
    /// syntax libxml2 lets through (`DocumentTypeLocator.problem`), and notes an external DTD, which libxml2 does not
    /// load with these options.
    private func checkDocumentType() {
        let leading = source.leadingBytes(DocumentTypeLocator.searchedLength)
        if let problem = DocumentTypeLocator.problem(in: leading) {
            issueBox.add(XMLIssue(kind: .malformed, message: problem.message, line: problem.line, column: nil))
            stopped = true
            return
        }
        let line = DocumentTypeLocator.line(in: leading)
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
package final class XMLFeed {
    package let source: ByteStream
    private var chunk: [UInt8] = []

    package init(_ source: ByteStream) { self.source = source }

    /// Copies up to `length` next bytes into `buffer`; their count, 0 at the end, -1 when reading failed.
    package func read(into buffer: UnsafeMutablePointer<CChar>, length: Int) -> Int32 {
        chunk.removeAll(keepingCapacity: true)
        guard let count = try? source.read(into: &chunk, upTo: length) else { return -1 }
        chunk.withUnsafeBytes { bytes in
            if let base = bytes.baseAddress { UnsafeMutableRawPointer(buffer).copyMemory(from: base, byteCount: count) }
        }
        return Int32(count)
    }
}

/// One expanded element of an `XMLStreamReader`; valid until the reader moves on.
/// Not `Sendable`: it points into the reader's document.
package final class XMLElementCursor {
    private let node: UnsafeMutablePointer<xmlNode>
    private let evaluator: XPathEvaluator

    init(node: UnsafeMutablePointer<xmlNode>, evaluator: XPathEvaluator) {
        self.node = node
        self.evaluator = evaluator
    }

    /// The element's text content.
    package var text: String { LibXML2.take(xmlNodeGetContent(node)) ?? "" }

    /// The line the element starts on.
    package var line: Int { Int(xmlGetLineNo(node)) }

    /// The string value of `expression` evaluated on this element; `nil` when it selects nothing.
    package func string(_ expression: XPathExpression) -> String? { evaluator.string(expression, at: node) }

    /// The string value of each node `expression` selects on this element, in document order.
    package func strings(_ expression: XPathExpression) -> [String] {
        evaluator.nodes(expression, at: node).map { LibXML2.take(xmlNodeGetContent($0)) ?? "" }
    }

    /// The markup inside the first node `expression` selects, as libxml2 writes it, when that node holds elements
    /// (HTML given as child elements rather than as text or CDATA); nil when it holds none, or nothing is selected.
    package func innerMarkup(_ expression: XPathExpression) -> String? {
        guard let target = evaluator.nodes(expression, at: node).first else { return nil }
        var child = target.pointee.children
        var holdsElements = false
        while let current = child, !holdsElements {
            holdsElements = current.pointee.type == XML_ELEMENT_NODE
            child = current.pointee.next
        }
        guard holdsElements, let buffer = xmlBufferCreate() else { return nil }
        defer { xmlBufferFree(buffer) }
        child = target.pointee.children
        while let current = child {
            xmlNodeDump(buffer, target.pointee.doc, current, 0, 0)
            child = current.pointee.next
        }
        return LibXML2.string(xmlBufferContent(buffer)) ?? ""
    }

    /// The number `expression` gives on this element (`count(…)`), or 0 when it is not a number.
    package func number(_ expression: XPathExpression) -> Int { Int(evaluator.string(expression, at: node) ?? "") ?? 0 }

    /// Replays the elements inside this one in document order, as an `XMLEventParser` reports them (`start` with
    /// a tag that has no attributes, `end`), without their text.
    package func replayElements(start: (XMLStartTag) -> Void, end: () -> Void) {
        func walk(_ parent: UnsafeMutablePointer<xmlNode>) {
            var child = parent.pointee.children
            while let node = child {
                if node.pointee.type == XML_ELEMENT_NODE {
                    start(XMLStartTag(treeElement: node))
                    walk(node)
                    end()
                }
                child = node.pointee.next
            }
        }
        walk(node)
    }

    /// The element's local name (`Track` for `gx:Track`).
    package var localName: String { LibXML2.string(node.pointee.name) ?? "" }

    /// The element's name as the file writes it, with its namespace prefix (`gx:Track`).
    package var qualifiedName: String {
        guard let prefix = node.pointee.ns.flatMap({ LibXML2.string($0.pointee.prefix) }) else { return localName }
        return prefix + ":" + localName
    }

    /// The elements `expression` selects on this element, in document order (other nodes it selects are left out).
    package func elements(_ expression: XPathExpression) -> [XMLElementCursor] {
        evaluator.nodes(expression, at: node).filter { $0.pointee.type == XML_ELEMENT_NODE }
            .map { XMLElementCursor(node: $0, evaluator: evaluator) }
    }
}
