import Foundation
import KilnC

/// Text normalizations shared by readers and column normalizers.
public enum TextFolding {
    /// Unicode NFC: the composed form, so that equal-looking text compares equal byte for byte. Text already in
    /// NFC (ASCII included) is returned as it is.
    public static func nfc(_ text: String) -> String {
        isASCII(text) ? text : ICUText.nfc(text)
    }

    /// The text without white space (Unicode's, no-break spaces included) at either end; text that needs no
    /// trimming is returned as it is, without copying.
    public static func trim(_ text: String) -> String {
        let bytes = text.utf8Span.span
        guard !bytes.isEmpty else { return text }
        var lastLead = bytes.count - 1
        while lastLead > 0 && UTF8.isContinuation(bytes[lastLead]) { lastLead -= 1 }
        if !mayLeadWhiteSpace(bytes[0]) && !mayLeadWhiteSpace(bytes[lastLead]) { return text }
        let scalars = text.unicodeScalars
        guard let first = scalars.first, let last = scalars.last else { return text }
        // Visible ASCII is never white space: Unicode's property table is consulted only for the other ends.
        let isSpace: (Unicode.Scalar) -> Bool = { ($0.value > 0x20 && $0.value < 0x7F) ? false : $0.properties.isWhitespace }
        if !isSpace(first) && !isSpace(last) { return text }
        guard let start = scalars.firstIndex(where: { !$0.properties.isWhitespace }) else { return "" }
        let end = scalars.lastIndex(where: { !$0.properties.isWhitespace })!
        return String(Substring(scalars[start...end]))
    }

    /// False when no white-space scalar (Unicode's White_Space: U+0009-000D, U+0020, U+0085, U+00A0, U+1680,
    /// U+2000-200A, U+2028-2029, U+202F, U+205F, U+3000) starts with the UTF-8 byte `lead`: the ends of most text
    /// are told apart from white space without decoding them or looking up properties.
    package static func mayLeadWhiteSpace(_ lead: UInt8) -> Bool {
        switch lead {
        case 0x09...0x0D, 0x20, 0xC2, 0xE1, 0xE2, 0xE3: return true
        default: return false
        }
    }

    /// Runs of white space (including no-break spaces) become one space; the ends are trimmed.
    public static func collapseSpaces(_ text: String) -> String {
        if isCollapsed(text) { return text }
        return text.split(whereSeparator: { $0.isWhitespace }).joined(separator: " ")
    }

    /// True when `text` has no white space to collapse: no space at either end, no two in a row, and no white
    /// space other than the plain space (checked on bytes: anything non-ASCII that could be a space says no).
    private static func isCollapsed(_ text: String) -> Bool {
        let bytes = text.utf8Span.span
        var previousWasSpace = true
        for index in bytes.indices {
            let byte = bytes[index]
            if byte == 0x20 {
                if previousWasSpace { return false }
                previousWasSpace = true
            } else if mayLeadWhiteSpace(byte) || byte < 0x20 {
                return false
            } else {
                previousWasSpace = false
            }
        }
        return !previousWasSpace || bytes.isEmpty
    }

    /// The search form: NFC, lower case, accents removed (Greek tonos and dialytika included, final sigma as σ),
    /// white space collapsed. `Πανεπιστήμιο`, `ΠΑΝΕΠΙΣΤΗΜΙΟ` and `πανεπιστημιο` fold alike. Case goes by Unicode's
    /// full case folding (`ß` folds as `ss`); accents are removed from Latin, Greek and Cyrillic letters only
    /// (`ICUText.caselessWithoutAccents`).
    public static func fold(_ text: String) -> String {
        collapseSpaces(isASCII(text) ? asciiLowercased(text) : ICUText.caselessWithoutAccents(text))
    }

    private static func isASCII(_ text: String) -> Bool {
        let span = text.utf8Span
        if span.isKnownASCII { return true }
        let bytes = span.span
        for index in bytes.indices where bytes[index] >= 0x80 { return false }
        return true
    }

