internal import CLibXML2
import Foundation

/// Process-wide libxml2 set-up: silence its stderr printing and refuse every external entity.
package enum LibXML2 {
    /// Call before any parse; runs once.
    package static let setUp: Void = {
        xmlInitParser()
        kiln_xml_silence()
        kiln_xml_refuse_external_entities()
    }()

    /// Parser options for XML: no network, CDATA as text, line numbers past 65 535; never NOENT (entity
    /// substitution), DTDLOAD or HUGE, so entities are not expanded, external DTDs are not read and libxml2's depth
    /// limit (256) holds.
    package static let xmlOptions = Int32(XML_PARSE_NONET.rawValue | XML_PARSE_NOCDATA.rawValue | XML_PARSE_COMPACT.rawValue
                                  | XML_PARSE_BIG_LINES.rawValue)

    /// Parser options for HTML: recover from real pages, no network, no printed errors, big line numbers.
    package static let htmlOptions = Int32(HTML_PARSE_RECOVER.rawValue | HTML_PARSE_NONET.rawValue | HTML_PARSE_NOERROR.rawValue
                                   | HTML_PARSE_NOWARNING.rawValue | HTML_PARSE_COMPACT.rawValue | XML_PARSE_BIG_LINES.rawValue)

    /// libxml2's message as a user reads it: the advice to set `XML_PARSE_HUGE` (an option Kiln never sets, on
    /// purpose) becomes "libxml2's limit", and "Document is empty" (said of any file that holds no element, such as
    /// plain text or random bytes) says so.
    package static func userMessage(_ message: String) -> String {
        if message.hasPrefix("Document is empty") {
            return "the file holds no XML element: is it XML at all? (libxml2: Document is empty)"
        }
        for advice in [", use XML_PARSE_HUGE option", " use XML_PARSE_HUGE option"] where message.contains(advice) {
            return message.replacingOccurrences(of: advice, with: "") + " (libxml2's limit, which Kiln keeps)"
        }
        return message
    }

    /// Takes ownership of a libxml2 string, frees it, and returns it as a Swift string.
    static func take(_ pointer: UnsafeMutablePointer<xmlChar>?) -> String? {
        guard let pointer else { return nil }
        defer { kiln_xml_free(pointer) }
        return String(cString: pointer)
    }

    static func string(_ pointer: UnsafePointer<xmlChar>?) -> String? {
        pointer.map { String(cString: $0) }
    }

    /// libxml2's last error message, trimmed.
    package static func lastErrorMessage() -> String {
        guard let error = xmlGetLastError(), let message = error.pointee.message else { return "unknown error" }
        return String(cString: message).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

/// A problem libxml2 reported, or a construct Kiln refused, with its place in the file.
package struct XMLIssue: Sendable, Equatable {
    /// What kind of problem.
    package enum Kind: Sendable, Equatable {
        /// libxml2 could not parse the document; reading stops here.
        case malformed
        /// A warning libxml2 gave while going on.
        case warning
        /// The document declares entities (a billion-laughs bomb or an external entity); reading stops.
        case entityDeclarations
        /// A reference to an entity that is not defined; reading stops.
        case undefinedEntity
        /// The document names an external DTD, which is never loaded.
        case externalDTD
    }

    package let kind: Kind
    package let message: String
    package let line: Int?
    package let column: Int?
}

/// Collects libxml2's structured errors while an XML document is read (the first error, and warnings); a class so
/// that the C callback can reach it through a pointer.
package final class XMLIssueCollector {
    package var issues: [XMLIssue] = []

    func record(_ error: xmlError) {
        let message = LibXML2.userMessage(error.message.map { String(cString: $0).trimmingCharacters(in: .whitespacesAndNewlines) } ?? "error \(error.code)")
        let line = error.line > 0 ? Int(error.line) : nil
        let kind: XMLIssue.Kind
        if error.level == XML_ERR_WARNING {
            kind = .warning
        } else if error.code == Int32(XML_ERR_ENTITY_LOOP.rawValue) {
            kind = .entityDeclarations
        } else if message.lowercased().contains("entity") {
            kind = .undefinedEntity
        } else {
            kind = .malformed
        }
        add(XMLIssue(kind: kind, message: message, line: line, column: error.int2 > 0 ? Int(error.int2) : nil))
    }

    /// Keeps `issue` unless it is a second error: reading stops at the first, and what libxml2 says after it follows
    /// from it.
    package func add(_ issue: XMLIssue) {
        if issue.kind != .warning, issues.contains(where: { $0.kind != .warning }) { return }
        issues.append(issue)
    }
}

/// Finds the line of a document's `<!DOCTYPE`: libxml2's reader knows only how far it has read ahead.
package enum DocumentTypeLocator {
    /// How much of a document's start is searched: 1 MiB.
    package static let searchedLength = 1 << 20

    /// The 1-based line of `<!DOCTYPE` within `prefix`, the first `searchedLength` bytes of a document, or `nil`.
    package static func line(in prefix: [UInt8]) -> Int? {
        let marker = Array("<!DOCTYPE".utf8)
        guard prefix.count >= marker.count else { return nil }
        for index in 0...(prefix.count - marker.count) where prefix[index] == marker[0] && Array(prefix[index..<index + marker.count]) == marker {
            return prefix[..<index].reduce(1) { $1 == 0x0A ? $0 + 1 : $0 }
        }
        return nil
    }
}

extension DocumentTypeLocator {
    /// What is wrong with the start of a `<!DOCTYPE` declaration in `prefix` that libxml2 lets through, with its line:
    /// no white space before the root element's name (`<!DOCTYPEdoc>`), or an internal subset after the declaration
    /// has ended (`<!DOCTYPE doc>[]>`, which libxml2 reads as the subset). `nil` when neither (or no declaration).
    package static func problem(in prefix: [UInt8]) -> (message: String, line: Int)? {
        let marker = Array("<!DOCTYPE".utf8)
        guard prefix.count > marker.count,
              let start = (0...(prefix.count - marker.count)).first(where: { prefix[$0] == 0x3C && Array(prefix[$0..<$0 + marker.count]) == marker })
        else { return nil }
        func line(at offset: Int) -> Int { prefix[..<offset].reduce(1) { $1 == 0x0A ? $0 + 1 : $0 } }
        let blank: Set<UInt8> = [0x20, 0x09, 0x0A, 0x0D]
        var index = start + marker.count
        guard index < prefix.count else { return nil }
        guard blank.contains(prefix[index]) else {
            return ("white space must follow <!DOCTYPE, before the root element's name", line(at: start))
        }
        // The name and an external identifier, quoted literals skipped, up to `[` (the internal subset) or `>`.
        var quote: UInt8?
        while index < prefix.count {
            let byte = prefix[index]
            if let open = quote {
                if byte == open { quote = nil }
            } else if byte == 0x22 || byte == 0x27 {
                quote = byte
            } else if byte == 0x5B {
                return nil
            } else if byte == 0x3E {
                var next = index + 1
                while next < prefix.count, blank.contains(prefix[next]) { next += 1 }
                guard next < prefix.count, prefix[next] == 0x5B else { return nil }
                return ("an internal subset ('[') after the DOCTYPE declaration has ended with '>'", line(at: next))
            }
            index += 1
        }
        return nil
    }
}

/// An HTML element or text as Swift values, with the line it starts on.
package indirect enum MarkupNode: Sendable, Equatable {
    case element(name: String, attributes: [String: String], line: Int, children: [MarkupNode])
    case text(String, line: Int)
}

extension XMLIssue {
    /// `issues` with the cut of an element with too many attributes (`MarkupAttributeScan`) as their error: what
    /// libxml2 says of the document it was given, which ends before that element, follows from the cut.
    package static func withCut(_ issues: [XMLIssue], _ cut: MarkupAttributeScan.Overfull?) -> [XMLIssue] {
        guard let cut else { return issues }
        let message = "an element has more than \(MarkupAttributeScan.maximumAttributes) attributes (libxml2's check of them is quadratic)"
        return issues.filter { $0.kind == .warning && ($0.line ?? 0) <= cut.line }
            + [XMLIssue(kind: .malformed, message: message, line: cut.line, column: nil)]
    }
}
