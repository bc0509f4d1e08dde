import Foundation
import Testing

@testable import ScrollbackImport
import ScrollbackModel
@testable import ScrollbackStorage
import TestSupport

/// ZIP archives that inflate far past what they declare, or far past their size: refused or
/// stopped, nothing left on disk, Ctrl-C honoured while inflating.
@Suite("Import: ZIP bombs")
struct ZipBombTests {
    /// Raw deflate of `content` and its CRC-32, by `gzip -n`: the stream between its 10-byte
    /// header and its 8-byte trailer (which starts with the CRC).
    static func deflated(_ content: Data, in folder: TemporaryDirectory) throws -> (packed: Data, crc: UInt32) {
        let input = folder.file("content")
        try content.write(to: URL(fileURLWithPath: input))
        let gzipped = try ChildProcess.run("/usr/bin/env", ["gzip", "-n", "-9", "-f", input])
        guard gzipped.status == 0 else { throw ChildProcessError(description: "gzip: \(gzipped.errorText)") }
        let gzip = try Data(contentsOf: URL(fileURLWithPath: input + ".gz"))
        try FileManager.default.removeItem(atPath: input + ".gz")
        let trailer = Array(gzip.suffix(8))
        let crc = UInt32(trailer[0]) | UInt32(trailer[1]) << 8 | UInt32(trailer[2]) << 16 | UInt32(trailer[3]) << 24
        return (Data(gzip.dropFirst(10).dropLast(8)), crc)
    }

    /// A one-entry archive holding `conversations.json`, declaring `declaredSize` (the real
    /// size when nil) and the CRC of the real content; deflated (method 8), or stored as it is
    /// (method 0).
    static func archive(content: Data, declaredSize: Int? = nil, method: Int = 8, in folder: TemporaryDirectory) throws -> String {
        var (packed, crc) = try deflated(content, in: folder)
        if method == 0 { packed = content }
        func u16(_ value: Int) -> [UInt8] { [UInt8(value & 0xFF), UInt8((value >> 8) & 0xFF)] }
        func u32(_ value: Int) -> [UInt8] { u16(value & 0xFFFF) + u16((value >> 16) & 0xFFFF) }
        let name = Array("conversations.json".utf8)
        let size = declaredSize ?? content.count
        let sums = u32(Int(crc)) + u32(packed.count) + u32(size)
        let local = u32(0x0403_4B50) + u16(20) + u16(0) + u16(method) + u16(0) + u16(0) + sums + u16(name.count) + u16(0) + name
        let central = u32(0x0201_4B50) + u16(20) + u16(20) + u16(0) + u16(method) + u16(0) + u16(0) + sums + u16(name.count)
            + u16(0) + u16(0) + u16(0) + u16(0) + u32(0) + u32(0) + name
        let end = u32(0x0605_4B50) + u16(0) + u16(0) + u16(1) + u16(1) + u32(central.count) + u32(local.count + packed.count) + u16(0)
        let path = folder.file("export-\(UUID().uuidString).zip")
        try (Data(local) + packed + Data(central) + Data(end)).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// A ChatGPT export of one conversation padded with `padding` spaces: 8 MiB packs to a
    /// few KiB, about a thousand times smaller.
    static func paddedExport(padding: Int = 8 << 20) -> Data {
        Data(("[" + HostileTimeTests.chatgptRecord("padded")).utf8) + Data(repeating: 0x20, count: padding) + Data("]".utf8)
    }

    @Test("progress names the archive's entry, not the temporary file it is read from")
    func progressLabel() throws {
        let archive = ImportTests.fixtures + "/zip/claude-export.zip"
        let store = try Store.open(path: ":memory:")
        var shown: Set<String> = []
        let summary = Importer(store: store).run(paths: [archive], format: nil, progress: { shown.insert($0.path) })
        #expect(summary.failed.isEmpty)
        #expect(shown == ["\(archive)!conversations.json"])
    }

    @Test("an entry that inflates past its declared size is stopped there, with a clear error")
    func lyingSize() throws {
        let folder = try TemporaryDirectory()
        let content = Self.paddedExport()
        let path = try Self.archive(content: content, declaredSize: 1_000, in: folder)
        let store = try Store.open(path: ":memory:")
        let summary = Importer(store: store).run(paths: [path], format: nil)
        #expect(summary.failed.map(\.description) == [
            "\(path): the ZIP entry conversations.json inflates past its declared size of 1000 bytes (a damaged or hostile archive)"
        ])
        #expect(try store.conversations.count() == 0)
    }

    @Test("an entry over 200 times its packed size is refused before inflating; --unzip-limit allows it")
    func ratio() throws {
        let folder = try TemporaryDirectory()
        let content = Self.paddedExport()
        let path = try Self.archive(content: content, in: folder)
        let store = try Store.open(path: ":memory:")
        let refused = Importer(store: store).run(paths: [path], format: nil)
        let problem = try #require(refused.failed.first?.problem)
        #expect(problem.hasPrefix("the ZIP entry conversations.json would inflate "), "\(problem)")
        #expect(problem.hasSuffix("over the 200× allowed (a ZIP bomb?); allow it with --unzip-limit SIZE"))
        let allowed = Importer(store: store, unzipLimit: UnzipLimit(bytes: 16 << 20)).run(paths: [path], format: nil)
        #expect(allowed.failed.isEmpty, "\(allowed.failed)")
        #expect(allowed.inserted == 1)
        let small = Importer(store: store, unzipLimit: UnzipLimit(bytes: 1 << 20)).run(paths: [path], format: nil)
        #expect(small.failed.first?.problem.hasSuffix("over the limit of 1048576 (--unzip-limit)") == true)
        #expect(UnzipLimit.parse("8G") == 8 << 30 && UnzipLimit.parse("500m") == 500 << 20 && UnzipLimit.parse("123") == 123)
        #expect(UnzipLimit.parse("-1") == nil && UnzipLimit.parse("G") == nil && UnzipLimit.parse("99999999999999T") == nil)
    }

    @Test("inflating is stopped by Ctrl-C (asked between chunks), and the entry has no name on disk meanwhile")
    func interruptedWhileInflating() throws {
        let folder = try TemporaryDirectory()
        let content = Self.paddedExport(padding: 4 << 20)
        let path = try Self.archive(content: content, in: folder)
        let store = try Store.open(path: ":memory:")
        var asked = 0
        var named: [String] = []
        let summary = Importer(store: store, unzipLimit: UnzipLimit(bytes: 16 << 20)).run(paths: [path], format: nil, shouldStop: {
            asked += 1
            // Every temporary file this process holds open is already unlinked.
            let links = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
            for link in links {
                if let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + link),
                   target.contains("scrollback-import-"), !target.hasSuffix("(deleted)")
                {
                    named.append(target)
                }
            }
            return asked == 2
        })
        #expect(summary.interrupted)
        #expect(asked == 2)
        #expect(named.isEmpty, "\(named)")
        #expect(try store.conversations.count() == 0)
    }
}
