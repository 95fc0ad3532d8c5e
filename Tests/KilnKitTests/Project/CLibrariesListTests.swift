import Foundation
import XCTest
import KilnTestSupport

/// `scripts/c-libraries` is the one list of the C libraries Kiln builds against: Package.swift's system-library
/// targets and apt providers, the README's Install section, and the scripts that read it (install-deps, fuzz) must
/// agree with it.
final class CLibrariesListTests: XCTestCase {
    private let root = PythonOracle.repositoryRoot

    private func text(_ path: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
    }

    /// The list's entries: module, Debian package, pkg-config name (nil for "-").
    private func listed() throws -> [(module: String, package: String, pkgConfig: String?)] {
        try text("scripts/c-libraries").split(separator: "\n").compactMap { line in
            guard !line.hasPrefix("#") else { return nil }
            let fields = line.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
            guard !fields.isEmpty else { return nil }
            XCTAssertEqual(fields.count, 3, "scripts/c-libraries: \(line)")
            return (fields[0], fields[1], fields[2] == "-" ? nil : fields[2])
        }
    }

    func testPackageSwiftDeclaresExactlyTheListedLibraries() throws {
        let package = try text("Package.swift")
        let pattern = try NSRegularExpression(pattern: #"\.systemLibrary\(name: "(\w+)"(?:, pkgConfig: "([^"]+)")?, providers: \[\.apt\(\["([^"]+)"\]\)\]\)"#)
        let declared = pattern.matches(in: package, range: NSRange(package.startIndex..., in: package)).map { match -> String in
            let group = { (index: Int) -> String in
                Range(match.range(at: index), in: package).map { String(package[$0]) } ?? "-"
            }
            return "\(group(1)) \(group(3)) \(group(2))"
        }
        let list = try listed()
        XCTAssertEqual(declared, list.map { "\($0.module) \($0.package) \($0.pkgConfig ?? "-")" })
        let dependencies = try XCTUnwrap(package.range(of: #"\.target\(name: "KilnC", dependencies: \[[^\]]*\]"#, options: .regularExpression).map { package[$0] })
        for entry in list {
            XCTAssertTrue(dependencies.contains("\"\(entry.module)\""), "KilnC does not depend on \(entry.module)")
            let modulemap = try text("Sources/\(entry.module)/module.modulemap")
            XCTAssertTrue(modulemap.contains("module \(entry.module) [system]"), entry.module)
            XCTAssertTrue(modulemap.contains("link \""), "\(entry.module)'s modulemap links no library")
        }
    }

    func testReadmeInstallNamesEveryPackage() throws {
        let readme = try text("README.md")
        let start = try XCTUnwrap(readme.range(of: "\n## Install\n"))
        let end = try XCTUnwrap(readme.range(of: "\n## ", range: start.upperBound..<readme.endIndex))
        let install = readme[start.upperBound..<end.lowerBound]
        let words = Set(install.split(whereSeparator: { $0.isWhitespace || $0 == "`" || $0 == "," || $0 == "(" || $0 == ")" }))
        for entry in try listed() {
            XCTAssertTrue(words.contains(Substring(entry.package)), "README's Install section does not name \(entry.package)")
        }
    }

    /// Every `apt-get install` the docs show installs the whole list: it reads scripts/c-libraries, or names every
    /// package of it.
    func testEveryInstallCommandInTheDocsInstallsTheList() throws {
        var pages = ["README.md"]
        let docs = root.appendingPathComponent("docs")
        for case let url as URL in FileManager.default.enumerator(at: docs, includingPropertiesForKeys: nil)! where url.pathExtension == "md" {
            pages.append(String(url.path.dropFirst(root.path.count + 1)))
        }
        var commands = 0
        for page in pages {
            for line in try text(page).split(separator: "\n") where line.contains("apt-get install") {
                commands += 1
                if line.contains("scripts/c-libraries") { continue }
                let words = Set(line.split(whereSeparator: { $0.isWhitespace || $0 == "`" }).map(String.init))
                for entry in try listed() { XCTAssertTrue(words.contains(entry.package), "\(page): \(line.trimmingCharacters(in: .whitespaces)) does not install \(entry.package)") }
            }
        }
        XCTAssertGreaterThan(commands, 0, "the CI guide shows its install command")
        // The guide's command, run on the list, gives every package in the list's order.
        let guide = try text("docs/guide/ci.md")
        let awk = try XCTUnwrap(guide.firstMatch(of: /\$\(awk '([^']+)' scripts\/c-libraries\)/)).1
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/awk")
        process.arguments = [String(awk), root.appendingPathComponent("scripts/c-libraries").path]
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let printed = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        XCTAssertEqual(printed.split(separator: "\n").map(String.init), try listed().map(\.package))
    }

    func testScriptsReadTheList() throws {
        for script in ["scripts/install-deps", "scripts/fuzz"] {
            XCTAssertTrue(try text(script).contains("c-libraries"), "\(script) does not read scripts/c-libraries")
        }
        for entry in try listed() {
            XCTAssertFalse(try text("scripts/install-deps").contains(entry.package), "scripts/install-deps names \(entry.package) itself")
            if let name = entry.pkgConfig { XCTAssertFalse(try text("scripts/fuzz").contains(" \(name) "), "scripts/fuzz names \(name) itself") }
        }
    }
}
