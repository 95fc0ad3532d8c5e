internal import CJPEG

/// JPEG images through libjpeg-turbo's libjpeg API.
package enum JPEGImage {
    /// Decodes the whole JPEG in `bytes` (a file cut short or with corrupt data is `damaged`, with libjpeg's message)
    /// unless its header declares more than `maxPixels` pixels.
    package static func inspect(_ bytes: [UInt8], maxPixels: Int) -> ImageInspection {
        var width: UInt32 = 0, height: UInt32 = 0
        var message = [CChar](repeating: 0, count: 256)
        let code = bytes.withUnsafeBufferPointer { data in
            message.withUnsafeMutableBufferPointer { text in
                kiln_jpeg_inspect(data.baseAddress, UInt(data.count), UInt64(maxPixels), &width, &height,
                                  text.baseAddress, text.count)
            }
        }
        return ImageInspection.from(code: code, width: width, height: height, message: message)
    }
}
