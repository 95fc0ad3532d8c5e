import Foundation
import KilnTestSupport
import XCTest

/// `kiln completions bash|zsh|fish` and `kiln help --man`: each offers every option of every command, as each
/// command's `--help` lists them, and nothing else; the scripts run in the shells themselves and the page renders.
final class CompletionsCommandTests: CLITestCase {
    /// The commands of `kiln --help` (its COMMANDS section), with the options each one's `--help` lists.
    private func helpOptions() throws -> [String: Set<String>] {
        let overview = try kiln("--help").stdout
        let section = try XCTUnwrap(overview.components(separatedBy: "COMMANDS:\n").last?.components(separatedBy: "\n\n").first)
        let names = section.split(separator: "\n").compactMap { $0.split(separator: " ").first.map(String.init) }
        XCTAssertGreaterThan(names.count, 10, overview)
        var options: [String: Set<String>] = [:]
        for name in names where name != "help" {
            let help = try kiln(name, "--help")
            XCTAssertEqual(help.status, 0, name)
            options[name] = CompletionsCommandTests.optionNames(inOptionsSection: help.stdout).union(["--help"])
        }
        // help's own option is named on its line of the overview.
        options["help"] = Set(CompletionsCommandTests.longOptions(in: section.split(separator: "\n").first { $0.hasPrefix("  help ") }.map(String.init) ?? ""))
        XCTAssertEqual(options["help"], ["--man"])
        return options
    }

    /// The options an OPTIONS section starts its lines with.
    static func optionNames(inOptionsSection help: String) -> Set<String> {
        guard let section = help.components(separatedBy: "OPTIONS:\n").dropFirst().first?.components(separatedBy: "\n\n").first else { return [] }
        return Set(section.split(separator: "\n").compactMap { line in
            line.hasPrefix("  --") ? line.dropFirst(2).split(separator: " ").first.map(String.init) : nil
        })
    }

    /// Every `--word` in `text`.
    static func longOptions(in text: String) -> [String] {
        let pattern = try! NSRegularExpression(pattern: "(?<![A-Za-z0-9-])--[a-z][a-z-]*[a-z]")
        return pattern.matches(in: text, range: NSRange(text.startIndex..., in: text)).map { String(text[Range($0.range, in: text)!]) }
    }

    private func script(_ shell: String) throws -> URL {
        let run = try kiln("completions", shell)
        XCTAssertEqual(run.status, 0, run.stderr)
        let url = file("kiln.\(shell)")
        try run.stdout.write(to: url, atomically: true, encoding: .utf8)
        return url
    }

    /// What bash's completion function offers for `words`, the last being the word under the cursor.
    private func bashOffers(_ words: [String]) throws -> [String] {
        let quoted = words.map { "'" + $0 + "'" }.joined(separator: " ")
        let run = try program("/bin/bash", ["-c", "source kiln.bash; COMP_WORDS=(\(quoted)); COMP_CWORD=\(words.count - 1); _kiln; printf '%s\\n' \"${COMPREPLY[@]}\""])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(run.stderr, "")
        return run.stdout.split(separator: "\n").map(String.init)
    }

    /// What fish completes for the command line `line` (the first column of `complete -C`).
    private func fishOffers(_ line: String) throws -> [String] {
        let run = try program("/usr/bin/fish", ["--no-config", "-c", "source kiln.fish; complete -C '\(line)'"])
        XCTAssertEqual(run.status, 0, run.stderr)
        return run.stdout.split(separator: "\n").map { String($0.split(separator: "\t").first ?? "") }
    }

    /// kiln export's first argument completes to the built-in exports' names, the next ones to file names.
    func testExportCompletesExportNamesThenFiles() throws {
        try TestTier.requireFull("bash and fish")
        _ = try script("bash")
        _ = try script("fish")
        try "x".write(to: file("app.sqlite"), atomically: true, encoding: .utf8)
        XCTAssertEqual(Set(try bashOffers(["kiln", "export", ""])), ["swift", "datasette", "docs", "room"])
        XCTAssertEqual(try bashOffers(["kiln", "export", "r"]), ["room"])
        XCTAssertTrue(try bashOffers(["kiln", "export", "swift", "app"]).contains("app.sqlite"))
        XCTAssertEqual(Set(try fishOffers("kiln export ")), ["swift", "datasette", "docs", "room"])
        XCTAssertTrue(try fishOffers("kiln export swift app").contains("app.sqlite"))
    }

