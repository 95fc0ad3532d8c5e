import KilnC
import KilnCore
import KilnManifest

/// What a wiki's listing templates and tags mean: which templates are listings and of what category, which
/// parameter names are which field, which `type=` values and section headings give a category, and how templates
/// inside values are rendered. The defaults are English Wikivoyage's (plus `{{vCard}}`); a manifest adds its wiki's
/// names (`{{Voir}}`, `nom=`, `{{Prix}}`…). Template and parameter names compare as MediaWiki compares them
/// (`WikiName.key`), type and heading names ignoring case and accents (`TextFolding.fold`).
package struct ListingConventions: Sendable {
    /// The fields a listing has, in record order (after the page, section and id fields).
    package static let fields = ["name", "alt", "address", "directions", "phone", "tollfree", "email", "fax", "url", "hours",
                         "price", "checkin", "checkout", "image", "wikidata", "lat", "long", "description", "lastedit"]

    /// Listing templates by key, with the category they give (`nil`: from `type=`, the section or the default).
    package var templates: [String: String?] = [
        "see": "see", "do": "do", "buy": "buy", "eat": "eat", "drink": "drink", "sleep": "sleep", "go": "go",
        "listing": nil, "marker": nil, "vcard": nil,
    ]
    /// Parameter names by key → field (one of `fields`, or `type`).
    package var parameters: [String: String] = ListingConventions.defaultParameters
    /// `type=` values, folded → category.
    package var types: [String: String] = [
        "see": "see", "do": "do", "buy": "buy", "eat": "eat", "drink": "drink", "sleep": "sleep", "go": "go", "other": "other",
    ]
    /// Section headings, folded → the category of listings under them that name none themselves.
    package var sections: [String: String] = ["see": "see", "do": "do", "buy": "buy", "eat": "eat", "drink": "drink", "sleep": "sleep"]
    /// How templates inside values read (see `WikiPlainText.inlineTemplates`), by key.
    package var inlineTemplates: [String: InlineTemplateFormat] = [
        "dead link": .init(pieces: []), "deadlink": .init(pieces: []), "nbsp": .init(pieces: [.literal("\u{00A0}")]),
        "!": .init(pieces: [.literal("|")]), "lang": .init(pieces: [.argument("2", print: true)]),
    ]
    /// Templates inside values left out without a finding, by key.
    package var ignoredTemplates: Set<String> = []
    /// Listing parameters that are no field and are left out without a finding, by key (any other is reported).
    package var ignoredParameters: Set<String> = []
    /// The category of a listing that no template, type or section gives one; `nil` leaves it empty.
    package var defaultCategory: String? = "other"
    /// The wiki's language (`en`, `de`, `fr`…): the manifest's `language`, else the export's `xml:lang`.
    package var language: String?
    /// The manifest's `trailingDescription`, when it gives one.
    package var trailingDescriptionOption: Bool?

    /// Languages whose guides write a listing's description after its template, on its line
    /// (`{{vCard|…}}: a fine hut.`): German and French Wikivoyage. English Wikivoyage (and Russian, Italian…) write it
    /// in `content=`/`description=`, and the text after an inline template is the rest of a sentence.
    package static let trailingDescriptionLanguages: Set<String> = ["de", "fr"]

    /// English Wikivoyage's listing templates, which hold their description in `content=`.
    package static let englishTemplates: Set<String> = ["see", "do", "buy", "eat", "drink", "sleep", "go", "listing", "marker"]

    /// Whether a listing written with `template` (a key) and no description takes the text after it on its line:
    /// the manifest's `trailingDescription`, else the convention of the wiki's language
    /// (`trailingDescriptionLanguages`), else, when the language is not known, the template's: English Wikivoyage's
    /// templates do not, any other (`{{vCard}}`, `{{Voir}}`) does.
    package func takesTrailingDescription(_ template: String) -> Bool {
        if let trailingDescriptionOption { return trailingDescriptionOption }
        guard let language else { return !ListingConventions.englishTemplates.contains(template) }
        let primary = language.split(separator: "-").first.map { $0.lowercased() } ?? ""
        return ListingConventions.trailingDescriptionLanguages.contains(primary)
    }

    package static let defaultParameters: [String: String] = {
        var names = Dictionary(uniqueKeysWithValues: (fields + ["type"]).map { ($0, $0) })
        let aliases = ["content": "description", "toll-free": "tollfree", "toll free": "tollfree", "check-in": "checkin",
                       "check-out": "checkout", "last edit": "lastedit", "lon": "long", "lng": "long"]
        names.merge(aliases) { _, alias in alias }
        return names
    }()

    /// The renderer of listing values under these conventions.
    package var plainText: WikiPlainText {
        WikiPlainText(inlineTemplates: inlineTemplates, ignoredTemplates: ignoredTemplates)
    }
}

