/// What a file's first bytes say it is: its type, and an image's size in pixels as its header
/// declares it (not a promise that it decodes: a damaged image may declare anything, and the
/// numbers are only shown, never used to allocate).
public struct FileFacts: Sendable, Hashable {
    public var mime: String?
    public var width: Int?
    public var height: Int?

    public init(mime: String? = nil, width: Int? = nil, height: Int? = nil) {
        self.mime = mime
        self.width = width
        self.height = height
    }

    /// `attachment` as its bytes say it is: a type they show wins over the declared one; an
    /// image's size is theirs (both numbers, or none where the header holds no valid one),
    /// and a file they show is no image (a recording, a PDF) has none. Bytes of an unknown
    /// kind leave what was declared.
    public func applied(to attachment: ImportedAttachment) -> ImportedAttachment {
        var kept = attachment
        guard let mime else {
            // Bytes of no image kind this knows, under an image's name: no size to keep rows for.
            if kept.mime?.hasPrefix("image/") == true {
                kept.width = nil
                kept.height = nil
            }
            return kept
        }
        kept.mime = mime
        if mime.hasPrefix("image/") {
            kept.width = width
            kept.height = height
        } else {
            kept.width = nil
            kept.height = nil
        }
        return kept
    }

    /// The largest image decoded for the terminal: 16,384 pixels a side, 24 million in all
    /// (96 MB of pixels); one beyond is refused from its header (a JPEG is decoded at a
    /// fraction of its size instead).
    public static let largestSide = 16_384
    public static let mostPixels = 24_000_000

    /// Whether an image of this size is beyond what is decoded (a JPEG aside).
    public static func isTooLarge(width: Int, height: Int) -> Bool {
        width > largestSide || height > largestSide || width.multipliedReportingOverflow(by: height).partialValue > mostPixels
            || width.multipliedReportingOverflow(by: height).overflow
    }

    /// How many first bytes `sniff` looks at, at most (a JPEG's size comes after its
    /// metadata, which is rarely longer).
    public static let prefixLength = 64 << 10

    /// The facts of the file that starts with `bytes`; nothing for a type it does not know.
    public static func sniff(_ bytes: [UInt8]) -> FileFacts {
        func starts(_ magic: [UInt8], at offset: Int = 0) -> Bool {
            bytes.count >= offset + magic.count && Array(bytes[offset..<offset + magic.count]) == magic
        }
        func big16(_ at: Int) -> Int? { at + 2 <= bytes.count ? Int(bytes[at]) << 8 | Int(bytes[at + 1]) : nil }
        func little16(_ at: Int) -> Int? { at + 2 <= bytes.count ? Int(bytes[at + 1]) << 8 | Int(bytes[at]) : nil }
        func big32(_ at: Int) -> Int? {
            guard let high = big16(at), let low = big16(at + 2) else { return nil }
            return high << 16 | low
        }
        func little24(_ at: Int) -> Int? {
            at + 3 <= bytes.count ? Int(bytes[at + 2]) << 16 | Int(bytes[at + 1]) << 8 | Int(bytes[at]) : nil
        }
        func image(_ mime: String, _ width: Int?, _ height: Int?) -> FileFacts {
            // A size of 0 is not a size; one beyond 32 bits is not one a header holds.
            let valid = { (value: Int?) in value.flatMap { $0 > 0 && $0 <= Int(Int32.max) ? $0 : nil } }
            return FileFacts(mime: mime, width: valid(width), height: valid(height))
        }
        if starts([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) {
            return starts(Array("IHDR".utf8), at: 12) ? image("image/png", big32(16), big32(20)) : FileFacts(mime: "image/png")
        }
        if starts(Array("GIF87a".utf8)) || starts(Array("GIF89a".utf8)) { return image("image/gif", little16(6), little16(8)) }
        if starts([0xFF, 0xD8, 0xFF]) { return jpeg(bytes, image) }
        if starts(Array("RIFF".utf8)) && starts(Array("WEBP".utf8), at: 8) {
            if starts(Array("VP8 ".utf8), at: 12), starts([0x9D, 0x01, 0x2A], at: 23) {
                return image("image/webp", little16(26).map { $0 & 0x3FFF }, little16(28).map { $0 & 0x3FFF })
            }
            if starts(Array("VP8L".utf8), at: 12), bytes.count >= 25, bytes[20] == 0x2F {
                let bits = Int(bytes[21]) | Int(bytes[22]) << 8 | Int(bytes[23]) << 16 | Int(bytes[24]) << 24
                return image("image/webp", (bits & 0x3FFF) + 1, (bits >> 14 & 0x3FFF) + 1)
            }
            if starts(Array("VP8X".utf8), at: 12) {
                return image("image/webp", little24(24).map { $0 + 1 }, little24(27).map { $0 + 1 })
            }
            return FileFacts(mime: "image/webp")
        }
        if starts(Array("RIFF".utf8)) && starts(Array("WAVE".utf8), at: 8) { return FileFacts(mime: "audio/wav") }
        if starts(Array("%PDF-".utf8)) { return FileFacts(mime: "application/pdf") }
        if starts(Array("OggS".utf8)) { return FileFacts(mime: "audio/ogg") }
        if starts(Array("ID3".utf8)) { return FileFacts(mime: "audio/mpeg") }
        if starts([0x1A, 0x45, 0xDF, 0xA3]) { return FileFacts(mime: "video/webm") }
        if starts(Array("ftyp".utf8), at: 4) {
            let brand = bytes.count >= 12 ? String(decoding: bytes[8..<12], as: UTF8.self) : ""
            return FileFacts(mime: brand.hasPrefix("M4A") ? "audio/mp4" : "video/mp4")
        }
        if starts([0x50, 0x4B, 0x03, 0x04]) { return FileFacts(mime: "application/zip") }
        return FileFacts()
    }

    /// A JPEG's size from its first frame header, its segments walked by their lengths.
    private static func jpeg(_ bytes: [UInt8], _ image: (String, Int?, Int?) -> FileFacts) -> FileFacts {
        var at = 2
        // Every step moves on by at least two bytes: the walk ends.
        while at + 9 < bytes.count {
            guard bytes[at] == 0xFF else { break }
            let marker = bytes[at + 1]
            if marker == 0xFF {
                at += 1
                continue
            }
            let length = Int(bytes[at + 2]) << 8 | Int(bytes[at + 3])
            let isFrame = (0xC0...0xCF).contains(marker) && marker != 0xC4 && marker != 0xC8 && marker != 0xCC
            if isFrame {
                let height = Int(bytes[at + 5]) << 8 | Int(bytes[at + 6])
                let width = Int(bytes[at + 7]) << 8 | Int(bytes[at + 8])
                return image("image/jpeg", width, height)
            }
            guard length >= 2 else { break }
            at += 2 + length
        }
        return FileFacts(mime: "image/jpeg")
    }
}
