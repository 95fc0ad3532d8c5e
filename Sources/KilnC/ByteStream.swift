import Foundation

/// Bytes a parser reads one chunk after another: what the C parsers' wrappers (libxml2, yajl) are fed from.
package protocol ByteStream: AnyObject {
    /// Appends at most `count` of the next bytes to `buffer` and returns how many; 0 at the end.
    /// - Throws: the stream's own error when its bytes cannot be read.
    func read(into buffer: inout [UInt8], upTo count: Int) throws -> Int
    /// The first `count` bytes (fewer when there are fewer), read afresh: the stream's position does not move.
    func leadingBytes(_ count: Int) -> [UInt8]
}
