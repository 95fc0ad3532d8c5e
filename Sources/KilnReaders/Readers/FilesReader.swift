import Foundation
import KilnC
import KilnCore
import KilnManifest

/// Reads the files a source's path (usually a glob) names as one record each — for photos and other media that ship
/// beside the data: `path` (relative to the pipeline folder), `name` (the file name), `stem` (the name without its
/// extension), `extension` (lower case), `bytes`, `sha256`, `mediaType`, and for JPEG and PNG images `width` and
/// `height` in pixels. Images are decoded whole, by libjpeg-turbo and libpng, so that a file cut short or with
/// corrupt data is an `image.corrupt` error naming the file and the library's words. A JPEG using a feature
/// libjpeg-turbo cannot decode (12- or 16-bit precision, a lossless process) is no damage: its size comes from its
/// frame header (`JPEGHeader`) and an `image.unsupported` warning names the feature.
public struct FilesReader: ConfigurableReader {
    public static let format = "files"
    public static let acceptedMediaTypes = MediaTypes.any

    /// The options a manifest gives a `files` source.
    public struct Options: Decodable, Sendable {
        /// Images with more pixels than this are not decoded (`image.too-large`, an error): a small file can declare
        /// an enormous image.
        package var maxPixels = 50_000_000

        package enum CodingKeys: String, CodingKey, CaseIterable { case maxPixels }

        public init(from decoder: Decoder) throws {
            let c = try decoder.strictContainer(keyedBy: CodingKeys.self)
            maxPixels = try c.decodeIfPresent(Int.self, forKey: .maxPixels) ?? maxPixels
            guard maxPixels > 0 else {
                throw DecodingError.dataCorrupted(.init(codingPath: c.codingPath + [CodingKeys.maxPixels],
                                                        debugDescription: "expected a positive number of pixels"))
            }
        }
    }

    /// Media types by file extension, for files that are neither JPEG nor PNG.
    package static let mediaTypes = ["jpg": "image/jpeg", "jpeg": "image/jpeg", "png": "image/png", "gif": "image/gif",
                             "webp": "image/webp", "svg": "image/svg+xml", "pdf": "application/pdf",
                             "txt": "text/plain", "html": "text/html", "htm": "text/html", "json": "application/json",
                             "xml": "application/xml", "csv": "text/csv", "mp3": "audio/mpeg", "mp4": "video/mp4"]

    public let kinds = [RecordKind(fields: ["path", "name", "stem", "extension", "bytes", "sha256", "mediaType", "width", "height"])]
    private let options: Options

    public init(options: Options) throws {
        self.options = options
    }

    public func read(_ input: InputFile, log: DiagnosticLog, emit: (Record) throws -> Void) throws {
        let bytes: [UInt8]
        do {
            let handle = try InputIdentity.shared.open(input.url, name: input.relativePath)
            defer { try? handle.close() }
            bytes = [UInt8](try handle.readToEnd() ?? Data())
        } catch let error as KilnError {
            throw error
        } catch {
            throw CannotRead.error(input.url, named: input.relativePath, error)
        }
        let digest = SHA256Digest()
        digest.update(bytes[...])
        let fileName = input.url.lastPathComponent
        let fileExtension = input.url.pathExtension.lowercased()
        let stem = fileExtension.isEmpty ? fileName : String(fileName.dropLast(input.url.pathExtension.count + 1))
        let claimed = FilesReader.mediaTypes[fileExtension]
        // The files reader describes files as they are on disk: a compressed file is an archive, not decompressed.
        var mediaType = claimed ?? CompressionFormat.detect(bytes)?.mediaType ?? "application/octet-stream"
        var size: (width: Int, height: Int)?

        var inspection: ImageInspection?
        if PNGImage.hasSignature(bytes) {
            mediaType = "image/png"
            inspection = PNGImage.inspect(bytes, maxPixels: options.maxPixels)
        } else {
            let jpeg = JPEGImage.inspect(bytes, maxPixels: options.maxPixels)
            let notJPEG: String?
            switch jpeg {
            case .notThisFormat(let message): notJPEG = message
            case .damaged(let message) where bytes.isEmpty: notJPEG = message
            default: notJPEG = nil
            }
            if let message = notJPEG {
                switch claimed {
                case _ where bytes.isEmpty && claimed?.hasPrefix("image/") == true: inspection = .damaged(message: "the file is empty")
                case "image/jpeg": inspection = .damaged(message: message)
                case "image/png": inspection = .damaged(message: "the file does not start with the PNG signature")
                default: inspection = nil
                }
            } else {
                mediaType = "image/jpeg"
                inspection = jpeg
            }
        }
        var unsupportedHeader: JPEGHeader?
        if case .unsupported(let message)? = inspection {
            // Not damage only when the header that states the feature can be read.
            if let header = JPEGHeader.read(bytes), header.width > 0, header.height > 0 {
                if header.width * header.height > options.maxPixels {
                    inspection = .tooLarge(width: header.width, height: header.height)
                } else {
                    unsupportedHeader = header
                }
            } else {
                inspection = .damaged(message: message + " (and its frame header cannot be read)")
            }
        }
        switch inspection {
        case .sound(let width, let height)?:
            size = (width, height)
        case .unsupported(let message)?:
            guard let header = unsupportedHeader else { break }
            size = (header.width, header.height)
            log.report(.imageUnsupported, "\(fileName) is a \(header.precision)-bit JPEG (\(header.process), \(header.components) "
                           + "component\(header.components == 1 ? "" : "s")), which libjpeg-turbo cannot decode here (\"\(message)\"): "
                           + "its size, \(header.width)×\(header.height), is taken from its header; its image data is not checked",
                       at: input.at(nil))
        case .damaged(let message)?, .notThisFormat(let message)?:
            log.report(.imageCorrupt, "\(fileName) is not a sound \(mediaType == "image/png" ? "PNG" : "JPEG") image: \(message)",
                       at: input.at(nil))
        case .tooLarge(let width, let height)?:
            log.report(.imageTooLarge, "\(fileName) declares \(width)×\(height) pixels, more than the \(options.maxPixels) "
                           + "the source's maxPixels allows; it was not decoded", at: input.at(nil))
        case nil:
            break
        }
        if let claimed, claimed.hasPrefix("image/"), mediaType != claimed, inspection != nil {
            log.report(.imageMediaType, "\(fileName) is named .\(fileExtension) but is a \(mediaType == "image/png" ? "PNG" : "JPEG") image",
                       at: input.at(nil))
        }
        var record = Record(kinds[0], line: 1)
        record["path"] = input.relativePath
        record["name"] = fileName
        record["stem"] = stem
        record["extension"] = fileExtension
        record["bytes"] = String(bytes.count)
        record["sha256"] = digest.hexDigest()
        record["mediaType"] = mediaType
        record["width"] = size.map { String($0.width) }
        record["height"] = size.map { String($0.height) }
        try emit(record)
    }
}
