import Foundation
import XCTest

/// A web site on 127.0.0.1 for the tests of `kiln fetch` (`scripts/test-site`, Python's standard library): it serves
/// a folder, does what a routes file says for some paths, and logs every request. It stops by itself after a bounded
/// number of requests and seconds; `stop()` ends it at once.
final class TestSite {
    /// The folder served.
    let root: URL
    /// The routes file (JSON), read again at every request.
    let routesFile: URL
    private let logFile: URL
    private let process = Process()
    /// `http://127.0.0.1:PORT`.
    private(set) var origin = ""

    /// One logged request.
    struct Request {
        var time: Double
        var path: String
        var headers: [String: String]
    }

    /// Starts a site serving `root` (made if missing), its state in `folder`.
    init(root: URL, folder: URL) throws {
        self.root = root
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        routesFile = folder.appendingPathComponent("routes.json")
        logFile = folder.appendingPathComponent("requests.jsonl")
        let portFile = folder.appendingPathComponent("port")
        try Data("{}".utf8).write(to: routesFile)
        try Data().write(to: logFile)
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", CLITestCase.repositoryRoot.appendingPathComponent("scripts/test-site").path, "--root", root.path,
                             "--routes", routesFile.path, "--log", logFile.path, "--port-file", portFile.path,
                             "--max-requests", "5000", "--max-seconds", "300"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            if let text = try? String(contentsOf: portFile, encoding: .utf8), let port = Int(text) {
                origin = "http://127.0.0.1:\(port)"
                return
            }
            Thread.sleep(forTimeInterval: 0.05)
        }
        process.terminate()
        throw XCTSkip("the test site did not start")
    }

    deinit { stop() }

    /// Ends the server.
    func stop() {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
    }

    /// Writes `text` as the file `path` of the site.
    func serve(_ path: String, _ text: String) throws {
        let url = root.appendingPathComponent(path)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(text.utf8).write(to: url)
    }

    /// Replaces the routes: path → what the server does instead of serving the file.
    func route(_ routes: [String: [String: Any]]) throws {
        try JSONSerialization.data(withJSONObject: routes, options: [.sortedKeys]).write(to: routesFile)
    }

    /// Every request so far, in the order received.
    func requests() throws -> [Request] {
        let text = try String(contentsOf: logFile, encoding: .utf8)
        return try text.split(separator: "\n").map { line in
            let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            var headers: [String: String] = [:]
            for (key, value) in object where key != "time" && key != "path" { headers[key] = value as? String }
            return Request(time: object["time"] as? Double ?? 0, path: object["path"] as? String ?? "", headers: headers)
        }
    }

    /// Forgets the requests logged so far.
    func clearLog() throws { try Data().write(to: logFile) }

    /// `origin` + `path`.
    func url(_ path: String) -> String { origin + path }
}

/// A test case of `kiln fetch` against its own `TestSite` (serving `site/`, its state in `site-state/`), started
/// before each test and stopped after it; a subclass serves its files once `super.setUpWithError()` returns.
class SiteTestCase: CLITestCase {
    /// This test's site.
    var site: TestSite!

    override func setUpWithError() throws {
        try super.setUpWithError()
        site = try TestSite(root: file("site"), folder: file("site-state"))
    }

    override func tearDownWithError() throws {
        site?.stop()
        try super.tearDownWithError()
    }
}
