/// Reads the placemarks of a KML file (as a campus map's): `name`, `description` (the HTML inside it rendered as
/// plain text, one line per block), `longitude`, `latitude`, `altitude` (from `Point/coordinates`, written
/// `lon,lat[,alt]`), and `folder` (the names of the enclosing folders, outermost first, joined by `folderSeparator`).
public struct KMLReader: ConfigurableReader {
    public static let format = "kml"

    /// The options a manifest gives a `kml` source.
    public struct Options: Decodable {
        var folderSeparator: String = " / "

        enum CodingKeys: String, CodingKey, CaseIterable { case folderSeparator }

        public init(from decoder: Decoder) throws {
            let c = try decoder.strictContainer(keyedBy: CodingKeys.self)
            folderSeparator = try c.decodeIfPresent(String.self, forKey: .folderSeparator) ?? " / "
        }
    }

    public let fieldNames = ["name", "description", "longitude", "latitude", "altitude", "folder"]
    private let options: Options
    private let name: XPathExpression
    private let description: XPathExpression
    private let coordinates: XPathExpression

    public init(options: Options) throws {
        self.options = options
        name = try XPathExpression("*[local-name()='name']")
        description = try XPathExpression("*[local-name()='description']")
        coordinates = try XPathExpression("*[local-name()='Point']/*[local-name()='coordinates']")
    }

    public func read(_ input: InputFile, log: DiagnosticLog, emit: (Record) throws -> Void) throws {
        if BlankFile.reportIfBlank(input, log: log) { return }
        EncodingMismatch.checkMarkup(input, override: nil, log: log)
        let reader = try XMLStreamReader(path: input.url.path)
        var folders: [(depth: Int, name: String?)] = []
        while let event = reader.next() {
            switch event {
            case .start("Folder", _, let depth):
                folders.append((depth, nil))
            case .start("name", _, let depth) where folders.last?.depth == depth - 1 && folders.last?.name == nil:
                folders[folders.count - 1].name = TextFolding.collapseSpaces(reader.text())
            case .end("Folder", _, _):
                folders.removeLast()
            case .start("Placemark", _, _):
                guard let placemark = reader.expand() else { break }
                var values: [String?] = [placemark.string(name).map(TextFolding.collapseSpaces),
                                         try placemark.string(description).map(plainText), nil, nil, nil,
                                         folders.compactMap(\.name).joined(separator: options.folderSeparator)]
                if let text = placemark.string(coordinates) {
                    let parts = text.trimmingSpaces.split(separator: ",").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
                    if (2...3).contains(parts.count) {
                        values[2] = parts[0]
                        values[3] = parts[1]
                        values[4] = parts.count == 3 ? parts[2] : nil
                    } else {
                        log.report("kml.coordinates", .error,
                                   "placemark \"\(values[0] ?? "")\": coordinates \"\(excerpt(text))\" are not lon,lat[,alt]",
                                   at: input.at(placemark.line))
                    }
                }
                try emit(Record(values: values, line: placemark.line))
            default:
                break
            }
        }
        XMLIssueReport.report(reader.issues, in: input, log: log)
    }

    /// The text of an HTML description, one line per block.
    private func plainText(_ html: String) throws -> String {
        let trimmed = html.trimmingCharacters(in: .whitespacesAndNewlines)
        guard trimmed.contains("<") else { return TextFolding.collapseSpaces(trimmed) }
        return MarkupText().lines(try HTMLDocument(fragment: trimmed).root).map(\.text).joined(separator: "\n")
    }
}
