import Foundation
import KilnC
import KilnCore
import KilnManifest
import KilnReaders

/// The DDL of what a target gets instead of a module it lacks: an FTS4 table with external content instead of FTS5,
/// an indexed bounding-box table instead of an R*Tree. The same query text (`MATCH`, the region's `min_lat >= …`)
/// gives the same rows on both.
package enum TargetSQL {
    /// The FTS4 tokenizer for an FTS5 `tokenize` declaration on `target`, or the reason there is none. `unicode61`
    /// with `remove_diacritics 2` keeps it where the target has it (3.27.0), else takes `remove_diacritics=1` (one
    /// diacritic per character is removed; `folded` says so); `tokenchars`/`separators` carry over; `porter` alone
    /// becomes FTS4's `porter`.
    package static func fts4Tokenizer(_ tokenize: String, target: SQLiteTarget) -> (tokenizer: String?, folded: Bool, problem: String?) {
        let words = tokenize.split(whereSeparator: { $0 == " " }).map { String($0).trimmingCharacters(in: CharacterSet(charactersIn: "'\"")) }
        guard let name = words.first else { return ("simple", false, nil) }
        switch name {
        case "porter" where words.count == 1:
            return ("porter", false, nil)
        case "unicode61":
            var options: [String] = [], folded = false
            var index = 1
            while index + 1 < words.count {
                let (option, value) = (words[index], words[index + 1])
                switch option {
                case "remove_diacritics" where value == "2" && !target.has(SQLiteVersion(3, 27)):
                    options.append(backtick("remove_diacritics=1"))
                    folded = true
                case "remove_diacritics", "tokenchars", "separators":
                    options.append(backtick("\(option)=\(value)"))
                default:
                    return (nil, false, "the unicode61 option \(option)")
                }
                index += 2
            }
            if index < words.count { return (nil, false, "the tokenizer declaration \(tokenize)") }
            return ((["unicode61"] + options).joined(separator: " "), folded, nil)
        default:
            return (nil, false, "the FTS5 tokenizer \(tokenize)")
        }
    }

    /// `name` in backticks (a backtick doubled): how Room's compiler quotes FTS option values.
    package static func backtick(_ name: String) -> String {
        "`" + name.replacingOccurrences(of: "`", with: "``") + "`"
    }

    /// The FTS4 table of a `fullText` declaration, its text read from `table` (external content: stored once): the
    /// unindexed columns are `notindexed`; its docids are the table's rowids. The options are spelled as Room's
    /// compiler spells an `@Fts4` entity's (`tokenize=unicode61 `remove_diacritics=1``, `content=`stop``,
    /// `notindexed=`code``, no `tokenize=simple`), because Room compares them as text when it validates a
    /// pre-packaged database (docs/guide/app.md, Android and Room).
    package static func createFullText4(_ fullText: FullTextSpec, of table: TableSpec, tokenizer: String) -> String {
        let columns = (fullText.columns + fullText.unindexed).map(quoteIdentifier)
        let tokenize = tokenizer == "simple" ? [] : ["tokenize=\(tokenizer)"]
        let options = tokenize + ["content=\(backtick(table.name))"] + fullText.unindexed.map { "notindexed=\(backtick($0))" }
        return "CREATE VIRTUAL TABLE \(quoteIdentifier(fullText.name)) USING fts4(\((columns + options).joined(separator: ", ")))"
    }

    /// The FTS4 table `target`'s bundle gets instead of the FTS5 table of `fullText` (`createFullText4`), when its
    /// SQLite has FTS4 but not FTS5 and the tokenizer carries over; `nil` otherwise.
    package static func fullText4(_ fullText: FullTextSpec, of table: TableSpec, target: SQLiteTarget) -> String? {
        guard !target.supports(module: "fts5"), target.supports(module: "fts4"),
              let tokenizer = fts4Tokenizer(fullText.tokenize, target: target).tokenizer else { return nil }
        return createFullText4(fullText, of: table, tokenizer: tokenizer)
    }

    /// The words of `table`'s indexed text with a letter of several diacritics (which `remove_diacritics=1` leaves
    /// accented) whose search without accents finds other rows in the FTS4 table than in the FTS5 table of `source`
    /// (a pre-folded column, indexed too, makes them alike); their count and the first, with both row counts.
    package static func unfoldedWords(_ fullText: FullTextSpec, of table: TableSpec, in database: Database, source: String) throws -> (count: Int, word: String, five: Int, four: Int)? {
        var words: [String] = []
        let columns = fullText.columns.map(quoteIdentifier).joined(separator: ", ")
        try database.forEachRow("SELECT \(columns) FROM main.\(quoteIdentifier(table.name)) ORDER BY rowid") { row in
            for value in row.values {
                guard let text = value.textValue, let word = wordWithSeveralDiacritics(text) else { continue }
                let folded = word.folding(options: [.diacriticInsensitive, .caseInsensitive], locale: nil)
                if !words.contains(folded) { words.append(folded) }
            }
        }
        let name = quoteIdentifier(fullText.name)
        var count = 0, first: (String, Int, Int)?
        for word in words {
            let phrase = SQLValue.text("\"\(word)\"")
            let five = Int(try database.rows("SELECT count(*) FROM \(quoteIdentifier(source)).\(name) WHERE \(name) MATCH ?", [phrase]).first?.values.first?.number ?? 0)
            let four = Int(try database.rows("SELECT count(*) FROM main.\(name) WHERE \(name) MATCH ?", [phrase]).first?.values.first?.number ?? 0)
            guard five != four else { continue }
            count += 1
            if first == nil { first = (word, five, four) }
        }
        return first.map { (count, $0.0, $0.1, $0.2) }
    }

    /// The first token (letters and digits) of `text` with a letter carrying two or more combining marks once
    /// decomposed (NFD).
    package static func wordWithSeveralDiacritics(_ text: String) -> String? {
        // ASCII carries no combining mark: most text of most bundles is skipped without splitting it or decomposing
        // its letters (this was 54 % of a travel-guide build's CPU).
        guard text.utf8.contains(where: { $0 >= 0x80 }) else { return nil }
        for word in text.split(whereSeparator: { !($0.isLetter || $0.isNumber || $0.unicodeScalars.allSatisfy { $0.properties.generalCategory == .nonspacingMark }) }) {
            if word.contains(where: { !$0.isASCII && $0.decomposedMarks >= 2 }) { return String(word) }
        }
        return nil
    }

    /// The bounding-box table standing in for a `spatial` R*Tree: the R*Tree's columns, keyed by id.
    package static func createBoxes(_ spatial: SpatialSpec) -> [String] {
        let bounds = SpatialSpec.columns.dropFirst().map { "\($0) REAL NOT NULL" }
        return ["CREATE TABLE \(quoteIdentifier(spatial.name)) (id INTEGER PRIMARY KEY NOT NULL, \(bounds.joined(separator: ", ")))",
                "CREATE INDEX \(quoteIdentifier(spatial.name + "_region")) ON \(quoteIdentifier(spatial.name)) (\(SpatialSpec.columns.dropFirst().joined(separator: ", ")))"]
    }

    /// Replaces, in `database`, the virtual tables of `manifest` that `target` lacks by what it has, in declaration
    /// order; `source`: the schema holding the original R*Trees to copy the bounds from (their 32-bit values, so that
    /// a region holds the same rows), and the FTS4 tables are filled from their tables; `nil`: the DDL only (for
    /// `kiln check`'s expected schema). An FTS4 table named in `indexed` (full-text table name → attached schema) takes
    /// its shadow rows from the index built there for this target (`FullTextBuild.targetIndexes`); the others are
    /// rebuilt in place, which writes the same rows. Returns the findings to report (a fold that differs) and the
    /// problems left.
    @discardableResult
    package static func convert(_ database: Database, manifest: Manifest, target: SQLiteTarget, source: String?,
                                indexed: [String: String] = [:]) throws -> (notes: [String], problems: [TargetProblem]) {
        var notes: [String] = [], problems: [TargetProblem] = []
        for table in manifest.tables where table.ship {
            if let fullText = table.fullText, !target.supports(module: "fts5"), target.supports(module: "fts4") {
                let (tokenizer, folded, problem) = fts4Tokenizer(fullText.tokenize, target: target)
                if let problem {
                    problems.append(TargetProblem(table: fullText.name, feature: problem, needs: "FTS5 (FTS4, which Kiln writes instead, has no counterpart)", target: target.name))
                } else if let tokenizer {
                    try database.execute("DROP TABLE \(quoteIdentifier(fullText.name))")
                    try database.execute(createFullText4(fullText, of: table, tokenizer: tokenizer))
                    if let schema = indexed[fullText.name] {
                        try FullTextBuild.copyShadowTables(of: fullText.name, from: schema, into: database)
                    } else if source != nil {
                        try database.execute("INSERT INTO \(quoteIdentifier(fullText.name)) (\(quoteIdentifier(fullText.name))) VALUES ('rebuild')")
                    }
                    if folded, let source, let example = try unfoldedWords(fullText, of: table, in: database, source: source) {
                        notes.append("\(fullText.name) on \(target.name): remove_diacritics 2 is unicode61's remove_diacritics=1 there (SQLite before 3.27.0), which keeps the accents of letters with several of them: \(example.count) words of \(table.name) searched without accents find other rows there (first «\(example.word)»: \(example.five) rows in the main bundle, \(example.four) there)")
                    }
                }
            }
            if let spatial = table.spatial, !target.supports(module: "rtree") {
                let boxes = "temp.\(quoteIdentifier("kiln_boxes"))"
                if let source {
                    try database.execute("CREATE TABLE \(boxes) AS SELECT \(SpatialSpec.columns.joined(separator: ", ")) FROM \(quoteIdentifier(source)).\(quoteIdentifier(spatial.name))")
                }
                try database.execute("DROP TABLE \(quoteIdentifier(spatial.name))")
                // The table is filled before its region index is made: one sort instead of a random insert per box.
                let statements = createBoxes(spatial)
                try database.execute(statements[0])
                if source != nil {
                    let columns = SpatialSpec.columns.joined(separator: ", ")
                    try database.execute("INSERT INTO \(quoteIdentifier(spatial.name)) (\(columns)) SELECT \(columns) FROM \(boxes) ORDER BY id")
                    try database.execute("DROP TABLE \(boxes)")
                }
                for statement in statements.dropFirst() { try database.execute(statement) }
            }
        }
        return (notes, problems)
    }
}

