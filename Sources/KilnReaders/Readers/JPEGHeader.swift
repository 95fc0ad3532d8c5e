import KilnC
import KilnCore
import KilnManifest

/// What a JPEG's frame header (its SOF marker segment) declares, read from the bytes without decoding anything: the
/// size, the sample precision, the number of components and the coding process. What the header states is known even
/// when the decoder cannot decode the image (a 12-bit or lossless JPEG).
package struct JPEGHeader: Equatable {
    package var width: Int
    package var height: Int
    /// Bits per sample: 8, 12 or 16 (lossless up to 16).
    package var precision: Int
    package var components: Int
    /// The SOF marker's second byte (0xC0…0xCF), which names the process.
    package var marker: UInt8

    /// The coding process as the JPEG standard names it, e.g. "extended sequential DCT, Huffman coding".
    package var process: String {
        let low = marker & 0x0F
        let kind: String
        switch low & 0x03 {
        case 0: kind = low == 0 ? "baseline DCT" : "extended sequential DCT"
        case 1: kind = "extended sequential DCT"
        case 2: kind = "progressive DCT"
        default: kind = "lossless"
        }
        let differential = low & 0x04 != 0 ? "differential " : ""
        return differential + kind + (low & 0x08 != 0 ? ", arithmetic coding" : ", Huffman coding")
    }

    /// The frame header of the JPEG in `bytes`, or `nil` when the bytes do not start with SOI or no SOF segment comes
    /// before the first scan (the file is no JPEG, or is cut short before its header).
    package static func read(_ bytes: [UInt8]) -> JPEGHeader? {
        guard bytes.count >= 4, bytes[0] == 0xFF, bytes[1] == 0xD8 else { return nil }
        var index = 2
        while index + 1 < bytes.count {
            guard bytes[index] == 0xFF else { return nil }
            var markerIndex = index + 1
            while markerIndex < bytes.count, bytes[markerIndex] == 0xFF { markerIndex += 1 }
            guard markerIndex < bytes.count else { return nil }
            let marker = bytes[markerIndex]
            index = markerIndex + 1
            // Markers without a segment: TEM, RSTn, SOI.
            if marker == 0x01 || (0xD0...0xD8).contains(marker) { continue }
            // End of image or start of scan before any frame header.
            if marker == 0xD9 || marker == 0xDA { return nil }
            guard index + 1 < bytes.count else { return nil }
            let length = Int(bytes[index]) << 8 | Int(bytes[index + 1])
            guard length >= 2, index + length <= bytes.count else { return nil }
            if (0xC0...0xCF).contains(marker), marker != 0xC4, marker != 0xC8, marker != 0xCC {
                guard length >= 8 else { return nil }
                let data = index + 2
                return JPEGHeader(width: Int(bytes[data + 3]) << 8 | Int(bytes[data + 4]),
                                  height: Int(bytes[data + 1]) << 8 | Int(bytes[data + 2]),
                                  precision: Int(bytes[data]), components: Int(bytes[data + 5]), marker: marker)
            }
            index += length
        }
        return nil
    }
}
