import CLibXML2

/// libxml2's tolerant HTML parser, and whether it stopped before the end of the page. libxml2 keeps the part it read
/// and returns the document as if the page ended there — on nesting deeper than 256 elements, a text node over
/// 10 MB, an input it cannot look ahead in — saying why only in its last error (its error printing is off). Every
/// such stop is an internal or memory error; the errors it recovers from (unclosed tags, stray text) are not.
enum HTMLParser {
    /// The parsed page, or `nil` when there is nothing to parse (no bytes, more than 2 GiB); and why the parse
    /// stopped early, when it did. The caller owns the document.
    static func parse(_ bytes: [UInt8], encoding: String?) -> (document: UnsafeMutablePointer<xmlDoc>?, stop: XMLIssue?) {
        _ = LibXML2.setUp
        // A UTF-8 byte-order mark says UTF-8, as libxml2 would find for itself on longer pages; on a page of three
        // bytes it would keep the mark as text.
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { return parse(Array(bytes.dropFirst(3)), encoding: encoding ?? "UTF-8") }
        guard !bytes.isEmpty, bytes.count <= Int(Int32.max) else { return (nil, nil) }
        xmlResetLastError()
        let parsed = bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) {
                htmlReadMemory($0.baseAddress, Int32($0.count), nil, encoding, LibXML2.htmlOptions)
            }
        }
        guard let document = parsed else { return (nil, nil) }
        let stops = [Int32(XML_ERR_INTERNAL_ERROR.rawValue), Int32(XML_ERR_NO_MEMORY.rawValue)]
        guard let error = xmlGetLastError()?.pointee, stops.contains(error.code) else { return (document, nil) }
        let message = error.message.map { String(cString: $0).trimmingCharacters(in: .whitespacesAndNewlines) } ?? "error \(error.code)"
        return (document, XMLIssue(kind: .malformed, message: message, line: error.line > 0 ? Int(error.line) : nil,
                                   column: error.int2 > 0 ? Int(error.int2) : nil))
    }
}
