internal import CPCRE2

/// A pattern that failed to compile: PCRE2's message and the offset in the pattern.
package struct RegexCompileError: Error, CustomStringConvertible, Sendable {
    /// The pattern as written.
    package let pattern: String
    /// Character offset in the pattern where PCRE2 stopped.
    package let offset: Int
    /// PCRE2's own message.
    package let message: String

    package var description: String { "invalid regular expression at offset \(offset): \(message) in /\(pattern)/" }
}

/// A match that PCRE2 gave up on: the match limit was reached (catastrophic backtracking) or another runtime failure.
package struct RegexMatchError: Error, CustomStringConvertible, Sendable {
    /// The pattern as written.
    package let pattern: String
    /// PCRE2's own message.
    package let message: String

    package var description: String { "regular expression /\(pattern)/ failed: \(message)" }
}

/// One successful match: the whole match and every capture group, by number and by name.
package struct RegexMatch: Sendable {
    /// Group texts by number; index 0 is the whole match; `nil` for a group that did not take part.
    package let groups: [String?]
    /// Group numbers by name.
    package let groupNumbers: [String: Int]

    /// The text of the named group, or `nil` when it did not take part.
    package subscript(name: String) -> String? {
        guard let number = groupNumbers[name], number < groups.count else { return nil }
        return groups[number]
    }
}

