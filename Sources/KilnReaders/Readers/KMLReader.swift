import KilnC
import KilnCore
import KilnManifest

/// Reads the placemarks of a KML file (a campus map's, a Google My Maps export): `name`, `description` (the HTML
/// inside it rendered as plain text, one line per block, whether written as CDATA, escaped text or child elements), `id` (the placemark's attribute), `styleUrl`, `folder`
/// (the names of the enclosing folders, outermost first, joined by `folderSeparator`; none outside folders), its geometry —
/// `geometryType` (`Point`, `LineString`, `Polygon`, `MultiGeometry`, `Track`, `MultiTrack`, `MultiPolygon`…),
/// `geometry` (the whole geometry as GeoJSON text), a representative point in `longitude`, `latitude`, `altitude`
/// and a track's `timestamps` (see `KMLGeometry`) — the `ExtendedData` values named in `extendedData`, and
/// `_ordinal` / `_position` (`RecordOrder`). A placemark with no usable geometry, each geometry element the reader
/// does not map (`Model`, a `LinearRing` alone), and `ExtendedData` names not declared, are findings.
public struct KMLReader: ConfigurableReader {
    public static let format = "kml"
    public static let acceptedMediaTypes = MediaTypes.markup

    /// The options a manifest gives a `kml` source.
    public struct Options: Decodable, Sendable {
        package var folderSeparator: String = " / "
        /// `ExtendedData` names to read as fields (`Data/value` and `SchemaData/SimpleData`), each a field of its own.
        package var extendedData: [String] = []

        package enum CodingKeys: String, CodingKey, CaseIterable { case folderSeparator, extendedData }

        public init(from decoder: Decoder) throws {
            let c = try decoder.strictContainer(keyedBy: CodingKeys.self)
            folderSeparator = try c.decodeIfPresent(String.self, forKey: .folderSeparator) ?? " / "
            extendedData = try c.decodeIfPresent([String].self, forKey: .extendedData) ?? []
            for (index, name) in extendedData.enumerated() where KMLReader.builtInFields.contains(name) || name.hasPrefix("_") {
                throw DecodingError.dataCorrupted(.init(codingPath: c.codingPath + [CodingKeys.extendedData, AnyKey(intValue: index)],
                                                        debugDescription: "\"\(name)\" is a built-in field of the kml reader; rename it in the map or read it as is"))
            }
        }
    }

    /// The fields every placemark has, before the declared `extendedData` names.
    package static let builtInFields = ["name", "description", "longitude", "latitude", "altitude", "folder", "id", "styleUrl",
                                "geometryType", "geometry", "timestamps"]

    public let kinds: [RecordKind]
    private let options: Options
    private let name: XPathExpression
    private let description: XPathExpression
    private let styleUrl: XPathExpression
    private let identifier: XPathExpression
    private let dataNames: XPathExpression
    private let dataValues: [(name: String, data: XPathExpression, schemaData: XPathExpression)]
    private let geometry: KMLGeometry.Selectors

    public init(options: Options) throws {
        self.options = options
        kinds = [RecordKind(fields: KMLReader.builtInFields + options.extendedData + RecordOrder.fieldNames)]
        name = try XPathExpression("*[local-name()='name']")
        description = try XPathExpression("*[local-name()='description']")
        styleUrl = try XPathExpression("*[local-name()='styleUrl']")
        identifier = try XPathExpression("@id")
        dataNames = try XPathExpression("*[local-name()='ExtendedData']//*[(local-name()='Data' or local-name()='SimpleData')]/@name")
        dataValues = try options.extendedData.map { field in
            let literal = XPathLiteral.quote(field)
            return (field, try XPathExpression("*[local-name()='ExtendedData']/*[local-name()='Data'][@name=\(literal)]/*[local-name()='value']"),
                    try XPathExpression("*[local-name()='ExtendedData']/*[local-name()='SchemaData']/*[local-name()='SimpleData'][@name=\(literal)]"))
        }
        geometry = try KMLGeometry.Selectors()
    }

