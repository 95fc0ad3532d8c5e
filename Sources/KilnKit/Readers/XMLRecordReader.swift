/// Reads records from XML files with libxml2's streaming reader: each element named `record` is one record, and
/// each field is an XPath expression evaluated on that element (`@code`, `name`, `s:location/@lat`,
/// `string-join`-free XPath 1.0). Files of any size stream in bounded memory. Safe by default: no network, no
/// entity expansion, no external DTD, libxml2's depth limit; each refused construct is a diagnostic.
public struct XMLRecordReader: ConfigurableReader {
    public static let format = "xml"

    /// The options a manifest gives an `xml` source.
    public struct Options: Decodable {
        /// The record element: `name` (any namespace) or `prefix:name` with the prefix in `namespaces`.
        var record: String
        var namespaces: [String: String] = [:]
        var fields: [String: NodeSelector]
        /// Overrides the encoding the document declares.
        var encoding: String?

        enum CodingKeys: String, CodingKey, CaseIterable { case record, namespaces, fields, encoding }

        public init(from decoder: Decoder) throws {
            let c = try decoder.strictContainer(keyedBy: CodingKeys.self)
            record = try c.decode(String.self, forKey: .record)
            namespaces = try c.decodeIfPresent([String: String].self, forKey: .namespaces) ?? [:]
            fields = try c.decode([String: NodeSelector].self, forKey: .fields)
            encoding = try c.decodeIfPresent(String.self, forKey: .encoding)
        }
    }

    public let fieldNames: [String]
    private let options: Options
    private let recordName: String
    private let recordNamespace: String?
    private let expressions: [XPathExpression]

    public init(options: Options) throws {
        try options.encoding.map(LegacyTextDecoder.check)
        self.options = options
        let parts = options.record.split(separator: ":", maxSplits: 1).map(String.init)
        if parts.count == 2 {
            guard let uri = options.namespaces[parts[0]] else {
                throw KilnError.usage("the record \"\(options.record)\" uses the prefix \"\(parts[0])\", which namespaces does not declare")
            }
            recordNamespace = uri
            recordName = parts[1]
        } else {
            recordNamespace = nil
            recordName = options.record
        }
        fieldNames = options.fields.keys.sorted()
        expressions = try fieldNames.map { try options.fields[$0]!.compile() }
    }

    public func read(_ input: InputFile, log: DiagnosticLog, emit: (Record) throws -> Void) throws {
        if BlankFile.reportIfBlank(input, log: log) { return }
        EncodingMismatch.checkMarkup(input, override: options.encoding, log: log)
        let reader = try XMLStreamReader(path: input.url.path, encoding: options.encoding, namespaces: options.namespaces)
        while let element = reader.nextElement(localName: recordName, namespace: recordNamespace) {
            try emit(Record(values: expressions.map { element.string($0) }, line: element.line))
        }
        XMLIssueReport.report(reader.issues, in: input, log: log)
    }
}

/// Turns libxml2's findings into diagnostics.
enum XMLIssueReport {
    static func report(_ issues: [XMLIssue], in input: InputFile, log: DiagnosticLog) {
        for issue in issues {
            let place = input.at(issue.line, column: issue.column)
            switch issue.kind {
            case .malformed:
                log.report("xml.malformed", .error, "malformed XML: \(issue.message); the rest of this file is not read", at: place)
            case .warning:
                log.report("xml.warning", .warning, "libxml2: \(issue.message)", at: place)
            case .entityDeclarations, .undefinedEntity:
                log.report("xml.entity", .error, "\(issue.message); the rest of this file is not read", at: place)
            case .externalDTD:
                log.report("xml.external-dtd", .warning, issue.message, at: place)
            }
        }
    }
}