/// A compiled PCRE2 pattern (UTF and Unicode properties on, JIT when available) with a match limit.
/// Not `Sendable`: its match data is reused between calls.
///
/// The pattern is compiled twice: with Unicode properties (`PCRE2_UCP`, so that `\s` matches a no-break space and
/// `\d` an Arabic-Indic digit), and without them for subjects that are all ASCII. Unicode properties only change how
/// characters above U+007F are classed (`\d`, `\s`, `\w`, `\b`, POSIX classes; pcre2pattern, "Generic character
/// types"): on an ASCII subject both codes find the same matches, and the second runs without property look-ups.
/// The one exception, caseless `[:lower:]`/`[:upper:]`, is never compiled twice (`RegexASCIIPathTests` checks every
/// class on every ASCII character).
package final class RegexPattern {
    /// The pattern as written.
    package let pattern: String
    /// The names of the capture groups, in group-number order.
    package let groupNames: [String]

    /// The number of the group named `name`, or `nil`.
    package func groupNumber(of name: String) -> Int? { groupNumbers[name] }
    private let groupNumbers: [String: Int]
    private let code: CompiledCode
    /// The same pattern without Unicode properties, for ASCII subjects; `nil` when it does not compile.
    private let asciiCode: CompiledCode?
    private let matchData: OpaquePointer
    private let context: OpaquePointer
    /// The JIT's stack for this pattern's matches (`nil` when it could not be made: the JIT then uses its default).
    private let jitStack: OpaquePointer?

    /// The most memory the JIT's stack may grow to (pcre2grep's default is 1 MiB); past it a match is run again by
    /// PCRE2's interpreter, which the match and depth limits bound instead.
    package static let jitStackLimit = 8 * 1024 * 1024

    /// Options for compiling.
    package struct Options: OptionSet, Sendable {
        package let rawValue: UInt32
        package init(rawValue: UInt32) { self.rawValue = rawValue }
        /// Letters match either case.
        package static let caseInsensitive = Options(rawValue: PCRE2_CASELESS)
        /// `^` and `$` match at line breaks.
        package static let multiline = Options(rawValue: PCRE2_MULTILINE)
    }

    /// Compiles `pattern`.
    /// - Parameter matchLimit: the most backtracking steps one match may take before it fails with `RegexMatchError`.
    /// - Throws: `RegexCompileError` with PCRE2's message and offset.
    package init(_ pattern: String, options: Options = [], matchLimit: UInt32 = 1_000_000) throws {
        self.pattern = pattern
        var errorCode: Int32 = 0
        var errorOffset: Int = 0
        guard let compiled = CompiledCode(pattern, flags: PCRE2_UTF | PCRE2_UCP | options.rawValue, &errorCode, &errorOffset) else {
            let characterOffset = pattern.utf8.index(pattern.utf8.startIndex, offsetBy: min(errorOffset, pattern.utf8.count))
            throw RegexCompileError(pattern: pattern, offset: pattern.distance(from: pattern.startIndex, to: characterOffset),
                                    message: RegexPattern.message(for: errorCode))
        }
        code = compiled
        // With Unicode properties `[:lower:]` and `[:upper:]` become \p{Ll} and \p{Lu}, which caseless matching does
        // not widen; without them they take both cases of an ASCII letter: such a pattern (or `[:^lower:]`…) has no ASCII code.
        let asciiSafe = !pattern.contains("lower:") && !pattern.contains("upper:")
        asciiCode = asciiSafe ? CompiledCode(pattern, flags: PCRE2_UTF | options.rawValue, &errorCode, &errorOffset) : nil
        matchData = pcre2_match_data_create_from_pattern_8(compiled.code, nil)
        context = pcre2_match_context_create_8(nil)
        pcre2_set_match_limit_8(context, matchLimit)
        pcre2_set_depth_limit_8(context, matchLimit)
        // The JIT's default stack is 32 KiB of the machine stack: a group repeated over a 900-character line
        // exhausted it. A stack of its own grows to `jitStackLimit` as needed.
        jitStack = pcre2_jit_stack_create_8(32 * 1024, RegexPattern.jitStackLimit, nil)
        if let jitStack { pcre2_jit_stack_assign_8(context, nil, UnsafeMutableRawPointer(jitStack)) }

        var captureCount: UInt32 = 0
        pcre2_pattern_info_8(compiled.code, UInt32(PCRE2_INFO_CAPTURECOUNT), &captureCount)
        var nameCount: UInt32 = 0
        var entrySize: UInt32 = 0
        var table: UnsafePointer<UInt8>?
        pcre2_pattern_info_8(compiled.code, UInt32(PCRE2_INFO_NAMECOUNT), &nameCount)
        pcre2_pattern_info_8(compiled.code, UInt32(PCRE2_INFO_NAMEENTRYSIZE), &entrySize)
        pcre2_pattern_info_8(compiled.code, UInt32(PCRE2_INFO_NAMETABLE), &table)
        var numbers: [String: Int] = [:]
        var names = Array(repeating: "", count: Int(captureCount) + 1)
        if let table {
            for entry in 0..<Int(nameCount) {
                let start = table + entry * Int(entrySize)
                let number = Int(start[0]) << 8 | Int(start[1])
                let name = String(cString: start + 2)
                numbers[name] = number
                if number < names.count { names[number] = name }
            }
        }
        groupNumbers = numbers
        groupNames = names.dropFirst().filter { !$0.isEmpty }
    }

    deinit {
        pcre2_match_data_free_8(matchData)
        pcre2_match_context_free_8(context)
        if let jitStack { pcre2_jit_stack_free_8(jitStack) }
        pcre2_code_free_8(code.code)
        if let asciiCode { pcre2_code_free_8(asciiCode.code) }
    }

    /// Runs the pattern over `subject`: the groups it set, for `group(_:of:in:)`, or `nil` for no match. No string
    /// is made; a reader asks only for the groups it uses. The subject is known to be valid UTF-8, so PCRE2 does not
    /// check it again.
    /// - Throws: `RegexMatchError` when the match limit is hit or PCRE2 fails.
    package func match(_ subject: some RegexSubject) throws -> RegexGroups? {
        let ascii = subject.isKnownASCII
        return try subject.withValidUTF8 { try match($0, ascii: ascii) }.map { RegexGroups(count: Int($0)) }
    }

    /// The text of group `number` of `groups`, what this pattern's last `match(_:)` over `subject` (the same subject)
    /// returned; `nil` when the group did not take part.
    package func group(_ number: Int, of subject: some RegexSubject, in groups: RegexGroups) -> String? {
        guard number < groups.count else { return nil }
        let vector = pcre2_get_ovector_pointer_8(matchData)!
        let start = vector[2 * number], end = vector[2 * number + 1]
        guard start != kiln_pcre2_unset(), end >= start else { return nil }
        let ascii = subject.isKnownASCII
        return subject.withValidUTF8 { buffer in
            let piece = UnsafeBufferPointer(rebasing: buffer[start..<end])
            // Any run of ASCII bytes is valid UTF-8, so the string is made without checking it again (`\C` may
            // end a group inside a character of other text: that is decoded with repairs).
            guard ascii else { return String(decoding: piece, as: UTF8.self) }
            return String(copying: unsafe UTF8Span(unchecked: piece.span, isKnownASCII: true))
        }
    }

    /// The first match in `subject`, or `nil`.
    /// - Throws: `RegexMatchError` when the match limit is hit or PCRE2 fails.
    package func firstMatch(in subject: String) throws -> RegexMatch? {
        var text = subject
        let ascii = subject.isKnownASCII
        return try text.withUTF8 { buffer -> RegexMatch? in
            guard let result = try match(buffer, ascii: ascii) else { return nil }
            let pairs = Int(pcre2_get_ovector_count_8(matchData))
            let vector = pcre2_get_ovector_pointer_8(matchData)!
            let unset = kiln_pcre2_unset()
            var groups: [String?] = []
            groups.reserveCapacity(pairs)
            for group in 0..<pairs {
                let start = vector[2 * group], end = vector[2 * group + 1]
                if start == unset || end < start || group >= Int(result) && result > 0 {
                    groups.append(nil)
                } else {
                    groups.append(String(decoding: UnsafeBufferPointer(rebasing: buffer[start..<end]), as: UTF8.self))
                }
            }
            return RegexMatch(groups: groups, groupNumbers: groupNumbers)
        }
    }

    /// Runs the pattern over `buffer` from `offset`: PCRE2's result (the number of groups set), `nil` for no match.
    /// The bytes are always valid UTF-8 (a Swift string's, or a checked line's, `ValidUTF8`), so PCRE2 skips its own
    /// check; JIT-compiled code is run through `pcre2_jit_match`, which is what `pcre2_match` calls for it after its
    /// argument checks. `ascii`: every byte is below 0x80, so the code without Unicode properties gives the same result.
    private func match(_ buffer: UnsafeBufferPointer<UInt8>, from offset: Int = 0, ascii: Bool) throws -> Int32? {
        let subject = buffer.baseAddress ?? UnsafePointer(bitPattern: 1)!
        let compiled = ascii ? asciiCode ?? code : code
        var result = compiled.isJIT
            ? pcre2_jit_match_8(compiled.code, subject, buffer.count, offset, 0, matchData, context)
            : pcre2_match_8(compiled.code, subject, buffer.count, offset, UInt32(PCRE2_NO_UTF_CHECK), matchData, context)
        if result == PCRE2_ERROR_JIT_STACKLIMIT {
            result = pcre2_match_8(compiled.code, subject, buffer.count, offset, UInt32(PCRE2_NO_UTF_CHECK | PCRE2_NO_JIT), matchData, context)
        }
        if result == PCRE2_ERROR_NOMATCH { return nil }
        guard result >= 0 else {
            throw RegexMatchError(pattern: pattern, message: RegexPattern.message(for: result))
        }
        return result
    }

    /// The pieces of `subject` between the matches of this pattern.
    /// - Throws: `RegexMatchError` when the match limit is hit or PCRE2 fails.
    package func split(_ subject: String) throws -> [String] {
        var text = subject
        let ascii = subject.isKnownASCII
        return try text.withUTF8 { buffer -> [String] in
            var pieces: [String] = []
            var pieceStart = 0
            var offset = 0
            while offset <= buffer.count {
                guard try match(buffer, from: offset, ascii: ascii) != nil else { break }
                let vector = pcre2_get_ovector_pointer_8(matchData)!
                let start = vector[0], end = vector[1]
                if end == start {
                    offset = end + 1
                    while offset < buffer.count, buffer[offset] & 0xC0 == 0x80 { offset += 1 }
                    continue
                }
                pieces.append(String(decoding: UnsafeBufferPointer(rebasing: buffer[pieceStart..<start]), as: UTF8.self))
                pieceStart = end
                offset = end
            }
            pieces.append(String(decoding: UnsafeBufferPointer(rebasing: buffer[pieceStart...]), as: UTF8.self))
            return pieces
        }
    }

    /// True when `subject` contains a match.
    /// - Throws: `RegexMatchError` when the match limit is hit or PCRE2 fails.
    package func matches(_ subject: String) throws -> Bool {
        var text = subject
        let ascii = subject.isKnownASCII
        return try text.withUTF8 { try match($0, ascii: ascii) != nil }
    }

    /// True when `subject` contains a match; as `matches(_:)` for a string, without making one.
    /// - Throws: `RegexMatchError` when the match limit is hit or PCRE2 fails.
    package func matches(_ subject: some RegexSubject) throws -> Bool {
        let ascii = subject.isKnownASCII
        return try subject.withValidUTF8 { try match($0, ascii: ascii) != nil }
    }

    private static func message(for errorCode: Int32) -> String {
        var buffer = [UInt8](repeating: 0, count: 256)
        let length = pcre2_get_error_message_8(errorCode, &buffer, buffer.count)
        return length > 0 ? String(decoding: buffer.prefix(Int(length)), as: UTF8.self) : "PCRE2 error \(errorCode)"
    }
}