    func testBashOffersEveryOptionOfEveryCommandAndNothingElse() throws {
        let options = try helpOptions()
        _ = try script("bash")
        for (command, expected) in options {
            XCTAssertEqual(Set(try bashOffers(["kiln", command, "--"])), expected, command)
        }
        XCTAssertEqual(Set(try bashOffers(["kiln", ""])), Set(options.keys), "the commands")
        XCTAssertEqual(try bashOffers(["kiln", "--"]), ["--help", "--version"])
        XCTAssertEqual(try bashOffers(["kiln", "build", "--format", ""]), ["text", "json", "junit", "github"])
        XCTAssertEqual(try bashOffers(["kiln", "check", "x.sqlite", "--format", "j"]), ["json", "junit"])
        XCTAssertEqual(try bashOffers(["kiln", "completions", ""]), ["bash", "zsh", "fish"])
        XCTAssertEqual(Set(try bashOffers(["kiln", "help", ""])), Set(options.keys).subtracting(["help"]))
        // Paths where a file is asked for (also after --out=), nothing where a number is.
        try FileManager.default.createDirectory(at: file("pipelines"), withIntermediateDirectories: true)
        try Data().write(to: file("pipelines/bundle.sqlite"))
        XCTAssertEqual(try bashOffers(["kiln", "build", "--out", "pipelines/b"]), ["pipelines/bundle.sqlite"])
        XCTAssertEqual(try bashOffers(["kiln", "build", "--out", "=", "pipelines/b"]), ["pipelines/bundle.sqlite"])
        XCTAssertEqual(try bashOffers(["kiln", "check", "pipelines/"]), ["pipelines/bundle.sqlite"])
        XCTAssertEqual(try bashOffers(["kiln", "export", "gtfs", "b.sqlite", "--out", "pipe"]), ["pipelines"], "folders only")
        XCTAssertEqual(try bashOffers(["kiln", "diff", "a", "b", "--examples", ""]), [])
    }

    func testFishOffersEveryOptionOfEveryCommandAndNothingElse() throws {
        let options = try helpOptions()
        let url = try script("fish")
        let syntax = try program("/usr/bin/fish", ["--no-config", "-n", url.path])
        XCTAssertEqual(syntax.status, 0, syntax.stderr)
        for (command, expected) in options {
            XCTAssertEqual(Set(try fishOffers("kiln \(command) --")), expected, command)
        }
        XCTAssertEqual(Set(try fishOffers("kiln ")), Set(options.keys))
        XCTAssertEqual(try fishOffers("kiln --"), ["--help", "--version"])
        XCTAssertEqual(Set(try fishOffers("kiln check b.sqlite --format ")), ["text", "json", "junit", "github"])
        XCTAssertEqual(Set(try fishOffers("kiln completions ")), ["bash", "zsh", "fish"])
    }

    /// Drives an interactive zsh on a pseudo-terminal (zsh/zpty): for each line, list-choices (^D) at its end, then
    /// a marker command so that the listing is read whole; each listing is printed after "=== LINE".
    private static let zshDriver = """
        zmodload zsh/zpty
        zpty z zsh -f -i
        sleep 1
        zpty -w z "fpath=($1 \\$fpath); autoload -U compinit; compinit -u -D; PROMPT='>'; zstyle ':completion:*' list-prompt ''; LISTMAX=10000; print -r -- KILN''DONE"
        zpty -r z chunk '*KILNDONE*'
        shift
        for line in "$@"; do
          sleep 0.3
          zpty -w -n z "$line"$'\\C-d\\C-u'
          zpty -w z "print -r -- KILN''DONE"
          zpty -r z chunk '*KILNDONE*'
          print -r -- "=== $line"
          print -r -- "$chunk"
        done
        zpty -d z

        """

