import Foundation
import TestSupport
import Testing

@testable import ScrollbackTerminal

/// Images decoded by the system's libraries and drawn by libchafa, checked against files
/// ImageMagick made; hostile files fail with a reason, never a crash or a large allocation.
@Suite("Images: decoding and drawing")
struct TerminalImageTests {
    static let shapes: [(format: String, width: Int, height: Int)] = [("png", 640, 480), ("jpg", 301, 199), ("gif", 17, 33), ("webp", 1000, 20)]

    @Test("PNG, JPEG, GIF and WebP made by ImageMagick decode to their size")
    func decodes() throws {
        let folder = try TemporaryDirectory()
        for shape in Self.shapes {
            let bytes = try TestFiles.image(shape.format, width: shape.width, height: shape.height, in: folder)
            let image = try DecodedImage.decode(bytes).get()
            #expect(image.width == shape.width && image.height == shape.height, "\(shape.format)")
        }
    }

    /// The pixel size a kitty or sixel image declares, from its bytes.
    static func declaredPixels(_ rendered: RenderedImage, as kind: ImageProtocol) -> (width: Int, height: Int)? {
        let text = String(decoding: rendered.bytes, as: UTF8.self)
        func number(after key: String, in text: Substring) -> Int? {
            guard let range = text.range(of: key) else { return nil }
            return Int(text[range.upperBound...].prefix { $0.isNumber })
        }
        switch kind {
        case .kitty:
            // The first chunk's control data: s= width, v= height of the pixels sent.
            guard let start = text.range(of: "\u{1B}_G") else { return nil }
            let control = text[start.upperBound...].prefix { $0 != ";" }
            guard let width = number(after: "s=", in: control), let height = number(after: "v=", in: control) else { return nil }
            return (width, height)
        case .sixel:
            // The raster attributes after q: "Pan;Pad;Ph;Pv.
            guard let start = text.range(of: "q\"") else { return nil }
            let fields = text[start.upperBound...].prefix { $0.isNumber || $0 == ";" }.split(separator: ";").compactMap { Int($0) }
            return fields.count >= 4 ? (fields[2], fields[3]) : nil
        default:
            return nil
        }
    }

    @Test("drawn as kitty, sixel, iTerm2 and symbols within the cells given, its aspect kept; kitty and sixel declare the pixels of those cells")
    func draws() throws {
        let folder = try TemporaryDirectory()
        let bytes = try TestFiles.image("png", width: 640, height: 480, in: folder)
        let image = try DecodedImage.decode(bytes).get()
        let cell = (width: 10, height: 20)
        for kind in [ImageProtocol.kitty, .sixel, .iterm, .symbols] {
            let rendered = try #require(image.rendered(as: kind, columns: 40, rows: 15, cell: cell), "\(kind)")
            #expect(rendered.columns <= 40 && rendered.rows <= 15 && rendered.columns > 0 && rendered.rows > 0, "\(kind)")
            // 640×480 is 4:3; 40 columns of 10 px by 15 rows of 20 px is 400×300: it fits both ways.
            #expect(rendered.columns == 40 && rendered.rows == 15, "\(kind): \(rendered.columns)×\(rendered.rows)")
            let text = String(decoding: rendered.bytes, as: UTF8.self)
            switch kind {
            case .kitty: #expect(text.hasPrefix("\u{1B}_G"))
            case .sixel: #expect(text.contains("\u{1B}P") && text.hasSuffix("\u{1B}\\"))
            case .iterm: #expect(text.contains("\u{1B}]1337;File="))
            default: #expect(text.contains("\u{1B}[") && text.contains("\n"))
            }
            if kind == .kitty || kind == .sixel {
                let pixels = try #require(Self.declaredPixels(rendered, as: kind), "\(kind): \(text.prefix(80))")
                #expect(pixels.width == 400 && pixels.height == 300, "\(kind): \(pixels)")
            }
        }
        #expect(image.rendered(as: .none, columns: 40, rows: 15, cell: cell) == nil)
        // Without colour (NO_COLOR): block art with no colour sequence at all.
        let plain = try #require(image.rendered(as: .symbols, colors: .none, columns: 40, rows: 15, cell: cell))
        let plainText = String(decoding: plain.bytes, as: UTF8.self)
        #expect(!plainText.contains("38;5;") && !plainText.contains("38;2;") && !plainText.contains("48;5;") && !plainText.contains("48;2;"))
        #expect(image.rendered(as: .kitty, columns: 0, rows: 15, cell: cell) == nil)
        // Through tmux: every sequence wrapped, ESCs doubled, nothing else changed.
        let kitty = try #require(image.rendered(as: .kitty, columns: 8, rows: 3, cell: cell))
        let wrapped = kitty.passedThroughTmux()
        let text = String(decoding: wrapped.bytes, as: UTF8.self)
        #expect(text.hasPrefix("\u{1B}Ptmux;\u{1B}\u{1B}_G") && text.hasSuffix("\u{1B}\\"))
        #expect(text.replacingOccurrences(of: "\u{1B}Ptmux;", with: "").replacingOccurrences(of: "\u{1B}\u{1B}", with: "\u{1B}").count < text.count)
    }

