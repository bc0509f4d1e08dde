import CZlib
import Foundation

/// Reads the entries of a ZIP archive (an export `.zip`) that an import needs, inflating each
/// in chunks into an unnamed temporary file, so that memory stays small however large the
/// entry is and nothing is left on disk however the process ends.
///
/// The archive is read with `pread` (`FileReader`), never memory-mapped: one that another
/// program shortens while it is read is a clear error, not SIGBUS. Memory holds its central
/// directory and a chunk or two.
///
/// Every number in the archive is checked against the file before use, and an entry may not
/// inflate past its declared size, nor declare more than `UnzipLimit` allows (a ZIP bomb).
struct ZipArchive {
    struct Entry {
        let name: String
        let method: UInt16
        let crc: UInt32
        let compressedSize: Int
        let size: Int
        let localHeaderOffset: Int
    }

    let path: String
    private let file: FileReader
    let entries: [Entry]

    static func looksLikeZip(_ head: Data) -> Bool { head.starts(with: [0x50, 0x4B, 0x03, 0x04]) }

    /// How much is read and inflated at a time.
    static let chunkSize = 1 << 20

    /// The little-endian numbers at `at` in `bytes` (which the caller has range-checked).
    private static func u16(_ bytes: [UInt8], _ at: Int) -> Int { Int(bytes[at]) | Int(bytes[at + 1]) << 8 }
    private static func u32(_ bytes: [UInt8], _ at: Int) -> Int { u16(bytes, at) | u16(bytes, at + 2) << 16 }

    init(path: String) throws {
        self.path = path
        file = try FileReader(path: path)
        let size = file.size
        // The end-of-central-directory record is in the last 64 KiB + 22 bytes.
        let tailStart = max(0, size - 65_557)
        let tail = try file.bytes(at: tailStart, count: size - tailStart)
        var end = -1
        var at = tail.count - 22
        while at >= 0 {
            if Self.u32(tail, at) == 0x0605_4B50 {
                end = at
                break
            }
            at -= 1
        }
        guard end >= 0 else { throw ImportError(path: path, problem: "not a ZIP archive, or a damaged one (no directory at the end)") }
        let count = Self.u16(tail, end + 10)
        let directorySize = Self.u32(tail, end + 12)
        let directoryOffset = Self.u32(tail, end + 16)
        if directoryOffset == 0xFFFF_FFFF || count == 0xFFFF {
            throw ImportError(path: path, problem: "ZIP64 archives (over 4 GiB) are not supported; unzip it and import the folder")
        }
        // The directory lies before the record that describes it.
        guard directoryOffset + directorySize <= tailStart + end else {
            throw ImportError(path: path, problem: "a damaged ZIP directory", location: "byte \(directoryOffset)")
        }
        let directory = try file.bytes(at: directoryOffset, count: directorySize)
        var entries: [Entry] = []
        var offset = 0
        for _ in 0..<count {
            guard offset + 46 <= directory.count, Self.u32(directory, offset) == 0x0201_4B50 else {
                throw ImportError(path: path, problem: "a damaged ZIP directory", location: "byte \(directoryOffset + offset)")
            }
            let nameLength = Self.u16(directory, offset + 28)
            let extraLength = Self.u16(directory, offset + 30)
            let commentLength = Self.u16(directory, offset + 32)
            guard offset + 46 + nameLength <= directory.count else {
                throw ImportError(path: path, problem: "a damaged ZIP directory", location: "byte \(directoryOffset + offset)")
            }
            entries.append(
                Entry(
                    name: String(decoding: directory[(offset + 46)..<(offset + 46 + nameLength)], as: UTF8.self),
                    method: UInt16(truncatingIfNeeded: Self.u16(directory, offset + 10)), crc: UInt32(truncatingIfNeeded: Self.u32(directory, offset + 16)),
                    compressedSize: Self.u32(directory, offset + 20), size: Self.u32(directory, offset + 24),
                    localHeaderOffset: Self.u32(directory, offset + 42)))
            offset += 46 + nameLength + extraLength + commentLength
        }
        self.entries = entries
    }

    /// Inflates `entry`, checked against its declared size and CRC, into `output`.
    ///
    /// - Parameters:
    ///   - limit: the most an entry may inflate to; the declared size is checked against it
    ///     before anything is written.
    ///   - shouldStop: asked between chunks; true ends the work with `ImportInterrupted`.
    /// - Throws: `ImportError` for a damaged entry, or an archive that another program
    ///   shortened while it was read.
    func extract(_ entry: Entry, to output: ScratchFile, limit: UnzipLimit, shouldStop: () -> Bool) throws {
        try stream(entry, limit: limit, shouldStop: shouldStop) { piece in
            try output.write(piece, name: entry.name, archive: path)
        }
    }

