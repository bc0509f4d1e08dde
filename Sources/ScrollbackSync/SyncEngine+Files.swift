import Foundation
import ScrollbackModel
import ScrollbackStorage

// Attachments' bytes through the server: sent once per file, sealed in chunks under names
// the server cannot test a file against (`SyncKey.fileName`), fetched by the machines that
// show or open them (or with every sync: `[sync] fetch_attachments = "always"`).
//
// The server holds `scrollback.file_chunk` (name, index, sealed chunk) and, once every chunk
// is there, `scrollback.file` (name, chunk count): a file is fetched only when whole, and a
// cut upload goes on from the chunks the server holds.
extension SyncEngine {
    /// The plaintext of one chunk: the local chunk's size, so that each is read with one
    /// blob read.
    public static let fileChunk = 1 << 20
    /// Chunks a fetch reads in one query (memory holds this many at most).
    static let fetchPage = 4

    /// The associated data of a file's chunk: its name, its index and the chunk count, so
    /// that a chunk swapped, moved to another file, dropped (the count) or cut does not open.
    static func fileAAD(name: String, index: Int, count: Int) -> [UInt8] {
        Array("scrollback-file-v1\u{1F}\(name)\u{1F}\(index)\u{1F}\(count)".utf8)
    }

    /// How many chunks a file of `size` bytes goes in (one, empty, for an empty file).
    static func chunkCount(size: Int64) -> Int {
        let whole = Int64(fileChunk)
        return Int(clamping: max(1, (size + whole - 1) / whole))
    }

    /// Sends the stored files the server lacks (before the ops that name them, so that a
    /// machine that sees an op finds its files). A file whose bytes here are damaged is
    /// passed over, and said (`check` says more); the others go. Files this machine noted as
    /// on the server are looked for there again first: one the server lost (restored from
    /// an older backup, its rows deleted) is sent again. Returns how many were sent, and the
    /// lines of those that could not be.
    func pushFiles() throws -> (sent: Int, problems: [String]) {
        try confirmFilesOnServer()
        var sent = 0
        var problems: [String] = []
        var after = ""
        while true {
            let files = try store.filesToSend(after: after, limit: 200)
            guard let last = files.last else { break }
            after = last.sha256
            let names = try files.map { try key.fileName(sha256: $0.sha256) }
            let whole = Set(try heldWhole(names))
            var known: [String] = []
            for (file, name) in zip(files, names) {
                if !whole.contains(name) {
                    do {
                        try upload(sha256: file.sha256, size: file.size, name: name)
                    } catch StorageError.conflict {
                        problems.append(
                            "the bytes of file \(file.sha256.prefix(12)) here are damaged, so they were not sent; run `scrollback check`")
                        continue
                    }
                    sent += 1
                }
                known.append(file.sha256)
            }
            try store.markFilesOnServer(known)
        }
        return (sent, problems)
    }

    /// Which of `names` the server holds whole (`scrollback.file`), in one query.
    func heldWhole(_ names: [String]) throws -> [String] {
        guard !names.isEmpty else { return [] }
        let held = try connection.query(
            "SELECT name FROM scrollback.file WHERE name = ANY($1::text[])", [.text("{" + names.joined(separator: ",") + "}")])
        return (0..<held.rows).compactMap { held.text($0, 0) }
    }

    /// Files noted here as on the server that it no longer holds are noted no more, so that
    /// they are sent again: a few thousand names a query.
    func confirmFilesOnServer() throws {
        var after = ""
        while true {
            let page = try store.filesOnServer(after: after, limit: 5_000)
            guard let last = page.last else { return }
            after = last
            let names = try page.map { try key.fileName(sha256: $0) }
            let held = Set(try heldWhole(names))
            try store.forgetFilesOnServer(zip(page, names).filter { !held.contains($0.1) }.map(\.0))
        }
    }

