import Foundation

/// One self-contained HTML page for a build report: inline CSS and SVG, no script and nothing fetched, readable on a
/// phone. It shows the summary (tables and counts), the findings grouped by code (severity, count, the first
/// examples with links to `file:line` in the pipeline folder), the extraction findings per page (lines missed, shown;
/// expectations), a map per bundle table with coordinates, and the comparison with the baseline when there was one.
/// Counts carry `data-*` attributes so that tests can read them from the DOM.
public struct HTMLReport {
    public let report: ReportDocument
    /// The pipeline folder the findings' files are relative to; `nil` when unknown (the files are then not linked).
    public let pipelineFolder: URL?
    /// The bundle, for the maps; `nil` or a missing file when the build wrote none.
    public let bundle: URL?

    /// How many examples to show per code.
    public var examplesPerCode = 5

    public init(report: ReportDocument, pipelineFolder: URL?, bundle: URL?) {
        self.report = report
        self.pipelineFolder = pipelineFolder
        self.bundle = bundle
    }

    /// Writes the page to `url` (through a temporary file, renamed into place).
    /// - Throws: `KilnError.io` when it cannot be written, `KilnError.validation` when the bundle cannot be read.
    public func write(to url: URL) throws {
        let page = try html(location: url.deletingLastPathComponent())
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        let sink = try TextFileSink(url: url)
        try sink.line(page)
        try sink.close()
        try sink.install()
    }

    /// The page, with links relative to `location` (the folder the page is written in).
    /// - Throws: `KilnError.validation` when the bundle exists but is not a readable Kiln bundle.
    public func html(location: URL) throws -> String {
        var body = header() + summary() + findings(location: location) + extraction(location: location)
        body += try maps()
        body += baselineSection()
        return """
            <!DOCTYPE html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>Kiln report: \(HTML.escape(report.bundle))</title>
            <style>\(HTMLReport.style)</style>
            </head>
            <body>
            \(body)</body>
            </html>
            """
    }

    private func header() -> String {
        let status = report.built ? "built" : "not built"
        return "<header><h1>\(HTML.escape(report.bundle))</h1><p class=\"status \(report.built ? "ok" : "failed")\" data-built=\"\(report.built)\">"
            + "\(status): \(HTML.escape(report.output))</p></header>\n"
    }

    private func summary() -> String {
        var html = "<section id=\"summary\"><h2>Summary</h2><table class=\"counts\"><tr>"
        for severity in ["error", "warning", "info"] {
            html += "<td class=\"\(severity)\" data-severity=\"\(severity)\" data-count=\"\(report.summary[severity] ?? 0)\">"
                + "<b>\(report.summary[severity] ?? 0)</b> \(severity == "info" ? "info" : severity + (report.summary[severity] == 1 ? "" : "s"))</td>"
        }
        let sized = report.tables.contains { $0.bytes != nil }
        let byteColumns = sized ? ["data", "index", "search", "spatial"].map { "<th class=\"n\">\($0)</th>" }.joined() : ""
        html += "</tr></table><div class=\"scroll\"><table><thead><tr><th>table</th><th class=\"n\">rows</th>\(byteColumns)</tr></thead><tbody>"
        for table in report.tables {
            var cells = "", attributes = ""
            if let bytes = table.bytes {
                for (name, value) in [("data", bytes.data), ("index", bytes.index), ("search", bytes.search), ("spatial", bytes.spatial)] {
                    attributes += " data-\(name)-bytes=\"\(value)\""
                    cells += "<td class=\"n\">\(value == 0 ? "" : BundleBytes.size(value))</td>"
                }
            } else if sized {
                cells = String(repeating: "<td></td>", count: 4)
            }
            html += "<tr data-table=\"\(HTML.escape(table.name))\" data-rows=\"\(table.rows)\"\(attributes)><td>\(HTML.escape(table.name))</td><td class=\"n\">\(table.rows)</td>\(cells)</tr>"
        }
        let size = report.bundleBytes.map { " The bundle takes \(BundleBytes.size($0)) (<span data-bundle-bytes=\"\($0)\">\($0)</span> bytes\(report.otherBytes.map { ", \(BundleBytes.size($0)) of them schema and metadata" } ?? ""))." } ?? ""
        html += "</tbody></table></div><p class=\"note\">\(report.inputs.count) input file\(report.inputs.count == 1 ? "" : "s") read.\(size)</p></section>\n"
        return html
    }

