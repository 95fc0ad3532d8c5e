import Foundation
import KilnC
import KilnCore

/// What `kiln init` learns of an XML document in one streamed pass (libxml2's SAX parser, with the `xml` reader's
/// safety rules): each element path, how often it occurs, how often at most under one parent, its attributes and
/// children in the order first written, and whether it holds text or elements. The repeating records are the element
/// paths that repeat under one parent and carry simple fields (attributes, or children holding only text).
package final class XMLShape: XMLEventHandler {
    /// One element path (`/body/route/stop`, local names) as the document writes it.
    package struct Element {
        package var localName: String
        package var namespace: String?
        package var count = 0
        /// The most occurrences under one parent element.
        package var mostUnderOneParent = 0
        package var attributes: [(localName: String, namespace: String?)] = []
        /// The child element paths, in the order first written.
        package var children: [String] = []
        package var holdsElements = false
        package var holdsText = false
    }

    package private(set) var elements: [String: Element] = [:]
    /// The element paths in the order first written.
    package private(set) var order: [String] = []
    /// The names of KML's `ExtendedData` values (`Data` and `SimpleData` elements' `name`), in the order first written.
    package private(set) var dataNames: [String] = []
    private var stack: [(path: String, children: [String: Int], text: Bool)] = []
    private var buffer: [UInt8] = []

    package init() {}

    /// Reads `source` (the file at `path`). Returns false when the document declares a document type, which the
    /// streamed pass does not read.
    /// - Throws: `KilnError.usage` naming libxml2's complaint when the document is malformed.
    package func read(_ source: ByteStream, path: String, shownAs name: String) throws -> Bool {
        let parser = XMLEventParser(source: source, path: path, encoding: nil, handler: self)
        if try parser.parse() == .documentType { return false }
        if let issue = parser.issues.first(where: { $0.kind != .warning }) {
            throw KilnError.usage("\(name) is not XML kiln init can sketch: \(issue.line.map { "line \($0): " } ?? "")\(issue.message)")
        }
        return true
    }

    package func start(_ tag: XMLStartTag) -> Bool {
        let path = (stack.last?.path ?? "") + "/" + tag.localName
        if elements[path] == nil {
            elements[path] = Element(localName: tag.localName, namespace: tag.namespace)
            order.append(path)
        }
        elements[path]!.count += 1
        if tag.localName == "Data" || tag.localName == "SimpleData", let name = tag.attribute("name", namespace: nil), !dataNames.contains(name) {
            dataNames.append(name)
        }
        for attribute in tag.attributeNames where !elements[path]!.attributes.contains(where: { $0 == attribute }) {
            elements[path]!.attributes.append(attribute)
        }
        if let parent = stack.last?.path {
            elements[parent]!.holdsElements = true
            if !elements[parent]!.children.contains(path) { elements[parent]!.children.append(path) }
            stack[stack.count - 1].children[path, default: 0] += 1
        }
        stack.append((path, [:], false))
        return true
    }

    package func end() -> Bool {
        guard let closed = stack.popLast() else { return true }
        for (child, count) in closed.children { elements[child]!.mostUnderOneParent = max(elements[child]!.mostUnderOneParent, count) }
        if stack.isEmpty { elements[closed.path]!.mostUnderOneParent = max(elements[closed.path]!.mostUnderOneParent, 1) }
        return true
    }

    package func text(_ text: XMLText) {
        guard let path = stack.last?.path, !elements[path]!.holdsText else { return }
        buffer.removeAll(keepingCapacity: true)
        text.append(to: &buffer)
        if buffer.contains(where: { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }) { elements[path]!.holdsText = true }
    }

    /// A child that is a simple field of its parent: it holds no elements and occurs at most once in each parent.
    package func isSimpleField(_ path: String) -> Bool {
        guard let element = elements[path] else { return false }
        return !element.holdsElements && element.mostUnderOneParent <= 1
    }

    /// The repeating records, in document order: element paths that occur more than once under one parent and hold
    /// an attribute, text beside their attributes, or a simple child.
    package var records: [String] {
        order.filter { path in
            let element = elements[path]!
            guard element.mostUnderOneParent > 1, element.holdsElements || !element.attributes.isEmpty else { return false }
            return !element.attributes.isEmpty || element.children.contains(where: isSimpleField)
        }
    }
}

