import Foundation

/// Text normalizations shared by readers and column normalizers.
public enum TextFolding {
    /// Unicode NFC: the composed form, so that equal-looking text compares equal byte for byte.
    public static func nfc(_ text: String) -> String { text.precomposedStringWithCanonicalMapping }

    /// Runs of white space (including no-break spaces) become one space; the ends are trimmed.
    public static func collapseSpaces(_ text: String) -> String {
        text.split(whereSeparator: { $0.isWhitespace }).joined(separator: " ")
    }

    /// The search form: NFC, lower case, accents removed (Greek tonos and dialytika included, final sigma as σ),
    /// white space collapsed. `Πανεπιστήμιο`, `ΠΑΝΕΠΙΣΤΗΜΙΟ` and `πανεπιστημιο` fold alike.
    public static func fold(_ text: String) -> String {
        collapseSpaces(nfc(text).folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil))
            .replacingOccurrences(of: "ς", with: "σ")
    }

    /// A key that sorts numbers by value: every run of digits is zero-padded to 10 places (`6.2` < `6.10`).
    public static func naturalSortKey(_ text: String) -> String {
        var key = ""
        var digits = ""
        for character in text {
            if character.isASCII, character.isNumber {
                digits.append(character)
                continue
            }
            if !digits.isEmpty { key += padded(digits); digits = "" }
            key.append(character)
        }
        if !digits.isEmpty { key += padded(digits) }
        return key
    }

    private static func padded(_ digits: String) -> String {
        let significant = digits.drop { $0 == "0" }
        return String(repeating: "0", count: max(0, 10 - significant.count)) + significant
    }
}

/// A problem with a value, described for a diagnostic.
public struct ValueProblem: Error, Sendable {
    /// What is wrong and what was expected, as a sentence fragment.
    public let message: String
}

/// Times of day written `H:MM` or `HH:MM` (a `.` is accepted for the colon).
public enum ClockTime {
    /// Minutes after midnight; `24:00` is 1440. Hours above 24, minutes above 59 and other shapes are problems.
    public static func minutes(_ text: String) -> Result<Int, ValueProblem> {
        let parts = text.trimmingSpaces.split(omittingEmptySubsequences: false, whereSeparator: { $0 == ":" || $0 == "." })
        guard parts.count == 2, (1...2).contains(parts[0].count), parts[1].count == 2,
              parts.allSatisfy({ $0.allSatisfy(\.isASCIIDigitCharacter) }),
              let hours = Int(parts[0]), let minutes = Int(parts[1]) else {
            return .failure(ValueProblem(message: "\"\(text)\" is not a time; expected HH:MM"))
        }
        guard minutes < 60, hours < 24 || (hours == 24 && minutes == 0) else {
            return .failure(ValueProblem(message: "\"\(text)\" is not a time of day (hours 00–24, minutes 00–59)"))
        }
        return .success(hours * 60 + minutes)
    }

    /// `HH:MM` for minutes after midnight; a time past midnight (1440 or more) is written as the next day's time.
    public static func text(_ minutes: Int) -> String {
        let wrapped = minutes >= 1440 && minutes != 1440 ? minutes - 1440 : minutes
        let hours = wrapped / 60, rest = wrapped % 60
        return (hours < 10 ? "0" : "") + String(hours) + ":" + (rest < 10 ? "0" : "") + String(rest)
    }
}
