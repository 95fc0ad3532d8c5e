import Foundation

/// Opens one HTML page for a reader (`html`, `webpage`), reporting what keeps it from being read whole: a page over
/// the size limit (`html.too-large`, not parsed), one libxml2 cannot parse (`html.unreadable`), a declared legacy
/// encoding over UTF-8 text (`encoding.mismatch`), and where libxml2 stopped (`html.malformed`) or read bytes that
/// are not the page's encoding (`encoding`).
enum HTMLPage {
    /// The parsed page, or `nil` (reported) when there is nothing to read. The file is read once: its bytes go to
    /// libxml2 and to the check of its declared encoding.
    /// - Parameters:
    ///   - consequence: what an unreadable page means for this reader, for its message.
    ///   - declarations: the encoding declaration patterns, compiled once per source.
    ///   - pages: what the pages of a source share.
    /// - Throws: `KilnError.io` when the file cannot be read.
    static func open(_ input: InputFile, encoding: String?, maxPageBytes: Int, consequence: String,
                     declarations: EncodingMismatch.Declarations = .init(), pages: HTMLPages? = nil, log: DiagnosticLog) throws -> HTMLDocument? {
        let cannotRead = KilnError.io("cannot read the HTML page \(input.url.path)")
        func tooLarge(_ size: Int) -> Bool {
            guard size > maxPageBytes else { return false }
            log.report(.htmlTooLarge, .error, "the page is \(size) bytes, over the limit of \(maxPageBytes) bytes per page "
                           + "(the source's maxPageBytes option); it is not read", at: input.at(nil))
            return true
        }
        guard let handle = FileHandle(forReadingAtPath: input.url.path) else {
            if let size = OutputPath.size(of: input.url), tooLarge(size) { return nil }
            throw cannotRead
        }
        defer { try? handle.close() }
        var status = stat()
        if fstat(handle.fileDescriptor, &status) == 0, tooLarge(Int(status.st_size)) { return nil }
        let bytes: [UInt8]
        do { bytes = [UInt8](try handle.readToEnd() ?? Data()) } catch { throw cannotRead }
        let document: HTMLDocument?
        do {
            document = try HTMLDocument(bytes: bytes, encoding: encoding, name: input.url.path, pages: pages)
        } catch is HTMLParseError {
            document = nil
        }
        guard let document, !document.isEmpty else {
            log.report(.htmlUnreadable, .error, "\(HTMLParseError(name: input.relativePath).description); \(consequence)", at: input.at(nil))
            return nil
        }
        EncodingMismatch.checkMarkup(input, prefix: bytes[...], override: encoding, declarations: declarations, log: log)
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
