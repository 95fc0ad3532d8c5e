import Foundation
import KilnCore

/// A host's robots.txt read as RFC 9309 says: the group whose `user-agent` matches the crawler's product token (else
/// the `*` group; groups naming the same agent are merged), its `allow` and `disallow` rules with `*` and `$`, the
/// longest matching rule deciding (`allow` on a tie), and `/robots.txt` itself always allowed. `Crawl-delay`, an
/// extension many sites use, is read from the same group.
public struct RobotsRules: Sendable, Equatable {
    /// One `allow` or `disallow` line.
    struct Rule: Sendable, Equatable {
        var allow: Bool
        /// The path pattern, percent-encoding normalized (`normalized`).
        var pattern: String
    }

    var rules: [Rule]
    /// The group's `crawl-delay`, in seconds.
    public var crawlDelay: Double?

    /// Everything allowed: a robots.txt that is missing or answered with a 4xx (RFC 9309, 2.3.1.3).
    public static let allowAll = RobotsRules(rules: [], crawlDelay: nil)
    /// Everything disallowed: a robots.txt answered with a 5xx or not reachable (RFC 9309, 2.3.1.4).
    public static let disallowAll = RobotsRules(rules: [Rule(allow: false, pattern: "/")], crawlDelay: nil)

    /// The most of a robots.txt that is read (RFC 9309 asks for at least 500 KiB).
    public static let maximumBytes = 512 * 1024

    /// The rules of `text` (a robots.txt body) for the crawler whose product token is `agent` (`PatrasBus-data`).
    public init(parsing text: String, agent: String) {
        let token = agent.lowercased()
        var groups: [(agents: [String], rules: [Rule], delay: Double?)] = []
        var collectingAgents = false
        for rawLine in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r" }) {
            let line = rawLine.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
            guard let colon = line.firstIndex(of: ":") else { continue }
            let key = line[..<colon].trimmingCharacters(in: .whitespaces).lowercased()
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            switch key {
            case "user-agent":
                if !collectingAgents || groups.isEmpty { groups.append(([], [], nil)) }
                // The value's product token: its leading letters, `-` and `_` (RFC 9309, 2.2.1), or `*`.
                let name = value.hasPrefix("*") ? "*" : String(value.prefix { $0.isASCII && ($0.isLetter || $0 == "-" || $0 == "_") })
                groups[groups.count - 1].agents.append(name.lowercased())
                collectingAgents = true
            case "allow", "disallow":
                collectingAgents = false
                guard !groups.isEmpty else { continue }
                // An empty disallow allows everything; an empty allow says nothing.
                if value.isEmpty { continue }
                groups[groups.count - 1].rules.append(Rule(allow: key == "allow", pattern: RobotsRules.normalized(value)))
            case "crawl-delay":
                collectingAgents = false
                guard !groups.isEmpty, let seconds = Double(value), seconds.isFinite, seconds >= 0 else { continue }
                groups[groups.count - 1].delay = seconds
            default:
                // Sitemap and unknown lines do not end a group's list of agents (RFC 9309, 2.2.4).
                continue
            }
        }
        var chosen = groups.filter { $0.agents.contains(token) }
        if chosen.isEmpty { chosen = groups.filter { $0.agents.contains("*") } }
        rules = chosen.flatMap(\.rules)
        crawlDelay = chosen.compactMap(\.delay).max()
    }

    init(rules: [Rule], crawlDelay: Double?) {
        self.rules = rules
        self.crawlDelay = crawlDelay
    }

    /// Whether `url` may be fetched.
    public func allows(_ url: String) -> Bool {
        // The path and query as written (Foundation would escape a URL's `%` again when it also holds raw non-ASCII).
        var rest = url[...]
        if let scheme = rest.range(of: "://") { rest = rest[scheme.upperBound...] }
        rest = rest.prefix { $0 != "#" }
        guard let start = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) else { return allows(path: "/") }
        let path = rest[start...]
        return allows(path: path.hasPrefix("?") ? "/" + path : String(path))
    }

    /// Whether the path (with its query) `path` may be fetched.
    public func allows(path: String) -> Bool {
        let target = RobotsRules.normalized(path)
        if target == "/robots.txt" { return true }
        var best: Rule?
        for rule in rules where RobotsRules.match(rule.pattern, target) {
            guard let current = best else { best = rule; continue }
            if rule.pattern.count > current.pattern.count || (rule.pattern.count == current.pattern.count && rule.allow && !current.allow) {
                best = rule
            }
        }
        return best?.allow ?? true
    }

    /// The product token of a User-Agent: its first word, up to a `/` (`PatrasBus-data` of `PatrasBus-data/2 (+…)`).
    public static func productToken(of userAgent: String) -> String {
        let word = userAgent.split(separator: " ").first.map(String.init) ?? userAgent
        return String(word.split(separator: "/").first ?? Substring(word))
    }

    /// `pattern` matched from the start of `path`: `*` any run of characters, `$` at the end the end of the path.
    static func match(_ pattern: String, _ path: String) -> Bool {
        let anchored = pattern.hasSuffix("$")
        let body = Array((anchored ? String(pattern.dropLast()) : pattern).utf8)
        let text = Array(path.utf8)
        // Glob matching with backtracking over the last `*`, linear in practice.
        var p = 0, t = 0, star = -1, mark = 0
        while t < text.count {
            if p < body.count, body[p] == UInt8(ascii: "*") {
                star = p
                mark = t
                p += 1
            } else if p < body.count, body[p] == text[t] {
                p += 1
                t += 1
            } else if p == body.count, !anchored {
                return true
            } else if star >= 0 {
                p = star + 1
                mark += 1
                t = mark
            } else {
                return false
            }
        }
        while p < body.count, body[p] == UInt8(ascii: "*") { p += 1 }
        return p == body.count
    }

    /// A path with every byte outside the unreserved and reserved ASCII characters percent-encoded, and escapes in
    /// upper case, so that `/ä` and `/%C3%A4` compare equal (RFC 9309, 2.2.2).
    static func normalized(_ path: String) -> String {
        var result = ""
        let bytes = Array(path.utf8)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "%"), index + 2 < bytes.count, let value = UInt8(String(decoding: bytes[index + 1...index + 2], as: UTF8.self), radix: 16) {
                // An escaped unreserved character is the character itself.
                let character = Character(Unicode.Scalar(value))
                if value < 0x80, character.isLetter || character.isNumber || "-._~".contains(character) {
                    result.append(character)
                } else {
                    result += String(format: "%%%02X", value)
                }
                index += 3
                continue
            }
            if byte < 0x80, byte > 0x20, byte != 0x7F {
                result.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                result += String(format: "%%%02X", byte)
            }
            index += 1
        }
        return result
    }
}