    /// ASCII text with A–Z lowered; text without capitals is returned as it is.
    private static func asciiLowercased(_ text: String) -> String {
        let isCapital: (UInt8) -> Bool = { $0 >= 0x41 && $0 <= 0x5A }
        guard text.utf8.contains(where: isCapital) else { return text }
        return String(decoding: text.utf8.map { isCapital($0) ? $0 + 0x20 : $0 }, as: UTF8.self)
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
package struct ValueProblem: Error, Sendable {
    /// What is wrong and what was expected, as a sentence fragment.
    package let message: String
    /// The diagnostic code it is reported under.
    package var code = DiagnosticCode.value

    package init(message: String, code: DiagnosticCode = .value) {
        self.message = message
        self.code = code
    }
}

/// Times of day written `H:MM` or `HH:MM` (a `.` is accepted for the colon).
package enum ClockTime {
    /// Minutes after midnight; `24:00` is 1440. Hours above 24, minutes above 59 and other shapes are problems.
    package static func minutes(_ text: String) -> Result<Int, ValueProblem> {
        guard let (hours, minutes) = plainClock(text) ?? spacedClock(text) else {
            return .failure(ValueProblem(message: "\"\(text)\" is not a time; expected HH:MM"))
        }
        guard minutes < 60, hours < 24 || (hours == 24 && minutes == 0) else {
            return .failure(ValueProblem(message: "\"\(text)\" is not a time of day (hours 00–24, minutes 00–59)"))
        }
        return .success(hours * 60 + minutes)
    }

    /// Hours and minutes of text that is exactly `H:MM` or `HH:MM` (or with `.`) in ASCII, read from its bytes.
    private static func plainClock(_ text: String) -> (hours: Int, minutes: Int)? {
        let bytes = text.utf8
        guard bytes.count == 4 || bytes.count == 5 else { return nil }
        var hours = 0, minutes = 0, afterSeparator = false
        for (offset, byte) in bytes.enumerated() {
            if offset == bytes.count - 3 {
                guard byte == UInt8(ascii: ":") || byte == UInt8(ascii: ".") else { return nil }
                afterSeparator = true
            } else {
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                let digit = Int(byte - UInt8(ascii: "0"))
                if afterSeparator { minutes = minutes * 10 + digit } else { hours = hours * 10 + digit }
            }
        }
        return (hours, minutes)
    }

    /// Hours and minutes of `H:MM` or `HH:MM` (or with `.`) between spaces, tabs or no-break spaces.
    private static func spacedClock(_ text: String) -> (hours: Int, minutes: Int)? {
        let parts = text.trimmingSpaces.split(omittingEmptySubsequences: false, whereSeparator: { $0 == ":" || $0 == "." })
        guard parts.count == 2, (1...2).contains(parts[0].count), parts[1].count == 2,
              parts.allSatisfy({ $0.allSatisfy(\.isASCIIDigitCharacter) }),
              let hours = Int(parts[0]), let minutes = Int(parts[1]) else { return nil }
        return (hours, minutes)
    }

    /// The start and end of a service period in minutes. An end not after the start that comes before
    /// `overnightBefore` (minutes) runs past midnight and gets 1440 added; any other is a `time-order` problem.
    package static func span(from: String, until: String, overnightBefore: Int) -> Result<(from: Int, until: Int), ValueProblem> {
        let start: Int, end: Int
        switch (minutes(from), minutes(until)) {
        case (.failure(let problem), _), (_, .failure(let problem)): return .failure(problem)
        case (.success(let a), .success(let b)): (start, end) = (a, b)
        }
        if end > start { return .success((start, end)) }
        guard end < overnightBefore else {
            return .failure(ValueProblem(message: "the period ends at \(until), not after it starts at \(from); only an end before \(text(overnightBefore)) may run past midnight",
                                         code: .valueTimeOrder))
        }
        return .success((start, end + 1440))
    }

    /// Seconds since the start of the service day of a GTFS time (`H:MM:SS` or `HH:MM:SS`, the hours going past 23
    /// for times after midnight: `25:10:00` is 90600), spaces around it allowed. Minutes or seconds above 59, more
    /// than three digits of hours and other shapes are problems.
    package static func serviceSeconds(_ text: String) -> Result<Int, ValueProblem> {
        let parts = text.trimmingSpaces.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 3, (1...3).contains(parts[0].count), parts[1].count == 2, parts[2].count == 2,
              parts.allSatisfy({ $0.allSatisfy(\.isASCIIDigitCharacter) }),
              let hours = Int(parts[0]), let minutes = Int(parts[1]), let seconds = Int(parts[2]) else {
            return .failure(ValueProblem(message: "\"\(text)\" is not a GTFS time; expected H:MM:SS or HH:MM:SS (hours may pass 23)"))
        }
        guard minutes < 60, seconds < 60 else {
            return .failure(ValueProblem(message: "\"\(text)\" is not a GTFS time (minutes and seconds 00–59)"))
        }
        return .success(hours * 3600 + minutes * 60 + seconds)
    }

    /// Minutes since the start of the service day of a GTFS time (`serviceSeconds`); a time with seconds other than
    /// `00` is a problem, not rounded.
    package static func serviceMinutes(_ text: String) -> Result<Int, ValueProblem> {
        serviceSeconds(text).flatMap { seconds in
            seconds % 60 == 0 ? .success(seconds / 60)
                : .failure(ValueProblem(message: "\"\(text)\" has \(seconds % 60) seconds, which minutes cannot hold; use gtfsSeconds"))
        }
    }

    /// `HH:MM` for minutes after midnight; a time past midnight (1440 or more) is written as the next day's time.
    package static func text(_ minutes: Int) -> String {
        let wrapped = minutes >= 1440 && minutes != 1440 ? minutes - 1440 : minutes
        let hours = wrapped / 60, rest = wrapped % 60
        return (hours < 10 ? "0" : "") + String(hours) + ":" + (rest < 10 ? "0" : "") + String(rest)
    }
}
