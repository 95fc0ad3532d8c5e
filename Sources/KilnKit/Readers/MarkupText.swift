/// Renders HTML as lines of text the way a reader sees the page: block elements and `<br>` end a line, table cells
/// are separated by a configurable string, scripts, styles and comments are dropped, and white space (including
/// no-break spaces) is collapsed within each line. Each line keeps the source line of its first text.
///
/// Pages are rendered straight from libxml2's tree (`lines(_: HTMLNode)`, through `HTMLNode.walk`), on the text's
/// UTF-8 bytes; a `MarkupNode` tree renders through the same rules.
public struct MarkupText {
    /// Elements that start and end a line of their own.
    static let blockElements: Set<String> = [
        "address", "article", "aside", "blockquote", "body", "caption", "dd", "div", "dl", "dt", "fieldset",
        "figcaption", "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hr", "li", "main",
        "nav", "ol", "p", "pre", "section", "table", "tbody", "tfoot", "thead", "tr", "ul", "html",
    ]
    /// Elements whose content is never text.
    static let ignoredElements: Set<String> = ["script", "style", "noscript", "template", "head", "iframe", "object"]

    /// What an element does to the lines.
    private enum Role {
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

    private static func role(of name: String) -> Role { roles[name] ?? .inline }

    /// What separates table cells on one line.
    public var cellSeparator = "\t"

    public init(cellSeparator: String = "\t") {
        self.cellSeparator = cellSeparator
    }

    /// One rendered line: its text and the source line it starts on.
    public struct Line: Equatable, Sendable {
        public var text: String
        public var line: Int
    }

    /// The non-empty lines of `node`, read from libxml2's tree.
    public func lines(_ node: HTMLNode) -> [Line] {
        var renderer = Renderer(cellSeparator: cellSeparator)
        node.walk(&renderer)
        renderer.endLine()
        return renderer.lines
    }

    /// The non-empty lines of a Swift tree.
    public func lines(_ node: MarkupNode) -> [Line] {
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

    /// The rendering rules, on UTF-8 bytes. The line being built is `line`, a sequence of pieces (collapsed text,
    /// cell separators, and the spaces between text pieces) that start at `pieceStarts`; `text` gathers the raw text
    /// since the last cell boundary.
    private struct Renderer: MarkupVisitor {
        let cellSeparator: String
        let separatorBytes: [UInt8]
        var lines: [Line] = []
        var line: [UInt8] = []
        var pieceStarts: [Int] = []
        var text: [UInt8] = []
        var firstLine: Int?
        var cellsInRow = 0
        /// The role of each element started and not yet ended.
        var openRoles: [Role] = []

        init(cellSeparator: String) {
            self.cellSeparator = cellSeparator
            separatorBytes = Array(cellSeparator.utf8)
        }

        mutating func startElement(_ name: String) -> Bool {
            let role = MarkupText.role(of: name)
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

        mutating func endElement(_ name: String) {
            switch openRoles.removeLast() {
            case .cell: flushPiece()
            case .block, .row: endLine()
            case .inline, .lineBreak, .ignored: break
            }
        }

        mutating func text(_ bytes: [UInt8], line number: Int) {
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
        mutating func flushPiece() {
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

        mutating func appendPiece(_ bytes: [UInt8]) {
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

        mutating func endLine() {
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
