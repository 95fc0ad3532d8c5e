import KilnC
import KilnCore
import KilnManifest

/// Reads HTML pages with libxml2's tolerant parser (unclosed tags, entities, layout tables; the `<meta>` charset
/// honored). Two modes:
/// - fields: each node `records` selects is a record; each field is a selector evaluated on it. With `kinds`, one
///   page gives several kinds of record in one pass (`kinds: {species: {records, fields}, synonym: {records, fields}}`),
///   each kind with its own selector and fields, all with the page fields; records carry `_ordinal` and `_position`.
///   A selector that matches nothing on a page is a `source.empty` warning; a field that is empty on every record
///   of a page, a `source.field-unmatched` finding — a redesigned page says so instead of shipping empty columns;
/// - extract: the page is rendered as lines of text (`MarkupText`) and cut up by regex in block mode
///   (`RegexBlockExtractor`), with coverage of what the patterns missed and per-page expectations.
public struct HTMLReader: ConfigurableReader {
    public static let format = "html"
    public static let acceptedMediaTypes = MediaTypes.markup

    /// How the page becomes text in extract mode.
    public struct TextOptions: Decodable, Sendable {
        /// The part of the page rendered (default: the body).
        package var root: NodeSelector = .xpath(TextOptions.defaultRoot)
        /// The default root's XPath: the page's body.
        package static let defaultRoot = "//body"
        /// What separates table cells on a line.
        package var cellSeparator: String = "\t"

        package enum CodingKeys: String, CodingKey, CaseIterable { case root, cellSeparator }

        public init(from decoder: Decoder) throws {
            let c = try decoder.strictContainer(keyedBy: CodingKeys.self)
            root = try c.decodeIfPresent(NodeSelector.self, forKey: .root) ?? root
            cellSeparator = try c.decodeIfPresent(String.self, forKey: .cellSeparator) ?? "\t"
        }

        package init() {}
    }

    /// One kind of record of a page: the nodes that are its records and the fields read on each.
    public struct KindOptions: Decodable, Sendable {
        package var records: NodeSelector
        package var fields: [String: NodeSelector]

        package enum CodingKeys: String, CodingKey, CaseIterable { case records, fields }

        package init(records: NodeSelector, fields: [String: NodeSelector]) {
            self.records = records
            self.fields = fields
        }

        public init(from decoder: Decoder) throws {
            let c = try decoder.strictContainer(keyedBy: CodingKeys.self)
            records = try c.decode(NodeSelector.self, forKey: .records)
            fields = try c.decode([String: NodeSelector].self, forKey: .fields)
            try MarkupFieldCheck(namespaces: [:], scope: .wholeDocument, codingPath: c.codingPath).check(fields: fields, key: CodingKeys.fields)
        }
    }

    /// The options a manifest gives an `html` source.
    public struct Options: Decodable, Sendable {
        package var records: NodeSelector?
        package var fields: [String: NodeSelector] = [:]
        /// Several kinds of record per page, by kind name (instead of `records` and `fields`).
        package var kinds: [String: KindOptions] = [:]
        package var pageFields: [String: NodeSelector] = [:]
        package var text = TextOptions()
        package var extract: ExtractOptions?
        package var expect: ExpectOptions?
        package var encoding: String?
        /// Pages larger than this are not parsed (`html.too-large`): a page is parsed whole, and its tree takes many
        /// times its size in memory.
        package var maxPageBytes = HTMLReader.defaultMaxPageBytes

        package enum CodingKeys: String, CodingKey, CaseIterable { case records, fields, kinds, pageFields, text, extract, expect, encoding, maxPageBytes }

        public init(from decoder: Decoder) throws {
            let c = try decoder.strictContainer(keyedBy: CodingKeys.self)
            records = try c.decodeIfPresent(NodeSelector.self, forKey: .records)
            fields = try c.decodeIfPresent([String: NodeSelector].self, forKey: .fields) ?? [:]
            kinds = try c.decodeIfPresent([String: KindOptions].self, forKey: .kinds) ?? [:]
            try MarkupFieldCheck(namespaces: [:], scope: .wholeDocument, codingPath: c.codingPath).check(fields: fields, key: CodingKeys.fields)
            pageFields = try c.decodeIfPresent([String: NodeSelector].self, forKey: .pageFields) ?? [:]
            text = try c.decodeIfPresent(TextOptions.self, forKey: .text) ?? TextOptions()
            extract = try c.decodeIfPresent(ExtractOptions.self, forKey: .extract)
            expect = try c.decodeIfPresent(ExpectOptions.self, forKey: .expect)
            encoding = try c.decodeIfPresent(String.self, forKey: .encoding)
            maxPageBytes = try c.decodeIfPresent(Int.self, forKey: .maxPageBytes) ?? HTMLReader.defaultMaxPageBytes
            guard maxPageBytes > 0 else {
                throw DecodingError.dataCorrupted(.init(codingPath: c.codingPath + [CodingKeys.maxPageBytes], debugDescription: "expected a number of bytes greater than 0"))
            }
            if [records != nil, extract != nil, !kinds.isEmpty].filter({ $0 }).count != 1 {
                throw DecodingError.dataCorrupted(.init(codingPath: c.codingPath,
                                                        debugDescription: "give one of \"records\" (with \"fields\"), \"kinds\" or \"extract\""))
            }
        }
    }

