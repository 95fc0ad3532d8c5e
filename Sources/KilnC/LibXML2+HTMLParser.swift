internal import CLibXML2
import Foundation

/// libxml2's tolerant HTML parser, with what it does not say while recovering: where it stopped before the end of the
/// page, and where it began to read the page in another encoding. Both happen without failing the parse — libxml2
/// returns the document as if the page ended there, or goes on with garbled text — and are visible only in its
/// errors, collected here through a structured error handler while the page is parsed (its printing is off).
package enum HTMLParser {
    /// What went wrong with a page that still parsed.
    package struct Problem: Sendable, Equatable {
        package enum Kind: Sendable, Equatable {
            /// Parsing stopped: nesting deeper than 256 elements, a text node over 10 MB, bytes the page's encoding
            /// cannot convert. The rest of the page is missing.
            case stopped
            /// Bytes that are not UTF-8 in a page read as UTF-8: libxml2 reads the rest of the page as ISO-8859-1. The
            /// message names the bytes.
            case garbled
        }

        package let kind: Kind
        /// libxml2's message.
        package let message: String
        package let line: Int?
        package let column: Int?
    }

    /// The parsed page, or `nil` when there is nothing to parse (no bytes, more than 2 GiB); and what went wrong
    /// while parsing it. The caller owns the document.
    static func parse(_ bytes: [UInt8], encoding: String?) -> (document: UnsafeMutablePointer<xmlDoc>?, problems: [Problem]) {
        _ = LibXML2.setUp
        // A UTF-8 byte-order mark says UTF-8, as libxml2 would find for itself on longer pages; on a page of three
        // bytes it would keep the mark as text.
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { return parse(Array(bytes.dropFirst(3)), encoding: encoding ?? "UTF-8") }
        if let cut = overfull(bytes) {
            let before = parse(Array(bytes[..<cut.offset]), encoding: encoding)
            return (before.document, before.problems.filter { $0.kind == .garbled } + [cutProblem(cut)])
        }
        guard !bytes.isEmpty, bytes.count <= Int(Int32.max) else { return (nil, []) }
        let box = ErrorBox()
        let parsed = collectingErrors(into: box) {
            bytes.withUnsafeBufferPointer { buffer in
                buffer.withMemoryRebound(to: CChar.self) {
                    htmlReadMemory($0.baseAddress, Int32($0.count), nil, encoding, LibXML2.htmlOptions)
                }
            }
        }
        return (parsed, problems(in: box.errors))
    }

    /// The first element of the page with more attributes than libxml2's quadratic check of them can take
    /// (`MarkupAttributeScan`): the page is parsed only up to it.
    private static func overfull(_ bytes: [UInt8]) -> MarkupAttributeScan.Overfull? {
        var scan = MarkupAttributeScan(html: true)
        return scan.scan(bytes)
    }

    private static func cutProblem(_ cut: MarkupAttributeScan.Overfull) -> Problem {
        Problem(kind: .stopped, message: "an element has more than \(MarkupAttributeScan.maximumAttributes) attributes (libxml2's check of them is quadratic)",
                line: cut.line, column: nil)
    }

    /// Runs `body` with libxml2's structured errors of this thread collected into `box` (its printing stays off).
    private static func collectingErrors<Result>(into box: ErrorBox, _ body: () -> Result) -> Result {
        xmlSetStructuredErrorFunc(Unmanaged.passUnretained(box).toOpaque()) { context, error in
            guard let context, let error else { return }
            Unmanaged<ErrorBox>.fromOpaque(context).takeUnretainedValue().errors.append(Reported(error.pointee))
        }
        defer { xmlSetStructuredErrorFunc(nil, nil) }
        return body()
    }

    /// The first stop and the first switch to ISO-8859-1 among libxml2's errors.
    private static func problems(in errors: [Reported]) -> [Problem] {
        func code(_ value: xmlParserErrors) -> Int32 { Int32(value.rawValue) }
        // libxml2 places its errors on the page only in the parser's own domain.
        let placed = errors.first { $0.domain == Int32(XML_FROM_HTML.rawValue) && $0.position != nil }
        func problem(_ kind: Problem.Kind, _ error: Reported, at place: Reported?, message: String? = nil) -> Problem {
            Problem(kind: kind, message: message ?? error.message, line: place?.position?.line, column: place?.position?.column)
        }
        var problems: [Problem] = []
        if let stop = errors.first(where: { [code(XML_ERR_INTERNAL_ERROR), code(XML_ERR_NO_MEMORY)].contains($0.code) }) {
            problems.append(problem(.stopped, stop, at: stop))
        } else if let conversion = errors.first(where: { $0.code == code(XML_I18N_CONV_FAILED) }) {
            let place = errors.first { $0.code == code(XML_ERR_INVALID_ENCODING) && $0.position != nil } ?? placed
            problems.append(problem(.stopped, conversion, at: place))
        }
        if let switched = errors.first(where: { $0.code == code(XML_ERR_INVALID_ENCODING) && $0.message.hasPrefix("Input is not proper UTF-8") }) {
            problems.append(problem(.garbled, switched, at: switched, message: switched.detail))
        }
        return problems
    }

    /// One error as Swift values: libxml2 reuses the memory of the error it reports once the callback returns.
    private struct Reported {
        package let domain: Int32
        package let code: Int32
        package let message: String
        /// The first string argument of the message (for an encoding error, the bytes).
        package let detail: String?
        /// Where on the page, when libxml2 says.
        package let position: (line: Int, column: Int?)?

        init(_ error: xmlError) {
            domain = error.domain
            code = error.code
            message = LibXML2.userMessage(error.message.map { String(cString: $0).trimmingCharacters(in: .whitespacesAndNewlines) } ?? "error \(error.code)")
            detail = error.str1.map { String(cString: $0).trimmingCharacters(in: .whitespacesAndNewlines) }
            position = error.line > 0 ? (Int(error.line), error.int2 > 0 ? Int(error.int2) : nil) : nil
        }

        /// An error raised on libxml2's behalf (what its tree builder would have raised).
        package init(domain: Int32, code: Int32, message: String, detail: String?, line: Int, column: Int) {
            self.domain = domain
            self.code = code
            self.message = LibXML2.userMessage(message)
            self.detail = detail
            position = line > 0 ? (line, column > 0 ? column : nil) : nil
        }
    }

    /// Collects libxml2's structured errors; a class so that the C callback can reach it through a pointer.
    private final class ErrorBox {
        package var errors: [Reported] = []
    }
}

