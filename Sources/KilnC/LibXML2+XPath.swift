internal import CLibXML2
import Foundation

/// A compiled XPath 1.0 expression. Not `Sendable`: it wraps a libxml2 structure.
package final class XPathExpression {
    /// The expression as written.
    package let source: String
    package let compiled: OpaquePointer
    /// For the common paths fields use (`name`, `@code`, `s:location/@lat`): the steps, so that they can be followed
    /// directly instead of through the XPath engine, with the same result.
    package let simplePath: SimplePath?
    /// For a simple CSS selector (`td.content`): the test that gives the same elements as `source` by walking an
    /// HTML page's tree instead of through the XPath engine.
    package let descendantTest: DescendantElementTest?

    /// Compiles `source`.
    /// - Throws: `XPathError` with libxml2's message.
    package convenience init(_ source: String) throws {
        try self.init(source, descendantTest: nil)
    }

    /// Compiles `source`; `descendantTest`, when given, must select exactly the nodes `source` selects in an HTML
    /// document (`CSSSelector.descendantTest` gives it so).
    /// - Throws: `XPathError` with libxml2's message.
    package init(_ source: String, descendantTest: DescendantElementTest?) throws {
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
package struct SimplePath {
    package struct Name {
        package var prefix: String?
        /// The local name, NUL-terminated, for comparing with libxml2's names in place.
        package var local: [UInt8]

        package init(prefix: String?, local: String) {
            self.prefix = prefix
            self.local = Array(local.utf8) + [0]
        }
    }

    package var elements: [Name]
    package var attribute: Name?
    /// The namespace URI of each step when no step has a prefix: none at all.
    package private(set) var unprefixedURIs: [[UInt8]?]?

    package init?(_ source: String) {
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
package struct DescendantElementTest: Sendable, Equatable {
    /// The element name, NUL-terminated; `nil` for any element (`*`).
    package let name: [UInt8]?
    package let classes: [[UInt8]]
    package let ids: [[UInt8]]

    /// `nil` unless every class is a non-empty token without XML white space and every id is non-empty.
    package init?(name: String?, classes: [String], ids: [String]) {
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
    package static func isXMLSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }

    /// Whether `token` is one of the XML-white-space-separated tokens of `value` (a class attribute's classes).
    package static func hasToken(_ token: [UInt8], in value: UnsafeBufferPointer<UInt8>) -> Bool {
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
package struct XPathError: Error, CustomStringConvertible, Sendable {
    package let expression: String
    package let message: String
    package var description: String { "invalid XPath \"\(expression)\": \(message)" }
}

/// Evaluates XPath expressions against one document, with namespace prefixes registered — or against the document of
/// whichever node it is given, when made without one (`HTMLPages`).
/// Not `Sendable`: it owns a libxml2 context.
package final class XPathEvaluator {
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