    public let kinds: [RecordKind]
    private let options: Options
    /// In fields mode, for each kind: its record selector (as written, for messages), compiled, and its fields.
    private let recordKinds: [(selector: String, records: XPathExpression, fieldNames: [String], fields: [XPathExpression])]
    private let pageFieldNames: [String]
    private let pageExpressions: [XPathExpression]
    private let textRoot: XPathExpression
    private let extractor: RegexBlockExtractor?
    private let declarations = EncodingMismatch.Declarations()
    private let pages = HTMLPages()

    public init(options: Options) throws {
        try options.encoding.map(LegacyTextDecoder.check)
        self.options = options
        let pageNames = options.pageFields.keys.sorted()
        pageFieldNames = pageNames
        pageExpressions = try pageNames.map { try options.pageFields[$0]!.compile() }
        textRoot = try options.text.root.compile()
        if let extract = options.extract {
            let extractor = try RegexBlockExtractor(options: extract, expect: options.expect, pageFields: pageNames)
            self.extractor = extractor
            kinds = [extractor.kind]
            recordKinds = []
        } else {
            extractor = nil
            var declared = options.kinds
            if let records = options.records { declared = [RecordKind.defaultName: KindOptions(records: records, fields: options.fields)] }
            var kinds: [RecordKind] = []
            var recordKinds: [(String, XPathExpression, [String], [XPathExpression])] = []
            for name in declared.keys.sorted() {
                let kind = declared[name]!
                let names = kind.fields.keys.sorted().filter { !pageNames.contains($0) }
                kinds.append(RecordKind(name, fields: pageNames + names + RecordOrder.fieldNames))
                recordKinds.append((try kind.records.xpathText(), try kind.records.compile(), names, try names.map { try kind.fields[$0]!.compile() }))
            }
            self.kinds = kinds
            self.recordKinds = recordKinds
        }
    }

    /// The default `maxPageBytes`: 16 MiB.
    public static let defaultMaxPageBytes = 16 << 20

    public func read(_ input: InputFile, log: DiagnosticLog, emit: (Record) throws -> Void) throws {
        if let extractor, pageExpressions.isEmpty {
            // Only the text is needed: a simple CSS root, or the default //body, is rendered without building the tree.
            guard let lines = try HTMLPage.lines(input, root: textRoot, text: MarkupText(cellSeparator: options.text.cellSeparator),
                                                 encoding: options.encoding, maxPageBytes: options.maxPageBytes,
                                                 consequence: "the page gives no records", declarations: declarations, pages: pages, log: log)
            else { return }
            let page = extractor.page([], input: input, log: log)
            for line in lines { try page.feed(line.text, line: line.line, emit: emit) }
            try page.finish()
            return
        }
        guard let document = try HTMLPage.open(input, encoding: options.encoding, maxPageBytes: options.maxPageBytes,
                                           consequence: "the page gives no records", declarations: declarations, pages: pages, log: log) else { return }
        // A selector taking an element with blocks, cells or line breaks gives its rendered text, one block a line.
        let text = MarkupText(cellSeparator: options.text.cellSeparator)
        let pageValues = pageExpressions.map { text.pageValue($0, in: document) }
        if let extractor {
            let page = extractor.page(pageValues, input: input, log: log)
            for root in document.nodes(textRoot) {
                for line in text.lines(root) {
                    try page.feed(line.text, line: line.line, emit: emit)
                }
            }
            try page.finish()
        } else {
            var found = 0
            for (kind, recordKind) in zip(kinds, recordKinds) where wanted?.contains(kind.name) ?? true {
                let records = document.records(recordKind.records, fields: recordKind.fields, render: text.textIfStructured)
                let label = kind.name == RecordKind.defaultName ? "" : " (\(kind.name))"
                found += records.count
                guard !records.isEmpty else { continue }
                for (index, name) in recordKind.fieldNames.enumerated() where records.allSatisfy({ $0.values[index] == nil }) {
                    log.report(.sourceFieldUnmatched, "the field \"\(name)\"\(label) matches nothing in any of the page's \(records.count) records",
                               at: input.at(records[0].line))
                }
                for (index, record) in records.enumerated() {
                    try emit(Record(kind, values: pageValues + record.values + [String(index + 1), String(record.position)], line: record.line))
                }
            }
            if found == 0 {
                let selectors = zip(kinds, recordKinds).filter { wanted?.contains($0.0.name) ?? true }.map { "\"\($0.1.selector)\"" }
                log.report(.sourceEmpty, "the page gives no record: \(selectors.joined(separator: ", ")) \(selectors.count == 1 ? "matches" : "match") nothing here",
                           at: input.at(nil))
            }
        }
    }

    /// The kinds a manifest maps; `nil` for all.
    private var wanted: Set<String>?

    public func restricted(to kinds: Set<String>) -> RecordReader {
        var copy = self
        copy.wanted = kinds
        return copy
    }
}
