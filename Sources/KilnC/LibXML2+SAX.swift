internal import CLibXML2
import Foundation

/// Receives the events of an `XMLEventParser`, in document order. The tags and texts it is given are valid only
/// during the call.
package protocol XMLEventHandler: AnyObject {
    /// An element starts; returning false stops the parse.
    func start(_ tag: XMLStartTag) -> Bool
    /// The innermost open element ends; returning false stops the parse.
    func end() -> Bool
    /// Character data (text, CDATA, character and predefined entity references, already decoded to UTF-8).
    func text(_ text: XMLText)
}

/// An element's start tag as libxml2's SAX2 parser reports it; valid only during `XMLEventHandler.start`.
package struct XMLStartTag {
    fileprivate let localNamePointer: UnsafePointer<xmlChar>
    fileprivate let uriPointer: UnsafePointer<xmlChar>?
    /// Five pointers per attribute: local name, prefix, URI, value start, value end.
    fileprivate let attributes: UnsafeMutablePointer<UnsafePointer<xmlChar>?>?
    fileprivate let attributeCount: Int
    /// The element's line, as libxml2 gives it to the element in a tree.
    package let line: Int

    /// True when the local name is `name` (UTF-8, NUL-terminated).
    package func hasLocalName(_ name: [UInt8]) -> Bool {
        name.withUnsafeBufferPointer { xmlStrEqual(localNamePointer, $0.baseAddress) == 1 }
    }

    /// True when the namespace URI is `uri` (UTF-8, NUL-terminated), or when the element has none and `uri` is nil.
    package func hasNamespace(_ uri: [UInt8]?) -> Bool {
        guard let uri else { return uriPointer == nil }
        return uri.withUnsafeBufferPointer { xmlStrEqual(uriPointer, $0.baseAddress) == 1 }
    }

    package var localName: String { String(cString: localNamePointer) }
    package var namespace: String? { uriPointer.map { String(cString: $0) } }

    /// The value of the attribute `name` (UTF-8, NUL-terminated) in namespace `uri` (none when nil), as a tree
    /// would hold it; nil when the element has no such attribute.
    package func attribute(_ name: [UInt8], namespace uri: [UInt8]?) -> String? {
        guard let attributes else { return nil }
        return name.withUnsafeBufferPointer { name -> String? in
            for index in 0..<attributeCount {
                let base = attributes + 5 * index
                guard xmlStrEqual(base[0], name.baseAddress) == 1 else { continue }
                if let uri {
                    guard uri.withUnsafeBufferPointer({ xmlStrEqual(base[2], $0.baseAddress) }) == 1 else { continue }
                } else if base[2] != nil {
                    continue
                }
                guard let start = base[3], let end = base[4] else { return "" }
                return Self.value(UnsafeBufferPointer(start: start, count: end - start), copied: end.pointee == 0)
            }
            return nil
        }
    }

    /// The element's attributes' local names and namespace URIs, in the order written (`kiln init` sketches fields
    /// from them).
    package var attributeNames: [(localName: String, namespace: String?)] {
        guard let attributes else { return [] }
        return (0..<attributeCount).compactMap { index in
            let base = attributes + 5 * index
            guard let name = base[0] else { return nil }
            return (String(cString: name), base[2].map { String(cString: $0) })
        }
    }

    /// The value of the attribute `name` in namespace `uri` (none when nil).
    package func attribute(_ name: String, namespace uri: String?) -> String? {
        attribute(Array(name.utf8) + [0], namespace: uri.map { Array($0.utf8) + [0] })
    }

    /// An attribute value as the tree holds it. Without entity substitution, libxml2 hands a value that held a
    /// reference over in a copy (NUL-terminated, unlike a value still in the input) where each `&` stands as
    /// `&#38;`, for the tree builder to decode again.
    private static func value(_ bytes: UnsafeBufferPointer<UInt8>, copied: Bool) -> String {
        guard copied, bytes.contains(UInt8(ascii: "&")) else { return String(decoding: bytes, as: UTF8.self) }
        let escaped = Array("&#38;".utf8)
        var decoded: [UInt8] = []
        decoded.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "&"), index + escaped.count <= bytes.count,
               bytes[index..<index + escaped.count].elementsEqual(escaped) {
                decoded.append(UInt8(ascii: "&"))
                index += escaped.count
            } else {
                decoded.append(bytes[index])
                index += 1
            }
        }
        return String(decoding: decoded, as: UTF8.self)
    }
}

/// Character data handed to `XMLEventHandler.text`; valid only during the call.
package struct XMLText {
    fileprivate let bytes: UnsafePointer<xmlChar>
    fileprivate let count: Int

    /// Appends the text's UTF-8 bytes to `buffer`.
    package func append(to buffer: inout [UInt8]) {
        buffer.append(contentsOf: UnsafeBufferPointer(start: bytes, count: count))
    }
}

