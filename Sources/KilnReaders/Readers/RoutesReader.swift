import KilnC
import KilnCore
import KilnManifest

/// Reads the two-line route records of the Patras app's `Routes_UTF8.txt`:
///
///     1.1 Τερψιθέα - Εγλυκάδα
///     0 0101! 1 0102! 2 0103!
///
/// The first line is the line id and name; the second lists `index code` items, each ended by the item separator.
/// Each item becomes one record with fields `line`, `name`, `position` and `stop`.
public struct RoutesReader: ConfigurableReader {
    public static let format = "routes"
    public static let acceptedMediaTypes = MediaTypes.text

    /// The options a manifest gives a `routes` source.
    public struct Options: Decodable, Sendable {
        package var itemSeparator: String = "!"
        package var encoding: String = "utf-8"

        package enum CodingKeys: String, CodingKey, CaseIterable { case itemSeparator, encoding }

        public init(from decoder: Decoder) throws {
            let c = try decoder.strictContainer(keyedBy: CodingKeys.self)
            itemSeparator = try c.decodeIfPresent(String.self, forKey: .itemSeparator) ?? "!"
            encoding = try c.decodeIfPresent(String.self, forKey: .encoding) ?? "utf-8"
            if itemSeparator.count != 1 {
                throw DecodingError.dataCorrupted(.init(codingPath: c.codingPath + [CodingKeys.itemSeparator],
                                                        debugDescription: "expected exactly one character"))
            }
        }
    }

    public let kinds = [RecordKind(fields: ["line", "name", "position", "stop"])]
    private let options: Options

    public init(options: Options) throws {
        try LegacyTextDecoder.check(options.encoding)
        self.options = options
    }

    public func read(_ input: InputFile, log: DiagnosticLog, emit: (Record) throws -> Void) throws {
        var pending: (line: String, name: String, number: Int)?
        try LineReader.forEachLine(of: input, encoding: options.encoding, log: log) { number, text in
            let trimmed = text.trimmingSpaces
            if trimmed.isEmpty { return }
            guard trimmed.contains(options.itemSeparator) else {
                if let previous = pending {
                    log.report(.parse, "route \(previous.line) has no stop list; expected a line like \"0 CODE\(options.itemSeparator) 1 CODE\(options.itemSeparator)\" after its heading",
                               at: input.at(previous.number))
                }
                let parts = trimmed.splitOnFirstSpace()
                pending = (parts.head, parts.rest, number)
                return
            }
            guard let header = pending else {
                log.report(.parse, "stop list without a route heading before it; expected \"LINE NAME\" on the line above: \"\(excerpt(trimmed))\"",
                           at: input.at(number))
                return
            }
            pending = nil
            if !trimmed.hasSuffix(options.itemSeparator) {
                log.report(.routesUnterminated, "route \(header.line): the stop list does not end with \"\(options.itemSeparator)\"; was the file cut short?",
                           at: input.at(number))
            }
            for item in trimmed.split(separator: Character(options.itemSeparator)) {
                let parts = item.trimmingSpaces.splitOnFirstSpace()
                guard !parts.head.isEmpty else { continue }
                guard parts.head.allSatisfy(\.isASCIIDigitCharacter), !parts.rest.isEmpty, !parts.rest.contains(" ") else {
                    log.report(.parse, "route \(header.line): expected \"INDEX CODE\" (e.g. \"3 0123\"), found \"\(excerpt(item.trimmingSpaces))\"",
                               at: input.at(number))
                    continue
                }
                var record = Record(kinds[0], line: number)
                record["line"] = header.line
                record["name"] = header.name
                record["position"] = parts.head
                record["stop"] = parts.rest
                try emit(record)
            }
        }
        if let previous = pending {
            log.report(.parse, "route \(previous.line) has no stop list; the file ends after its heading",
                       at: input.at(previous.number))
        }
    }
}
