import Foundation
import KilnC
import KilnCore
import KilnManifest

/// Opens one HTML page for a reader (`html`, `webpage`), reporting what keeps it from being read whole: a page over
/// the size limit (`html.too-large`, not parsed), one libxml2 cannot parse (`html.unreadable`), a declared legacy
/// encoding over UTF-8 text (`encoding.mismatch`), and where libxml2 stopped (`html.malformed`) or read bytes that
/// are not the page's encoding (`encoding`).
package enum HTMLPage {
    /// The parsed page, or `nil` (reported) when there is nothing to read. The file is read once: its bytes go to
    /// libxml2 and to the check of its declared encoding.
    /// - Parameters:
    ///   - consequence: what an unreadable page means for this reader, for its message.
    ///   - declarations: the encoding declaration patterns, compiled once per source.
    ///   - pages: what the pages of a source share.
    /// - Throws: `KilnError.io` when the file cannot be read.
    package static func open(_ input: InputFile, encoding: String?, maxPageBytes: Int, consequence: String,
                     declarations: EncodingMismatch.Declarations = .init(), pages: HTMLPages? = nil, log: DiagnosticLog) throws -> HTMLDocument? {
        guard let bytes = try read(input, maxPageBytes: maxPageBytes, log: log) else { return nil }
        return try document(bytes, input, encoding: encoding, consequence: consequence, declarations: declarations, pages: pages, log: log)
    }

    /// The lines `text` renders for each node `root` selects on the page, in document order, or `nil` (reported)
    /// when there is nothing to read: what `open` then `MarkupText.lines` over `HTMLDocument.nodes` give, with the
    /// same reports. For a root that is a simple CSS selector (`td.content`, with a `DescendantElementTest`) or the
    /// default `//body`, the lines are rendered from the parser's events, without building the page's tree (unless
    /// text past line 65 534 is rendered: libxml2 numbers it from the nodes around it).
    /// - Throws: `KilnError.io` when the file cannot be read.
    package static func lines(_ input: InputFile, root: XPathExpression, text: MarkupText, encoding: String?, maxPageBytes: Int,
                      consequence: String, declarations: EncodingMismatch.Declarations = .init(), pages: HTMLPages? = nil,
                      log: DiagnosticLog) throws -> [MarkupText.Line]? {
        guard let bytes = try read(input, maxPageBytes: maxPageBytes, log: log) else { return nil }
        func throughTree() throws -> [MarkupText.Line]? {
            guard let document = try document(bytes, input, encoding: encoding, consequence: consequence, declarations: declarations,
                                               pages: pages, log: log) else { return nil }
            return document.nodes(root).flatMap(text.lines)
        }
        let picking: (test: DescendantElementTest, wholeDocument: Bool)
        if let test = root.descendantTest {
            picking = (test, false)
        } else if root.source == HTMLReader.TextOptions.defaultRoot, let body = DescendantElementTest(name: "body", classes: [], ids: []) {
            // Every body element of the document, as the XPath (the default root) selects them.
            picking = (body, true)
        } else {
            return try throughTree()
        }
        let picked = MarkupText.PickedLines(test: picking.test, cellSeparator: text.cellSeparator)
        switch HTMLParser.parseEvents(bytes, encoding: encoding, wholeDocument: picking.wholeDocument, handler: picked) {
        case .needsTree:
            return try throughTree()
        case .empty:
            unreadable(input, consequence: consequence, log: log)
            return nil
        case .read(let problems):
            check(input, bytes, encoding: encoding, declarations: declarations, problems: problems, log: log)
            return picked.lines
        }
    }

    /// The page's bytes, or `nil` (reported) when it is over the size limit.
    private static func read(_ input: InputFile, maxPageBytes: Int, log: DiagnosticLog) throws -> [UInt8]? {
        let cannotRead = CannotRead.error(input.url, named: input.relativePath)
        func tooLarge(_ size: Int) -> Bool {
            guard size > maxPageBytes else { return false }
            log.report(.htmlTooLarge, "the page is \(size) bytes, over the limit of \(maxPageBytes) bytes per page "
                           + "(the source's maxPageBytes option); it is not read", at: input.at(nil))
            return true
        }
        // A page the digest pass read whole is not read again (and is parsed from the bytes its digest is of, or their
        // decompressed text).
        if let bytes = input.wholeFile { return tooLarge(bytes.count) ? nil : bytes }
        guard FileManager.default.isReadableFile(atPath: input.url.path) else {
            if let size = OutputPath.size(of: input.url), tooLarge(size) { return nil }
            throw cannotRead
        }
        let source = try input.bytes(log: log)
        if source.format == nil, let size = OutputPath.size(of: input.url), tooLarge(size) { return nil }
        // A compressed page is decompressed up to one byte past the limit, never further.
        var bytes: [UInt8] = []
        while try source.read(into: &bytes, upTo: maxPageBytes + 1 - bytes.count) > 0, bytes.count <= maxPageBytes {}
        if source.format != nil, bytes.count > maxPageBytes {
            source.close()
            log.report(.htmlTooLarge, "the page inflates to more than \(maxPageBytes) bytes, over the limit per page "
                           + "(the source's maxPageBytes option); it is not read", at: input.at(nil))
            return nil
        }
        return bytes
    }

    private static func document(_ bytes: [UInt8], _ input: InputFile, encoding: String?, consequence: String,
                                 declarations: EncodingMismatch.Declarations, pages: HTMLPages?, log: DiagnosticLog) throws -> HTMLDocument? {
        let document: HTMLDocument?
        do {
            document = try HTMLDocument(bytes: bytes, encoding: encoding, name: input.url.path, pages: pages)
        } catch is HTMLParseError {
            document = nil
        }
        guard let document, !document.isEmpty else {
            unreadable(input, consequence: consequence, log: log)
            return nil
        }
        check(input, bytes, encoding: encoding, declarations: declarations, problems: document.problems, log: log)
        return document
    }

    private static func unreadable(_ input: InputFile, consequence: String, log: DiagnosticLog) {
        log.report(.htmlUnreadable, "\(HTMLParseError(name: input.relativePath).description); \(consequence)", at: input.at(nil))
    }

    /// Reports each line of a page that holds a NUL byte as the text readers report it (`encoding`, "line holds a NUL
    /// byte (at column n)"): libxml2 reads it as a space, which would go unnoticed. A UTF-16 or UTF-32 page (a
    /// byte-order mark, or the source's `encoding`) holds NUL bytes as parts of its characters.
    private static func reportNULBytes(_ input: InputFile, _ bytes: [UInt8], encoding: String?, log: DiagnosticLog) {
        guard bytes.contains(0), !bytes.starts(with: [0xFF, 0xFE]), !bytes.starts(with: [0xFE, 0xFF]),
              !(encoding ?? "").lowercased().contains("16"), !(encoding ?? "").lowercased().contains("32") else { return }
        var number = 1, start = 0
        for index in 0...bytes.count where index == bytes.count || bytes[index] == 0x0A {
            let line = bytes[start..<index]
            if line.contains(0) {
                log.report(LineReader.undecodable(TextLine(number: number, text: nil, bytes: line), encoding: encoding ?? "utf-8", in: input))
            }
            number += 1
            start = index + 1
        }
    }

    /// Reports a declared encoding the bytes contradict, and where libxml2 stopped or read the page garbled.
    private static func check(_ input: InputFile, _ bytes: [UInt8], encoding: String?, declarations: EncodingMismatch.Declarations,
                              problems: [HTMLParser.Problem], log: DiagnosticLog) {
        EncodingMismatch.checkMarkup(input, prefix: bytes[...], override: encoding, declarations: declarations, log: log)
        reportNULBytes(input, bytes, encoding: encoding, log: log)
        for problem in problems {
            let place = input.at(problem.line, column: problem.column)
            switch problem.kind {
            case .stopped:
                log.report(.htmlMalformed, "malformed HTML: \(problem.message); the rest of this page is not read", at: place)
            case .garbled:
                log.report(.encoding, "the page is not valid UTF-8 here (\(problem.message)); the rest of it reads as ISO-8859-1, "
                               + "garbled: if the page is in a legacy code page, set the source's \"encoding\" option", at: place)
            }
        }
    }
}
