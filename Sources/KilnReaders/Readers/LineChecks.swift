import KilnC
import KilnCore
import KilnManifest

/// What `LineReader.forEachLine` checks about a text file beyond each line's decoding: a line too long to read, a
/// file that holds no data at all, and a legacy encoding declared for a file that is UTF-8 (whose text would come
/// out garbled without any other finding).
package struct LineChecks {
    package let input: InputFile
    /// The encoding the source declares, in lowercase.
    package let encoding: String
    private var sawData = false
    private var checkedEncoding: Bool

    package init(input: InputFile, encoding: String) {
        self.input = input
        self.encoding = encoding
        checkedEncoding = !EncodingMismatch.isLegacy(encoding)
    }

    /// Reports a line over the reader's length limit; false for any other line.
    package mutating func reportOverlong(_ line: TextLine, limit: Int, log: DiagnosticLog) -> Bool {
        guard let length = line.overlongLength else { return false }
        log.report(.lineTooLong, "line is \(length) bytes long, over the limit of \(limit) bytes for one line; it is skipped",
                   at: input.at(line.number))
        return true
    }

    /// Notes a line: whether the file holds data, and whether its bytes are UTF-8 despite a legacy encoding (on the
    /// first line that is not ASCII, decodable or not).
    package mutating func observe(_ line: TextLine, text: ValidUTF8?, log: DiagnosticLog) {
        if !sawData, text?.text.contains(where: { !$0.isWhitespace }) ?? true { sawData = true }
        guard !checkedEncoding, line.bytes.contains(where: { $0 >= 0x80 }) else { return }
        checkedEncoding = true
        if EncodingMismatch.isUTF8Text(line.bytes) {
            log.report(.encodingMismatch, "line is UTF-8, but the source declares \"\(encoding)\": its text reads garbled; if the file is UTF-8, remove the \"encoding\" option",
                       at: input.at(line.number))
        }
    }

    /// Notes a line that is plain ASCII: as `observe(_:text:log:)`, which finds nothing else to check on it.
    package mutating func observe(ascii text: ValidUTF8) {
        if !sawData, text.bytes.contains(where: { $0 != 0x20 && !(0x09...0x0D).contains($0) }) { sawData = true }
    }

    /// At the end of the file: reports a file without data.
    package func finish(log: DiagnosticLog) {
        guard !sawData else { return }
        log.report(.inputEmpty, "the file holds no data (it is empty, or only white space or a byte-order mark)",
                   at: input.at(nil))
    }
}