    /// Inflates `entry` a piece at a time into `sink` (each piece valid during its call),
    /// checked as `extract` checks it: a damaged entry throws, after some pieces went out
    /// (the checksum is known only at the end), so a caller keeps nothing of it then.
    func stream(
        _ entry: Entry, limit: UnzipLimit, shouldStop: () -> Bool = { false }, into sink: (UnsafeRawBufferPointer) throws -> Void
    ) throws {
        do {
            try copyOut(entry, to: sink, limit: limit, shouldStop: shouldStop)
        } catch let error as ImportError {
            // Damage that another program's writing made is said to be that.
            throw file.change ?? error
        }
        try file.checkUnchanged()
    }

    private func copyOut(
        _ entry: Entry, to output: (UnsafeRawBufferPointer) throws -> Void, limit: UnzipLimit, shouldStop: () -> Bool
    ) throws {
        if let refusal = limit.refusal(size: entry.size, compressedSize: entry.compressedSize) {
            throw ImportError(path: path, problem: "the ZIP entry \(entry.name) \(refusal)")
        }
        let header = entry.localHeaderOffset
        guard header + 30 <= file.size else {
            throw ImportError(path: path, problem: "a damaged ZIP entry \(entry.name)")
        }
        let local = try file.bytes(at: header, count: 30)
        guard Self.u16(local, 0) == 0x4B50 else {
            throw ImportError(path: path, problem: "a damaged ZIP entry \(entry.name)")
        }
        let start = header + 30 + Self.u16(local, 26) + Self.u16(local, 28)
        guard start + entry.compressedSize <= file.size else {
            throw ImportError(path: path, problem: "the ZIP entry \(entry.name) is cut short")
        }
        var crc = crc32(0, nil, 0)
        var written = 0
        /// Checks, sums and writes one piece of output.
        func emit(_ piece: UnsafeRawBufferPointer) throws {
            guard piece.count <= entry.size - written else {
                throw ImportError(
                    path: path, problem: "the ZIP entry \(entry.name) inflates past its declared size of \(entry.size) bytes (a damaged or hostile archive)")
            }
            crc = crc32(crc, piece.bindMemory(to: Bytef.self).baseAddress, uInt(piece.count))
            try output(piece)
            written += piece.count
            if shouldStop() { throw ImportInterrupted() }
        }
        let chunkSize = Self.chunkSize
        // The compressed bytes, a chunk at a time.
        let input = UnsafeMutableRawBufferPointer.allocate(byteCount: chunkSize, alignment: 16)
        defer { input.deallocate() }
        var consumed = 0
        /// Reads the next piece of the compressed data into `input`.
        func readPiece() throws -> UnsafeMutableRawBufferPointer {
            let piece = UnsafeMutableRawBufferPointer(rebasing: input[0..<min(entry.compressedSize - consumed, chunkSize)])
            try file.read(exactly: piece, at: start + consumed)
            consumed += piece.count
            return piece
        }
        switch entry.method {
        case 0:
            while consumed < entry.compressedSize {
                try emit(UnsafeRawBufferPointer(try readPiece()))
            }
        case 8:
            var stream = z_stream()
            guard scrollback_inflate_init_raw(&stream) == Z_OK else {
                throw ImportError(path: path, problem: "cannot start inflating \(entry.name)")
            }
            defer { inflateEnd(&stream) }
            let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: chunkSize, alignment: 16)
            defer { chunk.deallocate() }
            var status: Int32 = Z_OK
            repeat {
                if stream.avail_in == 0 && consumed < entry.compressedSize {
                    // Fed in pieces: avail_in is 32 bits.
                    let piece = try readPiece()
                    stream.next_in = piece.baseAddress?.assumingMemoryBound(to: Bytef.self)
                    stream.avail_in = uInt(piece.count)
                }
                stream.next_out = chunk.baseAddress?.assumingMemoryBound(to: Bytef.self)
                stream.avail_out = uInt(chunkSize)
                status = inflate(&stream, Z_NO_FLUSH)
                // Z_BUF_ERROR: no input left before the end of the stream (reported below).
                guard status == Z_OK || status == Z_STREAM_END || status == Z_BUF_ERROR else {
                    throw ImportError(path: path, problem: "the ZIP entry \(entry.name) is damaged (inflate error \(status))")
                }
                let produced = chunkSize - Int(stream.avail_out)
                try emit(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(chunk)[0..<produced]))
            } while status == Z_OK
            guard status == Z_STREAM_END else {
                throw ImportError(path: path, problem: "the ZIP entry \(entry.name) is cut short")
            }
        default:
            throw ImportError(
                path: path, problem: "the ZIP entry \(entry.name) uses compression method \(entry.method), which is not supported")
        }
        guard written == entry.size else {
            throw ImportError(path: path, problem: "the ZIP entry \(entry.name) is damaged (\(written) bytes, not the \(entry.size) it declares)")
        }
        guard UInt32(truncatingIfNeeded: crc) == entry.crc else {
            throw ImportError(path: path, problem: "the ZIP entry \(entry.name) is damaged (checksum mismatch)")
        }
    }
}

