import KilnC
import KilnCore
import KilnManifest

/// A template call as written: `{{name|positional|key=value}}`. Arguments keep their byte ranges in the source, so
/// their text is only made when it is needed.
package struct WikiTemplate {
    /// One argument: named (`key=value`, with the key as `WikiName.key` gives it and `name` as written) or
    /// positional (`key` and `name` are `nil`).
    package struct Argument {
        package var key: String?
        package var value: Range<Int>
        package var name: String?

        package init(key: String?, value: Range<Int>, name: String? = nil) {
            self.key = key
            self.value = value
            self.name = name ?? key
        }
    }

    /// The name as written: trimmed, comments left out, `_` read as a space.
    package var name: String
    /// The name compared the way MediaWiki compares it (see `WikiName.key`).
    package var key: String
    package var arguments: [Argument]
    /// The whole call, from `{{` to `}}`.
    package var range: Range<Int>

    /// The value range of the `number`-th positional argument (from 1), or `nil`.
    package func positional(_ number: Int) -> Range<Int>? {
        var seen = 0
        for argument in arguments where argument.key == nil {
            seen += 1
            if seen == number { return argument.value }
        }
        return nil
    }

    /// The value range of argument `name`: positional when `name` is a number (`"1"`), else the last named one
    /// whose key matches (as MediaWiki, the last of repeated arguments wins).
    package func argument(_ name: String) -> Range<Int>? {
        if let number = Int(name) { return positional(number) }
        let key = WikiName.key(name)
        return arguments.last { $0.key == key }?.value
    }
}

/// Finds where templates end, honoring nesting (`{{a|{{b}}}}`), links (`[[x|y]]`, whose `|` separates nothing),
/// comments and `<nowiki>`; and splits a template's arguments at its own `|` and first `=`.
package enum WikiTemplateParser {
    /// MediaWiki's own limit on nesting (`$wgMaxPPExpandDepth`, 100): a template nested deeper is not read, so
    /// hostile input cannot exhaust the stack, and `tooDeep` says so (it is not "never closed").
    package static let maximumDepth = 100

    /// The template starting at `start` (which holds `{{`), or `nil` when it is never closed.
    package static func parse(_ source: WikiSource, at start: Int) -> WikiTemplate? {
        var tooDeep = false
        return parse(source, at: start, tooDeep: &tooDeep)
    }

    /// The template starting at `start`, or `nil` when it is never closed or (then `tooDeep` is set) nests other
    /// templates deeper than `maximumDepth`.
    package static func parse(_ source: WikiSource, at start: Int, tooDeep: inout Bool) -> WikiTemplate? {
        var collected: [Segment]? = []
        guard let end = scan(source, from: start, depth: 0, segments: &collected, tooDeep: &tooDeep), let segments = collected,
              !segments.isEmpty else { return nil }
        var arguments: [WikiTemplate.Argument] = []
        arguments.reserveCapacity(segments.count - 1)
        for segment in segments.dropFirst() {
            if let equals = segment.equals {
                let name = WikiName.written(source, segment.start..<equals)
                arguments.append(.init(key: name.lowercased(), value: equals + 1..<segment.end, name: name))
            } else {
                arguments.append(.init(key: nil, value: segment.start..<segment.end))
            }
        }
        let name = WikiName.written(source, segments[0].start..<segments[0].end)
        return WikiTemplate(name: name, key: name.lowercased(), arguments: arguments, range: start..<end)
    }

    /// The index just past the template starting at `start`, or `nil` when it is never closed.
    package static func end(_ source: WikiSource, from start: Int) -> Int? {
        var ignored: [Segment]? = nil
        var tooDeep = false
        return scan(source, from: start, depth: 0, segments: &ignored, tooDeep: &tooDeep)
    }

    /// The text between two of a template's own `|`, and its first own `=`.
    private typealias Segment = (start: Int, end: Int, equals: Int?)

    /// Scans one template (`braces` 2) or template parameter (`{{{1|default}}}`, `braces` 3); collects its segments
    /// (split at its own `|`) when `segments` is not `nil`.
    private static func scan(_ source: WikiSource, from start: Int, depth: Int, braces: Int = 2,
                             segments: inout [Segment]?, tooDeep: inout Bool) -> Int? {
        guard depth < maximumDepth else {
            tooDeep = true
            return nil
        }
        let bytes = source.bytes
        var index = start + braces
        var segmentStart = index
        var equals: Int?
        var links = 0
        var ignored: [Segment]? = nil
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "<"):
                if let end = source.endOfOpaque(at: index) {
                    index = end
                    continue
                }
            case UInt8(ascii: "{") where source[index + 1] == UInt8(ascii: "{"):
                let inner = source.matches("{{{", at: index) && !source.matches("{{{{", at: index) ? 3 : 2
                guard let end = scan(source, from: index, depth: depth + 1, braces: inner, segments: &ignored, tooDeep: &tooDeep) else { return nil }
                index = end
                continue
            case UInt8(ascii: "}") where source.matches(braces == 3 ? "}}}" : "}}", at: index):
                segments?.append((segmentStart, index, equals))
                return index + braces
            case UInt8(ascii: "[") where source[index + 1] == UInt8(ascii: "["):
                links += 1
                index += 2
                continue
            case UInt8(ascii: "]") where source[index + 1] == UInt8(ascii: "]") && links > 0:
                links -= 1
                index += 2
                continue
            case UInt8(ascii: "|") where links == 0:
                segments?.append((segmentStart, index, equals))
                segmentStart = index + 1
                equals = nil
            case UInt8(ascii: "=") where links == 0 && equals == nil && segments?.isEmpty == false:
                equals = index
            default:
                break
            }
            index += 1
        }
        return nil
    }
}
