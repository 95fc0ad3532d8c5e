/// Where a text node of libxml2's tree starts: libxml2 numbers a text node by the line its first chunk ends on, so
/// the wrappers count back the line breaks after the first visible character before reporting a line.
package enum LibXML2TextNode {
    /// A text node as `HTMLNode.walk` reports it: its bytes (invalid UTF-8 repaired) and the line its first visible
    /// character is on, from the line libxml2 gave the node (`nodeLine`).
    package static func located(_ bytes: [UInt8], nodeLine: Int) -> ([UInt8], Int) {
        if UTF8Whitespace.isPlain(bytes) {
            // A CR LF pair is one character, which is not "\n": only line feeds without a carriage return before count.
            let start = UTF8Whitespace.firstVisible(bytes, 0..<bytes.count)
            var newlines = 0
            var index = start
            while index < bytes.count {
                if bytes[index] == 0x0A, index == start || bytes[index - 1] != 0x0D { newlines += 1 }
                index += 1
            }
            return (bytes, max(1, nodeLine - newlines))
        }
        let text = String(decoding: bytes, as: UTF8.self)
        let start = text.firstIndex { !$0.isWhitespace } ?? text.endIndex
        let newlines = text[start...].reduce(0) { $1 == "\n" ? $0 + 1 : $0 }
        return (Array(text.utf8), max(1, nodeLine - newlines))
    }
}