/// How far a ZIP entry may inflate: by default no more than 200 times its compressed size
/// and no more than 4 GiB (a real export is text, a few to a few tens of times smaller
/// deflated); `--unzip-limit SIZE` allows any entry up to SIZE instead.
public struct UnzipLimit: Sendable, Equatable {
    public static let ratio = 200
    public static let defaultCeiling = 4 << 30

    /// The largest size allowed whatever the ratio; nil for the default rule.
    public var bytes: Int?

    public init(bytes: Int? = nil) {
        self.bytes = bytes
    }

    /// Why an entry of this declared size is refused, or nil when it may be inflated.
    func refusal(size: Int, compressedSize: Int) -> String? {
        if let bytes {
            return size > bytes ? "would inflate to \(size) bytes, over the limit of \(bytes) (--unzip-limit)" : nil
        }
        if size > Self.defaultCeiling {
            return "would inflate to \(size) bytes, over 4 GiB; unzip it yourself, or allow it with --unzip-limit SIZE"
        }
        // The ratio is not applied to small entries (a tiny JSON file of repeated text).
        if size > 1 << 20 && size / Self.ratio > compressedSize {
            return
                "would inflate \(size / max(compressedSize, 1)) times (to \(size) bytes), over the \(Self.ratio)× allowed (a ZIP bomb?); allow it with --unzip-limit SIZE"
        }
        return nil
    }

    /// `123`, `500K`, `200M`, `8G` or `1T` (powers of 1024) as bytes; nil when not a size.
    public static func parse(_ text: String) -> Int? {
        let units: [Character: Int] = ["K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40]
        var digits = Substring(text)
        var unit = 1
        if let last = text.uppercased().last, let multiplier = units[last] {
            unit = multiplier
            digits = digits.dropLast()
        }
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }), let value = Int(digits), value > 0 else { return nil }
        let (bytes, overflow) = value.multipliedReportingOverflow(by: unit)
        return overflow ? nil : bytes
    }
}

/// A temporary file that has no name: made in a private folder that is removed at once, so
/// that nothing is left behind however the process ends (even `kill -9`). Readers reach it
/// through `/proc/self/fd`; it is freed when closed.
final class ScratchFile {
    let descriptor: Int32

    init() throws {
        var template = Array((NSTemporaryDirectory() as NSString).appendingPathComponent("scrollback-import-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else {
            throw ImportError(path: NSTemporaryDirectory(), problem: "cannot make a temporary folder (\(String(cString: strerror(errno))))")
        }
        let folder = String(cString: made)
        let file = folder + "/entry"
        descriptor = open(file, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        let failure = errno
        unlink(file)
        rmdir(folder)
        guard descriptor >= 0 else {
            throw ImportError(path: folder, problem: "cannot make a temporary file (\(String(cString: strerror(failure))))")
        }
    }

    deinit {
        close(descriptor)
    }

    /// The path that opens this file while it is open.
    var path: String { "/proc/self/fd/\(descriptor)" }

    func write(_ bytes: UnsafeRawBufferPointer, name: String, archive: String) throws {
        var offset = 0
        while offset < bytes.count {
            guard let base = bytes.baseAddress else { return }
            let count = Glibc.write(descriptor, base + offset, bytes.count - offset)
            if count < 0 {
                if errno == EINTR { continue }
                throw ImportError(
                    path: archive, problem: "cannot write a temporary copy of \(name) (\(String(cString: strerror(errno))))")
            }
            offset += count
        }
    }
}
