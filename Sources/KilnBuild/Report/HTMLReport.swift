import Foundation
import KilnC
import KilnCore
import KilnManifest
import KilnReaders

/// One self-contained HTML page for a build report: inline CSS, SVG and one small script, nothing fetched (a
/// Content-Security-Policy allows only that script), readable on a phone. It shows a header (counts per severity,
/// Kiln's version, the manifest's digest), the findings grouped by code (severity, what the code means, count, every
/// example the JSON report keeps, filterable and paged, with links to `file:line` in the pipeline folder), the tables
/// with their descriptions, the inputs with sizes and digests, the extraction findings per page (lines missed, shown;
/// expectations), a map per bundle table with coordinates, and the comparison with the baseline when there was one.
/// Counts carry `data-*` attributes so that tests can read them from the DOM.
public struct HTMLReport {
    public let report: ReportDocument
    /// The pipeline folder the findings' files are relative to; `nil` when unknown (the files are then not linked).
    public let pipelineFolder: URL?
    /// The bundle, for the maps; `nil` or a missing file when the build wrote none.
    public let bundle: URL?

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
        var body = header() + findings(location: location) + summary() + extraction(location: location)
        body += try maps()
        body += baselineSection()
        return """
            <!DOCTYPE html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <meta http-equiv="Content-Security-Policy" content="\(HTMLReport.contentSecurityPolicy)">
            <title>Kiln report: \(HTML.escape(report.bundle))</title>
            <style>\(HTMLReport.style)</style>
            </head>
            <body>
            \(body)<script>\(HTMLReport.script)</script>
            </body>
            </html>
            """
    }

    private func header() -> String {
        let status = report.built ? "built" : "not built"
        var html = "<header><h1>\(HTML.escape(report.bundle))</h1><p class=\"status \(report.built ? "ok" : "failed")\" data-built=\"\(report.built)\">"
            + "\(status): \(HTML.escape(report.output))</p><p class=\"counts\">"
        for severity in ["error", "warning", "info"] {
            let count = report.summary[severity] ?? 0
            html += "<a class=\"count \(severity)\" href=\"#findings\" data-severity=\"\(severity)\" data-count=\"\(count)\">"
                + "<b>\(count)</b> \(severity == "info" ? "info" : severity + (count == 1 ? "" : "s"))</a> "
        }
        html += "</p><p class=\"note provenance\">"
        if let version = report.kilnVersion {
            html += "<span data-kiln-version=\"\(HTML.escape(version))\">Kiln \(HTML.escape(version))</span>"
        } else {
            html += "<span data-kiln-version=\"\">Kiln version not recorded (a report from an older Kiln)</span>"
        }
        if let manifest = report.manifest {
            html += " · manifest <code>\(HTML.escape(manifest.file))</code> SHA-256 <code class=\"digest\" data-manifest-sha256=\"\(HTML.escape(manifest.sha256))\">"
                + "\(HTML.escape(manifest.sha256))</code>"
        }
        return html + "</p></header>\n"
    }

    private func summary() -> String {
        let sized = report.tables.contains { $0.bytes != nil }
        let byteColumns = sized ? ["data", "index", "search", "spatial"].map { "<th class=\"n\">\($0)</th>" }.joined() : ""
        var html = "<section id=\"summary\"><h2>Tables</h2><div class=\"scroll\"><table><thead><tr><th>table</th><th class=\"n\">rows</th>\(byteColumns)<th>what</th></tr></thead><tbody>"
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
            html += "<tr data-table=\"\(HTML.escape(table.name))\" data-rows=\"\(table.rows)\"\(attributes)><td class=\"name\"><code>\(HTML.escape(table.name))</code></td><td class=\"n\">\(table.rows)</td>\(cells)"
                + "<td class=\"description\">\(HTML.escape(table.description.map(TextFolding.collapseSpaces) ?? ""))</td></tr>"
        }
        let size = report.bundleBytes.map { " The bundle takes \(BundleBytes.size($0)) (<span data-bundle-bytes=\"\($0)\">\($0)</span> bytes\(report.otherBytes.map { ", \(BundleBytes.size($0)) of them schema and metadata" } ?? ""))." } ?? ""
        html += "</tbody></table></div>\(size.isEmpty ? "" : "<p class=\"note\">\(size.dropFirst())</p>")</section>\n"
        html += "<section id=\"inputs\"><h2>Inputs</h2><p class=\"note\">\(report.inputs.count) input file\(report.inputs.count == 1 ? "" : "s") read"
            + (report.inputSizes == nil ? " (this report does not record their sizes)" : "") + ".</p>"
        guard !report.inputs.isEmpty else { return html + "</section>\n" }
        // Fetched files also say where they came from: the URL, the status and capture time, and the rows they gave.
        let fetched = report.fetched ?? [:]
        let fetchedHeadings = fetched.isEmpty ? "" : "<th>fetched from</th><th>status</th><th>captured</th><th class=\"n\">rows</th>"
        html += "<div class=\"scroll\"><table><thead><tr><th>file</th><th class=\"n\">bytes</th><th>SHA-256</th>\(fetchedHeadings)</tr></thead><tbody>"
        for path in report.inputs.keys.sorted() {
            let size = report.inputSizes?[path]
            var cells = ""
            if !fetched.isEmpty {
                cells = fetched[path].map { file in
                    "<td>\(HTMLReport.link(file.url, class: "url"))</td><td class=\"n\">\(file.status.map(String.init) ?? "")</td>"
                        + "<td><code>\(HTML.escape(file.capturedAt))</code></td><td class=\"n\">\(file.rows)</td>"
                } ?? String(repeating: "<td></td>", count: 4)
            }
            html += "<tr data-input=\"\(HTML.escape(path))\" data-size=\"\(size.map(String.init) ?? "")\"><td><code>\(HTML.escape(path))</code></td>"
                + "<td class=\"n\">\(size.map(HTMLReport.bytes) ?? "")</td><td><code class=\"digest\">\(HTML.escape(report.inputs[path]!))</code></td>\(cells)</tr>"
        }
        return html + "</tbody></table></div></section>\n"
    }

    /// `size` bytes with thousands separators, and as people read it (`BundleBytes.size`) from 10 kB on.
    package static func bytes(_ size: Int) -> String {
        var digits = String(size), grouped = ""
        while digits.count > 3 {
            grouped = "\u{202F}" + digits.suffix(3) + grouped
            digits.removeLast(3)
        }
        let exact = digits + grouped
        return size < 10_000 ? exact : BundleBytes.size(size) + " (\(exact))"
    }

    private func findings(location: URL) -> String {
        let groups = Dictionary(grouping: report.diagnostics, by: \.code)
        let rank = ["error": 0, "warning": 1, "info": 2]
        let codes = groups.keys.sorted { a, b in
            let ra = groups[a]!.map { rank[$0.severity] ?? 3 }.min()!, rb = groups[b]!.map { rank[$0.severity] ?? 3 }.min()!
            return ra != rb ? ra < rb : a < b
        }
        var notStored: [String: Int] = [:]
        for entry in report.notStored ?? [] { notStored[entry.code, default: 0] += entry.count }
        var html = "<section id=\"findings\"><h2>Findings by code</h2>"
        if codes.isEmpty { html += "<p>No findings.</p>" }
        html += "<p class=\"filter\" hidden><label>Filter <input type=\"search\" id=\"filter\" placeholder=\"text, file or code\"></label> "
            + "<span id=\"filtered\"></span></p>"
        for code in codes {
            let items = groups[code]!
            let severity = items.map(\.severity).min { (rank[$0] ?? 3) < (rank[$1] ?? 3) } ?? "info"
            let more = notStored[code] ?? 0
            html += "<details class=\"code \(HTML.escape(severity))\" data-code=\"\(HTML.escape(code))\" data-count=\"\(items.count)\" data-total=\"\(items.count + more)\"\(severity == "info" ? "" : " open")>"
                + "<summary><span class=\"badge \(HTML.escape(severity))\">\(HTML.escape(severity))</span> <code>\(HTML.escape(code))</code> × \(items.count + more)</summary>"
                + "<p class=\"meaning\">\(HTML.escape(report.meaning(of: code).map(TextFolding.collapseSpaces) ?? "(no description of this code)"))</p><ul class=\"examples\">"
            for item in items { html += "<li class=\"finding\">\(place(item, location: location))\(HTML.escape(item.message))</li>" }
            html += "</ul>"
            if more > 0 { html += "<p class=\"more\" data-not-stored=\"\(more)\">\(more) more counted, not kept in the JSON report (it keeps the first of each code and severity).</p>" }
            html += "<p class=\"pager\" hidden><button type=\"button\" class=\"prev\">‹ previous</button> <span class=\"range\"></span> "
                + "<button type=\"button\" class=\"next\">next ›</button></p></details>"
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

    /// The maps: of the bundle's tables, or for a failed build of the rows it staged (its report keeps them), with a
    /// sentence saying which; for a failed build that staged none, the sentence saying why there is no map.
    private func maps() throws -> String {
        var html = "<section id=\"maps\"><h2>Maps</h2>"
        let maps: [CoordinateMap]
        if !report.built, let staged = report.stagedMaps {
            maps = staged.compactMap(\.map)
            html += "<p class=\"staged\">The build failed and wrote no bundle: these maps draw the rows it staged before the "
                + "rules ran (the first \(StagedMap.pointLimit) of each table), in red the rows an error names and those a "
                + "<code>bounds</code> rule flags.</p>"
        } else if let bundle, FileManager.default.fileExists(atPath: bundle.path), report.built || report.stagedMaps == nil {
            let database = try BundleFile.open(bundle)
            do {
                maps = try CoordinateMap.maps(in: database, tables: report.tables.map(\.name), rules: report.boundsRules ?? [])
            } catch let error as SQLiteError {
                if let stopped = BundleReadLimit.current.stopped(error, reading: [bundle]) { throw stopped }
                throw KilnError.validation("cannot read the maps' coordinates from \(bundle.relativePath): \(error.message)")
            }
        } else if !report.built {
            return html + "<p class=\"no-map\">No map: the build failed and wrote no bundle, and its report keeps no staged "
                + "row with coordinates (no table has <code>latitude</code>/<code>lat</code> and <code>longitude</code>/<code>lon</code> "
                + "columns with values, or the build stopped before staging them, or an older Kiln wrote the report).</p></section>\n"
        } else {
            return ""
        }
        guard !maps.isEmpty else { return "" }
        for map in maps {
            html += "<figure data-table=\"\(HTML.escape(map.table))\"><figcaption><code>\(HTML.escape(map.table))</code>"
                + (map.page.map { ", \(HTML.escape($0))" } ?? "") + ": "
                + "\(map.points.count) point\(map.points.count == 1 ? "" : "s") (\(HTML.escape(map.latitudeColumn)), \(HTML.escape(map.longitudeColumn))), "
                + "<span class=\"key median\">+</span> median"
                + (map.flaggedBy.isEmpty ? "" : "; <span class=\"key outlier\">●</span> \(map.outliers.count) flagged by \(HTML.escape(map.flaggedBy.joined(separator: " or ")))")
                + (map.offMap.isEmpty ? "" : "; <span class=\"key offmap\">◆</span> \(map.offMap.count) outside the map, drawn at its edge")
                + "</figcaption>\(map.svg())"
            let listed = map.points.filter { $0.outlier || !map.view.contains($0) }
            if !listed.isEmpty {
                html += "<ul class=\"outliers\">" + listed.map { point in
                    "<li data-label=\"\(HTML.escape(point.label))\" data-offmap=\"\(!map.view.contains(point))\" data-flagged=\"\(point.outlier)\">"
                        + "\(HTML.escape(point.label)) at \(String(format: "%.5f, %.5f", point.latitude, point.longitude)), "
                        + "\(String(format: "%.1f", map.distanceFromMedian(point))) km from the median"
                        + (point.outlier ? ", flagged" : "") + (map.view.contains(point) ? "" : ", outside the map") + "</li>"
                }.joined() + "</ul>"
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

    /// `url` as a link when it is an http or https URL (a report is data: no other scheme becomes a link), else as text.
    private static func link(_ url: String, class name: String) -> String {
        let lowered = url.lowercased()
        guard lowered.hasPrefix("http://") || lowered.hasPrefix("https://") else { return "<code class=\"\(name)\">\(HTML.escape(url))</code>" }
        return "<a class=\"\(name)\" href=\"\(HTML.escape(url))\" rel=\"noreferrer\"><code>\(HTML.escape(url))</code></a>"
    }

    /// `file:line`, linked to the file in the pipeline folder when it is known.
    private func place(_ item: ReportDocument.Finding, location: URL) -> String {
        guard let file = item.file else { return "" }
        let text = HTML.escape(file + (item.line.map { ":\($0)" } ?? ""))
        // A fetched file's finding also links the URL its bytes came from.
        let source = item.url.map { " " + HTMLReport.link($0, class: "place url") } ?? ""
        guard let pipelineFolder else { return "<span class=\"place\">\(text)</span>\(source) " }
        let href = HTML.relativePath(from: location, to: pipelineFolder.appendingPathComponent(file))
        return "<a class=\"place\" href=\"\(HTML.escape(href))\">\(text)</a>\(source) "
    }

    /// The page's only script: pages each code's examples (`pageSize` at a time) and filters them all by the text in
    /// the filter box, which `#filter=TEXT` in the address fills in. It reads the DOM and sets `hidden`, never markup,
    /// and holds no data of the report, so nothing a finding says can become script. Without it every example shows.
    package static let script = """
        (function () {
        var size = \(pageSize), box = document.getElementById('filter'), lists = [];
        document.querySelectorAll('details.code').forEach(function (code) {
          var list = {code: code, items: Array.prototype.slice.call(code.querySelectorAll('li.finding')), page: 0};
          list.shown = list.items;
          var pager = code.querySelector('.pager');
          pager.querySelector('.prev').addEventListener('click', function () { list.page--; draw(list); });
          pager.querySelector('.next').addEventListener('click', function () { list.page++; draw(list); });
          lists.push(list);
        });
        function draw(list) {
          var pages = Math.max(1, Math.ceil(list.shown.length / size));
          list.page = Math.min(Math.max(list.page, 0), pages - 1);
          var first = list.page * size, last = Math.min(first + size, list.shown.length), pager = list.code.querySelector('.pager');
          list.items.forEach(function (item) { item.hidden = true; });
          list.shown.slice(first, last).forEach(function (item) { item.hidden = false; });
          pager.hidden = list.shown.length <= size;
          pager.querySelector('.range').textContent = (first + 1) + '–' + last + ' of ' + list.shown.length;
          pager.querySelector('.prev').disabled = list.page === 0;
          pager.querySelector('.next').disabled = list.page === pages - 1;
          list.code.hidden = list.shown.length === 0;
          list.code.setAttribute('data-shown', String(list.shown.length));
          list.code.setAttribute('data-page', String(list.page + 1));
        }
        function apply() {
          var query = box.value.trim().toLowerCase(), shown = 0, total = 0;
          lists.forEach(function (list) {
            var name = list.code.getAttribute('data-code').toLowerCase();
            list.shown = list.items.filter(function (item) { return !query || (name + ' ' + item.textContent.toLowerCase()).indexOf(query) >= 0; });
            list.page = 0;
            shown += list.shown.length;
            total += list.items.length;
            draw(list);
          });
          document.getElementById('filtered').textContent = query ? shown + ' of ' + total + ' findings' : '';
        }
        function fromAddress() {
          var hash = location.hash;
          if (hash.indexOf('#filter=') !== 0) { return; }
          try { box.value = decodeURIComponent(hash.slice(8)); } catch (error) { box.value = hash.slice(8); }
          apply();
        }
        if (box) {
          box.parentNode.parentNode.hidden = false;
          box.addEventListener('input', apply);
          window.addEventListener('hashchange', fromAddress);
          apply();
          fromAddress();
        }
        })();
        """

    /// Examples shown per code at a time.
    package static let pageSize = 20

    /// What the page may load and run: nothing from anywhere, its inline style, and only `script` (by its SHA-256).
    package static let contentSecurityPolicy: String = {
        let digest = SHA256Digest()
        digest.update(Data(script.utf8))
        return "default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-\(Data(digest.bytes()).base64EncodedString())'; base-uri 'none'; form-action 'none'"
    }()

    package static let style = """
        body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0 auto;max-width:1100px;padding:12px;color:#1d2329}\
        h1{font-size:1.5em;margin:.2em 0}h2{font-size:1.2em;margin-top:1.6em;border-bottom:1px solid #d0d7de}h3{font-size:1em}\
        .status{font-weight:600}.status.ok{color:#1a7f37}.status.failed{color:#cf222e}\
        table{border-collapse:collapse;width:100%}td,th{padding:4px 8px;border-bottom:1px solid #eaeef2;text-align:left}.n{text-align:right}\
        .scroll{overflow-x:auto}.counts{font-size:1.1em}.count{margin-right:1em;text-decoration:none}.note{color:#57606a;font-size:.9em}\
        .digest{font-size:.8em;overflow-wrap:anywhere}.meaning{margin:.3em 0;color:#57606a}.description{font-size:.9em;color:#57606a}td.name code{overflow-wrap:normal;white-space:nowrap}\
        .pager button{font:inherit}input[type=search]{font:inherit;width:min(20em,70vw)}\
        .error{color:#cf222e}.warning{color:#9a6700}.info{color:#0969da}\
        details{border:1px solid #d0d7de;border-radius:6px;margin:6px 0;padding:4px 8px}summary{cursor:pointer}\
        .badge{display:inline-block;border-radius:10px;padding:0 8px;font-size:.8em;color:#fff}\
        .badge.error{background:#cf222e}.badge.warning{background:#9a6700}.badge.info{background:#0969da}\
        ul{padding-left:1.2em;overflow-wrap:anywhere}li{margin:2px 0}.place{font-family:ui-monospace,monospace;font-size:.9em;margin-right:.4em}\
        .map{width:100%;height:auto}.map .plot{fill:#f4f6f8;stroke:#d0d7de}.point{fill:#0969da;fill-opacity:.7}.outlier{fill:#cf222e}\
        .axes line{stroke:#d8dee4;stroke-width:1}.axes text,.scale text{font-size:22px;fill:#57606a}.scale path{fill:none;stroke:#1d2329;stroke-width:3}\
        .offmap{fill:#fff;stroke:#6e40c9;stroke-width:3}.offmap.flagged{stroke:#cf222e}.key.offmap{color:#6e40c9}\
        .median path{stroke:#1a7f37;stroke-width:4}.key.outlier{color:#cf222e}.key.median{color:#1a7f37;font-weight:700}\
        figure{margin:1em 0}code{overflow-wrap:anywhere}\
        @media (max-width:600px){body{font-size:14px;padding:8px}td,th{padding:3px 4px}}
        """
}

/// HTML text helpers.
package enum HTML {
    /// `text` with `&`, `<`, `>`, `"` and `'` escaped, for element content and attribute values.
    package static func escape(_ text: String) -> String {
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
    package static func relativePath(from: URL, to: URL) -> String {
        let base = from.standardizedFileURL.pathComponents, target = to.standardizedFileURL.pathComponents
        var common = 0
        while common < base.count, common < target.count - 1, base[common] == target[common] { common += 1 }
        let parts = Array(repeating: "..", count: base.count - common) + target[common...]
        let path = parts.joined(separator: "/")
        return path.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? path
    }
}