    /// A PNG of `width`×`height` declared in a valid IHDR, then `rest`.
    static func png(width: UInt32, height: UInt32, rest: [UInt8] = []) -> [UInt8] {
        func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
            let body = Array(type.utf8) + data
            let crc = Self.crc32(body)
            func big(_ value: UInt32) -> [UInt8] { [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)] }
            return big(UInt32(data.count)) + body + big(crc)
        }
        func big(_ value: UInt32) -> [UInt8] { [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)] }
        return [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + chunk("IHDR", big(width) + big(height) + [8, 6, 0, 0, 0]) + rest
    }

    /// PNG's CRC-32 (the zlib polynomial), for the chunks made here.
    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return crc ^ 0xFFFF_FFFF
    }

    @Test("hostile images: cut short, a header of 100,000 × 100,000, a decompression bomb, wrong magic, an empty file: each a reason, quickly")
    func hostile() throws {
        let folder = try TemporaryDirectory()
        for shape in Self.shapes {
            let bytes = try TestFiles.image(shape.format, width: shape.width, height: shape.height, in: folder)
            for cut in [bytes.count / 2, 40, 13] {
                let result = DecodedImage.decode(Array(bytes.prefix(cut)))
                #expect(result.failureReason != nil, "\(shape.format) cut at \(cut)")
            }
        }
        #expect(DecodedImage.decode(Self.png(width: 100_000, height: 100_000)).failureReason == .tooLarge)
        #expect(DecodedImage.decode(Self.png(width: 6_000, height: 6_000)).failureReason == .tooLarge)
        #expect(DecodedImage.decode(Self.png(width: 0, height: 10)).failureReason != nil)
        #expect(DecodedImage.decode(Array("not an image at all, just words".utf8)).failureReason == .unknownFormat)
        #expect(DecodedImage.decode([]).failureReason == .unknownFormat)
        // A bomb: 8,000 × 8,000 grey pixels of zero deflate to a small file (64 MB inflated);
        // it is refused by its header, before anything is inflated.
        let bomb = folder.file("bomb.png")
        let script = """
            import struct, sys, zlib
            def chunk(kind, data):
                return struct.pack('>I', len(data)) + kind + data + struct.pack('>I', zlib.crc32(kind + data) & 0xffffffff)
            row = b'\\x00' * 8001
            packer = zlib.compressobj(9)
            body = b''.join(packer.compress(row) for _ in range(8000)) + packer.flush()
            png = b'\\x89PNG\\r\\n\\x1a\\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', 8000, 8000, 8, 0, 0, 0, 0)) + chunk(b'IDAT', body) + chunk(b'IEND', b'')
            open(sys.argv[1], 'wb').write(png)
            """
        let made = try ChildProcess.run("/usr/bin/env", ["python3", "-c", script, bomb])
        #expect(made.ending.status == 0, "\(made.errorText)")
        let bombBytes = try #require(FileManager.default.contents(atPath: bomb))
        #expect(bombBytes.count < 200_000)
        #expect(DecodedImage.decode(Array(bombBytes)).failureReason == .tooLarge)
        // A large JPEG is decoded at a fraction of its size instead.
        let big = folder.file("big.jpg")
        #expect(try ChildProcess.run(try #require(TestFiles.convert), ["-size", "9000x5000", "gradient:red-blue", "-quality", "30", big]).ending.status == 0)
        let decoded = try DecodedImage.decode(Array(try #require(FileManager.default.contents(atPath: big)))).get()
        #expect(decoded.width == 4500 && decoded.height == 2500, "\(decoded.width)×\(decoded.height)")
    }
}

extension Result {
    var failureReason: Failure? {
        if case .failure(let failure) = self { return failure }
        return nil
    }
}

extension TerminalImageTests {
    @Test("inside tmux, pixels only where the pane's allow-passthrough is on (or all), as tmux itself says; off, unset, or no tmux to ask: block art, and no query sent")
    func tmuxPassthrough() throws {
        let tmux = try TmuxSession(width: 40, height: 10, arguments: ["--version"])
        let environment = ["TMUX": TmuxSession.socketFolder + "/" + tmux.socket + ",0,0", "PATH": "/usr/bin:/bin"]
        #expect(!ImageSupport.tmuxPassesThrough(environment: environment))
        _ = try tmux.tmux(["set-option", "-g", "allow-passthrough", "on"])
        #expect(ImageSupport.tmuxPassesThrough(environment: environment))
        _ = try tmux.tmux(["set-option", "-g", "allow-passthrough", "off"])
        #expect(!ImageSupport.tmuxPassesThrough(environment: environment))
        // A pane of its own may say otherwise.
        let pane = try tmux.tmux(["display-message", "-p", "-t", "main", "#{pane_id}"]).trimmingCharacters(in: .whitespacesAndNewlines)
        _ = try tmux.tmux(["set-option", "-p", "-t", pane, "allow-passthrough", "on"])
        #expect(ImageSupport.tmuxPassesThrough(environment: environment.merging(["TMUX_PANE": pane]) { $1 }))
        // No server there: no pixels.
        #expect(!ImageSupport.tmuxPassesThrough(environment: ["TMUX": "/nonexistent/socket,0,0", "PATH": "/usr/bin:/bin"]))
        // A tmux that never answers is stopped after a moment: no pixels, and no hang.
        let fake = try TemporaryDirectory()
        try "#!/bin/sh\nexec sleep 300\n".write(toFile: fake.file("tmux"), atomically: false, encoding: .utf8)
        chmod(fake.file("tmux"), 0o755)
        #expect(!ImageSupport.tmuxPassesThrough(environment: ["TMUX": "/x,0,0", "PATH": fake.path + ":/usr/bin:/bin"]))
        // Gone (given a moment to be reaped).
        var left = ""
        for _ in 0..<30 {
            left = try ChildProcess.run("/bin/sh", ["-c", "for p in $(pgrep -f '^sleep 300$'); do ps -o pid,ppid,stat,cmd -p $p | tail -1; done"]).outputText
            if left.isEmpty { break }
            usleep(100_000)
        }
        #expect(left.isEmpty, "the hung tmux was left running: \(left)")
        // Detection inside such a tmux (passthrough off) gives block art without asking.
        let support = ImageSupport.detect(environment: environment.merging(["TERM": "xterm-256color"]) { $1 }, input: -1, output: -1)
        #expect(support.kind == .symbols && support.insideTmux)
    }
}
