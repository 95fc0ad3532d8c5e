import Foundation

// The libFuzzer entry point of every target. `scripts/fuzz` compiles this folder with the KilnKit sources into one
// instrumented binary (swiftc -sanitize=fuzzer,address) and names the target in KILN_FUZZ_TARGET: the path of a
// `Fuzz/targets/NAME.json5` file listing the readers to run and their options. See docs/SECURITY.md.

/// A fuzz target as `Fuzz/targets/NAME.json5` declares it.
struct FuzzTargetSpec: Decodable {
    /// One reader: a manifest's `format` and `options`.
    struct Source: Decodable {
        let format: String
        let options: JSONValue?
    }

    /// Text around each input, for formats whose interesting part sits inside a container (wikitext inside a
    /// MediaWiki export page): the input goes between `prefix` and `suffix` as XML text — escaped, invalid UTF-8 and
    /// characters XML forbids replaced — so that mutations reach the inner parser instead of breaking the container.
    struct Wrap: Decodable {
        let prefix: String
        let suffix: String

        /// `bytes` as XML character data between the prefix and the suffix.
        func apply(to bytes: UnsafeBufferPointer<UInt8>) -> Data {
            var text = ""
            for scalar in String(decoding: bytes, as: UTF8.self).unicodeScalars {
                switch scalar {
                case "&": text += "&amp;"
                case "<": text += "&lt;"
                case ">": text += "&gt;"
                case "\t", "\n", "\r": text.unicodeScalars.append(scalar)
                default: text.unicodeScalars.append(scalar.value < 0x20 || (0xFFFE...0xFFFF).contains(scalar.value) ? " " : scalar)
                }
            }
            return Data((prefix + text + suffix).utf8)
        }
    }

    /// The extension of the file each input is written to (`xml`, `html`, `txt`).
    let `extension`: String
    /// The container each input is put in, if any.
    let wrap: Wrap?
    /// True when each input is a manifest: it is written as `kiln.json5` into a pipeline folder holding small inputs
    /// (`in.txt`, `in.xml`, `in.html`), and loaded (decoded, checked, its readers and paths resolved).
    let manifest: Bool?
    /// Sample files the corpus starts from, relative to the repository (read by `scripts/fuzz`).
    let seeds: [String]
    /// The readers every input goes through.
    let sources: [Source]

    /// Loads the file KILN_FUZZ_TARGET names; a harness set-up failure, not an input, so it stops the process.
    static func loadFromEnvironment() -> FuzzTargetSpec {
        guard let path = ProcessInfo.processInfo.environment["KILN_FUZZ_TARGET"] else {
            fatalError("fuzz harness set-up: set KILN_FUZZ_TARGET to a Fuzz/targets/NAME.json5 file (scripts/fuzz does)")
        }
        do {
            let decoder = JSONDecoder()
            decoder.allowsJSON5 = true
            return try decoder.decode(FuzzTargetSpec.self, from: Data(contentsOf: URL(fileURLWithPath: path)))
        } catch {
            fatalError("fuzz harness set-up: cannot load \(path): \(error)")
        }
    }
}

/// Feeds one input to every reader of the target, then the first records through the value normalizers a manifest
/// can name and the type conversions of the staging area (or, for a manifest target, loads it as a manifest). Every Kiln error is an acceptable outcome for hostile
/// input: only a crash, a hang (libFuzzer's `-timeout`) or a sanitizer report is a finding.
enum FuzzHarness {
    static let target = FuzzTargetSpec.loadFromEnvironment()

    /// The target's readers, built once.
    static let readers: [RecordReader] = target.sources.map { source in
        do {
            return try ReaderRegistry.makeReader(format: source.format, options: source.options ?? .object([:]), codingPath: [])
        } catch {
            fatalError("fuzz harness set-up: the \(source.format) options do not load: \(error)")
        }
    }

    /// Where each input is written for the readers, which read files; `scripts/fuzz` points TMPDIR at its own folder.
    static let input: InputFile = {
        let url = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("kiln-fuzz-\(getpid())-input.\(target.extension)")
        return InputFile(url: url, relativePath: url.lastPathComponent)
    }()

    /// Every normalizer that takes no manifest context, in the order a column mapping might chain them.
    static let normalizers: [Normalizer] = [.trim, .collapseSpaces, .nfc, .fold, .lower, .upper, .decimal, .minutes,
                                            .naturalSortKey, .emptyToNull, .minutesAfter(fieldIndex: 0, overnightBefore: 240)]

    /// How many records of each input go through the normalizers and conversions: they are slow next to the
    /// readers, and fuzzed values reach them just as well through a few records.
    static let recordsShaped = 4

    /// The pipeline folder of a manifest target, with its small inputs.
    static let pipeline: URL = {
        let folder = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("kiln-fuzz-\(getpid())-pipeline")
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            for (name, text) in [("in.txt", "Ακτή Δυμαίων; 0102; 21.73; 38.24\n"), ("in.xml", "<r><rec a=\"1\">x</rec></r>\n"),
                                 ("in.html", "<html><body><p>06:00 07:00 20</p></body></html>\n")] {
                try Data(text.utf8).write(to: folder.appendingPathComponent(name))
            }
        } catch {
            fatalError("fuzz harness set-up: cannot create \(folder.path): \(error)")
        }
        return folder
    }()

    /// Runs one input.
    static func run(_ bytes: UnsafeBufferPointer<UInt8>) {
        if target.manifest == true { return load(bytes) }
        do {
            try (target.wrap?.apply(to: bytes) ?? Data(buffer: bytes)).write(to: input.url)
        } catch {
            fatalError("fuzz harness: cannot write \(input.url.path): \(error)")
        }
        for reader in readers {
            let log = DiagnosticLog()
            var shaped = 0
            do {
                try reader.read(input, log: log) { record in
                    if shaped < recordsShaped { shape(record) }
                    shaped += 1
                }
            } catch {
                // A Kiln error (I/O, a reader giving up on the file) is a defined outcome, not a finding.
            }
            for diagnostic in log.diagnostics { _ = diagnostic.formatted }
        }
    }

    /// Loads one input as a manifest; a manifest error is a defined outcome.
    private static func load(_ bytes: UnsafeBufferPointer<UInt8>) {
        do {
            try Data(buffer: bytes).write(to: pipeline.appendingPathComponent(ManifestLoader.defaultFileName))
        } catch {
            fatalError("fuzz harness: cannot write into \(pipeline.path): \(error)")
        }
        _ = try? ManifestLoader.load(pipeline.path)
    }

    /// What the staging area does to each value: normalize, then convert to each declared type.
    private static func shape(_ record: Record) {
        for value in record.values {
            for normalizer in normalizers { _ = try? normalizer.apply(value, record: record) }
            guard let value else { continue }
            for type in [ColumnType.integer, .real, .text, .blob] { _ = ValueConversion.convert(value, to: type) }
        }
    }
}

/// libFuzzer calls this once per input.
@_cdecl("LLVMFuzzerTestOneInput")
public func kilnFuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    FuzzHarness.run(UnsafeBufferPointer(start: data, count: data == nil ? 0 : size))
    return 0
}
