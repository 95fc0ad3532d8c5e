import Foundation
import KilnC
import KilnCore

/// Turns a source's path or glob into the files it names, refusing anything outside the pipeline folder
/// (absolute paths, `..`, and symbolic links that lead out) unless it lies in a folder the command line allowed.
package struct InputResolver {
    package let directory: URL
    /// Folders (or single files) outside the pipeline folder that inputs may also come from, as absolute paths
    /// (`kiln build --allow-path`). Empty by default: inputs stay inside the pipeline folder.
    package var allowedPaths: [URL] = []

    /// A resolver of patterns relative to `directory`, which may also name files in `allowedPaths`.
    package init(directory: URL, allowedPaths: [URL] = []) {
        self.directory = directory
        self.allowedPaths = allowedPaths
    }

    /// The files `pattern` names, sorted by path; a glob may use `*` and `?` in its last component.
    /// - Throws: what `issue` makes of the problem (no match, outside the folder).
    package func resolve(_ pattern: String, issue: (String) -> KilnError) throws -> [InputFile] {
        if let scheme = pattern.range(of: "://"), pattern[..<scheme.lowerBound].allSatisfy({ $0.isLetter || $0 == "+" || $0 == "-" || $0 == "." }) {
            throw issue("\"\(pattern)\" is a URL; Kiln reads only files in the pipeline folder and never the network: save the page (the scraper's job) and name the saved file")
        }
        let absolute = pattern.hasPrefix("/")
        let components = pattern.split(separator: "/").map(String.init)
        if allowedPaths.isEmpty {
            guard !absolute else { throw issue("\"\(pattern)\" is an absolute path; source paths are relative to the pipeline folder") }
            guard !components.contains("..") else { throw issue("\"\(pattern)\" leaves the pipeline folder") }
        } else if !isAllowed((absolute ? URL(fileURLWithPath: pattern) : directory.appendingPathComponent(pattern)).standardizedFileURL.path) {
            throw issue("\"\(pattern)\" is outside the pipeline folder and the allowed paths (\(allowedList))")
        }
        let start = absolute ? URL(fileURLWithPath: "/") : directory
        let folder = components.dropLast().reduce(start) { $0.appendingPathComponent($1) }
        let last = components.last ?? ""
        var names: [String]
        if last.contains("*") || last.contains("?") {
            let listing = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
            names = listing.filter { !$0.hasPrefix(".") && FileCalls.matches($0, pattern: last) }.sorted()
            guard !names.isEmpty else { throw issue("no file matches \"\(pattern)\" in \(absolute ? folder.path : directory.path)") }
        } else {
            names = [last]
        }
        let bases = allowedBases()
        // A glob may name thousands of files of one folder: the folder's paths are worked out once, and a file that
        // is not a link itself lies where the folder really is. Anything else (links above all) is resolved alone.
        let folderPath = folder.path
        let base = directory.standardizedFileURL.path + "/"
        var folderPaths: (real: String, standardized: String)?
        func joined(_ folder: String, _ name: String) -> String { folder.hasSuffix("/") ? folder + name : folder + "/" + name }
        return try names.map { name in
            if name != "." && name != "..", let entry = OutputPath.entry(atPath: joined(folderPath, name)), entry.kind == .regular {
                let paths = folderPaths ?? (folder.resolvingSymlinksInPath().standardizedFileURL.path, folder.standardizedFileURL.path)
                folderPaths = paths
                let real = joined(paths.real, name)
                guard isAllowed(real, bases: bases) else {
                    let url = folder.appendingPathComponent(name)
                    throw issue(outside(url, real))
                }
                let standardized = joined(paths.standardized, name)
                var file = InputFile(url: URL(fileURLWithPath: standardized, isDirectory: false), relativePath: relative(path: standardized, base: base))
                file.resolvedKey = FileKey(entry.status)
                return file
            }
            let url = folder.appendingPathComponent(name)
            switch OutputPath.entryKind(url, followingLinks: true) {
            case nil:
                // "in.txt/." names nothing because in.txt is a file: say that, not that in.txt does not exist.
                var prefix = start
                for component in components.dropLast() {
                    prefix.appendPathComponent(component)
                    if let kind = OutputPath.entryKind(prefix, followingLinks: true), kind != .folder {
                        throw issue("input \"\(pattern)\" names nothing: \"\(relative(prefix))\" is \(kind.phrase), not a folder")
                    }
                }
                throw issue("input file \"\(relative(url))\" does not exist in \(absolute ? folder.path : directory.path)")
            case .regular?:
                break
            case let kind?:
                // A FIFO would block the build until something writes into it; a folder or a device is no input file.
                throw issue("input \"\(relative(url))\" is \(kind.phrase), not a regular file")
            }
            let real = url.resolvingSymlinksInPath().standardizedFileURL.path
            guard isAllowed(real, bases: bases) else { throw issue(outside(url, real)) }
            return InputFile(url: url, relativePath: relative(url))
        }
    }

    private func outside(_ url: URL, _ real: String) -> String {
        let allowed = allowedPaths.isEmpty ? "" : " and the allowed paths (\(allowedList))"
        return "\"\(relative(url))\" leads outside the pipeline folder\(allowed) (to \(real)); inputs must stay inside it"
    }

    /// The folders inputs may lie in, each as written and with its symbolic links resolved: the pipeline folder
    /// (inputs lie inside it), and the allowed paths (inputs are them or lie inside them).
    private func allowedBases() -> (inside: [String], allowed: [String]) {
        func forms(_ url: URL) -> [String] { [url.standardizedFileURL.path, url.resolvingSymlinksInPath().standardizedFileURL.path] }
        return (forms(directory), allowedPaths.flatMap(forms))
    }

    /// True when `path` lies inside the pipeline folder or is, or lies inside, an allowed path; each is compared as
    /// written and with its symbolic links resolved.
    private func isAllowed(_ path: String, bases: (inside: [String], allowed: [String])? = nil) -> Bool {
        let bases = bases ?? allowedBases()
        if bases.inside.contains(where: { path.hasPrefix($0 + "/") }) { return true }
        return bases.allowed.contains { base in path == base || path.hasPrefix(base == "/" ? base : base + "/") }
    }

    private var allowedList: String { allowedPaths.map(\.path).joined(separator: ", ") }

    private func relative(_ url: URL) -> String { relative(path: url.standardizedFileURL.path, base: directory.standardizedFileURL.path + "/") }

    /// A standardized absolute path relative to the pipeline folder (`base`, with a final "/") when inside it.
    private func relative(path: String, base: String) -> String {
        path.hasPrefix(base) ? String(path.dropFirst(base.count)) : path
    }
}
