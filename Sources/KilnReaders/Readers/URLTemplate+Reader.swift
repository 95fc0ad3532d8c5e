import KilnManifest

extension URLTemplate {
    /// The first kind of `reader`'s records whose fields hold every placeholder: the records one URL each is made
    /// from; `nil` when no kind holds them all.
    package func kind(in reader: RecordReader) -> RecordKind? {
        reader.kinds.first { kind in fields.allSatisfy { kind.position(of: $0) != nil } }
    }

    /// Why source `source` (format `format`, read by `reader`) cannot fill this template, naming the fields each of
    /// its kinds has; `nil` when one kind holds every placeholder. `kiln fetch` and the manifest loader refuse the
    /// manifest with it, so that `kiln build` catches the mistake as early as a fetch.
    package func mismatch(source: String, format: String, reader: RecordReader) -> String? {
        guard kind(in: reader) == nil else { return nil }
        let kinds = reader.kinds.map { "\($0.name == RecordKind.defaultName ? "" : $0.name + ": ")\($0.fieldNames.joined(separator: ", "))" }
        return "the placeholders {\(fields.joined(separator: "}, {"))} must be fields of one kind of record of source \"\(source)\" (\(format)); its fields: \(kinds.joined(separator: "; "))"
    }
}
