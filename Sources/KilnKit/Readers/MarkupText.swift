/// Renders HTML as lines of text the way a reader sees the page: block elements and `<br>` end a line, table cells
/// are separated by a configurable string, scripts, styles and comments are dropped, and white space (including
/// no-break spaces) is collapsed within each line. Each line keeps the source line of its first text.
public struct MarkupText {
    /// Elements that start and end a line of their own.
    static let blockElements: Set<String> = [
        "address", "article", "aside", "blockquote", "body", "caption", "dd", "div", "dl", "dt", "fieldset",
        "figcaption", "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hr", "li", "main",
        "nav", "ol", "p", "pre", "section", "table", "tbody", "tfoot", "thead", "tr", "ul", "html",
    ]
    /// Elements whose content is never text.
    static let ignoredElements: Set<String> = ["script", "style", "noscript", "template", "head", "iframe", "object"]

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

    /// The non-empty lines of `node`.
    public func lines(_ node: MarkupNode) -> [Line] {
        var state = State(cellSeparator: cellSeparator)
        state.render(node)
        state.endLine()
        return state.lines
    }

    private struct State {
        let cellSeparator: String
        var lines: [Line] = []
        var pieces: [String] = []
        var current = ""
        var firstLine: Int?
        var cellsInRow = 0

        init(cellSeparator: String) { self.cellSeparator = cellSeparator }

        mutating func render(_ node: MarkupNode) {
            switch node {
            case .text(let text, let line):
                if firstLine == nil, text.contains(where: { !$0.isWhitespace }) { firstLine = line }
                current += text
            case .element(let name, _, _, let children):
                if MarkupText.ignoredElements.contains(name) { return }
                if name == "br" { endLine(); return }
                let block = MarkupText.blockElements.contains(name)
                if block { endLine() }
                if name == "tr" { cellsInRow = 0 }
                if name == "td" || name == "th" {
                    flushPiece()
                    if cellsInRow > 0 { pieces.append(cellSeparator) }
                    cellsInRow += 1
                }
                for child in children { render(child) }
                if name == "td" || name == "th" { flushPiece() }
                if block { endLine() }
            }
        }

        /// Collapses white space in the text gathered since the last cell boundary.
        mutating func flushPiece() {
            let collapsed = TextFolding.collapseSpaces(current)
            if !collapsed.isEmpty {
                if let last = pieces.last, last != cellSeparator, !pieces.isEmpty { pieces.append(" ") }
                pieces.append(collapsed)
            }
            current = ""
        }

        mutating func endLine() {
            flushPiece()
            while pieces.last == cellSeparator || pieces.last == " " { pieces.removeLast() }
            let text = pieces.joined()
            if !text.isEmpty { lines.append(Line(text: text, line: firstLine ?? 0)) }
            pieces = []
            firstLine = nil
        }
    }
}
