import CLibXML2

/// libxml2's tolerant HTML parser, with what it does not say while recovering: where it stopped before the end of the
/// page, and where it began to read the page in another encoding. Both happen without failing the parse — libxml2
/// returns the document as if the page ended there, or goes on with garbled text — and are visible only in its
/// errors, collected here through a structured error handler while the page is parsed (its printing is off).
enum HTMLParser {
    /// What went wrong with a page that still parsed.
    struct Problem: Sendable, Equatable {
        enum Kind: Sendable, Equatable {
            /// Parsing stopped: nesting deeper than 256 elements, a text node over 10 MB, bytes the page's encoding
            /// cannot convert. The rest of the page is missing.
            case stopped
            /// Bytes that are not UTF-8 in a page read as UTF-8: libxml2 reads the rest of the page as ISO-8859-1. The
            /// message names the bytes.
            case garbled
        }

        let kind: Kind
        /// libxml2's message.
        let message: String
        let line: Int?
        let column: Int?
    }

    /// The parsed page, or `nil` when there is nothing to parse (no bytes, more than 2 GiB); and what went wrong
    /// while parsing it. The caller owns the document.
    static func parse(_ bytes: [UInt8], encoding: String?) -> (document: UnsafeMutablePointer<xmlDoc>?, problems: [Problem]) {
        _ = LibXML2.setUp
        // A UTF-8 byte-order mark says UTF-8, as libxml2 would find for itself on longer pages; on a page of three
        // bytes it would keep the mark as text.
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { return parse(Array(bytes.dropFirst(3)), encoding: encoding ?? "UTF-8") }
        guard !bytes.isEmpty, bytes.count <= Int(Int32.max) else { return (nil, []) }
        let box = ErrorBox()
        xmlSetStructuredErrorFunc(Unmanaged.passUnretained(box).toOpaque()) { context, error in
            guard let context, let error else { return }
            Unmanaged<ErrorBox>.fromOpaque(context).takeUnretainedValue().errors.append(Reported(error.pointee))
        }
        defer { xmlSetStructuredErrorFunc(nil, nil) }
        let parsed = bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) {
                htmlReadMemory($0.baseAddress, Int32($0.count), nil, encoding, LibXML2.htmlOptions)
            }
        }
        return (parsed, problems(in: box.errors))
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
        let domain: Int32
        let code: Int32
        let message: String
        /// The first string argument of the message (for an encoding error, the bytes).
        let detail: String?
        /// Where on the page, when libxml2 says.
        let position: (line: Int, column: Int?)?

        init(_ error: xmlError) {
            domain = error.domain
            code = error.code
            message = LibXML2.userMessage(error.message.map { String(cString: $0).trimmingCharacters(in: .whitespacesAndNewlines) } ?? "error \(error.code)")
            detail = error.str1.map { String(cString: $0).trimmingCharacters(in: .whitespacesAndNewlines) }
            position = error.line > 0 ? (Int(error.line), error.int2 > 0 ? Int(error.int2) : nil) : nil
        }
    }

    /// Collects libxml2's structured errors; a class so that the C callback can reach it through a pointer.
    private final class ErrorBox {
        var errors: [Reported] = []
    }
}
