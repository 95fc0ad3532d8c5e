import Foundation
import KilnKit

/// `kiln help --man`: the manual page (roff, `man -l` reads it), made from the same declarations as every command's
/// help: the overview, then each command's usage, description, options and notes, then the exit codes.
enum ManualPage {
    /// The whole page.
    static func text(commands: [CommandEntry]) -> String {
        var lines = [
            ".\\\" The manual page of kiln, printed by `kiln help --man` from the commands' declarations.",
            ".TH KILN 1 \"\" \"kiln \(escape(KilnVersion.current))\" \"Kiln Manual\"",
            ".nh",
            ".ad l",
            ".SH NAME",
            "kiln \\- builds the SQLite bundle an app ships from scraped inputs, checked and reproducible",
            ".SH SYNOPSIS",
            ".B kiln",
            ".I command",
            ".RI [ options ]",
            ".br",
            ".B kiln help",
            ".RI [ command ]",
            ".br",
            ".B kiln help \\-\\-man",
            ".br",
            ".B kiln \\-\\-version",
            ".SH DESCRIPTION",
            "Kiln regenerates the SQLite bundle a mobile app ships from scraped inputs: it reads every source a pipeline's",
            "manifest (kiln.json5) declares, checks the records against the manifest's rules, and writes the bundle only",
            "when no error remains. Each command below prints its own help with",
            ".BR \"kiln help \" \\fIcommand\\fR",
            "or",
            ".IR command \" \\-\\-help\".",
            ".SH OPTIONS",
        ]
        lines += CommandLineTool.globalOptions.flatMap(optionLines)
        lines.append(".SH COMMANDS")
        for command in commands {
            let paragraphs = command.details.components(separatedBy: "\n\n").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
                .filter { !$0.isEmpty }
            lines += [".SS \"kiln \(command.name)\"", ".B " + escape(command.usage), ".PP", escape(command.abstract)]
            if let first = paragraphs.first { lines += [".PP"] + text(first) }
            lines += command.options.flatMap(optionLines)
            for paragraph in paragraphs.dropFirst() { lines += [".PP"] + text(paragraph) }
        }
        lines += [".SS \"kiln help\"", ".B kiln help [COMMAND] [\\-\\-man]", ".PP",
                  "Shows the overview, or the help of COMMAND (as", ".I command \\-\\-help", "does)."]
        lines += CommandLineTool.helpOptions.flatMap(optionLines)
        lines.append(".SH EXIT STATUS")
        lines += ExitStatus.allCases.flatMap { [".TP", ".B \($0.rawValue)"] + text($0.meaning) }
        lines += [
            ".SH SEE ALSO",
            ".BR sqlite3 (1);",
            "the manual in the repository: README.md and docs/reference/commands.md.",
        ]
        return lines.joined(separator: "\n") + "\n"
    }

    /// An option as a tagged paragraph: `--name VALUE` in bold and italics, its help below.
    private static func optionLines(_ option: CommandOption) -> [String] {
        let tag = option.value.map { ".BI \(escape(option.name)) \" \(escape($0))\"" } ?? ".B \(escape(option.name))"
        return [".TP", tag] + text(option.help + (option.repeatable ? " (May be repeated.)" : ""))
    }

    /// A paragraph of help as roff text lines: one line per source line, `code` in bold.
    private static func text(_ paragraph: String) -> [String] {
        var bold = false
        let marked = paragraph.split(separator: "`", omittingEmptySubsequences: false).enumerated().map { index, part in
            defer { bold.toggle() }
            return (index == 0 ? "" : (bold ? "\\fB" : "\\fR")) + escape(String(part))
        }.joined() + (bold ? "" : "\\fR")
        return marked.components(separatedBy: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            .map { $0.hasPrefix(".") || $0.hasPrefix("'") ? "\\&" + $0 : $0 }
    }

    /// Text made literal for roff: backslashes as `\e`, hyphens as `\-` (so options copy as ASCII), any other
    /// character than ASCII as `\[uXXXX]` (the page is ASCII, and groff reads it without a preprocessor).
    static func escape(_ text: String) -> String {
        var escaped = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": escaped += "\\e"
            case "-": escaped += "\\-"
            case _ where scalar.isASCII: escaped.unicodeScalars.append(scalar)
            default: escaped += "\\[u" + String(scalar.value, radix: 16, uppercase: true).leftPadded(to: 4) + "]"
            }
        }
        return escaped
    }
}

private extension String {
    /// The text with zeros before it up to `length` characters (`\[u00E9]`, as groff names characters).
    func leftPadded(to length: Int) -> String { String(repeating: "0", count: max(0, length - count)) + self }
}
