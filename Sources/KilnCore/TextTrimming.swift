import KilnC

extension StringProtocol {
    /// The text without spaces, tabs or no-break spaces at either end.
    package var trimmingSpaces: String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\u{00A0}" }
        guard let first = firstIndex(where: { !isSpace($0) }) else { return "" }
        let last = lastIndex(where: { !isSpace($0) })!
        return String(self[first...last])
    }

    /// The first space-separated word and the rest, trimmed.
    package func splitOnFirstSpace() -> (head: String, rest: String) {
        guard let space = firstIndex(where: { $0 == " " || $0 == "\t" }) else { return (String(self), "") }
        return (String(self[..<space]), self[space...].trimmingSpaces)
    }
}

extension Character {
    /// True for the ASCII digits 0–9 only.
    package var isASCIIDigitCharacter: Bool { isASCII && isNumber }
}