    private func findings(location: URL) -> String {
        let groups = Dictionary(grouping: report.diagnostics, by: \.code)
        let rank = ["error": 0, "warning": 1, "info": 2]
        let codes = groups.keys.sorted { a, b in
            let ra = groups[a]!.map { rank[$0.severity] ?? 3 }.min()!, rb = groups[b]!.map { rank[$0.severity] ?? 3 }.min()!
            return ra != rb ? ra < rb : a < b
        }
        var html = "<section id=\"findings\"><h2>Findings by code</h2>"
        if codes.isEmpty { html += "<p>No findings.</p>" }
        for code in codes {
            let items = groups[code]!
            let severity = items.map(\.severity).min { (rank[$0] ?? 3) < (rank[$1] ?? 3) } ?? "info"
            html += "<details class=\"code \(HTML.escape(severity))\" data-code=\"\(HTML.escape(code))\" data-count=\"\(items.count)\"\(severity == "info" ? "" : " open")>"
                + "<summary><span class=\"badge \(HTML.escape(severity))\">\(HTML.escape(severity))</span> <code>\(HTML.escape(code))</code> × \(items.count)</summary><ul>"
            for item in items.prefix(examplesPerCode) { html += "<li>\(place(item, location: location))\(HTML.escape(item.message))</li>" }
            if items.count > examplesPerCode { html += "<li class=\"more\">… \(items.count - examplesPerCode) more in the JSON report</li>" }
            html += "</ul></details>"
        }
        return html + "</section>\n"
    }

    /// Per page (input file), what regex extraction missed and which expectations failed.
    private func extraction(location: URL) -> String {
        let items = report.diagnostics.filter { $0.code.hasPrefix("extract.") }
        guard !items.isEmpty else { return "" }
        let pages = Dictionary(grouping: items, by: { $0.file ?? "" })
        var html = "<section id=\"extraction\"><h2>Extraction per page</h2><p class=\"note\">Lines the patterns did not capture "
            + "(<code>extract.unmatched</code>) and failed expectations; the JSON report does not count the lines captured.</p>"
        for page in pages.keys.sorted() {
            let missed = pages[page]!.filter { $0.code == DiagnosticCode.extractUnmatched.rawValue }
            let expectations = pages[page]!.filter { $0.code == DiagnosticCode.extractExpectation.rawValue }
            html += "<div class=\"page\" data-page=\"\(HTML.escape(page))\" data-missed=\"\(missed.count)\" data-expectations=\"\(expectations.count)\">"
                + "<h3>\(HTML.escape(page.isEmpty ? "(no file)" : page))</h3><p>\(missed.count) line\(missed.count == 1 ? "" : "s") missed, "
                + "\(expectations.count) expectation\(expectations.count == 1 ? "" : "s") failed</p><ul>"
            for item in pages[page]! { html += "<li>\(place(item, location: location))\(HTML.escape(item.message))</li>" }
            html += "</ul></div>"
        }
        return html + "</section>\n"
    }

    private func maps() throws -> String {
        guard let bundle, FileManager.default.fileExists(atPath: bundle.path) else { return "" }
        let database = try BundleFile.open(bundle)
        let maps: [CoordinateMap]
        do {
            maps = try CoordinateMap.maps(in: database, tables: report.tables.map(\.name))
        } catch let error as SQLiteError {
            throw KilnError.validation("cannot read the maps' coordinates from \(bundle.relativePath): \(error.message)")
        }
        guard !maps.isEmpty else { return "" }
        var html = "<section id=\"maps\"><h2>Maps</h2>"
        for map in maps {
            html += "<figure data-table=\"\(HTML.escape(map.table))\"><figcaption><code>\(HTML.escape(map.table))</code>"
                + (map.page.map { ", \(HTML.escape($0))" } ?? "") + ": "
                + "\(map.points.count) point\(map.points.count == 1 ? "" : "s") (\(HTML.escape(map.latitudeColumn)), \(HTML.escape(map.longitudeColumn))); "
                + "<span class=\"key outlier\">●</span> \(map.outliers.count) flagged or far from the median (<span class=\"key median\">+</span>)"
                + "</figcaption>\(map.svg())"
            if !map.outliers.isEmpty {
                html += "<ul class=\"outliers\">" + map.outliers.prefix(examplesPerCode).map { "<li>\(HTML.escape($0.label))</li>" }.joined() + "</ul>"
            }
            html += "</figure>"
        }
        return html + "</section>\n"
    }