    /// What zsh's completion system lists at the end of each of `lines`, with the script installed as `_kiln` in
    /// `folder`: the words of each listing (an option's or command's description after ` -- ` left out).
    private func zshOffers(_ lines: [String], folder: URL) throws -> [[String]] {
        try CompletionsCommandTests.zshDriver.write(to: file("zsh-driver.zsh"), atomically: true, encoding: .utf8)
        let run = try program("/usr/bin/timeout", ["120", "/usr/bin/zsh", "-f", "zsh-driver.zsh", folder.path] + lines)
        XCTAssertEqual(run.status, 0, run.stderr)
        let escapes = try NSRegularExpression(pattern: "\u{1B}\\[[0-9;?]*[A-Za-z]|.\u{08}|\r")
        let plain = escapes.stringByReplacingMatches(in: run.stdout, range: NSRange(run.stdout.startIndex..., in: run.stdout), withTemplate: "")
        return lines.map { line in
            let section = plain.components(separatedBy: "=== \(line)\n").dropFirst().first?.components(separatedBy: "KILNDONE").first ?? ""
            // The listing is between the echoed line and the echo of the marker command.
            let listing = section.components(separatedBy: "\n").dropFirst().filter { !$0.contains("KILN''DONE") }
                .map { $0.components(separatedBy: line.trimmingCharacters(in: .whitespaces)).first ?? $0 }
            return listing.flatMap { row -> [String] in
                if let described = row.range(of: " -- ") { return [row[..<described.lowerBound].trimmingCharacters(in: .whitespaces)] }
                return row.split(separator: " ").map(String.init)
            }.filter { $0.range(of: "^[a-z-]+$", options: .regularExpression) != nil }  // not the prompt (>) or zsh's % mark (#)
        }
    }