/// A pattern as PCRE2 compiled it (with the given flags), and whether the JIT compiled it too (it is then matched
/// through `pcre2_jit_match`). Freed by its `RegexPattern`.
private struct CompiledCode {
    package let code: OpaquePointer
    package let isJIT: Bool

    /// Compiles `pattern` with `flags`; `nil` (with PCRE2's error code and offset) when it does not compile.
    package init?(_ pattern: String, flags: UInt32, _ errorCode: inout Int32, _ errorOffset: inout Int) {
        let compiled = pattern.withCString { text in
            text.withMemoryRebound(to: UInt8.self, capacity: pattern.utf8.count) {
                pcre2_compile_8($0, pattern.utf8.count, flags, &errorCode, &errorOffset, nil)
            }
        }
        guard let compiled else { return nil }
        code = compiled
        isJIT = pcre2_jit_compile_8(compiled, UInt32(PCRE2_JIT_COMPLETE)) == 0
    }
}

/// The capture groups a successful `RegexPattern.match(_:)` set: read them with `RegexPattern.group(_:of:in:)`.
package struct RegexGroups: Sendable {
    /// PCRE2's result: one more than the highest group that was set.
    fileprivate let count: Int
}

/// Text a pattern can run over without a copy: a Swift string, or a line's bytes known to be valid UTF-8.
package protocol RegexSubject {
    /// Calls `body` with the subject's UTF-8 bytes, valid UTF-8.
    func withValidUTF8<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R
    /// True when every byte is known to be ASCII (false may also mean not known).
    var isKnownASCII: Bool { get }
}

