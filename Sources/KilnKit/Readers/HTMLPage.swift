/// Opens one HTML page for a reader (`html`, `webpage`), reporting what keeps it from being read whole: a page over
/// the size limit (`html.too-large`, not parsed), one libxml2 cannot parse (`html.unreadable`), a declared legacy
/// encoding over UTF-8 text (`encoding.mismatch`), and where libxml2 stopped (`html.malformed`) or read bytes that
/// are not the page's encoding (`encoding`).
enum HTMLPage {
    /// The parsed page, or `nil` (reported) when there is nothing to read.
    /// - Parameter consequence: what an unreadable page means for this reader, for its message.
    /// - Throws: `KilnError.io` when the file cannot be read.
    static func open(_ input: InputFile, encoding: String?, maxPageBytes: Int, consequence: String, log: DiagnosticLog) throws -> HTMLDocument? {
        if let size = OutputPath.size(of: input.url), size > maxPageBytes {
            log.report(.htmlTooLarge, .error, "the page is \(size) bytes, over the limit of \(maxPageBytes) bytes per page "
                           + "(the source's maxPageBytes option); it is not read", at: input.at(nil))
            return nil
        }
        let document: HTMLDocument?
        do {
            document = try HTMLDocument(path: input.url.path, encoding: encoding)
        } catch is HTMLParseError {
            document = nil
        }
        guard let document, !document.isEmpty else {
            log.report(.htmlUnreadable, .error, "\(HTMLParseError(name: input.relativePath).description); \(consequence)", at: input.at(nil))
            return nil
        }
        EncodingMismatch.checkMarkup(input, override: encoding, log: log)
        for problem in document.problems {
            let place = input.at(problem.line, column: problem.column)
            switch problem.kind {
            case .stopped:
                log.report(.htmlMalformed, .error, "malformed HTML: \(problem.message); the rest of this page is not read", at: place)
            case .garbled:
                log.report(.encoding, .error, "the page is not valid UTF-8 here (\(problem.message)); the rest of it reads as ISO-8859-1, "
                               + "garbled: if the page is in a legacy code page, set the source's \"encoding\" option", at: place)
            }
        }
        return document
    }
}
