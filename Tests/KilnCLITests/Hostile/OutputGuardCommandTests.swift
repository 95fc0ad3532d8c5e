import Foundation
import XCTest
import KilnKit

/// Every writer of the `kiln` binary against destinations that are not Kiln's to replace: a device, a FIFO, a
/// symbolic link, the file the command reads, a folder leading out of the pipeline. Each is refused with one
/// sentence, and every file (and device, FIFO and link) is as it was. The writers: the bundle and the JSON report
/// (`HostileEnvironmentCommandTests`), the HTML report of `build --html` and of `kiln report`, export files, the
/// export's archive and `kiln test --update`'s expected files.
final class OutputGuardCommandTests: CLITestCase {
    /// A pipeline `p` reading `in.txt` into `t(v)` with `export` (default: one file and an archive) and `extra` at the
    /// top level; `rows` lines of input.
    private func pipeline(export: String = #"{ name: "text", files: [{ path: "out.txt", format: "delimited", query: "SELECT v FROM t ORDER BY v" }], archive: "text.zip" }"#,
                          extra: String = "", rows: [String] = ["a", "b"]) throws {
        let folder = try writePipeline("p", manifest: """
            { bundle: "guard", schemaVersion: 1,
              tables: [{ name: "t", columns: [{ name: "v", type: "text" }] }],
              sources: [{ name: "s", format: "delimited", path: "in.txt", options: { fields: ["v"] }, into: "t", columns: { v: "v" } }],
              exports: [\(export)],\(extra)
            }
            """)
        try (rows.joined(separator: "\n") + "\n").write(to: folder.appendingPathComponent("in.txt"), atomically: true, encoding: .utf8)
    }

    /// The digest of every regular file under the working folder, and the kind of every other entry.
    private func snapshot() throws -> [String: String] {
        var entries: [String: String] = [:]
        let enumerator = FileManager.default.enumerator(atPath: workingDirectory.path)
        while let path = enumerator?.nextObject() as? String {
            var status = stat()
            guard lstat(file(path).path, &status) == 0 else { continue }
            switch status.st_mode & S_IFMT {
            case S_IFREG: entries[path] = try sha256(path)
            case S_IFLNK: entries[path] = "link to " + (try FileManager.default.destinationOfSymbolicLink(atPath: file(path).path))
            case S_IFIFO: entries[path] = "fifo"
            default: entries[path] = "other \(status.st_mode & S_IFMT)"
            }
        }
        return entries
    }

    private func firstLine(_ run: Run) -> String { String(run.stderr.prefix { $0 != "\n" }) }

    /// A FIFO, a symbolic link to a file and a file to point at, in the working folder.
    private func hostileEntries() throws {
        XCTAssertEqual(mkfifo(file("fifo").path, 0o644), 0)
        try "elsewhere\n".write(to: file("target.txt"), atomically: true, encoding: .utf8)
        try FileManager.default.createSymbolicLink(atPath: file("link").path, withDestinationPath: "target.txt")
    }

    func testKilnReportRefusesADeviceAFIFOALinkAndTheReportItself() throws {
        try pipeline()
        XCTAssertEqual(try kiln("build", "p", "--quiet").status, 0)
        try hostileEntries()
        let before = try snapshot()
        let cases: [(String, String)] = [
            ("/dev/null", "Error: --out /dev/null is a character device; Kiln replaces only regular files"),
            ("fifo", "Error: --out fifo is a FIFO (named pipe); Kiln replaces only regular files"),
            ("link", "Error: --out link is a symbolic link; Kiln replaces only regular files"),
            ("build/guard.report.json", "Error: --out build/guard.report.json is the report it is made from; it would be overwritten"),
            ("build/../build/guard.report.json", "Error: --out build/../build/guard.report.json is the report it is made from; it would be overwritten"),
        ]
        for (out, message) in cases {
            let run = try kiln("report", "build/guard.report.json", "--out", out)
            XCTAssertEqual(run.status, 64, out)
            XCTAssertEqual(firstLine(run), message)
        }
        XCTAssertEqual(try snapshot(), before, "every file, FIFO and link is as it was")
        XCTAssertEqual(OutputPathKind.of(URL(fileURLWithPath: "/dev/null")), S_IFCHR, "the device is still a device")
        XCTAssertEqual(try kiln("report", "build/guard.report.json", "--out", "page.html").status, 0)
        XCTAssertTrue(try String(contentsOf: file("page.html"), encoding: .utf8).contains("<html"))
    }

    func testBuildHTMLRefusesAPageThatIsAFIFOOrALinkBeforeAnythingIsWritten() throws {
        try pipeline()
        XCTAssertEqual(try kiln("build", "p", "--quiet").status, 0)
        try "a\nb\nc\n".write(to: file("p/in.txt"), atomically: true, encoding: .utf8)
        XCTAssertEqual(mkfifo(file("build/guard.report.html").path, 0o644), 0)
        let before = try snapshot()
        let run = try kiln("build", "p", "--html")
        XCTAssertEqual(run.status, 64, run.stderr)
        XCTAssertEqual(firstLine(run), "Error: the HTML report build/guard.report.html is a FIFO (named pipe); Kiln replaces only regular files")
        XCTAssertEqual(try snapshot(), before, "the bundle and the report were not replaced either")
        try FileManager.default.removeItem(at: file("build/guard.report.html"))
        try "target\n".write(to: file("target.txt"), atomically: true, encoding: .utf8)
        try FileManager.default.createSymbolicLink(atPath: file("build/guard.report.html").path, withDestinationPath: "../target.txt")
        XCTAssertEqual(firstLine(try kiln("build", "p", "--html")),
                       "Error: the HTML report build/guard.report.html is a symbolic link; Kiln replaces only regular files")
        XCTAssertEqual(try String(contentsOf: file("target.txt"), encoding: .utf8), "target\n")
    }

