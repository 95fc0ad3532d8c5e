import Foundation

/// Turns a source's path or glob into the files it names, refusing anything outside the pipeline folder
/// (absolute paths, `..`, and symbolic links that lead out).
struct InputResolver {
    let directory: URL

    /// The files `pattern` names, sorted by path; a glob may use `*` and `?` in its last component.
    /// - Throws: what `issue` makes of the problem (no match, outside the folder).
    func resolve(_ pattern: String, issue: (String) -> KilnError) throws -> [InputFile] {
        guard !pattern.hasPrefix("/") else { throw issue("\"\(pattern)\" is an absolute path; source paths are relative to the pipeline folder") }
        let root = directory.resolvingSymlinksInPath().standardizedFileURL
        let components = pattern.split(separator: "/").map(String.init)
        guard !components.contains("..") else { throw issue("\"\(pattern)\" leaves the pipeline folder") }
        let folder = components.dropLast().reduce(directory) { $0.appendingPathComponent($1) }
        let last = components.last ?? ""
        var names: [String]
        if last.contains("*") || last.contains("?") {
            let listing = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
            names = listing.filter { !$0.hasPrefix(".") && fnmatch(last, $0, 0) == 0 }.sorted()
            guard !names.isEmpty else { throw issue("no file matches \"\(pattern)\" in \(directory.path)") }
        } else {
            names = [last]
        }
        return try names.map { name in
            let url = folder.appendingPathComponent(name)
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isFolder), !isFolder.boolValue else {
                throw issue("input file \"\(relative(url))\" does not exist in \(directory.path)")
            }
            let real = url.resolvingSymlinksInPath().standardizedFileURL.path
            guard real.hasPrefix(root.path + "/") else {
                throw issue("\"\(relative(url))\" leads outside the pipeline folder (to \(real)); inputs must stay inside it")
            }
            return InputFile(url: url, relativePath: relative(url))
        }
    }

    private func relative(_ url: URL) -> String {
        let base = directory.standardizedFileURL.path + "/"
        let path = url.standardizedFileURL.path
        return path.hasPrefix(base) ? String(path.dropFirst(base.count)) : path
    }
}