/// The bundles of a build's targets (`manifest.targets`): for each target, the file it opens, the main bundle or one
/// of its own written from it (`PendingTargetBundle`) with what its conversion found and what the target still lacks.
package struct TargetBundles: Sendable {
    /// What one target opens, and for a target with a bundle of its own, that bundle and its conversion's findings.
    package struct Target: Sendable {
        package let output: TargetOutput
        package let bundle: PendingTargetBundle?
        /// Folds that differ between the main bundle's search and the target's (`target.fold` findings).
        package let notes: [String]
        /// What the target lacks in its own bundle too (`target.unsupported` findings).
        package let problems: [TargetProblem]
    }

    /// One per target of the manifest, in its order.
    package let targets: [Target]

    /// Checks the complete main bundle in `temporary` (to be committed to `destination`) against each target of
    /// `manifest`; a target it does not open on gets its own bundle, written from it with the FTS4 indexes
    /// `fullTextBuild` built for that target. The bundles written before a failure are discarded; raising `stop`
    /// stops the SQL that writes one.
    /// - Throws: `SQLiteError` or `KilnError.io` when a bundle cannot be written.
    package static func write(from temporary: URL, destination: URL, manifest: Manifest, fullTextBuild: FullTextBuild,
                              stop: StopSignal = StopSignal()) throws -> TargetBundles {
        var targets: [Target] = []
        do {
            let database = try Database(path: temporary.path, mode: .readOnly, functions: KilnSQLFunctions.all)
            let entries = try TargetCompatibility.entries(of: database)
            try database.close()
            for target in manifest.targets {
                if TargetCompatibility.problems(entries, target: target).isEmpty {
                    targets.append(Target(output: TargetOutput(target: target, output: destination), bundle: nil, notes: [], problems: []))
                    continue
                }
                let own = KilnFileNames.targetBundle(for: destination, platform: target.platform)
                let (bundle, notes, problems) = try PendingTargetBundle.write(from: temporary, to: own, manifest: manifest, target: target,
                                                                              fullTextIndexes: fullTextBuild.targetIndexes(for: target), stop: stop)
                targets.append(Target(output: TargetOutput(target: target, output: own), bundle: bundle, notes: notes, problems: problems))
            }
        } catch {
            TargetBundles(targets: targets).discard()
            throw error
        }
        return TargetBundles(targets: targets)
    }

    /// The targets' own bundles.
    package var bundles: [PendingTargetBundle] { targets.compactMap(\.bundle) }

    /// Removes the targets' own bundles' temporary files.
    package func discard() {
        for bundle in bundles { bundle.discard() }
    }
}

