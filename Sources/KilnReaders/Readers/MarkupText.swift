import KilnC
import KilnCore
import KilnManifest

/// Renders HTML as lines of text the way a reader sees the page: block elements and `<br>` end a line, table cells
/// are separated by a configurable string, scripts, styles and comments are dropped, and white space (including
/// no-break spaces) is collapsed within each line. Each line keeps the source line of its first text.
///
/// Pages are rendered straight from libxml2's tree (`lines(_: HTMLNode)`, through `HTMLNode.walk`), on the text's
/// UTF-8 bytes; a `MarkupNode` tree renders through the same rules.
package struct MarkupText {
    /// Elements that start and end a line of their own.
    package static let blockElements: Set<String> = [
        "address", "article", "aside", "blockquote", "body", "caption", "dd", "div", "dl", "dt", "fieldset",
        "figcaption", "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hr", "li", "main",
        "nav", "ol", "p", "pre", "section", "table", "tbody", "tfoot", "thead", "tr", "ul", "html",
    ]
    /// Elements whose content is never text.
    package static let ignoredElements: Set<String> = ["script", "style", "noscript", "template", "head", "iframe", "object"]

    /// What an element does to the lines.
    fileprivate enum Role {
        case inline, block, row, cell, lineBreak, ignored
    }

    /// The role of every element that has one; any other element is inline.
    private static let roles: [String: Role] = {
        var roles: [String: Role] = [:]
        for name in blockElements { roles[name] = .block }
        for name in ignoredElements { roles[name] = .ignored }
        roles["tr"] = .row
        roles["td"] = .cell
        roles["th"] = .cell
        roles["br"] = .lineBreak
        return roles
    }()

    fileprivate static func role(of name: String) -> Role { roles[name] ?? .inline }

    /// What separates table cells on one line.
    package var cellSeparator = "\t"

    package init(cellSeparator: String = "\t") {
        self.cellSeparator = cellSeparator
    }

    /// One rendered line: its text and the source line it starts on.
    package struct Line: Equatable, Sendable {
        package var text: String
        package var line: Int
    }

    /// The non-empty lines of `node`, read from libxml2's tree.
    package func lines(_ node: HTMLNode) -> [Line] {
        var renderer = Renderer(cellSeparator: cellSeparator)
        node.walk(&renderer)
        renderer.endLine()
        return renderer.lines
    }

    /// The text of an element that holds block elements, table cells or `<br>`: its lines joined by line breaks, as a
    /// KML description's HTML is rendered; `nil` for an element with only text and inline elements (its string value
    /// stands as written).
    package func textIfStructured(_ node: HTMLNode) -> String? {
        var probe = StructureProbe(renderer: Renderer(cellSeparator: cellSeparator))
        node.walk(&probe)
        guard probe.structured else { return nil }
        probe.renderer.endLine()
        return probe.renderer.lines.map(\.text).joined(separator: "\n")
    }

    /// The value of a page-level selector (an `html` source's page field, a `webpage` title): the text of the element
    /// it selects when that holds blocks, cells or `<br>` (`textIfStructured`), else its string value with white space
    /// collapsed; `nil` when it selects nothing.
    package func pageValue(_ expression: XPathExpression, in document: HTMLDocument) -> String? {
        if let node = document.nodes(expression).first, let text = textIfStructured(node) { return text }
        return document.string(expression).map(TextFolding.collapseSpaces)
    }

    /// Renders a subtree and notes whether an element below its root breaks lines or separates cells.
    private struct StructureProbe: MarkupVisitor {
        var renderer: Renderer
        var depth = 0
        var structured = false

        mutating func startElement(_ name: String) -> Bool {
            if depth > 0, MarkupText.role(of: name) != .inline, MarkupText.role(of: name) != .ignored { structured = true }
            depth += 1
            return renderer.startElement(name)
        }

        mutating func endElement(_ name: String) {
            depth -= 1
            renderer.endElement(name)
        }

        mutating func text(_ bytes: [UInt8], line: Int) { renderer.text(bytes, line: line) }
    }

    /// The non-empty lines of a Swift tree.
    package func lines(_ node: MarkupNode) -> [Line] {
        var renderer = Renderer(cellSeparator: cellSeparator)
        MarkupText.walk(node, &renderer)
        renderer.endLine()
        return renderer.lines
    }

    private static func walk(_ node: MarkupNode, _ renderer: inout Renderer) {
        switch node {
        case .text(let text, let line):
            renderer.text(Array(text.utf8), line: line)
        case .element(let name, _, _, let children):
            guard renderer.startElement(name) else { return }
            for child in children { walk(child, &renderer) }
            renderer.endElement(name)
        }
    }

    /// The lines of every element of a page that `test` picks (among the elements `HTMLParser.parseEvents` gives), read from
    /// the page's parse events (`HTMLParser.parseEvents`) without a tree: what `lines(_:)` gives for each node
    /// `HTMLDocument.nodes` selects with the same test, one node after the other. Each picked element renders its
    /// own lines, also one inside another (the outer one's lines first).
    package final class PickedLines: HTMLEventHandler {
        /// Only the parser's callbacks, on the parsing thread, touch it: no run-time exclusivity checks per event.
        @exclusivity(unchecked) private var state: State

        package init(test: DescendantElementTest, cellSeparator: String) {
            // Unsafe only as `state` skips the exclusivity check (see `withState`).
            unsafe state = State(test: test, cellSeparator: cellSeparator)
        }

        /// The one access to `state`: `@exclusivity(unchecked)` is memory-unsafe only when two accesses overlap, and
        /// the events come one at a time from the parsing thread.
        private func withState<Result>(_ body: (inout State) -> Result) -> Result {
            unsafe body(&state)
        }

        /// The lines, once the page is parsed.
        package var lines: [Line] { withState { $0.renderers.flatMap(\.lines) } }

        package var wantsText: Bool { withState { $0.reading > 0 } }

        package func startElement(_ tag: HTMLStartTag) { withState { $0.startElement(tag) } }

        package func endElement() { withState { $0.endElement() } }

        package func text(_ bytes: [UInt8], nodeLine: Int) { withState { $0.text(bytes, nodeLine: nodeLine) } }
    }

    /// What `PickedLines` keeps between events.
    private struct State {
        let test: DescendantElementTest
        let cellSeparator: String
        /// One renderer per picked element, in document order.
        var renderers: [Renderer] = []
        /// The picked elements still open: their renderer, their depth, and the depth of the element whose content
        /// the renderer skips (0: none).
        private var open: [(renderer: Int, depth: Int, skipping: Int)] = []
        private var depth = 0
        /// How many open picked elements are not skipping content.
        private(set) var reading = 0
        /// What was found of each element name of the page, by `HTMLStartTag.nameIdentity`: a page has a few dozen.
        private var names: [(identity: Int, role: Role, passes: Bool)] = []

        init(test: DescendantElementTest, cellSeparator: String) {
            self.test = test
            self.cellSeparator = cellSeparator
        }

        /// The role of the tag's element and whether its name passes the test.
        private mutating func known(_ tag: HTMLStartTag) -> (role: Role, passes: Bool) {
            let identity = tag.nameIdentity
            for name in names where name.identity == identity { return (name.role, name.passes) }
            let found = (role: MarkupText.role(of: tag.name), passes: test.name.map(tag.hasName) ?? true)
            names.append((identity, found.role, found.passes))
            return found
        }

        mutating func startElement(_ tag: HTMLStartTag) {
            depth += 1
            let (role, namePasses) = known(tag)
            let picked = namePasses && tag.passesAttributes(of: test)
            guard reading > 0 || picked else { return }
            for index in open.indices where open[index].skipping == 0 {
                if !renderers[open[index].renderer].startElement(role: role) { skip(index) }
            }
            if picked {
                var renderer = Renderer(cellSeparator: cellSeparator)
                let reads = renderer.startElement(role: role)
                renderers.append(renderer)
                open.append((renderers.count - 1, depth, 0))
                reading += 1
                if !reads { skip(open.count - 1) }
            }
        }

        private mutating func skip(_ index: Int) {
            open[index].skipping = depth
            reading -= 1
        }

        mutating func endElement() {
            for index in open.indices {
                if open[index].skipping == 0 {
                    renderers[open[index].renderer].endElement()
                } else if open[index].skipping == depth {
                    open[index].skipping = 0
                    reading += 1
                }
            }
            if let last = open.last, last.depth == depth {
                renderers[last.renderer].endLine()
                open.removeLast()
                reading -= 1
            }
            depth -= 1
        }

        mutating func text(_ bytes: [UInt8], nodeLine: Int) {
            let (text, line) = LibXML2TextNode.located(bytes, nodeLine: nodeLine)
            for entry in open where entry.skipping == 0 {
                renderers[entry.renderer].text(text, line: line)
            }
        }
    }

    /// The rendering rules, on UTF-8 bytes. The line being built is `line`, a sequence of pieces (collapsed text,
    /// cell separators, and the spaces between text pieces) that start at `pieceStarts`; `text` gathers the raw text
    /// since the last cell boundary.
    package struct Renderer: MarkupVisitor {
        package let cellSeparator: String
        package let separatorBytes: [UInt8]
        package var lines: [Line] = []
        package var line: [UInt8] = []
        package var pieceStarts: [Int] = []
        package var text: [UInt8] = []
        package var firstLine: Int?
        package var cellsInRow = 0
        /// The role of each element started and not yet ended.
        fileprivate var openRoles: [Role] = []

        package init(cellSeparator: String) {
            self.cellSeparator = cellSeparator
            separatorBytes = Array(cellSeparator.utf8)
        }

        package mutating func startElement(_ name: String) -> Bool { startElement(role: MarkupText.role(of: name)) }

        /// An element with `role` starts; returns false when its content and end are to be skipped.
        fileprivate mutating func startElement(role: Role) -> Bool {
            switch role {
            case .ignored:
                return false
            case .lineBreak:
                endLine()
                return false
            case .block:
                endLine()
            case .row:
                endLine()
                cellsInRow = 0
            case .cell:
                flushPiece()
                if cellsInRow > 0 { appendPiece(separatorBytes) }
                cellsInRow += 1
            case .inline:
                break
            }
            openRoles.append(role)
            return true
        }

        package mutating func endElement(_ name: String) { endElement() }

        /// The innermost element started, and not skipped, ends.
        package mutating func endElement() {
            switch openRoles.removeLast() {
            case .cell: flushPiece()
            case .block, .row: endLine()
            case .inline, .lineBreak, .ignored: break
            }
        }

        package mutating func text(_ bytes: [UInt8], line number: Int) {
            if firstLine == nil {
                let visible = UTF8Whitespace.isPlain(bytes)
                    ? UTF8Whitespace.firstVisible(bytes, 0..<bytes.count) < bytes.count
                    : String(decoding: bytes, as: UTF8.self).contains(where: { !$0.isWhitespace })
                if visible { firstLine = number }
            }
            text.append(contentsOf: bytes)
        }

        /// Collapses white space in the text gathered since the last cell boundary and adds it as a piece, after a
        /// space when the piece before is text.
        package mutating func flushPiece() {
            defer { text.removeAll(keepingCapacity: true) }
            guard !text.isEmpty else { return }
            let start = line.count
            if pieceStarts.isEmpty || lastPieceIs(separatorBytes, cellSeparator) {
                pieceStarts.append(start)
            } else {
                line.append(0x20)
                pieceStarts.append(start)
                pieceStarts.append(start + 1)
            }
            let textStart = line.count
            if UTF8Whitespace.isPlain(text) {
                UTF8Whitespace.appendCollapsed(text, 0..<text.count, to: &line)
            } else {
                line.append(contentsOf: TextFolding.collapseSpaces(String(decoding: text, as: UTF8.self)).utf8)
            }
            if line.count == textStart {
                // Nothing visible: no piece, and no space before it.
                line.removeSubrange(start...)
                pieceStarts.removeLast(textStart == start ? 1 : 2)
            }
        }

        package mutating func appendPiece(_ bytes: [UInt8]) {
            pieceStarts.append(line.count)
            line.append(contentsOf: bytes)
        }

        /// True when the last piece is `bytes`, compared as Swift compares strings (canonical equivalence).
        private func lastPieceIs(_ bytes: [UInt8], _ string: String) -> Bool {
            guard let start = pieceStarts.last else { return false }
            let count = line.count - start
            if count == bytes.count, line[start...].elementsEqual(bytes) { return true }
            if bytes.allSatisfy({ $0 < 0x80 }) {
                // Text canonically equivalent to ASCII has at most one scalar (of at most 4 bytes) per ASCII byte,
                // and some beyond ASCII (U+037E is ";").
                if count > 4 * bytes.count || line[start...].allSatisfy({ $0 < 0x80 }) { return false }
            }
            return String(decoding: line[start...], as: UTF8.self) == string
        }

        package mutating func endLine() {
            flushPiece()
            while lastPieceIs(separatorBytes, cellSeparator) || lastPieceIs([0x20], " ") {
                line.removeSubrange(pieceStarts.removeLast()...)
            }
            if !line.isEmpty { lines.append(Line(text: String(decoding: line, as: UTF8.self), line: firstLine ?? 0)) }
            line.removeAll(keepingCapacity: true)
            pieceStarts.removeAll(keepingCapacity: true)
            firstLine = nil
        }
    }
}