    public func read(_ input: InputFile, log: DiagnosticLog, emit: (Record) throws -> Void) throws {
        if BlankFile.reportIfBlank(input, as: .xml, log: log) { return }
        EncodingMismatch.checkMarkup(input, override: nil, log: log)
        let reader = try XMLStreamReader(source: input.bytes(log: log), path: input.url.path)
        var folders: [(depth: Int, name: String?, placemarks: Int)] = []
        var ordinal = 0, topLevel = 0
        var undeclared: [String: (count: Int, line: Int)] = [:]
        let declared = Set(options.extendedData)
        while let event = reader.next() {
            switch event {
            case .start("Folder", _, let depth):
                folders.append((depth, nil, 0))
            case .start("name", _, let depth) where folders.last?.depth == depth - 1 && folders.last?.name == nil:
                folders[folders.count - 1].name = TextFolding.collapseSpaces(reader.text())
            case .end("Folder", _, _):
                folders.removeLast()
            case .start("Placemark", _, _):
                guard let placemark = reader.expand() else { break }
                ordinal += 1
                let position: Int
                if folders.isEmpty {
                    topLevel += 1
                    position = topLevel
                } else {
                    folders[folders.count - 1].placemarks += 1
                    position = folders[folders.count - 1].placemarks
                }
                var record = Record(kinds[0], line: placemark.line)
                let label = placemark.string(name).map(TextFolding.collapseSpaces)
                record["name"] = label
                // HTML written as child elements renders as the same HTML in CDATA does: one line per block.
                record["description"] = try (placemark.innerMarkup(description) ?? placemark.string(description)).map(plainText)
                    .flatMap { $0.isEmpty ? nil : $0 }
                record["id"] = placemark.string(identifier)
                record["styleUrl"] = placemark.string(styleUrl).map(TextFolding.trim)
                let path = folders.compactMap(\.name).filter { !$0.isEmpty }
                record["folder"] = path.isEmpty ? nil : path.joined(separator: options.folderSeparator)
                record["_ordinal"] = String(ordinal)
                record["_position"] = String(position)
                for value in dataValues {
                    record[value.name] = placemark.string(value.data) ?? placemark.string(value.schemaData)
                }
                for dataName in placemark.strings(dataNames) where !declared.contains(dataName) {
                    undeclared[dataName, default: (0, placemark.line)].count += 1
                }
                let place = input.at(placemark.line)
                let reading = KMLGeometry.read(placemark, selectors: geometry)
                if let shape = reading.shape {
                    record["geometryType"] = shape.type
                    record["geometry"] = shape.geoJSON
                    record["longitude"] = shape.point.longitude
                    record["latitude"] = shape.point.latitude
                    record["altitude"] = shape.point.altitude
                    record["timestamps"] = shape.timestamps
                }
                for problem in reading.problems {
                    log.report(problem.code,
                               "placemark \"\(label ?? "")\": \(problem.message)", at: problem.line.map { input.at($0) } ?? place)
                }
                try emit(record)
            default:
                break
            }
        }
        if ordinal == 0, reader.issues.isEmpty {
            log.report(.sourceEmpty, "the file gives no record: it holds no Placemark", at: input.at(nil))
        }
        for (dataName, use) in undeclared.sorted(by: { ($0.value.line, $0.key) < ($1.value.line, $1.key) }) {
            log.report(.kmlExtendedData, "ExtendedData \"\(dataName)\" (on \(use.count == 1 ? "1 placemark" : "\(use.count) placemarks")) is not read: "
                           + "name it in the source's \"extendedData\" option to keep it", at: input.at(use.line))
        }
        XMLIssueReport.report(reader.issues, in: input, log: log)
    }

    /// The text of an HTML description, one line per block.
    private func plainText(_ html: String) throws -> String {
        let trimmed = html.trimmingCharacters(in: .whitespacesAndNewlines)
        guard trimmed.contains("<") else { return TextFolding.collapseSpaces(trimmed) }
        return (try HTMLDocument(fragment: trimmed).rootNode).map { MarkupText().lines($0).map(\.text).joined(separator: "\n") } ?? ""
    }
}

/// XPath string literals.
package enum XPathLiteral {
    /// `text` as an XPath 1.0 literal: in the quotes it does not contain, or `concat()` of pieces when it has both.
    package static func quote(_ text: String) -> String {
        if !text.contains("'") { return "'\(text)'" }
        if !text.contains("\"") { return "\"\(text)\"" }
        return "concat('" + text.replacingOccurrences(of: "'", with: "', \"'\", '") + "')"
    }
}
