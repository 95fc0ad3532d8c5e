import Foundation
import KilnKit

/// `kiln init DIR [INPUT…]`: writes a first `kiln.json5` for DIR from its inputs (`ManifestSketch`).
struct InitCommand: KilnCommand {
    static let name = "init"
    static let abstract = "Writes a first kiln.json5 for a folder of data files (CSV, GTFS, XML, JSON, iCalendar, KML, wikitext), ready to build."
    static let arguments = "DIR [INPUT...]"
    static let details = """
        Reads each INPUT (a file, or a folder: its data files), or without INPUT every data file of DIR and of its
        folders one level down (.csv .tsv .txt .json .geojson .xml .gpx .kml .ics .ical .wikicode .wiki), and writes
        DIR/kiln.json5: a source per file and its tables. The separator (comma, semicolon, tab or bar), the quoting and whether the first line names the fields come
        from the file's first line, read back by the delimited reader itself; a file that is not UTF-8 is read as
        windows-1252. Each column is typed by every value, written back as it was (integer only without leading
        zeros, so a code 0123 stays text; real only where the number reads back the same, so 6.10 beside 6.1 stays
        text; else text; identifiers stay text), notNull where no value is empty; the key is the first id-like
        column, else the first text or integer column, unique in every row. A GTFS feed (stops.txt beside
        routes.txt, trips.txt or stop_times.txt) gets GTFS's keys and the references its rows keep
        (stop_times.trip_id to trips.trip_id...). Nothing is declared that the data breaks, so kiln build DIR builds
        at once; check the types and keys, and add descriptions, rules and exports. An XML or JSON file gives a
        table per repeating record (an element repeated under its parent with attributes or simple children; an
        array of objects, or the root object) with its simple fields; an iCalendar file its events and occurrences
        (with a window from the feed's own dates when a rule repeats without end), a KML file its placemarks, a
        MediaWiki export or wikitext page its pages, sections and listings. The inputs must lie inside DIR (a
        manifest's paths stay in its folder).

        Exit codes: 0 written, 64 usage error (DIR already holds kiln.json5, an input outside DIR, no data file,
        a file its reader cannot read without an error), 74 I/O error.

        """
    static let commandOptions: [CommandOption] = []

    let folder: URL
    let inputs: [String]

    init(_ arguments: inout ParsedArguments) throws {
        folder = URL(fileURLWithPath: try arguments.positional("the pipeline folder")).standardizedFileURL
        inputs = arguments.positionals
        arguments.positionals = []
    }

    /// The data files among `folder`'s own (sorted), or one level down too when `deeper`.
    private static func dataFiles(in folder: URL, deeper: Bool) -> [URL] {
        let entries = ((try? FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)) ?? [])
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
        var files: [URL] = []
        for entry in entries where !entry.lastPathComponent.hasPrefix(".") && entry.lastPathComponent != "build" {
            switch OutputPath.entryKind(entry, followingLinks: true) {
            case .regular? where ManifestSketch.formatsByExtension[entry.pathExtension.lowercased()] != nil: files.append(entry)
            case .folder? where deeper: files += dataFiles(in: entry, deeper: false)
            default: break
            }
        }
        return files
    }

    func run() throws -> ExitStatus {
        let manifest = folder.appendingPathComponent(ManifestLoader.defaultFileName)
        if OutputPath.entryKind(manifest) != nil {
            throw KilnError.usage("\(displayPath(manifest)) is already there: kiln init writes a first manifest only")
        }
        guard [nil, .folder].contains(OutputPath.entryKind(folder, followingLinks: true)) else {
            throw KilnError.usage("\(displayPath(folder)) is not a folder")
        }
        var files: [URL] = []
        for input in inputs {
            let url = URL(fileURLWithPath: input).standardizedFileURL
            guard url.path.hasPrefix(folder.path + "/") else {
                throw KilnError.usage("\(input) is outside \(displayPath(folder)): copy it into the folder (a manifest's paths stay inside its folder)")
            }
            switch OutputPath.entryKind(url, followingLinks: true) {
            case .folder?: files += InitCommand.dataFiles(in: url, deeper: false)
            case .regular?: files.append(url)
            case nil: throw CannotRead.error(url)
            default: throw KilnError.usage("\(input) is neither a file nor a folder")
            }
        }
        if inputs.isEmpty { files = InitCommand.dataFiles(in: folder, deeper: true) }
        guard !files.isEmpty else {
            throw KilnError.usage("no data file (.csv, .tsv, .txt, .json, .geojson, .xml, .gpx, .kml, .ics, .ical, .wikicode, .wiki) in \(displayPath(folder)); name the inputs after DIR")
        }
        let name = String(folder.lastPathComponent.unicodeScalars.map { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "-_.".unicodeScalars.contains($0)) ? Character($0) : "-" })
        let sketch = try ManifestSketch(bundle: name.isEmpty ? "bundle" : name,
                                        inputs: files.map { ($0, String($0.path.dropFirst(folder.path.count + 1))) })
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try AtomicFile.write(Data(sketch.json5().utf8), to: manifest)
        let tables = sketch.tables.map { "\($0.name) (\($0.columns.count) columns\($0.key.isEmpty ? "" : ", key " + $0.key.joined(separator: ", ")))" }
        printToStandardError("wrote \(displayPath(manifest))\(sketch.gtfs ? " for a GTFS feed" : ""): \(tables.joined(separator: ", "))\nbuild it: kiln build \(displayPath(folder))\n")
        return .success
    }
}
