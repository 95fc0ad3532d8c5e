import Foundation
import KilnC
import KilnCore

/// The manifest's `patch` settings for `kiln patch`: `{ maxSize: "50%" }`, the largest SQL patch worth sending
/// instead of the full bundle (bytes, or a share of the new bundle); `--max-size` overrides it.
public struct PatchSettings: Sendable, Equatable {
    /// The limit the manifest sets, `nil` for the default (half the new bundle).
    public var maxSize: PatchSizeLimit?

    public init(maxSize: PatchSizeLimit? = nil) {
        self.maxSize = maxSize
    }
}

extension PatchSettings: Decodable {
    package enum CodingKeys: String, CodingKey, CaseIterable { case maxSize }

    public init(from decoder: Decoder) throws {
        let c = try decoder.strictContainer(keyedBy: CodingKeys.self)
        guard let text = try c.decodeIfPresent(String.self, forKey: .maxSize) else { return }
        do {
            maxSize = try PatchSizeLimit(parsing: text, named: "maxSize")
        } catch {
            throw DecodingError.dataCorrupted(.init(codingPath: c.codingPath + [CodingKeys.maxSize],
                                                    debugDescription: "expected a size in bytes (\"250000\") or a share of the new bundle (\"50%\"), not \"\(text)\""))
        }
    }
}

/// The largest patch `kiln patch` may write: a number of bytes, or a share of the new bundle's size.
public enum PatchSizeLimit: Equatable, Sendable {
    case bytes(Int)
    case share(Double)

    /// Half the new bundle.
    public static let `default` = PatchSizeLimit.share(0.5)

    /// `50%`, `250000` or a `ByteSize` (`2 MB`); the text is called `option` in messages (`--max-size`, `patch.maxSize`).
    /// - Throws: `KilnError.usage` for anything else.
    public init(parsing text: String, named option: String) throws {
        if text.hasSuffix("%"), let percent = Double(text.dropLast()), percent > 0, percent <= 100 {
            self = .share(percent / 100)
        } else if let size = ByteSize(parsing: text) {
            self = .bytes(size.bytes)
        } else {
            throw KilnError.usage("\(option) takes a size in bytes (250000, 2 MB) or a share of the new bundle (50%), not \"\(text)\"")
        }
    }

    /// The limit in bytes for a new bundle of `bundleSize` bytes.
    public func bytes(of bundleSize: Int) -> Int {
        switch self {
        case .bytes(let bytes): return bytes
        case .share(let share): return Int((Double(bundleSize) * share).rounded(.down))
        }
    }

    /// "the limit" or "50% of the new bundle", for messages.
    public var phrase: String {
        switch self {
        case .bytes: return "the limit"
        case .share(let share): return "\(sqlNumber(share * 100))% of the new bundle"
        }
    }
}