    private func baselineSection() -> String {
        guard let baseline = report.baseline else { return "" }
        var html = "<section id=\"baseline\"><h2>Compared with the baseline</h2><div class=\"scroll\"><table><thead><tr><th>table</th>"
            + "<th class=\"n\">before</th><th class=\"n\">after</th><th class=\"n\">added</th><th class=\"n\">removed</th><th class=\"n\">changed</th></tr></thead><tbody>"
        for table in baseline {
            html += "<tr data-table=\"\(HTML.escape(table.name))\" data-added=\"\(table.added)\" data-removed=\"\(table.removed)\" data-changed=\"\(table.changed)\">"
                + "<td>\(HTML.escape(table.name))</td><td class=\"n\">\(table.oldRows)</td><td class=\"n\">\(table.newRows)</td>"
                + "<td class=\"n\">\(table.added)</td><td class=\"n\">\(table.removed)</td><td class=\"n\">\(table.changed)</td></tr>"
        }
        return html + "</tbody></table></div></section>\n"
    }

    /// `file:line`, linked to the file in the pipeline folder when it is known.
    private func place(_ item: ReportDocument.Finding, location: URL) -> String {
        guard let file = item.file else { return "" }
        let text = HTML.escape(file + (item.line.map { ":\($0)" } ?? ""))
        guard let pipelineFolder else { return "<span class=\"place\">\(text)</span> " }
        let href = HTML.relativePath(from: location, to: pipelineFolder.appendingPathComponent(file))
        return "<a class=\"place\" href=\"\(HTML.escape(href))\">\(text)</a> "
    }

    static let style = """
        body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0 auto;max-width:1100px;padding:12px;color:#1d2329}\
        h1{font-size:1.5em;margin:.2em 0}h2{font-size:1.2em;margin-top:1.6em;border-bottom:1px solid #d0d7de}h3{font-size:1em}\
        .status{font-weight:600}.status.ok{color:#1a7f37}.status.failed{color:#cf222e}\
        table{border-collapse:collapse;width:100%}td,th{padding:4px 8px;border-bottom:1px solid #eaeef2;text-align:left}.n{text-align:right}\
        .scroll{overflow-x:auto}.counts td{font-size:1.1em;border:0}.note{color:#57606a;font-size:.9em}\
        .error{color:#cf222e}.warning{color:#9a6700}.info{color:#0969da}\
        details{border:1px solid #d0d7de;border-radius:6px;margin:6px 0;padding:4px 8px}summary{cursor:pointer}\
        .badge{display:inline-block;border-radius:10px;padding:0 8px;font-size:.8em;color:#fff}\
        .badge.error{background:#cf222e}.badge.warning{background:#9a6700}.badge.info{background:#0969da}\
        ul{padding-left:1.2em;overflow-wrap:anywhere}li{margin:2px 0}.place{font-family:ui-monospace,monospace;font-size:.9em;margin-right:.4em}\
        .map{width:100%;height:auto;border:1px solid #d0d7de}.point{fill:#0969da;fill-opacity:.7}.outlier{fill:#cf222e}\
        .median path{stroke:#1a7f37;stroke-width:4}.key.outlier{color:#cf222e}.key.median{color:#1a7f37;font-weight:700}\
        figure{margin:1em 0}code{overflow-wrap:anywhere}\
        @media (max-width:600px){body{font-size:14px;padding:8px}td,th{padding:3px 4px}}
        """
}

/// HTML text helpers.
enum HTML {
    /// `text` with `&`, `<`, `>`, `"` and `'` escaped, for element content and attribute values.
    static func escape(_ text: String) -> String {
        var escaped = ""
        escaped.reserveCapacity(text.utf8.count)
        for character in text {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&#39;"
            default: escaped.append(character)
            }
        }
        return escaped
    }

    /// The path from folder `from` to `to`, with `..` where needed, percent-encoded for an `href`.
    static func relativePath(from: URL, to: URL) -> String {
        let base = from.standardizedFileURL.pathComponents, target = to.standardizedFileURL.pathComponents
        var common = 0
        while common < base.count, common < target.count - 1, base[common] == target[common] { common += 1 }
        let parts = Array(repeating: "..", count: base.count - common) + target[common...]
        let path = parts.joined(separator: "/")
        return path.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? path
    }
}