/// Receives the nodes of an HTML page's root element from `HTMLParser.parseEvents`, in document order, as they
/// would stand in the tree `HTMLParser.parse` builds — without building it. Only the root's descendants are given
/// (not the root itself), unless the whole document is asked for; the tags and texts are valid only during the call.
package protocol HTMLEventHandler: AnyObject {
    /// An element starts.
    func startElement(_ tag: HTMLStartTag)
    /// The innermost element started ends.
    func endElement()
    /// True when the next text node is wanted: `text` is then called with it, otherwise not.
    var wantsText: Bool { get }
    /// A whole text node: its bytes as the tree holds them and the line `xmlGetLineNo` gives it in the tree.
    func text(_ bytes: [UInt8], nodeLine: Int)
}

/// An element's start tag as libxml2's HTML parser reports it; valid only during `HTMLEventHandler.startElement`.
package struct HTMLStartTag {
    fileprivate let namePointer: UnsafePointer<xmlChar>
    /// Name and value pointers, in pairs, ended by a NULL name; a value is NULL for an attribute without one.
    fileprivate let attributes: UnsafeMutablePointer<UnsafePointer<xmlChar>?>?

    /// The element's name as `HTMLNode` gives it: lower case.
    package var name: String {
        let name = String(cString: namePointer)
        return name.utf8.contains(where: { $0 >= 0x41 && $0 <= 0x5A || $0 >= 0x80 }) ? name.lowercased() : name
    }

    /// Equal for two tags of one parse when their names are one string of libxml2's (it interns the names it
    /// reads): a key under which to remember what was found of a name, valid during that parse only.
    package var nameIdentity: Int { Int(bitPattern: namePointer) }

    /// True when the element's name is `name` (UTF-8, NUL-terminated), byte for byte.
    package func hasName(_ name: [UInt8]) -> Bool {
        name.withUnsafeBufferPointer { xmlStrEqual(namePointer, $0.baseAddress) == 1 }
    }

    /// True when the element is one `test` picks, judged as `XPathEvaluator` judges an element of the tree: the
    /// tree holds the attributes the parser reports, with the same values (no value: empty).
    package func passes(_ test: DescendantElementTest) -> Bool {
        if let name = test.name, !hasName(name) { return false }
        return passesAttributes(of: test)
    }

    /// `passes(test)` for an element whose name passes.
    package func passesAttributes(of test: DescendantElementTest) -> Bool {
        if !test.classes.isEmpty {
            guard let value = firstValue(of: HTMLStartTag.classAttribute) else { return false }
            guard test.classes.allSatisfy({ DescendantElementTest.hasToken($0, in: value) }) else { return false }
        }
        for id in test.ids {
            var equal = false
            forEachAttribute { name, value in
                if !equal, HTMLStartTag.idAttribute.withUnsafeBufferPointer({ xmlStrEqual(name, $0.baseAddress) }) == 1 {
                    equal = HTMLStartTag.bytes(of: value).elementsEqual(id)
                }
            }
            guard equal else { return false }
        }
        return true
    }

    private func forEachAttribute(_ body: (UnsafePointer<xmlChar>, UnsafePointer<xmlChar>?) -> Void) {
        guard let attributes else { return }
        var index = 0
        while let name = attributes[index] {
            body(name, attributes[index + 1])
            index += 2
        }
    }

    private static let classAttribute = Array("class".utf8) + [0]
    private static let idAttribute = Array("id".utf8) + [0]

    /// The value of the first attribute named `name` (NUL-terminated; empty when it has no value); nil when there
    /// is no such attribute.
    private func firstValue(of name: [UInt8]) -> UnsafeBufferPointer<UInt8>? {
        guard let attributes else { return nil }
        return name.withUnsafeBufferPointer { name in
            var index = 0
            while let current = attributes[index] {
                if xmlStrEqual(current, name.baseAddress) == 1 { return HTMLStartTag.bytes(of: attributes[index + 1]) }
                index += 2
            }
            return nil
        }
    }

    private static func bytes(of value: UnsafePointer<xmlChar>?) -> UnsafeBufferPointer<UInt8> {
        guard let value else { return UnsafeBufferPointer(start: nil, count: 0) }
        return UnsafeBufferPointer(start: value, count: Int(xmlStrlen(value)))
    }
}

