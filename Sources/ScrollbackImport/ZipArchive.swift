import CZlib
import Foundation

/// Reads the entries of a ZIP archive (an export `.zip`) that an import needs, inflating each
/// to a file in chunks, so that memory stays small however large the entry is.
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
    private let data: Data
    let entries: [Entry]

    static func looksLikeZip(_ head: Data) -> Bool { head.starts(with: [0x50, 0x4B, 0x03, 0x04]) }

    init(path: String) throws {
        self.path = path
        data = try mappedContents(of: path)
        // The end-of-central-directory record is in the last 64 KiB + 22 bytes.
        let bytes = data
        func u16(_ at: Int) -> Int { Int(bytes[bytes.startIndex + at]) | Int(bytes[bytes.startIndex + at + 1]) << 8 }
        func u32(_ at: Int) -> Int { u16(at) | u16(at + 2) << 16 }
        var end = -1
        var at = bytes.count - 22
        while at >= max(0, bytes.count - 65_557) {
            if u32(at) == 0x0605_4B50 {
                end = at
                break
            }
            at -= 1
        }
        guard end >= 0 else { throw ImportError(path: path, problem: "not a ZIP archive, or a damaged one (no directory at the end)") }
        let count = u16(end + 10)
        var offset = u32(end + 16)
        if offset == 0xFFFF_FFFF || count == 0xFFFF {
            throw ImportError(path: path, problem: "ZIP64 archives (over 4 GiB) are not supported; unzip it and import the folder")
        }
        var entries: [Entry] = []
        for _ in 0..<count {
            guard offset + 46 <= bytes.count, u32(offset) == 0x0201_4B50 else {
                throw ImportError(path: path, problem: "a damaged ZIP directory", location: "byte \(offset)")
            }
            let nameLength = u16(offset + 28)
            let extraLength = u16(offset + 30)
            let commentLength = u16(offset + 32)
            guard offset + 46 + nameLength <= bytes.count else {
                throw ImportError(path: path, problem: "a damaged ZIP directory", location: "byte \(offset)")
            }
            let nameData = bytes.subdata(in: (bytes.startIndex + offset + 46)..<(bytes.startIndex + offset + 46 + nameLength))
            entries.append(
                Entry(
                    name: String(decoding: nameData, as: UTF8.self), method: UInt16(u16(offset + 10)),
                    crc: UInt32(u32(offset + 16)), compressedSize: u32(offset + 20), size: u32(offset + 24),
                    localHeaderOffset: u32(offset + 42)))
            offset += 46 + nameLength + extraLength + commentLength
        }
        self.entries = entries
    }

    /// Writes `entry`, inflated and checked against its CRC, to `destination`.
    func extract(_ entry: Entry, to destination: String) throws {
        let bytes = data
        func u16(_ at: Int) -> Int { Int(bytes[bytes.startIndex + at]) | Int(bytes[bytes.startIndex + at + 1]) << 8 }
        let header = entry.localHeaderOffset
        guard header + 30 <= bytes.count, u16(header) == 0x4B50 else {
            throw ImportError(path: path, problem: "a damaged ZIP entry \(entry.name)")
        }
        let start = header + 30 + u16(header + 26) + u16(header + 28)
        guard start + entry.compressedSize <= bytes.count else {
            throw ImportError(path: path, problem: "the ZIP entry \(entry.name) is cut short")
        }
        guard FileManager.default.createFile(atPath: destination, contents: nil),
              let output = FileHandle(forWritingAtPath: destination)
        else { throw ImportError(path: path, problem: "cannot write a temporary file for \(entry.name)") }
        defer { try? output.close() }
        var crc = crc32(0, nil, 0)
        let compressed = bytes.subdata(in: (bytes.startIndex + start)..<(bytes.startIndex + start + entry.compressedSize))
        switch entry.method {
        case 0:
            compressed.withUnsafeBytes { raw in
                crc = crc32(crc, raw.bindMemory(to: Bytef.self).baseAddress, uInt(raw.count))
            }
            output.write(compressed)
        case 8:
            var stream = z_stream()
            guard scrollback_inflate_init_raw(&stream) == Z_OK else {
                throw ImportError(path: path, problem: "cannot start inflating \(entry.name)")
            }
            defer { inflateEnd(&stream) }
            var chunk = [UInt8](repeating: 0, count: 1 << 20)
            var status: Int32 = Z_OK
            try compressed.withUnsafeBytes { raw in
                stream.next_in = UnsafeMutablePointer(mutating: raw.bindMemory(to: Bytef.self).baseAddress)
                stream.avail_in = uInt(raw.count)
                repeat {
                    let produced: Int = chunk.withUnsafeMutableBufferPointer { buffer in
                        stream.next_out = buffer.baseAddress
                        stream.avail_out = uInt(buffer.count)
                        status = inflate(&stream, Z_NO_FLUSH)
                        return buffer.count - Int(stream.avail_out)
                    }
                    guard status == Z_OK || status == Z_STREAM_END else {
                        throw ImportError(path: path, problem: "the ZIP entry \(entry.name) is damaged (inflate error \(status))")
                    }
                    chunk.withUnsafeBufferPointer { buffer in
                        crc = crc32(crc, buffer.baseAddress, uInt(produced))
                    }
                    output.write(Data(chunk[0..<produced]))
                } while status != Z_STREAM_END && (stream.avail_in > 0 || stream.avail_out == 0)
            }
            guard status == Z_STREAM_END else {
                throw ImportError(path: path, problem: "the ZIP entry \(entry.name) is cut short")
            }
        default:
            throw ImportError(path: path, problem: "the ZIP entry \(entry.name) uses compression method \(entry.method), which is not supported")
        }
        guard UInt32(crc) == entry.crc else {
            throw ImportError(path: path, problem: "the ZIP entry \(entry.name) is damaged (checksum mismatch)")
        }
    }
}