    /// One file's chunks, each sealed and sent in a statement of its own (what the server
    /// holds of a cut upload is kept), then its row in `scrollback.file`: only when every
    /// chunk read here hashed to the file (a damaged file throws `StorageError.conflict` and
    /// is never whole there).
    func upload(sha256: String, size: Int64, name: String) throws {
        let count = Self.chunkCount(size: size)
        let present = try connection.query("SELECT idx FROM scrollback.file_chunk WHERE name = $1", [.text(name)])
        let there = Set((0..<present.rows).compactMap { present.integer($0, 0) })
        try store.forEachChunk(ofFile: sha256) { index, stored, bytes in
            guard stored == count else {
                throw StorageError.conflict("attachment \(sha256.prefix(12)) is stored in \(stored) chunks, not the \(count) of its size")
            }
            guard !there.contains(Int64(index)) else { return }
            let sealed = try key.seal(bytes, aad: Self.fileAAD(name: name, index: index, count: count))
            try connection.query(
                "INSERT INTO scrollback.file_chunk (name, idx, sealed) VALUES ($1, $2::int4, $3) ON CONFLICT DO NOTHING",
                [.text(name), .text(String(index)), .bytes(sealed)])
        }
        try connection.query(
            "INSERT INTO scrollback.file (name, chunks) VALUES ($1, $2::int4) ON CONFLICT DO NOTHING", [.text(name), .text(String(count))])
    }

    /// Fetches the bytes of the awaited file `sha256` of `size` bytes (as the op that named
    /// it says): every chunk opened and checked in its place, written to a private temporary
    /// file (never into a local transaction: the network is not waited for there), then
    /// stored, checked against the hash, and given to every attachment that awaited it.
    /// - Throws: `SyncError.fileNotOnServer` when the server does not hold it whole;
    ///   `SyncError.damagedFile` when a chunk does not open or is out of place.
    /// - Parameter check: called between chunks; what it throws (an interrupt) ends the
    ///   fetch, keeping nothing.
    public func fetch(sha256: String, size: Int64?, shownName: String, check: () throws -> Void = {}) throws {
        if !serverChecked {
            try checkServer()
            serverChecked = true
        }
        let name = try key.fileName(sha256: sha256)
        let found = try connection.query("SELECT chunks FROM scrollback.file WHERE name = $1", [.text(name)])
        if found.rows > 0, found.type(0) != 23 { throw SyncError.changedColumn(name: "chunks", type: "integer", table: "scrollback.file") }
        guard found.rows > 0, let declared = found.integer(0, 0) else { throw SyncError.fileNotOnServer(name: shownName) }
        guard let size, size >= 0, size <= 1 << 40 else {
            throw SyncError.damagedFile("the size of \(shownName) is not known here, so its bytes cannot be checked")
        }
        let count = Self.chunkCount(size: size)
        guard declared == Int64(count) else {
            throw SyncError.damagedFile("the sync server says \(shownName) is in \(declared) chunks, not the \(count) its size needs")
        }
        let spool = try Spool()
        defer { spool.close() }
        var next = 0
        // A sealed chunk is its plaintext, a nonce and a tag: a longer row is damage, and its
        // bytes are not read (a server could put a gigabyte in its place).
        let longest = Self.fileChunk + SyncKey.nonceCount + SyncKey.tagCount
        while next < count {
            try check()
            let page = try connection.query(
                """
                SELECT idx, length(sealed)::int8, CASE WHEN length(sealed) <= \(longest) THEN sealed END
                  FROM scrollback.file_chunk WHERE name = $1 AND idx >= $2::int4 AND idx < $3::int4 ORDER BY idx LIMIT \(Self.fetchPage)
                """, [.text(name), .text(String(next)), .text(String(count))])
            if page.rows > 0, page.type(0) != 23 {
                throw SyncError.changedColumn(name: "idx", type: "integer", table: "scrollback.file_chunk")
            }
            if page.rows > 0, page.type(2) != 17 {
                throw SyncError.changedColumn(name: "sealed", type: "bytea", table: "scrollback.file_chunk")
            }
            guard page.rows > 0 else {
                throw SyncError.damagedFile("the sync server lacks chunk \(next + 1) of \(count) of \(shownName)")
            }
            for row in 0..<page.rows {
                guard let index = page.integer(row, 0), index == Int64(next) else {
                    throw SyncError.damagedFile("the sync server lacks chunk \(next + 1) of \(count) of \(shownName)")
                }
                guard let sealed = page.bytes(row, 2) else {
                    throw SyncError.damagedFile(
                        "chunk \(next + 1) of \(count) of \(shownName) on the sync server is \(page.integer(row, 1) ?? 0) bytes, more than a chunk can be")
                }
                guard let plain = key.open(sealed, aad: Self.fileAAD(name: name, index: next, count: count)) else {
                    throw SyncError.damagedFile("chunk \(next + 1) of \(count) of \(shownName) on the sync server does not open with this key")
                }
                let expected = next == count - 1 ? Int(size - Int64(count - 1) * Int64(Self.fileChunk)) : Self.fileChunk
                guard plain.count == expected else {
                    throw SyncError.damagedFile("chunk \(next + 1) of \(count) of \(shownName) on the sync server is \(plain.count) bytes, not \(expected)")
                }
                try spool.write(plain)
                next += 1
            }
        }
        try check()
        try spool.rewind()
        do {
            try store.storeFetchedFile(sha256: sha256, SpooledSource(spool: spool, size: Int(size)))
        } catch StorageError.conflict(let reason) {
            throw SyncError.damagedFile(reason)
        }
    }

