import Foundation

/// The manifest's `patch` settings for `kiln patch`: `{ maxSize: "50%" }`, the largest SQL patch worth sending
/// instead of the full bundle (bytes, or a share of the new bundle); `--max-size` overrides it.
public struct PatchSettings: Sendable, Equatable {
    /// The limit the manifest sets, `nil` for the default (half the new bundle).
    public var maxSize: BundlePatch.SizeLimit?

    public init(maxSize: BundlePatch.SizeLimit? = nil) {
        self.maxSize = maxSize
    }
}

extension PatchSettings: Decodable {
    enum CodingKeys: String, CodingKey, CaseIterable { case maxSize }

    public init(from decoder: Decoder) throws {
        let c = try decoder.strictContainer(keyedBy: CodingKeys.self)
        guard let text = try c.decodeIfPresent(String.self, forKey: .maxSize) else { return }
        do {
            maxSize = try BundlePatch.SizeLimit(parsing: text, option: "maxSize")
        } catch {
            throw DecodingError.dataCorrupted(.init(codingPath: c.codingPath + [CodingKeys.maxSize],
                                                    debugDescription: "expected a size in bytes (\"250000\") or a share of the new bundle (\"50%\"), not \"\(text)\""))
        }
    }
}
