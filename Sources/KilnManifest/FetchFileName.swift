import Foundation
import KilnC
import KilnCore

/// Where `kiln fetch` saves each URL of a source: the file `path` names for a source's one `url`; for `urls`, a file in
/// the folder of `path` named after the URL's last path segment. A URL is never a path: the name is made safe here,
/// the same way every time, whatever the server or the manifest wrote.
public enum FetchFileName {
    /// The longest file name made, in UTF-8 bytes (file systems allow 255).
    public static let maximumBytes = 200

    /// The file of each of `fetch.urls`, relative to the pipeline folder, for a source whose `path` is `path`; names
    /// that several URLs would share each get a digest of their URL.
    public static func files(for fetch: SourceFetch, path: String) -> [(url: String, file: String)] {
        if fetch.single { return fetch.urls.map { ($0, path) } }
        return files(for: fetch.urls, inFolderOf: path)
    }

    /// The file of each of `urls` in the folder of `path` (listed `urls`, or URLs derived from fetched data), each
    /// named by `name(for:)`; names that several URLs would share each get a digest of their URL.
    public static func files(for urls: [String], inFolderOf path: String) -> [(url: String, file: String)] {
        let folder = path.split(separator: "/").dropLast().joined(separator: "/")
        let names = urls.map { name(for: $0) }
        var counts: [String: Int] = [:]
        for name in names { counts[name.lowercased(), default: 0] += 1 }
        return zip(urls, names).map { url, name in
            let unique = counts[name.lowercased()]! > 1 ? withDigest(name, of: url) : name
            return (url, folder.isEmpty ? unique : folder + "/" + unique)
        }
    }

    /// The file name for `url`: its last path segment, percent-decoded, with every character that is not a letter, a
    /// digit, `.`, `-` or `_` replaced by `_`; `index.html` for a URL ending in `/`; a leading `.` or a device name
    /// (`CON`, `NUL`, `COM1`…) prefixed with `_`; a query kept apart by a digest of it; a long name cut, with a digest
    /// of the whole URL.
    public static func name(for url: String) -> String {
        let components = URLComponents(string: url)
        let path = components?.percentEncodedPath ?? ""
        let segment = path.split(separator: "/", omittingEmptySubsequences: false).last.map(String.init) ?? ""
        let decoded = segment.removingPercentEncoding ?? segment
        var name = String(decoded.unicodeScalars.map { scalar -> Character in
            let allowed = scalar.properties.isAlphabetic || scalar.properties.numericType != nil || scalar == "." || scalar == "-" || scalar == "_"
            return allowed && !scalar.properties.isDefaultIgnorableCodePoint ? Character(scalar) : "_"
        })
        if name.isEmpty || name.allSatisfy({ $0 == "." }) { name = name.isEmpty ? "index.html" : "_" + name }
        if name.hasPrefix(".") { name = "_" + name }
        let stem = name.split(separator: ".", maxSplits: 1).first.map { $0.uppercased() } ?? ""
        if deviceNames.contains(stem) { name = "_" + name }
        if let query = components?.percentEncodedQuery, !query.isEmpty { name = withDigest(name, of: query) }
        if name.utf8.count > maximumBytes {
            let digest = String(SHA256Digest.hex(of: Data(url.utf8)).prefix(12))
            let ext = extensionOf(name)
            var kept = String(name.dropLast(ext.count))
            while kept.utf8.count > maximumBytes - ext.utf8.count - 13 { kept.removeLast() }
            name = kept + "-" + digest + ext
        }
        return name
    }

    private static let deviceNames = Set(["CON", "PRN", "AUX", "NUL"] + (1...9).flatMap { ["COM\($0)", "LPT\($0)"] })

    /// `name` with the first 8 hexadecimal digits of the SHA-256 of `text` before its extension (`a-1f2e3d4c.html`).
    private static func withDigest(_ name: String, of text: String) -> String {
        let digest = String(SHA256Digest.hex(of: Data(text.utf8)).prefix(8))
        let ext = extensionOf(name)
        return String(name.dropLast(ext.count)) + "-" + digest + ext
    }

    /// `.html` of `a.html`; empty for a name without a dot, or one whose extension is implausibly long.
    private static func extensionOf(_ name: String) -> String {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return "" }
        let ext = String(name[dot...])
        return ext.count <= 10 ? ext : ""
    }
}
