import Foundation
import ImageCodec
import ScrollbackModel

/// How images reach the terminal: a protocol of pixels (kitty's graphics, sixel, iTerm2's
/// inline images), Unicode block art in colour, or not at all.
public enum ImageProtocol: String, CaseIterable, Sendable {
    case kitty, sixel, iterm, symbols, none

    var renderMode: Int32 {
        switch self {
        case .kitty: Int32(SB_RENDER_KITTY)
        case .sixel: Int32(SB_RENDER_SIXEL)
        case .iterm: Int32(SB_RENDER_ITERM)
        case .symbols, .none: Int32(SB_RENDER_SYMBOLS)
        }
    }

    /// Whether it draws pixels (else characters, or nothing).
    public var drawsPixels: Bool { self == .kitty || self == .sixel || self == .iterm }
}

/// An image file's pixels, decoded once, ready to be drawn at any size.
public final class DecodedImage: @unchecked Sendable {
    private var image: sb_image
    public var width: Int { Int(image.width) }
    public var height: Int { Int(image.height) }

    /// The most pixels a side, and in all, an image may declare to be decoded: 16,384 and
    /// 24 million (96 MB of pixels). A JPEG beyond is decoded at a fraction of its size.
    public static let largestSide = UInt32(FileFacts.largestSide)
    public static let mostPixels = UInt64(FileFacts.mostPixels)
    /// The largest file decoded: 64 MB.
    public static let largestFile = 64 << 20

    /// Why an image cannot be shown, as its line says it.
    public enum Problem: Error, Equatable, Sendable {
        case unknownFormat, damaged, tooLarge, noMemory

        public var text: String {
            switch self {
            case .unknownFormat: "cannot be shown: not a PNG, JPEG, WebP or GIF"
            case .damaged: "cannot be shown: damaged or cut short"
            case .tooLarge: "cannot be shown: too large"
            case .noMemory: "cannot be shown: not enough memory"
            }
        }
    }

    private init(_ image: sb_image) { self.image = image }

    deinit { sb_image_free(&image) }

    /// Decodes the first frame of `bytes`.
    public static func decode(_ bytes: [UInt8]) -> Result<DecodedImage, Problem> {
        guard bytes.count <= largestFile else { return .failure(.tooLarge) }
        var image = sb_image(pixels: nil, width: 0, height: 0)
        let code = bytes.withUnsafeBufferPointer { buffer in
            sb_image_decode(buffer.baseAddress, buffer.count, largestSide, mostPixels, &image)
        }
        switch Int(code) {
        case Int(SB_IMAGE_OK): return .success(DecodedImage(image))
        case Int(SB_IMAGE_UNKNOWN_FORMAT): return .failure(.unknownFormat)
        case Int(SB_IMAGE_TOO_LARGE): return .failure(.tooLarge)
        case Int(SB_IMAGE_NO_MEMORY): return .failure(.noMemory)
        default: return .failure(.damaged)
        }
    }

    /// The bytes that draw it at the cursor in `columns` × `rows` cells at most (its aspect
    /// kept), each cell `cell` pixels; and the cells it takes. nil when libchafa fails.
    public func rendered(
        as kind: ImageProtocol, colors: ImageColors = .truecolor, columns: Int, rows: Int, cell: (width: Int, height: Int)
    ) -> RenderedImage? {
        guard kind != .none, columns > 0, rows > 0, cell.width > 0, cell.height > 0 else { return nil }
        var length = 0
        var usedColumns: Int32 = 0
        var usedRows: Int32 = 0
        guard let text = sb_image_render(
            &image, kind.renderMode, colors.code, Int32(clamping: columns), Int32(clamping: rows), Int32(clamping: cell.width),
            Int32(clamping: cell.height), &length, &usedColumns, &usedRows)
        else { return nil }
        defer { sb_image_free_text(text) }
        let bytes = text.withMemoryRebound(to: UInt8.self, capacity: length) { Array(UnsafeBufferPointer(start: $0, count: length)) }
        return RenderedImage(bytes: bytes, columns: Int(usedColumns), rows: Int(usedRows))
    }
}

/// The colours block art may use.
public enum ImageColors: Sendable {
    /// `none`: no colour at all (`NO_COLOR`), block art in the terminal's own two.
    case none, sixteen, indexed256, truecolor

    var code: Int32 {
        switch self {
        case .none: Int32(SB_COLORS_NONE)
        case .sixteen: Int32(SB_COLORS_16)
        case .indexed256: Int32(SB_COLORS_256)
        case .truecolor: Int32(SB_COLORS_TRUE)
        }
    }
}

/// What draws an image: the bytes to write with the cursor at its top left, and the cells it
/// covers.
public struct RenderedImage: Sendable, Equatable {
    public let bytes: [UInt8]
    public let columns: Int
    public let rows: Int

    /// The same, each escape sequence wrapped for tmux's passthrough (`ESC P tmux; … ESC \`,
    /// every ESC inside doubled), for a tmux with `allow-passthrough` on.
    public func passedThroughTmux() -> RenderedImage {
        var wrapped: [UInt8] = []
        wrapped.reserveCapacity(bytes.count + bytes.count / 8)
        var index = 0
        while index < bytes.count {
            guard bytes[index] == 0x1B else {
                // Text between sequences (block art's characters) goes as it is.
                wrapped.append(bytes[index])
                index += 1
                continue
            }
            let end = Self.sequenceEnd(in: bytes, from: index)
            wrapped += Array("\u{1B}Ptmux;".utf8)
            for byte in bytes[index..<end] {
                if byte == 0x1B { wrapped.append(0x1B) }
                wrapped.append(byte)
            }
            wrapped += [0x1B, 0x5C]
            index = end
        }
        return RenderedImage(bytes: wrapped, columns: columns, rows: rows)
    }

    /// Where the escape sequence starting at `start` ends (one past it): a string sequence
    /// (DCS, APC, OSC) at its ST or BEL, a CSI at its final byte.
    static func sequenceEnd(in bytes: [UInt8], from start: Int) -> Int {
        guard start + 1 < bytes.count else { return bytes.count }
        let kind = bytes[start + 1]
        var index = start + 2
        switch kind {
        case 0x50, 0x5F, 0x5D:  // P (DCS), _ (APC), ] (OSC)
            while index < bytes.count {
                if bytes[index] == 0x07 && kind == 0x5D { return index + 1 }
                if bytes[index] == 0x1B && index + 1 < bytes.count && bytes[index + 1] == 0x5C { return index + 2 }
                index += 1
            }
            return bytes.count
        case 0x5B:  // [ (CSI)
            while index < bytes.count && !(0x40...0x7E).contains(bytes[index]) { index += 1 }
            return min(index + 1, bytes.count)
        default:
            return min(start + 2, bytes.count)
        }
    }
}
