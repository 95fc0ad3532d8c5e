import KilnC

/// Text from inputs made safe for terminals and CI logs. Scraped values can hold escape sequences (which a terminal
/// obeys), line breaks (which start a new line that looks like Kiln's own) and `::error file=…::` (which GitHub
/// Actions takes as a workflow command when it starts a line). Human-readable output escapes the first two inside
/// values (`escape`) and neutralises workflow commands at the start of any line (`sanitize`); JSON output escapes
/// control characters by itself, and `kiln check --format github` writes workflow commands on purpose.
package enum TerminalText {
    /// `text` as one visible line: line breaks as `\n` and `\r`, tabs as `\t`, every other control character (C0,
    /// DEL, C1), the bidirectional overrides that reorder what a terminal shows and the invisible characters
    /// (`invisible`) as `\u{XX}`.
    package static func escape(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: needsEscape) else { return text }
        var escaped = ""
        for scalar in text.unicodeScalars { append(scalar, to: &escaped, keepingLineBreaks: false) }
        return escaped
    }

    /// A whole human-readable output: control characters escaped except line breaks and tabs, and, unless
    /// `workflowCommands`, every line whose first characters (after white space) are `::` or `##[` — a GitHub
    /// Actions workflow command — prefixed with a backslash so that the runner prints it instead of obeying it.
    package static func sanitize(_ output: String, workflowCommands: Bool = false) -> String {
        var text = output
        if output.unicodeScalars.contains(where: { needsEscape($0) && $0 != "\n" && $0 != "\t" }) {
            text = ""
            for scalar in output.unicodeScalars { append(scalar, to: &text, keepingLineBreaks: true) }
        }
        guard !workflowCommands, text.contains("::") || text.contains("##[") else { return text }
        return text.split(separator: "\n", omittingEmptySubsequences: false).map { line -> String in
            let body = line.drop { $0 == " " || $0 == "\t" }
            guard body.hasPrefix("::") || body.hasPrefix("##[") else { return String(line) }
            return String(line[..<body.startIndex]) + "\\" + String(body)
        }.joined(separator: "\n")
    }

    /// True for a character a terminal obeys rather than shows, or that reorders what it shows: C0 controls, DEL,
    /// C1 controls and the bidirectional embeddings, overrides and isolates. `JSONText` escapes the same set.
    package static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
        let value = scalar.value
        return value < 0x20 || (0x7F...0x9F).contains(value) || (0x202A...0x202E).contains(value) || (0x2066...0x2069).contains(value)
    }

    /// Characters a reader of a terminal or a log cannot see or that break a line where none shows: LINE SEPARATOR,
    /// PARAGRAPH SEPARATOR, ZERO WIDTH SPACE and the byte-order mark. Human-readable output escapes them too; JSON
    /// keeps them (they are text, and a JSON reader shows them as such).
    package static let invisible: Set<UInt32> = [0x2028, 0x2029, 0x200B, 0xFEFF]

    private static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        isUnsafe(scalar) || invisible.contains(scalar.value)
    }

    private static func append(_ scalar: Unicode.Scalar, to text: inout String, keepingLineBreaks: Bool) {
        guard needsEscape(scalar) else { return text.unicodeScalars.append(scalar) }
        switch scalar {
        case "\n": text += keepingLineBreaks ? "\n" : "\\n"
        case "\t": text += keepingLineBreaks ? "\t" : "\\t"
        case "\r": text += "\\r"
        default: text += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
        }
    }
}

extension Diagnostic {
    /// `formatted`, with the file and the message escaped (`TerminalText.escape`), for human-readable output.
    public var displayLine: String {
        let place = provenance.map { TerminalText.escape($0.location) + ": " } ?? ""
        return "\(place)\(severity.rawValue): \(TerminalText.escape(message)) [\(code)]" + TerminalText.escape(fetchedFrom)
    }
}

/// Shortens a line for a message.
package func excerpt(_ text: String, limit: Int = 80) -> String {
    let head = text.prefix(limit)
    return head.endIndex == text.endIndex ? text : String(head) + "…"
}
