import KilnC
import KilnCore

/// Finds the line on which each key path of a JSON5 document starts, so that manifest errors can name a line.
/// Foundation decodes the manifest; this only scans it for positions (strings, comments, keys, brackets).
package struct JSON5Locator {
    /// 1-based line by key path (`tables[0].columns[2].type`); the root is the empty path.
    package private(set) var lines: [String: Int] = [:]
    /// The first structural syntax error found (Foundation's JSON5 errors carry no position), if any.
    package private(set) var syntaxError: (line: Int, message: String)?
    /// The first key written twice in one object (Foundation's decoder keeps one of them silently), if any.
    package private(set) var duplicateKey: (keyPath: String, line: Int, firstLine: Int)?

    package init(text: String) {
        var scanner = Scanner(bytes: Array(text.utf8))
        // A byte-order mark may start the file; anywhere else it is an error.
        if scanner.bytes.starts(with: [0xEF, 0xBB, 0xBF]) { scanner.index = 3 }
        scanner.value(path: "", into: &lines)
        scanner.skipTrivia()
        if scanner.error == nil, scanner.index < scanner.bytes.count { scanner.fail("unexpected text after the end of the manifest") }
        syntaxError = scanner.error
        duplicateKey = scanner.duplicateKey
    }

    /// The line of `path`, or of its nearest located ancestor.
    package func line(of path: String) -> Int? {
        var current = path
        while true {
            if let line = lines[current] { return line }
            guard !current.isEmpty else { return nil }
            if let cut = current.lastIndex(where: { $0 == "." || $0 == "[" }) {
                current = String(current[..<cut])
            } else {
                current = ""
            }
        }
    }

    private struct Scanner {
        package let bytes: [UInt8]
        package var index = 0
        package var line = 1
        package var error: (line: Int, message: String)?
        package var duplicateKey: (keyPath: String, line: Int, firstLine: Int)?

        package init(bytes: [UInt8]) { self.bytes = bytes }

        /// Records the first error and stops the scan.
        package mutating func fail(_ message: String) {
            if error == nil { error = (line, message) }
            index = bytes.count
        }

        /// After a member or element: a comma, or the closing bracket.
        package mutating func expectSeparator(closing: UInt8) {
            skipTrivia()
            guard index < bytes.count else { return fail("unexpected end of the manifest; expected \",\" or \"\(Character(UnicodeScalar(closing)))\"") }
            if bytes[index] != UInt8(ascii: ",") && bytes[index] != closing {
                fail("expected \",\" or \"\(Character(UnicodeScalar(closing)))\", found \"\(Character(UnicodeScalar(bytes[index])))\"")
            }
        }

        /// Deeper nesting than any manifest needs is refused: the scan recurses, and key paths grow with the depth.
        package static let maximumDepth = 64

        package mutating func value(path: String, into lines: inout [String: Int], depth: Int = 0) {
            skipTrivia()
            guard index < bytes.count else { return fail("unexpected end of the manifest; expected a value") }
            guard depth < Scanner.maximumDepth else { return fail("values nest deeper than \(Scanner.maximumDepth) levels") }
            if lines[path] == nil { lines[path] = line }
            switch bytes[index] {
            case UInt8(ascii: "{"):
                index += 1
                var keysSeen: [String: Int] = [:]
                while true {
                    skipTrivia()
                    guard index < bytes.count else { return fail("unexpected end of the manifest; an object is not closed") }
                    if bytes[index] == UInt8(ascii: "}") { index += 1; return }
                    if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
                    let keyLine = line
                    let key = readKey(in: path)
                    let child = path.isEmpty ? key : path + "." + key
                    if let first = keysSeen[key] {
                        if duplicateKey == nil { duplicateKey = (child, keyLine, first) }
                    } else {
                        keysSeen[key] = keyLine
                    }
                    lines[child] = keyLine
                    skipTrivia()
                    guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { return fail("expected \":\" after the key \"\(key)\"") }
                    index += 1
                    value(path: child, into: &lines, depth: depth + 1)
                    expectSeparator(closing: UInt8(ascii: "}"))
                }
            case UInt8(ascii: "["):
                index += 1
                var element = 0
                while true {
                    skipTrivia()
                    guard index < bytes.count else { return fail("unexpected end of the manifest; an array is not closed") }
                    if bytes[index] == UInt8(ascii: "]") { index += 1; return }
                    if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
                    value(path: "\(path)[\(element)]", into: &lines, depth: depth + 1)
                    element += 1
                    expectSeparator(closing: UInt8(ascii: "]"))
                }
            case UInt8(ascii: "\""), UInt8(ascii: "'"):
                _ = readString(at: path.isEmpty ? "the manifest" : "the string at \(path)")
            default:
                while index < bytes.count, !isDelimiter(bytes[index]) { index += 1 }
            }
        }

        package mutating func readKey(in path: String) -> String {
            if bytes[index] == UInt8(ascii: "\"") || bytes[index] == UInt8(ascii: "'") { return readString(at: "a key of \(path.isEmpty ? "the manifest" : path)") }
            let begin = index
            while index < bytes.count, !isDelimiter(bytes[index]), bytes[index] != UInt8(ascii: ":") { index += 1 }
            return String(decoding: bytes[begin..<index], as: UTF8.self)
        }

        /// A quoted string, its escapes decoded as JSON5 decodes them (`"bu\u006edle"` is the key `bundle`), so that a
        /// key written twice is found however it is escaped. `place` names it in messages (`tables[0].name`, `a key
        /// of tables[0]`): a control character written as it is, a NUL and half a surrogate pair are refused there
        /// (Foundation's decoder refuses them too, in words that name neither the place nor the character).
        package mutating func readString(at place: String) -> String {
            let quote = bytes[index]
            index += 1
            var text: [UInt8] = []
            while index < bytes.count, bytes[index] != quote {
                if bytes[index] == UInt8(ascii: "\\"), index + 1 < bytes.count {
                    index += 1
                    readEscape(into: &text, at: place)
                    continue
                }
                if bytes[index] < 0x20 {
                    let code = String(format: "U+%04X", bytes[index])
                    let escape = [0x09: "\\t", 0x0A: "\\n", 0x0D: "\\r", 0x00: ""][bytes[index]] ?? String(format: "\\u%04X", bytes[index])
                    fail(bytes[index] == 0 ? "\(place) holds a NUL character (\(code)), which a manifest may not hold"
                         : "\(place) holds the control character \(code) written as it is, which JSON5 does not allow; write it as the escape \(escape)")
                    return String(decoding: text, as: UTF8.self)
                }
                text.append(bytes[index])
                index += 1
            }
            guard index < bytes.count else {
                fail("a string is not closed")
                return String(decoding: text, as: UTF8.self)
            }
            index += 1
            return String(decoding: text, as: UTF8.self)
        }

        /// Decodes the escape whose letter is at `index` (after the backslash) into `text`, and moves past it; a NUL
        /// (`\0`, `\x00`, `\u0000`) and half a surrogate pair fail the scan, naming `place`.
        private mutating func readEscape(into text: inout [UInt8], at place: String) {
            let letter = bytes[index]
            index += 1
            let simple: [UInt8: UInt8] = [UInt8(ascii: "n"): 0x0A, UInt8(ascii: "t"): 0x09, UInt8(ascii: "r"): 0x0D, UInt8(ascii: "b"): 0x08,
                                          UInt8(ascii: "f"): 0x0C, UInt8(ascii: "v"): 0x0B, UInt8(ascii: "0"): 0x00]
            if letter == UInt8(ascii: "0") { return fail("\(place) holds a NUL character (\\0), which a manifest may not hold") }
            if let byte = simple[letter] { return text.append(byte) }
            switch letter {
            case UInt8(ascii: "u"), UInt8(ascii: "x"):
                guard var value = hexNumber(digits: letter == UInt8(ascii: "u") ? 4 : 2) else { return }
                // A surrogate pair written as two escapes is one character.
                if (0xD800..<0xDC00).contains(value), index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") {
                    let saved = index
                    index += 2
                    if let low = hexNumber(digits: 4), (0xDC00..<0xE000).contains(low) {
                        value = 0x10000 + ((value - 0xD800) << 10) + (low - 0xDC00)
                    } else {
                        index = saved
                    }
                }
                let written = String(decoding: bytes[(letter == UInt8(ascii: "u") ? index - 6 : index - 4)..<index], as: UTF8.self)
                if value == 0 { return fail("\(place) holds a NUL character (\(written)), which a manifest may not hold") }
                if (0xD800..<0xE000).contains(value) {
                    return fail("\(place) holds \(written), half of a UTF-16 surrogate pair without its other half, which is no character; "
                                + "write the character itself, or both halves (\\uD83D\\uDE00)")
                }
                text.append(contentsOf: Array(String(UnicodeScalar(value).map(Character.init) ?? "\u{FFFD}").utf8))
            case 0x0A:
                line += 1  // a line continuation: nothing
            default:
                text.append(letter)  // \" \' \\ \/ and any other character stand for themselves
            }
        }

        /// The number written in the next `digits` hexadecimal digits, moving past them; `nil` (not moving) when they are not.
        private mutating func hexNumber(digits: Int) -> UInt32? {
            guard index + digits <= bytes.count,
                  let value = UInt32(String(decoding: bytes[index..<index + digits], as: UTF8.self), radix: 16) else { return nil }
            index += digits
            return value
        }

        package mutating func skipTrivia() {
            while index < bytes.count {
                let byte = bytes[index]
                if byte == 0x0A { line += 1; index += 1 }
                else if byte == 0x20 || byte == 0x09 || byte == 0x0D { index += 1 }
                else if byte == 0xEF, index + 2 < bytes.count, bytes[index + 1] == 0xBB, bytes[index + 2] == 0xBF {
                    return fail("the manifest holds a byte-order mark (U+FEFF) inside it, where only its first character may be one "
                                + "(was the file saved twice with a BOM?); remove it")
                }
                else if byte == UInt8(ascii: "/"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "/") {
                    while index < bytes.count, bytes[index] != 0x0A { index += 1 }
                } else if byte == UInt8(ascii: "/"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "*") {
                    index += 2
                    while index + 1 < bytes.count, !(bytes[index] == UInt8(ascii: "*") && bytes[index + 1] == UInt8(ascii: "/")) {
                        if bytes[index] == 0x0A { line += 1 }
                        index += 1
                    }
                    index += 2
                } else { return }
            }
        }

        package func isDelimiter(_ byte: UInt8) -> Bool {
            byte == UInt8(ascii: ",") || byte == UInt8(ascii: "}") || byte == UInt8(ascii: "]")
                || byte == 0x20 || byte == 0x0A || byte == 0x09 || byte == 0x0D
        }
    }
}