extension String: RegexSubject {
    package var isKnownASCII: Bool { utf8Span.isKnownASCII }

    package func withValidUTF8<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        var text = self
        return try text.withUTF8(body)
    }
}

/// A line's bytes that were checked to be valid UTF-8 (by `ValidUTF8.init?(_:)`), matched without a `String`.
package struct ValidUTF8: RegexSubject, Sendable {
    /// The bytes, valid UTF-8.
    package let bytes: ArraySlice<UInt8>
    /// True when every byte is ASCII (found while the bytes were checked).
    package let isKnownASCII: Bool

    /// The bytes when they are valid UTF-8; `nil` otherwise.
    package init?(_ bytes: ArraySlice<UInt8>) {
        do {
            isKnownASCII = try UTF8Span(validating: bytes.span).isKnownASCII
        } catch {
            return nil
        }
        self.bytes = bytes
    }

    /// Bytes known to be ASCII (hence valid UTF-8), not checked again.
    package init(ascii bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
        isKnownASCII = true
    }

    /// The bytes in `range` of these (indices of `bytes`), which must start and end at ASCII bytes or at the ends:
    /// still valid UTF-8, not checked again.
    package func cut(_ range: Range<Int>) -> ValidUTF8 {
        ValidUTF8(checked: bytes[range], isKnownASCII: isKnownASCII)
    }

    private init(checked bytes: ArraySlice<UInt8>, isKnownASCII: Bool) {
        self.bytes = bytes
        self.isKnownASCII = isKnownASCII
    }

    /// The UTF-8 of `text`.
    package init(text: String) {
        bytes = Array(text.utf8)[...]
        isKnownASCII = text.isKnownASCII
    }

    /// The text, as a string (made on each call).
    package var text: String { String(decoding: bytes, as: UTF8.self) }

    package func withValidUTF8<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        try bytes.withUnsafeBufferPointer(body)
    }
}