extension HTMLParser {
    /// How `parseEvents` ended.
    package enum EventOutcome: Equatable {
        /// The page was read (to its end or to where libxml2 stopped), with what went wrong, as `parse` says it.
        case read([Problem])
        /// The page has no root element: `parse` gives no document or an empty one.
        case empty
        /// A text node starts past line 65 534 of the page: its line in the tree depends on the nodes around it
        /// (libxml2 keeps 16 bits of an HTML node's line), so the page must be read through the tree. What the
        /// handler was given is to be dropped.
        case needsTree
    }

    /// Parses the page as `parse` does — same parser, options and encoding handling — but hands the root element's
    /// descendants to `handler` instead of building a tree, doing what libxml2's tree builder does on the way:
    /// adjacent characters callbacks make one text node, numbered by the line at its first callback; text outside
    /// any element is dropped; a top-level element after the root goes inside the root when nothing stood before
    /// the root in the document (libxml2 then appends it there); nesting deeper than 256 elements and a text node
    /// over 10 MB stop the parse with libxml2's own errors. With `wholeDocument`, the handler is given every element
    /// of the document instead: the root itself and the top-level elements after it.
    package static func parseEvents(_ bytes: [UInt8], encoding: String?, wholeDocument: Bool = false, handler: HTMLEventHandler) -> EventOutcome {
        _ = LibXML2.setUp
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) {
            return parseEvents(Array(bytes.dropFirst(3)), encoding: encoding ?? "UTF-8", wholeDocument: wholeDocument, handler: handler)
        }
        if let cut = overfull(bytes) {
            switch parseEvents(Array(bytes[..<cut.offset]), encoding: encoding, wholeDocument: wholeDocument, handler: handler) {
            case .read(let problems): return .read(problems.filter { $0.kind == .garbled } + [cutProblem(cut)])
            case .empty: return .read([cutProblem(cut)])
            case .needsTree: return .needsTree
            }
        }
        guard !bytes.isEmpty, bytes.count <= Int(Int32.max) else { return .empty }
        let box = ErrorBox()
        let state = EventState(handler: handler, box: box, wholeDocument: wholeDocument)
        let parsed: Bool = collectingErrors(into: box) { bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { buffer -> Bool in
                // What htmlReadMemory does, with this handler in place of the tree builder's.
                guard let context = xmlCreateMemoryParserCtxt(buffer.baseAddress, Int32(buffer.count)) else { return false }
                defer { xmlFreeParserCtxt(context) }
                var sax = eventHandlers()
                if let target = context.pointee.sax { memcpy(target, &sax, MemoryLayout<xmlSAXHandlerV1>.size) }
                context.pointee.userData = Unmanaged.passUnretained(state).toOpaque()
                state.context = context
                htmlCtxtUseOptions(context, LibXML2.htmlOptions)
                context.pointee.html = 1
                if let encoding, let converter = xmlFindCharEncodingHandler(encoding) {
                    xmlSwitchToEncoding(context, converter)
                    if let input = context.pointee.input {
                        if let old = input.pointee.encoding { kiln_xml_free(UnsafeMutableRawPointer(mutating: old)) }
                        input.pointee.encoding = UnsafePointer(xmlCharStrdup(encoding))
                    }
                }
                htmlParseDocument(context)
                state.finish()
                return true
            }
        } }
        if state.needsTree { return .needsTree }
        guard parsed, state.sawRoot else { return .empty }
        return .read(problems(in: box.errors))
    }

    /// The SAX1 callbacks of an HTML parse, each forwarding to the `EventState` passed as libxml2's user data.
    private static func eventHandlers() -> xmlSAXHandlerV1 {
        var sax = xmlSAXHandlerV1()
        sax.initialized = 1
        sax.startDocument = { userData in
            guard let userData else { return }
            EventState.from(userData).documentStarted = true
        }
        sax.internalSubset = { userData, _, _, _ in
            guard let userData else { return }
            EventState.from(userData).documentType()
        }
        sax.startElement = { userData, name, attributes in
            guard let userData, let name else { return }
            EventState.from(userData).start(name, attributes)
        }
        sax.endElement = { userData, _ in
            guard let userData else { return }
            EventState.from(userData).end()
        }
        sax.characters = { userData, bytes, count in
            guard let userData, let bytes else { return }
            EventState.from(userData).characters(bytes, Int(count), cdata: false)
        }
        sax.cdataBlock = { userData, bytes, count in
            guard let userData, let bytes else { return }
            EventState.from(userData).characters(bytes, Int(count), cdata: true)
        }
        sax.comment = { userData, _ in
            guard let userData else { return }
            EventState.from(userData).otherNode()
        }
        sax.processingInstruction = { userData, _, _ in
            guard let userData else { return }
            EventState.from(userData).otherNode()
        }
        return sax
    }

    /// What the callbacks share: the handler, the errors, and what libxml2's tree builder would know of the tree.
    private final class EventState {
        // Only libxml2's callbacks, on the parsing thread, touch these: no run-time exclusivity checks per event.
        package let handler: HTMLEventHandler
        package let box: ErrorBox
        @exclusivity(unchecked) package var context: xmlParserCtxtPtr?
        /// The tree builder has a document (libxml2 called startDocument); without one it adds nothing.
        @exclusivity(unchecked) package var documentStarted = false
        @exclusivity(unchecked) package var sawRoot = false
        /// A document type, comment or processing instruction is the document's first node: later top-level
        /// elements are then the root's siblings, not its children.
        @exclusivity(unchecked) package var rootIsNotFirst = false
        /// Elements open (the tree builder's node stack).
        @exclusivity(unchecked) package var depth = 0
        /// The open elements are the root's descendants from this depth on (0: the open elements are outside it).
        @exclusivity(unchecked) package var handedFrom = 0
        /// The text node being read: its kind, its bytes when the handler wants them, its length and line.
        @exclusivity(unchecked) package var run = Run.none
        @exclusivity(unchecked) package var runBytes: [UInt8] = []
        @exclusivity(unchecked) package var runWanted = false
        @exclusivity(unchecked) package var runLength = 0
        @exclusivity(unchecked) package var runLine = 0
        /// libxml2 was stopped: nothing more reaches the tree.
        @exclusivity(unchecked) package var halted = false
        @exclusivity(unchecked) package var needsTree = false

        package enum Run { case none, text, cdata }

        /// libxml2's depth limit (`xmlParserMaxDepth`), text node limit (`XML_MAX_TEXT_LENGTH`), and the first line
        /// an HTML node cannot hold.
        package static let maximumDepth = 256
        package static let maximumText = 10_000_000
        package static let lineLimit = 65535

        /// Every element is handed over, not only the root's descendants.
        package let wholeDocument: Bool

        package init(handler: HTMLEventHandler, box: ErrorBox, wholeDocument: Bool) {
            self.handler = handler
            self.box = box
            self.wholeDocument = wholeDocument
        }

        package static func from(_ userData: UnsafeMutableRawPointer) -> EventState {
            Unmanaged<EventState>.fromOpaque(userData).takeUnretainedValue()
        }

        private var inRoot: Bool { handedFrom > 0 && depth >= handedFrom }

        package func documentType() {
            if documentStarted { rootIsNotFirst = true }
        }

        func start(_ name: UnsafePointer<xmlChar>, _ attributes: UnsafeMutablePointer<UnsafePointer<xmlChar>?>?) {
            guard documentStarted, !halted else { return }
            endRun()
            if depth == 0 {
                if wholeDocument {
                    handedFrom = 1
                } else if !sawRoot {
                    handedFrom = 2
                } else {
                    handedFrom = rootIsNotFirst ? 0 : 1
                }
                sawRoot = true
            }
            guard depth <= Self.maximumDepth else {
                // What nodePush does in the tree builder.
                raise(code: XML_ERR_INTERNAL_ERROR, "Excessive depth in document: \(Self.maximumDepth) use XML_PARSE_HUGE option", detail: nil)
                context?.pointee.wellFormed = 0
                halt()
                context?.pointee.errNo = Int32(XML_ERR_INTERNAL_ERROR.rawValue)
                return
            }
            depth += 1
            if inRoot { handler.startElement(HTMLStartTag(namePointer: name, attributes: attributes)) }
        }

        package func end() {
            guard documentStarted, !halted, depth > 0 else { return }
            endRun()
            if inRoot { handler.endElement() }
            depth -= 1
        }

        func characters(_ bytes: UnsafePointer<xmlChar>, _ count: Int, cdata: Bool) {
            guard documentStarted, !halted, depth > 0 else { return }
            let kind: Run = cdata ? .cdata : .text
            if run == kind {
                guard runLength + count <= Self.maximumText else {
                    // xmlSAX2Text drops the bytes and says so as an allocation failure; the parse goes on to its next check.
                    raise(code: XML_ERR_NO_MEMORY, "xmlSAX2Characters: huge text node", detail: "out of memory")
                    if let context {
                        context.pointee.errNo = Int32(XML_ERR_NO_MEMORY.rawValue)
                        context.pointee.instate = XML_PARSER_EOF
                        context.pointee.disableSAX = 1
                    }
                    return
                }
                runLength += count
                if runWanted { runBytes.append(contentsOf: UnsafeBufferPointer(start: bytes, count: count)) }
                return
            }
            endRun()
            run = kind
            runLength = count
            runLine = Int(context?.pointee.input?.pointee.line ?? 0)
            // CDATA comes only inside script and style, whose content is never text.
            runWanted = !cdata && inRoot && handler.wantsText
            if runWanted {
                guard runLine < Self.lineLimit else {
                    needsTree = true
                    halt()
                    return
                }
                runBytes.append(contentsOf: UnsafeBufferPointer(start: bytes, count: count))
            }
        }

        /// A comment or processing instruction: a node of its own, which ends the text node before it.
        package func otherNode() {
            guard documentStarted, !halted else { return }
            if depth == 0, !sawRoot { rootIsNotFirst = true }
            endRun()
        }

        /// The page is parsed: the last text node ends, and the elements still open end where the tree ends them.
        package func finish() {
            guard !needsTree else { return }
            endRun()
            while depth > 0 {
                if inRoot { handler.endElement() }
                depth -= 1
            }
        }

        private func endRun() {
            if runWanted {
                handler.text(runBytes, nodeLine: runLine)
                runBytes.removeAll(keepingCapacity: true)
                runWanted = false
            }
            run = .none
        }

        /// Records an error where the parser is, as libxml2 records it.
        private func raise(code: xmlParserErrors, _ message: String, detail: String?) {
            let input = context?.pointee.input?.pointee
            box.errors.append(Reported(domain: Int32(XML_FROM_PARSER.rawValue), code: Int32(code.rawValue), message: message, detail: detail,
                                       line: Int(input?.line ?? 0), column: Int(input?.col ?? 0)))
        }

        private func halt() {
            halted = true
            if let context { xmlStopParser(context) }
        }
    }
}