/// What page templates mean: which name the page's parent (`{{IsPartOf|Manhattan}}`), and which give the page's
/// own coordinates and in which parameters (`{{geo|40.78|-73.97}}`: 1 and 2).
package struct PageConventions: Sendable {
    /// Parent templates by key; the first positional argument is the parent's title.
    package var parentTemplates: Set<String> = ["ispartof", "isin"]
    /// Coordinate templates by key, with the parameters holding latitude and longitude (`"1"` is positional).
    package var geoTemplates: [String: (latitude: String, longitude: String)] = ["geo": ("1", "2")]
}

/// A finding of the wikitext readers, placed by its line in the page's text.
package struct WikiFinding: Equatable, Sendable {
    package var code: DiagnosticCode
    package var message: String
    /// The 1-based line in the page's text.
    package var line: Int
}

/// Where the wikitext readers' checks put their findings: a page's bounded `WikiFindings`, or an array (tests).
package protocol WikiFindingSink {
    mutating func append(_ finding: WikiFinding)
}

extension Array: WikiFindingSink where Element == WikiFinding {}

/// A page's findings, as the log will keep them: for each code and severity, the first `kept` by line (the log
/// stores no more of them) and a count of the others. A page of two million findings held them all before they were
/// reported (812 MB); now memory is bounded by the codes, whatever the page.
package struct WikiFindings: WikiFindingSink {
    package struct Key: Hashable, Sendable {
        package var code: String
        package var severity: Severity
    }

    /// A finding and the order it was made in (ties on a line keep it).
    private struct Entry {
        package var finding: WikiFinding
        package var order: Int
        package var isBefore: (Int, Int) { (finding.line, order) }
    }

    /// How many findings of each code and severity are kept.
    package let kept: Int
    private let severity: (DiagnosticCode) -> Severity
    /// Per key, the kept findings: while fewer than `kept`, in arrival order; then as a max-heap on (line, order).
    private var byKey: [Key: [Entry]] = [:]
    private var keyOrder: [Key] = []
    package private(set) var dropped: [Key: Int] = [:]
    private var made = 0

    /// - Parameters: kept: the log's examples per code; severity: the severity the log will give a finding (its
    ///   overrides), so that findings the log counts together are kept together.
    package init(kept: Int, severity: @escaping (DiagnosticCode) -> Severity = { $0.severity }) {
        self.kept = max(kept, 0)
        self.severity = severity
    }

    package mutating func append(_ finding: WikiFinding) {
        made += 1
        let key = Key(code: finding.code.rawValue, severity: severity(finding.code))
        let entry = Entry(finding: finding, order: made)
        guard var heap = byKey.removeValue(forKey: key) else {
            keyOrder.append(key)
            if kept > 0 { byKey[key] = [entry] } else { byKey[key] = []; dropped[key, default: 0] += 1 }
            return
        }
        defer { byKey[key] = heap }
        if heap.count < kept {
            heap.append(entry)
            if heap.count == kept { WikiFindings.heapify(&heap) }
            return
        }
        dropped[key, default: 0] += 1
        // The entry replaces the latest kept one when it comes before it.
        guard kept > 0, entry.isBefore < heap[0].isBefore else { return }
        heap[0] = entry
        WikiFindings.siftDown(&heap, from: 0)
    }

    /// The kept findings in line order (ties in the order they were made), and per key the number left out.
    package func sorted() -> (findings: [WikiFinding], dropped: [(Key, Int)]) {
        let all = byKey.values.joined().sorted { $0.isBefore < $1.isBefore }.map(\.finding)
        return (all, keyOrder.compactMap { key in dropped[key].map { (key, $0) } })
    }

    private static func heapify(_ heap: inout [Entry]) {
        for index in stride(from: heap.count / 2 - 1, through: 0, by: -1) { siftDown(&heap, from: index) }
    }

    private static func siftDown(_ heap: inout [Entry], from start: Int) {
        var parent = start
        while true {
            var largest = parent
            for child in [2 * parent + 1, 2 * parent + 2] where child < heap.count && heap[largest].isBefore < heap[child].isBefore {
                largest = child
            }
            guard largest != parent else { return }
            heap.swapAt(parent, largest)
            parent = largest
        }
    }
}
