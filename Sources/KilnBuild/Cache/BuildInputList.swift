import Foundation
import KilnC
import KilnCore

/// The inputs of the last build, beside its `build.json` in `inputs.txt`: one line an input, its SHA-256, its stamp
/// and its path. A build with nothing changed reads every one of them to know its inputs' digests without reading
/// the inputs, so the list is a text a line at a time rather than JSON: 50 000 inputs take a few milliseconds to
/// read this way, and close to a second through `JSONDecoder` and the checksum's second encoding.
///
/// The first line is `kiln build inputs <format>`. Then, for each input in path order,
/// `<sha256> TAB <device> <inode> <size> <modified> <changed> TAB <path>`, with `-` for the stamp of an input that
/// changed while it was read. A backslash in a path is written `\\`, a line feed `\n` and a carriage return `\r`;
/// the path is the line's last field, so a tab in it is kept as it is. `build.json` records the list's SHA-256: a
/// list that does not match it is not trusted.
package enum BuildInputList {
    /// The list's layout; a list of another one is not read.
    package static let format = 1

    private static var header: String { "kiln build inputs \(format)" }

    /// The list of `inputs`, in their order.
    package static func encode(_ inputs: [BuildCacheRecord.Input]) -> Data {
        var text = header + "\n"
        text.reserveCapacity(inputs.count * 160)
        for input in inputs {
            text += input.sha256
            text += "\t"
            if let stamp = input.stamp {
                text += "\(stamp.device) \(stamp.inode) \(stamp.size) \(stamp.modified) \(stamp.changed)"
            } else {
                text += "-"
            }
            text += "\t"
            text += escaped(input.path)
            text += "\n"
        }
        return Data(text.utf8)
    }

    /// The inputs `data` lists, or `nil` when it is not such a list (another format, a line cut short or malformed).
    package static func decode(_ data: Data) -> [BuildCacheRecord.Input]? {
        let bytes = [UInt8](data)
        let head = Array((header + "\n").utf8)
        guard bytes.starts(with: head), bytes.last == UInt8(ascii: "\n") else { return nil }
        var inputs: [BuildCacheRecord.Input] = []
        var start = head.count
        while start < bytes.count {
            guard let end = bytes[start...].firstIndex(of: UInt8(ascii: "\n")), let input = input(bytes[start..<end]) else { return nil }
            inputs.append(input)
            start = end + 1
        }
        return inputs
    }

    /// The input one line (without its line feed) lists.
    private static func input(_ line: ArraySlice<UInt8>) -> BuildCacheRecord.Input? {
        let tab = UInt8(ascii: "\t")
        guard let first = line.firstIndex(of: tab), first - line.startIndex == 64,
              let second = line[(first + 1)...].firstIndex(of: tab),
              let path = unescaped(String(decoding: line[(second + 1)...], as: UTF8.self)) else { return nil }
        let stampField = line[(first + 1)..<second]
        var stamp: FileStamp?
        if !stampField.elementsEqual([UInt8(ascii: "-")]) {
            let numbers = stampField.split(separator: UInt8(ascii: " "), omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
            guard numbers.count == 5, let device = UInt64(numbers[0]), let inode = UInt64(numbers[1]), let size = Int64(numbers[2]),
                  let modified = Int64(numbers[3]), let changed = Int64(numbers[4]) else { return nil }
            stamp = FileStamp(device: device, inode: inode, size: size, modified: modified, changed: changed)
        }
        return BuildCacheRecord.Input(path: path, sha256: String(decoding: line[line.startIndex..<first], as: UTF8.self), stamp: stamp)
    }

    private static func escaped(_ path: String) -> String {
        guard path.utf8.contains(where: { $0 == 0x5C || $0 == 0x0A || $0 == 0x0D }) else { return path }
        var text = String.UnicodeScalarView()
        for scalar in path.unicodeScalars {
            switch scalar {
            case "\\": text.append(contentsOf: "\\\\".unicodeScalars)
            case "\n": text.append(contentsOf: "\\n".unicodeScalars)
            case "\r": text.append(contentsOf: "\\r".unicodeScalars)
            default: text.append(scalar)
            }
        }
        return String(text)
    }

    private static func unescaped(_ field: String) -> String? {
        guard field.utf8.contains(0x5C) else { return String(field) }
        var text = String.UnicodeScalarView(), escaping = false
        for scalar in field.unicodeScalars {
            if escaping {
                switch scalar {
                case "\\": text.append("\\")
                case "n": text.append("\n")
                case "r": text.append("\r")
                default: return nil
                }
                escaping = false
            } else if scalar == "\\" {
                escaping = true
            } else {
                text.append(scalar)
            }
        }
        return escaping ? nil : String(text)
    }
}