/// A bundle written for one target from the finished main bundle, in a temporary file beside its destination until
/// `commit()`.
package struct PendingTargetBundle: Sendable {
    package let target: SQLiteTarget
    package let temporary: URL
    package let destination: URL

    /// Writes the bundle for `target` from `source` (the complete main bundle): the virtual tables `target` lacks
    /// replaced (`TargetSQL.convert`), `kiln_metadata` naming the target (`bundle.target`) and counting the new
    /// tables' rows, laid out by a final VACUUM: the same inputs give the same bytes. Returns it with the findings of
    /// the conversion and what the target still lacks.
    ///
    /// The conversion runs in a plain copy of the main bundle's file (the scratch, named as a staging database of the
    /// target's bundle), and `VACUUM INTO` writes the bundle from it: one copy of the file and one write of the
    /// bundle, where a `VACUUM INTO` copy converted then vacuumed in place wrote it three times. VACUUM lays a file
    /// out from its rows and the order of its schema's entries of each kind, which the two ways share, so the pages
    /// are the same; the header's schema cookie and change counter are then brought to what the three writes left
    /// (`matchHeader`), so that the bytes are those of a bundle written the earlier way. Raising `stop` stops the
    /// conversion and the VACUUM.
    /// - Throws: `SQLiteError` or `KilnError.io` when the copy cannot be written.
    package static func write(from source: URL, to destination: URL, manifest: Manifest, target: SQLiteTarget,
                              fullTextIndexes: [String: URL] = [:], stop: StopSignal = StopSignal()) throws -> (PendingTargetBundle, [String], [TargetProblem]) {
        let temporary = KilnFileNames.temporary(for: destination)
        let scratch = KilnFileNames.staging(for: destination)
        for file in [temporary, scratch] {
            try? FileManager.default.removeItem(at: file)
            TemporaryFiles.shared.register(file)
        }
        defer {
            try? FileManager.default.removeItem(at: scratch)
            TemporaryFiles.shared.unregister(scratch)
        }
        let pending = PendingTargetBundle(target: target, temporary: temporary, destination: destination)
        do {
            do { try FileManager.default.copyItem(at: source, to: scratch) } catch {
                throw KilnError.io(.foundation("cannot copy the bundle \(source.path) to write the \(target.platform) bundle", path: source.path, operation: .copy, error))
            }
            let database = try Database(path: scratch.path, mode: .readWrite, functions: KilnSQLFunctions.all)
            defer { try? database.close() }
            try database.execute("PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF")
            try database.execute("ATTACH DATABASE \(quoteLiteral(source.path)) AS kiln_source")
            var indexed: [String: String] = [:]
            for (number, (name, index)) in fullTextIndexes.sorted(by: { $0.key < $1.key }).enumerated() {
                indexed[name] = "kiln_index\(number + 1)"
                try database.execute("ATTACH DATABASE \(quoteLiteral(index.path)) AS \(quoteIdentifier("kiln_index\(number + 1)"))")
            }
            let (notes, problems) = try database.stopping(when: stop) { try database.transaction {
                let converted = try TargetSQL.convert(database, manifest: manifest, target: target, source: "kiln_source", indexed: indexed)
                let metadata = quoteIdentifier(BundleWriter.metadataTable)
                try database.execute("INSERT INTO \(metadata) (key, value) VALUES ('bundle.target', \(quoteLiteral(target.platform)))")
                for table in manifest.tables where table.ship {
                    guard let spatial = table.spatial, !target.supports(module: "rtree") else { continue }
                    try database.execute("INSERT INTO \(metadata) (key, value) SELECT 'rows.' || \(quoteLiteral(spatial.name)), count(*) FROM \(quoteIdentifier(spatial.name))")
                }
                return converted
            } }
            try database.execute("DETACH DATABASE kiln_source")
            for schema in indexed.values.sorted() { try database.execute("DETACH DATABASE \(quoteIdentifier(schema))") }
            // The earlier way's first copy was a VACUUM INTO, which counts one schema change more.
            let cookie = try database.rows("PRAGMA schema_version").first?.values.first?.number ?? 0
            try database.execute("PRAGMA schema_version = \(Int64(cookie) + 1)")
            try database.stopping(when: stop) { try database.execute("VACUUM INTO \(quoteLiteral(temporary.path))") }
            try database.close()
            let bundle = try Database(path: temporary.path, mode: .readWrite, functions: KilnSQLFunctions.all)
            defer { try? bundle.close() }
            try bundle.execute("PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF")
            try matchHeader(bundle)
            let left = TargetCompatibility.problems(try TargetCompatibility.entries(of: bundle), target: target)
            // A table whose conversion failed is named once, by what stopped it.
            return (pending, notes, problems + left.filter { problem in !problems.contains { $0.table == problem.table } })
        } catch {
            pending.discard()
            throw error
        }
    }

    /// The change counter a bundle written the earlier way carried (a copy, one transaction, a VACUUM in place): a
    /// file `VACUUM INTO` wrote starts at 1.
    private static let earlierChangeCounter = 3

    /// Brings the header's change counter (and the version-valid-for number, which follows it) of the bundle `VACUUM
    /// INTO` just wrote to `earlierChangeCounter`: each transaction that writes the header counts one, and setting
    /// the user version to the value it has changes nothing else.
    private static func matchHeader(_ bundle: Database) throws {
        let version = Int64(try bundle.rows("PRAGMA user_version").first?.values.first?.number ?? 0)
        for _ in 1..<earlierChangeCounter { try bundle.execute("PRAGMA user_version = \(version)") }
    }

    /// Syncs the file and renames it over the destination.
    package func commit() throws {
        try FileSync.fsync(temporary)
        try FileSync.move(temporary, to: destination)
    }

    /// Removes the temporary file, if it is still there.
    package func discard() {
        try? FileManager.default.removeItem(at: temporary)
        TemporaryFiles.shared.unregister(temporary)
    }
}

private extension Character {
    /// The combining marks of this character once decomposed.
    var decomposedMarks: Int {
        String(self).decomposedStringWithCanonicalMapping.unicodeScalars.filter { $0.properties.generalCategory == .nonspacingMark }.count
    }
}
