/// Finds the line on which each key path of a JSON5 document starts, so that manifest errors can name a line.
/// Foundation decodes the manifest; this only scans it for positions (strings, comments, keys, brackets).
struct JSON5Locator {
    /// 1-based line by key path (`tables[0].columns[2].type`); the root is the empty path.
    private(set) var lines: [String: Int] = [:]

    init(text: String) {
        var scanner = Scanner(bytes: Array(text.utf8))
        scanner.value(path: "", into: &lines)
    }

    /// The line of `path`, or of its nearest located ancestor.
    func line(of path: String) -> Int? {
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
        let bytes: [UInt8]
        var index = 0
        var line = 1

        init(bytes: [UInt8]) { self.bytes = bytes }

        mutating func value(path: String, into lines: inout [String: Int]) {
            skipTrivia()
            guard index < bytes.count else { return }
            if lines[path] == nil { lines[path] = line }
            switch bytes[index] {
            case UInt8(ascii: "{"):
                index += 1
                while true {
                    skipTrivia()
                    guard index < bytes.count else { return }
                    if bytes[index] == UInt8(ascii: "}") { index += 1; return }
                    if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
                    let keyLine = line
                    let key = readKey()
                    let child = path.isEmpty ? key : path + "." + key
                    lines[child] = keyLine
                    skipTrivia()
                    if index < bytes.count, bytes[index] == UInt8(ascii: ":") { index += 1 }
                    value(path: child, into: &lines)
                }
            case UInt8(ascii: "["):
                index += 1
                var element = 0
                while true {
                    skipTrivia()
                    guard index < bytes.count else { return }
                    if bytes[index] == UInt8(ascii: "]") { index += 1; return }
                    if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
                    value(path: "\(path)[\(element)]", into: &lines)
                    element += 1
                }
            case UInt8(ascii: "\""), UInt8(ascii: "'"):
                _ = readString()
            default:
                while index < bytes.count, !isDelimiter(bytes[index]) { index += 1 }
            }
        }

        mutating func readKey() -> String {
            if bytes[index] == UInt8(ascii: "\"") || bytes[index] == UInt8(ascii: "'") { return readString() }
            let begin = index
            while index < bytes.count, !isDelimiter(bytes[index]), bytes[index] != UInt8(ascii: ":") { index += 1 }
            return String(decoding: bytes[begin..<index], as: UTF8.self)
        }

        mutating func readString() -> String {
            let quote = bytes[index]
            index += 1
            var text: [UInt8] = []
            while index < bytes.count, bytes[index] != quote {
                if bytes[index] == UInt8(ascii: "\\"), index + 1 < bytes.count {
                    index += 1
                    if bytes[index] == 0x0A { line += 1 }
                }
                if bytes[index] == 0x0A { line += 1 }
                text.append(bytes[index])
                index += 1
            }
            index += 1
            return String(decoding: text, as: UTF8.self)
        }

        mutating func skipTrivia() {
            while index < bytes.count {
                let byte = bytes[index]
                if byte == 0x0A { line += 1; index += 1 }
                else if byte == 0x20 || byte == 0x09 || byte == 0x0D { index += 1 }
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

        func isDelimiter(_ byte: UInt8) -> Bool {
            byte == UInt8(ascii: ",") || byte == UInt8(ascii: "}") || byte == UInt8(ascii: "]")
                || byte == 0x20 || byte == 0x0A || byte == 0x09 || byte == 0x0D
        }
    }
}