    func testZshOffersEveryOptionOfEveryCommandAndNothingElse() throws {
        let options = try helpOptions()
        let url = try script("zsh")
        let syntax = try program("/usr/bin/zsh", ["-n", url.path])
        XCTAssertEqual(syntax.status, 0, syntax.stderr)
        // The _arguments specs of each command's branch: '--name[…]' or '*--name[…]' (repeatable).
        let text = try String(contentsOf: url, encoding: .utf8)
        for (command, expected) in options {
            let branch = try XCTUnwrap(text.components(separatedBy: "\n        \(command))\n").dropFirst().first?.components(separatedBy: ";;").first, command)
            let specs = branch.split(separator: "\n").compactMap { line -> String? in
                let spec = line.trimmingCharacters(in: .whitespaces).drop { $0 == "'" || $0 == "*" }
                return spec.hasPrefix("--") ? String(spec.prefix { $0 != "[" }) : nil
            }
            XCTAssertEqual(Set(specs), expected, command)
            XCTAssertEqual(specs.count, expected.count, "\(command): each once")
        }
        // Sourced after compinit, an interactive-style shell, it registers _kiln for kiln.
        let loaded = try program("/usr/bin/zsh", ["-f", "-c", "autoload -U compinit; compinit -u -D; source \(url.path); print -r -- ${_comps[kiln]}"])
        XCTAssertEqual(loaded.stdout, "_kiln\n", loaded.stderr)
        // What zsh itself lists, the script installed as _kiln in a folder of fpath (about 10 s of keystrokes and pauses).
        try TestTier.requireFull("an interactive zsh on a pseudo-terminal")
        let folder = file("site-functions")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: url, to: folder.appendingPathComponent("_kiln"))
        let commands = options.keys.sorted()
        let lines = commands.map { "kiln \($0) --" } + ["kiln ", "kiln check x.sqlite --format ", "kiln completions ", "kiln help "]
        let offers = try zshOffers(lines, folder: folder)
        for (command, offered) in zip(commands, offers) { XCTAssertEqual(Set(offered), options[command], command) }
        XCTAssertEqual(Set(offers[commands.count]), Set(options.keys), "the commands")
        XCTAssertEqual(Set(offers[commands.count + 1]), ["text", "json", "junit", "github"])
        XCTAssertEqual(Set(offers[commands.count + 2]), ["bash", "zsh", "fish"])
        XCTAssertEqual(Set(offers[commands.count + 3]), Set(options.keys).subtracting(["help"]))
    }

    func testTheManualPageRendersWithEveryOptionUnderItsCommand() throws {
        let options = try helpOptions()
        let page = try kiln("help", "--man")
        XCTAssertEqual(page.status, 0, page.stderr)
        XCTAssertTrue(page.stdout.hasPrefix(".\\\" The manual page of kiln"), page.stdout)
        XCTAssertTrue(page.stdout.unicodeScalars.allSatisfy(\.isASCII), "escaped for groff")
        try page.stdout.write(to: file("kiln.1"), atomically: true, encoding: .utf8)
        let warnings = try program("/usr/bin/groff", ["-man", "-Tutf8", "-ww", "-z", "kiln.1"])
        XCTAssertEqual(warnings.status, 0)
        XCTAssertEqual(warnings.stderr, "", "groff warns")
        let rendered = try program("/usr/bin/man", ["-l", "kiln.1"], environment: ["MANWIDTH": "120", "MANPAGER": "cat", "PAGER": "cat"])
        XCTAssertEqual(rendered.status, 0, rendered.stderr)
        XCTAssertEqual(rendered.stderr, "")
        // Each command is a subsection (.SS "kiln NAME", up to the next one or section) whose options are tagged
        // paragraphs (.TP, then the tag).
        var seen: [String: Set<String>] = [:]
        for subsection in page.stdout.components(separatedBy: "\n.SS \"kiln ").dropFirst() {
            let section = subsection.components(separatedBy: "\n.SH ")[0]
            let name = String(section.prefix { $0 != "\"" })
            let tags = section.components(separatedBy: "\n.TP\n").dropFirst().compactMap { paragraph in
                paragraph.prefix { $0 != "\n" }.split(separator: " ").dropFirst().first.map { $0.replacingOccurrences(of: "\\-", with: "-") }
            }
            seen[name] = Set(tags)
            XCTAssertEqual(tags.count, seen[name]?.count, "\(name): each once")
        }
        var expected = options
        for name in expected.keys where name != "help" { expected[name]?.remove("--help") }
        XCTAssertEqual(seen, expected)
        // The rendered page shows each option as typed (ASCII hyphens), under its command.
        for (name, names) in expected {
            let section = rendered.stdout.components(separatedBy: "\n   kiln \(name)\n").dropFirst().first?.components(separatedBy: "\n   kiln ").first ?? ""
            for option in names { XCTAssertTrue(section.contains("\n       " + option), "\(name) \(option)") }
        }
        let global = rendered.stdout.components(separatedBy: "\nOPTIONS\n").dropFirst().first?.components(separatedBy: "\nCOMMANDS\n").first ?? ""
        XCTAssertEqual(Set(CompletionsCommandTests.longOptions(in: global)), ["--help", "--version"])
        // Nothing in the page looks like an option that is not one.
        let every = options.values.reduce(Set(["--help", "--version"])) { $0.union($1) }
        XCTAssertEqual(Set(CompletionsCommandTests.longOptions(in: rendered.stdout)).subtracting(every), [])
    }

    func testCompletionsForAnotherShellIsAUsageError() throws {
        let run = try kiln("completions", "tcsh")
        XCTAssertEqual(run.status, 64)
        XCTAssertEqual(run.stdout, "")
        XCTAssertEqual(run.stderr, "Error: no completions for \"tcsh\"; shells: bash, zsh, fish\nUsage: kiln completions bash|zsh|fish\n")
        XCTAssertEqual(try kiln("completions").status, 64)
        XCTAssertEqual(try kiln("help", "--man", "build").stderr, "Error: help --man takes no argument, found \"build\"\nUsage: kiln help --man\n")
    }
}
