import Foundation

/// A path as a user reads it, and as CI annotations need it: relative to the current folder, however the command
/// line spelled it (`.`, `./kiln.json5`, `..`, absolute); `.` for the current folder itself.
package func displayPath(_ url: URL) -> String {
    relativePath(url.standardizedFileURL.path, from: FileManager.default.currentDirectoryPath)
}

/// The absolute `path` relative to the absolute `folder`: the rest of it inside the folder, `..` up to the nearest
/// folder the two share outside it, `.` for the folder itself; `path` as it is when they share only the root.
package func relativePath(_ path: String, from folder: String) -> String {
    let target = path.split(separator: "/"), base = folder.split(separator: "/")
    let common = zip(target, base).prefix { $0 == $1 }.count
    if common == target.count && common == base.count { return "." }
    guard common > 0 else { return path }
    return (Array(repeating: "..", count: base.count - common) + target.dropFirst(common).map(String.init)).joined(separator: "/")
}