    func testAnExportArchiveMustBeAPlainFileNameAndARegularFile() throws {
        try pipeline(export: #"{ name: "text", files: [{ path: "out.txt", format: "delimited", query: "SELECT v FROM t" }], archive: "../../x/in.txt" }"#)
        let escape = try kiln("build", "p", "--quiet")
        XCTAssertEqual(escape.status, 64)
        XCTAssertTrue(firstLine(escape).hasSuffix("manifest error at exports[0].archive: an archive is a plain file name (written beside the --out folder), not \"../../x/in.txt\""), escape.stderr)

        try pipeline()
        XCTAssertEqual(try kiln("build", "p", "--quiet").status, 0)
        try hostileEntries()
        try FileManager.default.createDirectory(at: file("e"), withIntermediateDirectories: true)
        for (entry, phrase) in [("fifo", "a FIFO (named pipe)"), ("link", "a symbolic link")] {
            try? FileManager.default.removeItem(at: file("text.zip"))
            try FileManager.default.createSymbolicLink(atPath: file("text.zip").path, withDestinationPath: entry)
            if entry == "fifo" {
                try FileManager.default.removeItem(at: file("text.zip"))
                XCTAssertEqual(mkfifo(file("text.zip").path, 0o644), 0)
            }
            let before = try snapshot()
            let run = try kiln("export", "text", "build/guard.sqlite", "--out", "e", "--manifest", "p")
            XCTAssertEqual(run.status, 64, run.stderr)
            XCTAssertEqual(firstLine(run), "Error: the archive ./text.zip is \(phrase); Kiln replaces only regular files")
            XCTAssertEqual(try snapshot(), before, "no export file was written either")
        }
        XCTAssertEqual(try String(contentsOf: file("target.txt"), encoding: .utf8), "elsewhere\n")
    }

    func testAnArchiveThatCannotBeWrittenLeavesTheFolderAndTheOldArchiveAsTheyWere() throws {
        // Three files of 41 KB of hexadecimal text each: every file fits under a 48 KiB file-size limit (`ulimit -f`
        // counts 512-byte blocks in /bin/sh), their archive (about half their size) does not.
        var generator = SystemRandomNumberGenerator()
        let rows = (0..<1_250).map { _ in String(format: "%016llx%016llx", generator.next() as UInt64, generator.next() as UInt64) }
        let files = (1...3).map { #"{ path: "part\#($0).txt", format: "delimited", query: "SELECT v FROM t ORDER BY v" }"# }.joined(separator: ", ")
        try pipeline(export: #"{ name: "text", files: [\#(files)], archive: "text.zip" }"#, rows: rows)
        XCTAssertEqual(try kiln("build", "p", "--quiet").status, 0)
        try FileManager.default.createDirectory(at: file("e"), withIntermediateDirectories: true)
        try "old part\n".write(to: file("e/part1.txt"), atomically: true, encoding: .utf8)
        try "old archive\n".write(to: file("text.zip"), atomically: true, encoding: .utf8)
        let before = try snapshot()
        let run = try kilnInShell("", prefix: "ulimit -f 96;", ["export", "text", "build/guard.sqlite", "--out", "e", "--manifest", "p"])
        XCTAssertEqual(run.status, 74, run.stderr)
        XCTAssertTrue(firstLine(run).hasPrefix("Error: cannot write \(file("text.zip").path)"), run.stderr)
        XCTAssertEqual(try snapshot(), before, "no export file was put in place, the old archive is whole, no temporary is left")
        let again = try kiln("export", "text", "build/guard.sqlite", "--out", "e", "--manifest", "p")
        XCTAssertEqual(again.status, 0, again.stderr)
        XCTAssertEqual(try String(contentsOf: file("e/part1.txt"), encoding: .utf8).split(separator: "\n").count, rows.count)
    }

    func testTestUpdateRefusesAnExpectedFileInAFolderLeadingOutOfThePipeline() throws {
        try pipeline(extra: #" fixtures: [{ source: "s", input: "in.txt", expected: "fx/expected.json" }],"#)
        try FileManager.default.createDirectory(at: file("outside"), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: file("p/fx").path, withDestinationPath: "../outside")
        let before = try snapshot()
        let run = try kiln("test", "p", "--update")
        XCTAssertEqual(run.status, 64, run.stderr)
        XCTAssertTrue(firstLine(run).contains("manifest error at fixtures[0].expected: \"fx/expected.json\" is in a folder that leads out of the pipeline folder"), run.stderr)
        XCTAssertEqual(try snapshot(), before)
        XCTAssertFalse(FileManager.default.fileExists(atPath: file("outside/expected.json").path))
    }
}
