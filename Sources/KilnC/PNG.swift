internal import CPNG

/// PNG images through libpng's simplified API.
package enum PNGImage {
    /// True when `bytes` start with the PNG signature.
    package static func hasSignature(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBufferPointer { kiln_png_is_png($0.baseAddress, $0.count) != 0 }
    }

    /// Decodes the whole PNG in `bytes` (a file cut short or with a bad checksum is `damaged`, with libpng's message)
    /// unless its header declares more than `maxPixels` pixels.
    package static func inspect(_ bytes: [UInt8], maxPixels: Int) -> ImageInspection {
        var width: UInt32 = 0, height: UInt32 = 0
        var message = [CChar](repeating: 0, count: 256)
        let code = bytes.withUnsafeBufferPointer { data in
            message.withUnsafeMutableBufferPointer { text in
                kiln_png_inspect(data.baseAddress, data.count, UInt64(maxPixels), &width, &height, text.baseAddress, text.count)
            }
        }
        return ImageInspection.from(code: code, width: width, height: height, message: message)
    }
}
