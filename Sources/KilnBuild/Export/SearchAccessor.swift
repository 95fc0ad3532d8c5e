import KilnC
import KilnCore
import KilnManifest

/// The full-text search accessors of the generated code (`kiln export swift`'s `search<Table>`, `kiln export room`'s
/// `<Bundle>Search`): what a user typed is folded as the bundle's `fold` normalizer folded the indexed column, when
/// one of them was filled through it, and every word is quoted as an FTS string, the last a prefix, so that no text
/// is read as FTS syntax (`O'Higgins`, `eva-peron`, `"`, `*`, `NEAR`, `AND`/`OR`/`NOT`). The fold is carried as data
/// from the ICU that `TextFolding.fold` calls (its case folding and cluster-extending marks), with the platform's
/// canonical decomposition and composition (Foundation on Apple platforms, `java.text.Normalizer` on Android).
package enum SearchAccessor {
    /// True when the query of `fullText` (of `table`) is to be folded: one of its indexed columns is filled by a
    /// source through the `fold` normalizer.
    package static func folds(_ fullText: FullTextSpec, table: String, manifest: Manifest) -> Bool {
        let indexed = Set(fullText.columns).subtracting(fullText.unindexed)
        return manifest.sources.contains { source in
            source.targets.contains { target in
                target.table == table && indexed.contains { target.columns[$0]?.normalize.contains(.named("fold")) ?? false }
            }
        }
    }

    /// The names of the full-text tables of `manifest` whose queries are folded.
    package static func foldedTables(_ manifest: Manifest) -> Set<String> {
        Set(manifest.tables.compactMap { table in
            table.fullText.flatMap { folds($0, table: table.name, manifest: manifest) ? $0.name : nil }
        })
    }

    /// ICU's fold data, encoded for source code: `runs` of code points that fold to one code point (`start, end,
    /// stride, delta`: every stride-th code point from start to end folds to itself plus delta), `expansions` of
    /// those that fold to several (`code point, count, folded…`), and the cluster-extending code points from U+0483
    /// on (`first, last` pairs).
    package struct FoldTables: Equatable {
        package var runs: [Int64] = []
        package var expansions: [UInt32] = []
        package var extending: [UInt32] = []

        /// What every code point of the tables folds to, read back from the encoded runs and expansions (for tests).
        package func decoded() -> [UInt32: [UInt32]] {
            var folds: [UInt32: [UInt32]] = [:]
            for run in stride(from: 0, to: runs.count, by: 4) {
                for value in stride(from: runs[run], through: runs[run + 1], by: Int(runs[run + 2])) {
                    folds[UInt32(value)] = [UInt32(value + runs[run + 3])]
                }
            }
            var index = 0
            while index < expansions.count {
                let count = Int(expansions[index + 1])
                folds[expansions[index]] = Array(expansions[(index + 2)..<(index + 2 + count)])
                index += 2 + count
            }
            return folds
        }
    }

    /// The tables of the ICU Kiln runs on.
    package static let tables: FoldTables = {
        var tables = FoldTables()
        var run: (start: UInt32, end: UInt32, stride: UInt32, delta: Int64)?
        func close() {
            if let current = run { tables.runs += [Int64(current.start), Int64(current.end), Int64(current.stride), current.delta] }
            run = nil
        }
        for (value, folded) in ICUText.foldData.caseFolds {
            guard folded.count == 1 else {
                tables.expansions += [value, UInt32(folded.count)] + folded
                continue
            }
            let delta = Int64(folded[0]) - Int64(value)
            if let current = run, current.delta == delta,
               current.start == current.end ? value - current.end <= 2 : value - current.end == current.stride {
                run = (current.start, value, value - current.end, delta)
                continue
            }
            close()
            run = (value, value, 1, delta)
        }
        close()
        tables.extending = ICUText.foldData.extending.flatMap { [$0.lowerBound, $0.upperBound] }
        return tables
    }()

    /// `numbers` as lines of a source array literal, `indent` before each; `trailingComma` false leaves out the comma
    /// after the last number (Kotlin before 1.4 rejects it).
    private static func numberLines<N: BinaryInteger>(_ numbers: [N], indent: String, trailingComma: Bool = true) -> [String] {
        var lines: [String] = [], line = ""
        for number in numbers {
            let text = "\(number),"
            if !line.isEmpty && line.count + text.count + 1 > 112 - indent.count {
                lines.append(indent + line)
                line = ""
            }
            line += line.isEmpty ? text : " " + text
        }
        if !line.isEmpty { lines.append(indent + line) }
        if !trailingComma, let last = lines.popLast() { lines.append(String(last.dropLast())) }
        return lines
    }

    // MARK: Swift

    /// The `Search` enum of the Swift export (indented for the namespace).
    package static func swiftSource() -> [String] {
        var lines = #"""
        /// What the search accessors make of what a user typed (`search<Table>`).
        public enum Search {
            /// `text` folded as the bundle's `fold` normalizer folds: canonical decomposition; the combining marks after
            /// a letter below U+0510 (Latin, Greek, Cyrillic) removed, and those below U+0510 after any other; full case
            /// folding (ICU's, as data below); canonical composition; white space collapsed. `Πανεπιστήμιο` and
            /// `ΠΑΝΕΠΙΣΤΗΜΙΟ` both give `πανεπιστημιο`.
            public static func fold(_ text: Swift.String) -> Swift.String {
                var folded = Swift.String.UnicodeScalarView()
                var hasBase = false, baseIsAlphabetic = false
                for scalar in text.decomposedStringWithCanonicalMapping.unicodeScalars {
                    let value = scalar.value
                    let extends = value >= 0x300 && (value < 0x370 || (value >= 0x483 && isExtending(value)))
                    if extends && hasBase {
                        if baseIsAlphabetic || value < 0x510 { continue }
                    } else {
                        hasBase = true
                        baseIsAlphabetic = value < 0x510
                    }
                    if let mapped = caseFolds[value] {
                        folded.append(contentsOf: mapped.compactMap(Swift.Unicode.Scalar.init))
                    } else {
                        folded.append(scalar)
                    }
                }
                let composed = Swift.String(folded).precomposedStringWithCanonicalMapping
                return composed.split(whereSeparator: { $0.isWhitespace }).joined(separator: " ")
            }

            /// An FTS5 query for `text` as a search box means it: every word a quoted string (FTS5 reads it as words,
            /// never as its syntax: `"`, `*`, `-`, `NEAR`, `AND`, `OR`, `NOT`, a column name), the last one a prefix,
            /// the words folded first when `fold`; a word without a letter or digit is left out (it holds no term).
            /// nil when no word is left: nothing to search for.
            public static func fts5Query(_ text: Swift.String, fold: Swift.Bool) -> Swift.String? {
                let terms = Search.words(fold ? Search.fold(text) : text)
                guard !terms.isEmpty else { return nil }
                return terms.map { "\"" + $0.split(separator: "\"", omittingEmptySubsequences: false).joined(separator: "\"\"") + "\"" }
                    .joined(separator: " ") + "*"
            }

            /// The white-space separated words of `text` that hold a letter, a digit or a private-use character
            /// (what SQLite's unicode61 tokenizer makes terms of).
            static func words(_ text: Swift.String) -> [Swift.String] {
                text.split(whereSeparator: { $0.isWhitespace }).map(Swift.String.init).filter { $0.unicodeScalars.contains(where: isTermCharacter) }
            }

            static func isTermCharacter(_ scalar: Swift.Unicode.Scalar) -> Swift.Bool {
                switch scalar.properties.generalCategory {
                case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
                     .decimalNumber, .letterNumber, .otherNumber, .privateUse:
                    return true
                default:
                    return false
                }
            }

            static func isExtending(_ value: Swift.UInt32) -> Swift.Bool {
                var low = 0, high = extending.count / 2
                while low < high {
                    let middle = (low + high) / 2
                    if value < extending[2 * middle] { high = middle } else if value > extending[2 * middle + 1] { low = middle + 1 } else { return true }
                }
                return false
            }

            static let caseFolds: [Swift.UInt32: [Swift.UInt32]] = {
                var folds: [Swift.UInt32: [Swift.UInt32]] = [:]
                for run in Swift.stride(from: 0, to: caseFoldRuns.count, by: 4) {
                    for value in Swift.stride(from: caseFoldRuns[run], through: caseFoldRuns[run + 1], by: Swift.Int(caseFoldRuns[run + 2])) {
                        folds[Swift.UInt32(value)] = [Swift.UInt32(value + caseFoldRuns[run + 3])]
                    }
                }
                var index = 0
                while index < caseFoldExpansions.count {
                    let count = Swift.Int(caseFoldExpansions[index + 1])
                    folds[caseFoldExpansions[index]] = Swift.Array(caseFoldExpansions[(index + 2)..<(index + 2 + count)])
                    index += 2 + count
                }
                return folds
            }()

        """#.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        lines.removeLast()
        let tables = SearchAccessor.tables
        lines.append("    /// Full case folding to one code point: start, end, stride, delta (every stride-th code point folds to itself plus delta).")
        lines.append("    static let caseFoldRuns: [Swift.Int64] = [")
        lines += numberLines(tables.runs, indent: "        ")
        lines += ["    ]", "    /// Full case folding to several code points: code point, count, the code points it folds to.",
                  "    static let caseFoldExpansions: [Swift.UInt32] = ["]
        lines += numberLines(tables.expansions, indent: "        ")
        lines += ["    ]", "    /// The cluster-extending code points from U+0483 on: first, last.", "    static let extending: [Swift.UInt32] = ["]
        lines += numberLines(tables.extending, indent: "        ")
        lines += ["    ]", "}"]
        return lines
    }

    // MARK: Kotlin

    /// The `<Bundle>Search` object of the Room export: `fold`, `fts4Query` and a `<table>Match` function per FTS4
    /// entity (`table`, and whether its query is folded).
    package static func kotlinSource(object: String, header: String, package: String, entities: [(table: String, content: String?, function: String, folds: Bool)]) -> String {
        var lines = [header, "package \(package)", "",
                     "/**",
                     " * What a search box's text becomes in an FTS4 `MATCH`: every word a quoted phrase, which FTS4 reads as words and",
                     " * never as its syntax (`\"`, `*`, `-`, `NEAR`, `AND`, `OR`, `NOT`), the last one a prefix; the words folded first",
                     " * where the bundle's indexed column was folded (`fold`). A DAO query reads, for instance:",
                     " * `@Query(\"SELECT t.* FROM stop AS t JOIN stop_search AS f ON t.rowid = f.rowid WHERE stop_search MATCH :match\")`",
                     " * called with `stopSearchMatch(text) ?: return emptyList()`.",
                     " */",
                     "public object \(object) {"]
        for entity in entities {
            let content = entity.content.map { " (the rows of \($0))" } ?? ""
            lines += ["    /** The `MATCH` argument of \(entity.table)\(content) for [text]\(entity.folds ? ", folded" : ""); null when it has no word. */",
                      "    public fun \(entity.function)(text: kotlin.String): kotlin.String? = fts4Query(text, fold = \(entity.folds))", ""]
        }
        lines += #"""
            /**
             * [text] folded as the bundle's `fold` normalizer folds: canonical decomposition; the combining marks after a
             * letter below U+0510 (Latin, Greek, Cyrillic) removed, and those below U+0510 after any other; full case
             * folding (ICU's, as data below); canonical composition; white space collapsed.
             */
            public fun fold(text: kotlin.String): kotlin.String {
                val decomposed = java.text.Normalizer.normalize(text, java.text.Normalizer.Form.NFD)
                val folded = java.lang.StringBuilder()
                var hasBase = false
                var baseIsAlphabetic = false
                var index = 0
                while (index < decomposed.length) {
                    val value = decomposed.codePointAt(index)
                    index += java.lang.Character.charCount(value)
                    val extends = value >= 0x300 && (value < 0x370 || (value >= 0x483 && isExtending(value)))
                    if (extends && hasBase) {
                        if (baseIsAlphabetic || value < 0x510) continue
                    } else {
                        hasBase = true
                        baseIsAlphabetic = value < 0x510
                    }
                    val mapped = caseFolds[value]
                    if (mapped == null) folded.appendCodePoint(value) else for (code in mapped) folded.appendCodePoint(code)
                }
                return words(java.text.Normalizer.normalize(folded, java.text.Normalizer.Form.NFC)).joinToString(" ")
            }

            /**
             * An FTS4 query for [text]: every word a quoted phrase (`"`, `*` and `^` in it as spaces, which the tokenizer
             * treats alike), the last one a prefix, the words folded first when [fold]; a word without a letter or digit
             * is left out (it holds no term). Null when no word is left: nothing to search for.
             */
            public fun fts4Query(text: kotlin.String, fold: kotlin.Boolean): kotlin.String? {
                val terms = words(if (fold) this.fold(text) else text).filter { hasTermCharacter(it) }
                if (terms.isEmpty()) return null
                return terms.mapIndexed { position, word ->
                    var phrase = word.replace('"', ' ').replace('*', ' ').replace('^', ' ')
                    if (position == terms.size - 1) {
                        while (!isTermCharacter(phrase.codePointBefore(phrase.length))) phrase = phrase.substring(0, phrase.offsetByCodePoints(phrase.length, -1))
                        phrase += "*"
                    }
                    "\"" + phrase + "\""
                }.joinToString(" ")
            }

            /** The words of [text] between runs of Unicode's White_Space. */
            private fun words(text: kotlin.CharSequence): kotlin.collections.List<kotlin.String> {
                val words = java.util.ArrayList<kotlin.String>()
                val word = java.lang.StringBuilder()
                var index = 0
                while (index < text.length) {
                    val value = java.lang.Character.codePointAt(text, index)
                    index += java.lang.Character.charCount(value)
                    if (isWhiteSpace(value)) {
                        if (word.isNotEmpty()) words.add(word.toString())
                        word.setLength(0)
                    } else {
                        word.appendCodePoint(value)
                    }
                }
                if (word.isNotEmpty()) words.add(word.toString())
                return words
            }

            private fun isWhiteSpace(value: kotlin.Int): kotlin.Boolean =
                (value in 0x09..0x0D) || value == 0x20 || value == 0x85 || value == 0xA0 || value == 0x1680 || (value in 0x2000..0x200A) ||
                    value == 0x2028 || value == 0x2029 || value == 0x202F || value == 0x205F || value == 0x3000

            private fun hasTermCharacter(word: kotlin.String): kotlin.Boolean {
                var index = 0
                while (index < word.length) {
                    val value = word.codePointAt(index)
                    if (isTermCharacter(value)) return true
                    index += java.lang.Character.charCount(value)
                }
                return false
            }

            private fun isTermCharacter(value: kotlin.Int): kotlin.Boolean = when (java.lang.Character.getType(value).toByte()) {
                java.lang.Character.UPPERCASE_LETTER, java.lang.Character.LOWERCASE_LETTER, java.lang.Character.TITLECASE_LETTER,
                java.lang.Character.MODIFIER_LETTER, java.lang.Character.OTHER_LETTER, java.lang.Character.DECIMAL_DIGIT_NUMBER,
                java.lang.Character.LETTER_NUMBER, java.lang.Character.OTHER_NUMBER, java.lang.Character.PRIVATE_USE -> true
                else -> false
            }

            private fun isExtending(value: kotlin.Int): kotlin.Boolean {
                var low = 0
                var high = EXTENDING.size / 2
                while (low < high) {
                    val middle = (low + high) / 2
                    if (value < EXTENDING[2 * middle]) high = middle else if (value > EXTENDING[2 * middle + 1]) low = middle + 1 else return true
                }
                return false
            }

            private val caseFolds: kotlin.collections.Map<kotlin.Int, kotlin.IntArray> by lazy {
                val folds = java.util.HashMap<kotlin.Int, kotlin.IntArray>()
                for (run in CASE_FOLD_RUNS.indices step 4) {
                    var value = CASE_FOLD_RUNS[run]
                    while (value <= CASE_FOLD_RUNS[run + 1]) {
                        folds[value] = intArrayOf(value + CASE_FOLD_RUNS[run + 3])
                        value += CASE_FOLD_RUNS[run + 2]
                    }
                }
                var index = 0
                while (index < CASE_FOLD_EXPANSIONS.size) {
                    val count = CASE_FOLD_EXPANSIONS[index + 1]
                    folds[CASE_FOLD_EXPANSIONS[index]] = CASE_FOLD_EXPANSIONS.copyOfRange(index + 2, index + 2 + count)
                    index += 2 + count
                }
                folds
            }

        """#.split(separator: "\n", omittingEmptySubsequences: false).map { $0.isEmpty ? "" : "    " + $0 }
        lines.removeLast()
        let tables = SearchAccessor.tables
        lines.append("    /** Full case folding to one code point: start, end, stride, delta. */")
        lines.append("    private val CASE_FOLD_RUNS: kotlin.IntArray = intArrayOf(")
        lines += numberLines(tables.runs, indent: "        ", trailingComma: false)
        lines += ["    )", "    /** Full case folding to several code points: code point, count, the code points it folds to. */",
                  "    private val CASE_FOLD_EXPANSIONS: kotlin.IntArray = intArrayOf("]
        lines += numberLines(tables.expansions, indent: "        ", trailingComma: false)
        lines += ["    )", "    /** The cluster-extending code points from U+0483 on: first, last. */", "    private val EXTENDING: kotlin.IntArray = intArrayOf("]
        lines += numberLines(tables.extending, indent: "        ", trailingComma: false)
        lines += ["    )", "}", ""]
        return lines.joined(separator: "\n")
    }
}
