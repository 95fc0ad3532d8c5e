import KilnC
import KilnCore
import KilnManifest

/// What a page says about itself: its parent (`{{IsPartOf|Manhattan}}`) and its own coordinates
/// (`{{geo|40.78|-73.97}}`), read with `PageConventions`.
package struct PageFacts: Equatable {
    /// The parent page's title as MediaWiki stores titles (`WikiName.title`).
    package var parent: String?
    /// Decimal degrees as text, when the page gives valid ones.
    package var latitude: String?
    package var longitude: String?

    package init(parent: String?, latitude: String?, longitude: String?) {
        self.parent = parent
        self.latitude = latitude
        self.longitude = longitude
    }

    /// Reads `page`; findings (several parents, coordinates that do not hold) are appended to `findings`.
    package init(_ page: WikiPage, conventions: PageConventions, findings: inout some WikiFindingSink) {
        let plainText = WikiPlainText()
        var parents: [(String, Int)] = []
        var coordinates: (latitude: String, longitude: String, line: Int)?
        for element in page.elements {
            guard case .template(let template) = element.kind else { continue }
            let key = template.key
            var ignored: [String] = []
            if conventions.parentTemplates.contains(key), let range = template.positional(1) {
                let title = WikiName.title(plainText.text(page.source, range, unknown: &ignored))
                if !title.isEmpty { parents.append((title, element.line)) }
            } else if coordinates == nil, let names = conventions.geoTemplates[key] {
                // A value that renders as nothing (`{{#invoke:…}}`) stays as written, so that it is reported.
                let read: (Range<Int>) -> String = { range in
                    let text = plainText.text(page.source, range, unknown: &ignored)
                    return text.isEmpty ? WikiName.written(page.source, range, underscores: false) : text
                }
                let latitude = template.argument(names.latitude).map(read) ?? ""
                let longitude = template.argument(names.longitude).map(read) ?? ""
                if !latitude.isEmpty || !longitude.isEmpty { coordinates = (latitude, longitude, element.line) }
            }
        }
        parent = parents.first?.0
        if parents.count > 1, Set(parents.map(\.0)).count > 1 {
            findings.append(WikiFinding(code: .wikitextParent, message: "the page names \(parents.count) parents (\(parents.map { "\"\($0.0)\"" }.joined(separator: ", "))); the first is used",
                                        line: parents[1].1))
        }
        guard let coordinates else { return }
        for (field, text, limit) in [("latitude", coordinates.latitude, 90.0), ("longitude", coordinates.longitude, 180.0)] {
            let value: String?
            switch ListingFieldCheck.coordinate(text, limit: limit) {
            case .degrees(let degrees): value = degrees
            case .notANumber:
                value = nil
                if !text.isEmpty {
                    findings.append(WikiFinding(code: .wikitextCoordinates, message: "the page's \(field) \"\(excerpt(text))\" is not a number of degrees; left out",
                                                line: coordinates.line))
                }
            case .outOfRange:
                value = nil
                findings.append(WikiFinding(code: .wikitextCoordinatesRange, message: "the page's \(field) \(text) is outside -\(Int(limit))…\(Int(limit)); left out",
                                            line: coordinates.line))
            }
            if field == "latitude" { latitude = value } else { longitude = value }
        }
    }
}