/// What `kiln init` learns of a JSON document in one streamed pass (yajl): each value path (`departures/*/route`,
/// `*` for an array's elements), how many objects it holds, and each object path's members in the order first
/// written with the kind of their values. The records are the arrays of objects not inside another one; a document
/// holding none is one record, its root object.
package final class JSONShape {
    /// The kind of a member's values: a scalar (string, number, boolean, null), an object, an array, or several.
    package enum Kind: Equatable { case scalar, object, array, mixed }

    /// Objects counted per value path.
    package private(set) var objects: [String: Int] = [:]
    /// Members per object path, in the order first written, with the kind of their values.
    package private(set) var members: [String: [(name: String, kind: Kind)]] = [:]
    /// The object paths in the order first written.
    package private(set) var order: [String] = []

    package init() {}

    /// Reads `source`.
    /// - Throws: `KilnError.usage` naming yajl's complaint when the document is malformed.
    package func read(_ source: ByteStream, shownAs name: String) throws {
        // Each open container: its path and, for an object, the member whose value comes next.
        var stack: [(path: String, isArray: Bool, key: String?)] = []
        func valuePath() -> String {
            guard let top = stack.last else { return "" }
            let step = top.isArray ? "*" : (top.key ?? "")
            return top.path.isEmpty ? step : top.path + "/" + step
        }
        func note(_ kind: Kind) {
            guard let top = stack.last, !top.isArray, let key = top.key else { return }
            var list = members[top.path] ?? []
            if let index = list.firstIndex(where: { $0.name == key }) {
                if list[index].kind != kind { list[index].kind = .mixed }
            } else {
                list.append((key, kind))
            }
            members[top.path] = list
        }
        let error = try JSONStream.parse(source) { event, _ in
            switch event {
            case .key(let key): stack[stack.count - 1].key = key
            case .startObject:
                note(.object)
                let path = valuePath()
                if objects[path] == nil { order.append(path) }
                objects[path, default: 0] += 1
                stack.append((path, false, nil))
            case .startArray:
                note(.array)
                stack.append((valuePath(), true, nil))
            case .endObject, .endArray: stack.removeLast()
            case .string, .number, .bool, .null: note(.scalar)
            }
            return true
        }
        if let error { throw KilnError.usage("\(name) is not JSON kiln init can sketch: \(error)") }
        foldMaps()
    }

    /// The object paths that are maps keyed by id (Pannellum's `"scenes": {"pond": {…}, "pondCube": {…}}`): two or
    /// more members, every one an object, sharing at least a third of their member names.
    private func mapPaths() -> Set<String> {
        Set(order.filter { path in
            let list = members[path] ?? []
            guard list.count > 1, list.allSatisfy({ $0.kind == .object }) else { return false }
            let names = list.map { Set((members[path.isEmpty ? $0.name : path + "/" + $0.name] ?? []).map(\.name)) }
            let shared = names.dropFirst().reduce(names[0]) { $0.intersection($1) }, all = names.reduce(Set<String>()) { $0.union($1) }
            return !all.isEmpty && shared.count * 3 >= all.count
        })
    }

    /// Folds the members of each map into `*` (`scenes/*/hotSpots/*`), so that an id added later is read too, and marks
    /// the records at a map's `*` as keyed (their id is their member name: `@key`).
    private func foldMaps() {
        let maps = mapPaths()
        guard !maps.isEmpty else { return }
        func folded(_ path: String) -> String {
            guard !path.isEmpty else { return "" }
            var literal: String?, steps: [String] = []
            for step in path.split(separator: "/", omittingEmptySubsequences: false).map(String.init) {
                steps.append(maps.contains(literal ?? "") ? "*" : step)
                literal = literal.map { $0 + "/" + step } ?? step
            }
            return steps.joined(separator: "/")
        }
        var newObjects: [String: Int] = [:], newMembers: [String: [(name: String, kind: Kind)]] = [:], newOrder: [String] = []
        for path in order {
            let target = folded(path)
            if newObjects[target] == nil { newOrder.append(target) }
            newObjects[target, default: 0] += objects[path] ?? 0
            guard !maps.contains(path) else {
                newMembers[target] = newMembers[target] ?? []
                continue
            }
            var list = newMembers[target] ?? []
            for member in members[path] ?? [] {
                if let index = list.firstIndex(where: { $0.name == member.name }) {
                    if list[index].kind != member.kind { list[index].kind = .mixed }
                } else {
                    list.append(member)
                }
            }
            newMembers[target] = list
        }
        keyed = Set(maps.map { folded($0).isEmpty ? "*" : folded($0) + "/*" })
        objects = newObjects
        members = newMembers
        order = newOrder
    }

    /// The record paths whose records are a map's members: their member name is their id (`@key`).
    package private(set) var keyed: Set<String> = []

    /// The record paths: the root (`""`) when it is an object with a scalar member, or with no array of objects in it
    /// (one record per file, as Tate's artworks); then each array element path holding objects (`departures/*`), and
    /// each member of a map keyed by id (`scenes/*`), at any depth (a scene's hotspots are records of their own).
    package var records: [String] {
        let arrays = order.filter { $0 == "*" || $0.hasSuffix("/*") }
        let rootIsRecord = objects[""] != nil && (arrays.isEmpty || (members[""] ?? []).contains { $0.kind == .scalar })
        return (rootIsRecord ? [""] : []) + arrays
    }

    /// The record `record` lies in: the longest other record path before it (the root's `""` included).
    package func enclosing(_ record: String) -> String? {
        guard !record.isEmpty else { return nil }
        return records.filter { $0 != record && ($0.isEmpty || record.hasPrefix($0 + "/")) }.max { $0.count < $1.count }
    }

    /// What identifies a record at `record` for the records inside it: its member name when it is a map's (`@key`),
    /// else its scalar member `id`, else one ending in `_id` or `Id`, else in `number`, `code` or `key`
    /// (`trainNumber`), else its first scalar member.
    package func identifier(of record: String) -> String? {
        if keyed.contains(record) { return "@key" }
        let scalars = (members[record] ?? []).filter { $0.kind == .scalar && !$0.name.isEmpty && !$0.name.contains("/") && !$0.name.contains("*") && !$0.name.hasPrefix("@") && $0.name != "." }.map(\.name)
        let named = { (suffixes: [String]) in scalars.first { name in suffixes.contains { name.lowercased().hasSuffix($0) } } }
        return scalars.first { $0 == "id" } ?? named(["_id", "id"]) ?? named(["number", "code", "key"]) ?? scalars.first
    }

    /// The fields of the records at `path`: each member, an object of scalars as its members (`route/name`), any
    /// other object or array whole (its compact JSON).
    package func fields(of path: String) -> [String] {
        // A member holding other records is theirs, not a field of these; a name with "/" or "*", or "@…", "." and ""
        // (path syntax), is left to json.unread.
        let others = records.filter { $0 != path }
        let plain = { (name: String) in !name.isEmpty && name != "." && !name.hasPrefix("@") && !name.contains("/") && !name.contains("*") }
        return (keyed.contains(path) ? ["@key"] : []) + (members[path] ?? []).filter { member in
            let inner = path.isEmpty ? member.name : path + "/" + member.name
            return plain(member.name) && !others.contains { $0.hasPrefix(inner + "/") }
        }.flatMap { member -> [String] in
            let inner = path.isEmpty ? member.name : path + "/" + member.name
            if member.kind == .object, let scalars = members[inner], !scalars.isEmpty, scalars.allSatisfy({ $0.kind == .scalar && plain($0.name) }) {
                return scalars.map { member.name + "/" + $0.name }
            }
            return [member.name]
        }
    }
}