/// Streams an XML file through libxml2's SAX2 push parser: elements and text reach a handler as they are parsed and
/// no tree is built, so the cost is the parse alone. Same options, limits and errors as `XMLStreamReader` (which the
/// tree-building parser gives it): no network, no entity expansion, no external DTD, elements at most 256 deep, text
/// nodes at most 10 MB. A document type declaration stops the parse before any element (`Outcome.documentType`):
/// the checks of its declarations need the tree reader.
package final class XMLEventParser {
    /// How a parse ended.
    package enum Outcome: Equatable {
        /// The document was read to its end, or to the error that stopped it, or until the handler said stop.
        case read
        /// The document declares a document type; nothing was handed to the handler.
        case documentType
    }

    /// The problems found, in order (as `XMLStreamReader.issues`).
    package var issues: [XMLIssue] { XMLIssue.withCut(state.collector.issues, source.overfull) }

    /// The bytes as libxml2 gets them: cut before an element with too many attributes.
    private let source: AttributeGuardedStream
    private let path: String
    private let encoding: String?
    private let state: ParseState

    /// Bytes handed to libxml2 at a time.
    package static let chunkSize = 1 << 16

    /// Prepares to read the document `source` gives (the bytes of the file at `path`, decompressed when it is
    /// compressed: libxml2 is never given the file itself); `encoding` overrides the document's declaration when given.
    package init(source: ByteStream, path: String, encoding: String?, handler: XMLEventHandler) {
        _ = LibXML2.setUp
        self.source = AttributeGuardedStream(source)
        self.path = path
        self.encoding = encoding
        state = ParseState(handler: handler)
    }

    /// Reads the document, handing its events to the handler.
    /// - Throws: `LibraryFailure` when libxml2 cannot start; the stream's error when its bytes cannot be read.
    package func parse() throws -> Outcome {
        var chunk: [UInt8] = []
        chunk.reserveCapacity(Self.chunkSize)
        // libxml2 guesses the encoding from the first four bytes, as its reader does.
        while chunk.count < 4, try source.read(into: &chunk, upTo: 4 - chunk.count) > 0 {}
        let head = chunk.count
        var sax = XMLEventParser.handlers()
        let userData = Unmanaged.passUnretained(state).toOpaque()
        guard let context = chunk.withUnsafeBufferPointer({ buffer in
            buffer.withMemoryRebound(to: CChar.self) { xmlCreatePushParserCtxt(&sax, userData, $0.baseAddress, Int32(head), path) }
        }) else { throw LibraryFailure("libxml2 could not start reading \(path)") }
        defer { xmlFreeParserCtxt(context) }
        state.context = context
        xmlCtxtUseOptions(context, LibXML2.xmlOptions)
        if let encoding, let converter = xmlFindCharEncodingHandler(encoding) { xmlSwitchToEncoding(context, converter) }
        let detected = xmlDetectCharEncoding(chunk, Int32(head))
        let utf16 = detected == XML_CHAR_ENCODING_UTF16LE || detected == XML_CHAR_ENCODING_UTF16BE
            || ["UTF-16", "UTF-16LE", "UTF-16BE", "UCS-2"].contains(encoding?.uppercased() ?? "")
        var atEnd = false, total = head
        while !atEnd, context.pointee.disableSAX == 0 {
            chunk.removeAll(keepingCapacity: true)
            let count = try source.read(into: &chunk, upTo: Self.chunkSize)
            total += count
            atEnd = count == 0
            let status = chunk.withUnsafeBufferPointer { buffer in
                buffer.withMemoryRebound(to: CChar.self) { xmlParseChunk(context, $0.baseAddress, Int32(count), atEnd ? 1 : 0) }
            }
            if status == Int32(XML_ERR_INVALID_ENCODING.rawValue) { state.conversionFailed() }
        }
        // libxml2 drops a UTF-16 document's odd last byte without a word (libxml2's error tests: truncated-utf16.xml).
        if atEnd, utf16, total % 2 == 1, context.pointee.disableSAX == 0 { state.endsInsideACodeUnit() }
        return state.sawDocumentType ? .documentType : .read
    }

    /// The SAX2 callbacks, each forwarding to the `ParseState` passed as libxml2's user data.
    private static func handlers() -> xmlSAXHandler {
        var sax = xmlSAXHandler()
        sax.initialized = XML_SAX2_MAGIC
        sax.startElementNs = { userData, localName, _, uri, _, _, attributeCount, _, attributes in
            guard let userData, let localName else { return }
            ParseState.with(userData) { $0.start(localName, uri, attributes, Int(attributeCount)) }
        }
        sax.endElementNs = { userData, _, _, _ in
            guard let userData else { return }
            ParseState.with(userData) { $0.end() }
        }
        sax.characters = { userData, bytes, count in
            guard let userData, let bytes else { return }
            ParseState.with(userData) { $0.text(bytes, Int(count)) }
        }
        sax.ignorableWhitespace = sax.characters
        sax.comment = { userData, _ in
            guard let userData else { return }
            ParseState.with(userData) { $0.textRun = 0 }
        }
        sax.processingInstruction = { userData, _, _ in
            guard let userData else { return }
            ParseState.with(userData) { $0.textRun = 0 }
        }
        sax.internalSubset = { userData, _, _, _ in
            guard let userData else { return }
            ParseState.with(userData) { $0.documentType() }
        }
        sax.serror = { userData, error in
            guard let userData, let error else { return }
            ParseState.with(userData) { $0.collector.record(error.pointee) }
        }
        return sax
    }

    /// What the callbacks share: the handler, the issues, and the two limits that libxml2 checks only while it builds
    /// a tree (element depth, text node length), checked here the same way.
    private final class ParseState {
        // Only libxml2's callbacks, on the parsing thread, touch these: no run-time exclusivity checks per event.
        package let handler: XMLEventHandler
        package let collector = XMLIssueCollector()
        @exclusivity(unchecked) package var context: xmlParserCtxtPtr?
        @exclusivity(unchecked) package var depth = 0
        /// Bytes of the text node being read, as the tree would merge them.
        @exclusivity(unchecked) package var textRun = 0
        package var sawDocumentType = false

        /// libxml2's depth limit (`xmlParserMaxDepth`) and text node limit (`XML_MAX_TEXT_LENGTH`).
        package static let maximumDepth = 256
        package static let maximumText = 10_000_000

        package init(handler: XMLEventHandler) { self.handler = handler }

        /// Runs `body` on the state passed as libxml2's user data, which the parser keeps alive for the whole parse:
        /// no retain and release per event.
        package static func with(_ userData: UnsafeMutableRawPointer, _ body: (ParseState) -> Void) {
            Unmanaged<ParseState>.fromOpaque(userData)._withUnsafeGuaranteedRef(body)
        }

        func start(_ localName: UnsafePointer<xmlChar>, _ uri: UnsafePointer<xmlChar>?,
                   _ attributes: UnsafeMutablePointer<UnsafePointer<xmlChar>?>?, _ attributeCount: Int) {
            textRun = 0
            guard depth <= Self.maximumDepth else {
                stop(because: "Excessive depth in document: \(Self.maximumDepth) use XML_PARSE_HUGE option")
                return
            }
            depth += 1
            let tag = XMLStartTag(localNamePointer: localName, uriPointer: uri, attributes: attributes,
                                  attributeCount: attributeCount, line: Int(context?.pointee.input?.pointee.line ?? 0))
            if !handler.start(tag) { stopParsing() }
        }

        package func end() {
            textRun = 0
            depth -= 1
            if !handler.end() { stopParsing() }
        }

        func text(_ bytes: UnsafePointer<xmlChar>, _ count: Int) {
            if textRun > 0, textRun + count > Self.maximumText {
                stop(because: "xmlSAX2Characters: huge text node")
                return
            }
            textRun += count
            handler.text(XMLText(bytes: bytes, count: count))
        }

        /// libxml2 stopped because bytes do not convert from the document's encoding, saying so only on stderr.
        package func conversionFailed() {
            stop(because: "input conversion failed: the bytes do not fit the document's encoding")
        }

        package func endsInsideACodeUnit() {
            stop(because: "the file ends in the middle of a UTF-16 character (an odd number of bytes)")
        }

        package func documentType() {
            sawDocumentType = true
            stopParsing()
        }

        /// Records an error where the parser is, as libxml2's tree builder would, and stops.
        private func stop(because message: String) {
            let input = context?.pointee.input?.pointee
            let line = Int(input?.line ?? 0)
            let column = Int(input?.col ?? 0)
            collector.add(XMLIssue(kind: .malformed, message: LibXML2.userMessage(message),
                                   line: line > 0 ? line : nil, column: column > 0 ? column : nil))
            stopParsing()
        }

        private func stopParsing() {
            if let context { xmlStopParser(context) }
        }
    }
}

extension XMLStartTag {
    /// The start tag of an element of a tree, for what compares names: its local name, namespace and line; it
    /// carries no attributes.
    init(treeElement node: UnsafeMutablePointer<xmlNode>) {
        localNamePointer = UnsafePointer(node.pointee.name)
        uriPointer = node.pointee.ns.flatMap { UnsafePointer($0.pointee.href) }
        attributes = nil
        attributeCount = 0
        line = Int(xmlGetLineNo(node))
    }
}