    /// Fetches every awaited file the server holds (`fetch_attachments = "always"`), the
    /// smallest first: how many came, and the lines of those that could not (not on the
    /// server yet, damaged there, no room here: the others still come).
    public func fetchAwaited(progress: ((Int, Int) -> Void)? = nil) throws -> (fetched: Int, problems: [String]) {
        let awaited = try store.awaitedFiles().sorted { ($0.size ?? 0, $0.sha256) < ($1.size ?? 0, $1.sha256) }
        var fetched = 0
        var problems: [String] = []
        for (index, file) in awaited.enumerated() {
            let shown = "file \(file.sha256.prefix(12))"
            do {
                try fetch(sha256: file.sha256, size: file.size, shownName: shown)
                fetched += 1
            } catch let error as SyncError {
                switch error {
                case .fileNotOnServer, .damagedFile: problems.append(error.description)
                default: throw error
                }
            } catch StorageError.diskFull(let path) {
                problems.append("\(shown) (\(AttachmentDTO.sizeText(file.size ?? 0))) was not fetched: the disk holding \(path) is full")
            }
            progress?(index + 1, awaited.count)
        }
        return (fetched, problems)
    }
}

/// A private temporary file the fetched chunks go to (in `$TMPDIR`), its name removed as soon
/// as it is made: only this process's descriptor reaches it, and a kill leaves nothing
/// behind. A 200 MB recording never sits in memory.
final class Spool {
    private let handle: FileHandle
    private let folder: String

    init() throws {
        let folder = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        self.folder = folder
        var template = Array((folder + "/scrollback-fetch-XXXXXX").utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { buffer in buffer.baseAddress.map { mkstemp($0) } ?? -1 }
        // Not inherited by a program started meanwhile (nor, with it, a lock on it).
        if descriptor >= 0 { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }
        guard descriptor >= 0 else {
            throw SyncError.crypto(
                "cannot make a temporary file in \(folder) for an attachment's bytes (\(String(cString: strerror(errno)))); set TMPDIR to a folder with room")
        }
        unlink(String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
    }

    func write(_ bytes: [UInt8]) throws {
        do {
            try handle.write(contentsOf: bytes)
        } catch {
            throw SyncError.crypto(
                "cannot write an attachment's bytes to a temporary file in \(folder) (\(error.localizedDescription)); is the disk full? Set TMPDIR to a folder with room")
        }
    }

    func rewind() throws {
        do { try handle.seek(toOffset: 0) } catch { throw SyncError.crypto("cannot read back a temporary file in \(folder)") }
    }

    func read(upTo count: Int) throws -> Data? {
        try handle.read(upToCount: count)
    }

    func close() { try? handle.close() }
}

/// The spooled bytes as an attachment source for the store.
struct SpooledSource: AttachmentSource {
    let spool: Spool
    let size: Int

    func read(_ sink: (UnsafeRawBufferPointer) throws -> Void) throws {
        var left = size
        while left > 0, let data = try spool.read(upTo: min(left, 1 << 20)), !data.isEmpty {
            try data.withUnsafeBytes { try sink($0) }
            left -= data.count
        }
    }
}
