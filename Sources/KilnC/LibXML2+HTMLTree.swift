internal import CLibXML2
import Foundation

/// A parsed HTML page (libxml2's tolerant HTML parser: unclosed tags, entities, `<meta>` charset).
/// Not `Sendable`: it owns the document.
package final class HTMLDocument {
    private let document: UnsafeMutablePointer<xmlDoc>
    private lazy var evaluator = shared?.evaluator ?? XPathEvaluator(document: document, namespaces: [:])
    private let shared: HTMLPages?


    /// Parses an HTML fragment (such as a KML description) given as text.
    /// - Throws: `HTMLParseError` when libxml2 makes nothing of it.
    package convenience init(fragment: String) throws {
        try self.init(bytes: Array(fragment.utf8), encoding: "UTF-8", name: "fragment")
    }

    /// True when the page holds no element at all (only a byte-order mark, white space or comments).
    package var isEmpty: Bool { xmlDocGetRootElement(document) == nil }

    /// Where libxml2 stopped before the end of the page, or went on reading it garbled; empty when it read the whole
    /// page as it is.
    package let problems: [HTMLParser.Problem]

    /// Parses a page whose bytes the caller read; `name` is for the error. Pages parsed with the same `pages`
    /// share what does not depend on the page.
    /// - Throws: `HTMLParseError` when libxml2 makes nothing of the bytes.
    package init(bytes: [UInt8], encoding: String?, name: String, pages: HTMLPages? = nil) throws {
        let (parsed, problems) = HTMLParser.parse(bytes, encoding: encoding)
        shared = pages
        guard let parsed else { throw HTMLParseError(name: name) }
        document = parsed
        self.problems = problems
    }

    deinit { xmlFreeDoc(document) }

    /// The root element as a Swift tree, or an empty element for an empty page.
    package var root: MarkupNode {
        guard let element = xmlDocGetRootElement(document) else { return .element(name: "", attributes: [:], line: 0, children: []) }
        return HTMLDocument.tree(element)
    }

    /// The elements `expression` selects (from the document root), as Swift trees.
    package func select(_ expression: XPathExpression) -> [MarkupNode] {
        nodes(expression).map { HTMLDocument.tree($0.node) }
    }

    /// The nodes `expression` selects (from the document root), in document order, as they are in libxml2's tree.
    package func nodes(_ expression: XPathExpression) -> [HTMLNode] {
        guard let evaluator, let root = xmlDocGetRootElement(document) else { return [] }
        return evaluator.nodes(expression, at: root).map { HTMLNode(node: $0, document: self) }
    }

    /// The root element, or `nil` for an empty page.
    package var rootNode: HTMLNode? {
        xmlDocGetRootElement(document).map { HTMLNode(node: $0, document: self) }
    }

    /// For each node `records` selects, in document order: its line, its 1-based position among the selected
    /// nodes with the same parent, and the value of each of `fields` evaluated on it (`nil` where a field selects
    /// nothing). A field that selects an element is first given to `render` (its first element in document order):
    /// the value is what `render` returns, or the string value when it returns `nil`.
    package func records(_ records: XPathExpression, fields: [XPathExpression],
                        render: (HTMLNode) -> String? = { _ in nil }) -> [(line: Int, position: Int, values: [String?])] {
        guard let evaluator, let root = xmlDocGetRootElement(document) else { return [] }
        var countByParent: [UnsafeMutablePointer<xmlNode>?: Int] = [:]
        return evaluator.nodes(records, at: root).map { node in
            let position = (countByParent[node.pointee.parent] ?? 0) + 1
            countByParent[node.pointee.parent] = position
            return (Int(xmlGetLineNo(node)), position, fields.map { field in
                guard let first = evaluator.nodes(field, at: node).first else { return evaluator.string(field, at: node) }
                if first.pointee.type == XML_ELEMENT_NODE, let text = render(HTMLNode(node: first, document: self)) { return text }
                return LibXML2.take(xmlXPathCastNodeToString(first))
            })
        }
    }

    /// The string value of `expression` evaluated on the document root; `nil` when it selects nothing.
    package func string(_ expression: XPathExpression) -> String? {
        guard let evaluator, let root = xmlDocGetRootElement(document) else { return nil }
        return evaluator.string(expression, at: root)
    }

    /// Copies a libxml2 subtree into Swift values; comments and processing instructions are left out.
    static func tree(_ node: UnsafeMutablePointer<xmlNode>) -> MarkupNode {
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
package final class HTMLPages {
    package let evaluator = XPathEvaluator(document: nil, namespaces: [:])

    package init() {}
}

/// Receives a subtree of an HTML page from `HTMLNode.walk`, node by node in document order.
package protocol MarkupVisitor {
    /// An element starts (its name in lower case); returning false skips its content and its end.
    mutating func startElement(_ name: String) -> Bool
    /// The innermost element started, and not skipped, ends.
    mutating func endElement(_ name: String)
    /// A text node: its UTF-8 bytes (valid UTF-8) and the line its first visible character is on.
    mutating func text(_ bytes: [UInt8], line: Int)
}

/// One node of a parsed page, in libxml2's tree; it keeps its document alive.
/// Not `Sendable`: it points into the document.
package struct HTMLNode {
    let node: UnsafeMutablePointer<xmlNode>
    private let document: HTMLDocument

    init(node: UnsafeMutablePointer<xmlNode>, document: HTMLDocument) {
        self.node = node
        self.document = document
    }

    /// The node as a Swift tree (what `HTMLDocument.select` gives).
    package var tree: MarkupNode { HTMLDocument.tree(node) }

    /// Reports this node and everything under it to `visitor`, in document order, straight from libxml2's tree: the
    /// elements, the text and CDATA nodes; not comments, processing instructions or attributes. It gives what a walk
    /// over `tree` would, without making it.
    package func walk<Visitor: MarkupVisitor>(_ visitor: inout Visitor) {
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
package struct HTMLParseError: Error, CustomStringConvertible, Sendable {
    package let name: String
    package var description: String { "\(name) holds no HTML that can be parsed (is it empty?)" }

    /// The page called `name` could not be parsed.
    package init(name: String) { self.name = name }
}
