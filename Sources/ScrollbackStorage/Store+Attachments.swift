import ScrollbackModel

extension Store {
    /// Every attachment of a conversation, in message order.
    public func attachments(conversation id: Int64) throws -> [AttachmentDTO] {
        try AttachmentTables(database: database).list(conversation: id)
    }

    /// The attachments of these messages, by message id (messages without any are absent).
    public func attachments(messages ids: [Int64]) throws -> [Int64: [AttachmentDTO]] {
        try database.read { try AttachmentTables(database: database).list(messages: ids) }
    }

    /// The stored files whose SHA-256 starts with `prefix` (hex, any case): at most `limit`.
    public func attachmentFiles(prefix: String, limit: Int = 2) throws -> [(sha256: String, size: Int64)] {
        try AttachmentTables(database: database).contents(prefix: prefix.lowercased(), limit: limit)
    }

    /// Gives the bytes of the stored file with this SHA-256 to `sink`, in order, in one read
    /// transaction (a writer beside it does not change what is read).
    public func readAttachment(sha256: String, _ sink: (UnsafeRawBufferPointer) throws -> Void) throws {
        try database.read { try AttachmentTables(database: database).read(sha256: sha256, sink) }
    }

    public func attachmentTotals() throws -> AttachmentTotals {
        try database.read { try AttachmentTables(database: database).totals() }
    }

    /// The SHA-256 of every stored file the messages of these conversations use (none,
    /// without a look at each, when the database holds no attachment).
    public func attachmentHashes(conversations ids: [Int64]) throws -> Set<String> {
        try database.read {
            let tables = AttachmentTables(database: database)
            guard try tables.any() else { return [] }
            var hashes = Set<String>()
            for id in ids { hashes.formUnion(try tables.list(conversation: id).compactMap(\.sha256)) }
            return hashes
        }
    }

    /// Frees the bytes of these files when no conversation uses them any more (a delete no
    /// undo can reach: `scrollback delete`, the browser's deletes once it exits), and those
    /// of any file unused for longer than the grace time.
    @discardableResult
    public func freeUnusedAttachments(_ hashes: Set<String>) throws -> (files: Int, bytes: Int64) {
        let cutoff = Timestamp(milliseconds: Timestamp.now().milliseconds - Self.unusedAttachmentGrace)
        return try database.write {
            let tables = AttachmentTables(database: database)
            let contents = try hashes.sorted().compactMap { hash in
                try database.queryFirst("SELECT id FROM attachment_content WHERE sha256 = ?", [.text(hash)]) { $0.int64(0) }
            }
            return try tables.collect(unusedBefore: cutoff, contents: contents)
        }
    }

    /// How long stored bytes that no conversation uses are kept before any process frees
    /// them: long enough for the undo of the browser that deleted them.
    public static let unusedAttachmentGrace: Int64 = 7 * 24 * 3_600_000

    /// Frees the bytes of files no conversation uses: those unused for longer than the grace
    /// time, and with `now`, all of them (for a caller no undo can follow, `delete`).
    @discardableResult
    public func collectUnusedAttachments(all: Bool = false) throws -> (files: Int, bytes: Int64) {
        let cutoff = all ? Timestamp(milliseconds: Int64.max) : Timestamp(milliseconds: Timestamp.now().milliseconds - Self.unusedAttachmentGrace)
        return try database.write { try AttachmentTables(database: database).collect(unusedBefore: cutoff) }
    }
}

/// A file of scrollback's JSON Lines export on its way in, a piece (a line) at a time, in the
/// import's transaction: its rows are made as the pieces come, its hash checked at the last
/// one. A file stored already takes no rows (its pieces are read and dropped).
public final class IncomingFile {
    public let sha256: String
    public let count: Int
    /// The index of the piece it takes next.
    public private(set) var next = 0
    private var writer: AttachmentTables.ContentWriter?

    init(sha256: String, count: Int, writer: AttachmentTables.ContentWriter?) {
        self.sha256 = sha256
        self.count = count
        self.writer = writer
    }

    /// Whether every piece has come.
    public var isComplete: Bool { next == count }

    /// The next piece; one out of order, or more bytes than the file has, throws (then
    /// `abandon`).
    public func add(_ bytes: [UInt8], index: Int) throws {
        guard index == next, index < count else {
            throw StorageError.conflict("piece \(index + 1) of \(count) came where piece \(next + 1) belongs")
        }
        try bytes.withUnsafeBytes { try writer?.take($0) }
        next += 1
    }

    /// Makes it a stored file once its last piece is in: bytes that do not hash to its
    /// SHA-256 (or are fewer than its size) throw, and nothing of them is kept.
    public func finish() throws {
        guard let writer else { return }
        self.writer = nil
        _ = try writer.finish(expecting: sha256)
    }

    /// Removes what was written of it.
    public func abandon() throws {
        guard let writer else { return }
        self.writer = nil
        try writer.abandon()
    }
}

extension Store {
    /// Starts taking the pieces of a file of `size` bytes in `count` pieces; in the caller's
    /// transaction (an import's).
    public func incomingFile(sha256: String, size: Int, count: Int) throws -> IncomingFile {
        let tables = AttachmentTables(database: database)
        let known = try tables.content(sha256: sha256) != nil
        return IncomingFile(sha256: sha256, count: count, writer: known ? nil : try AttachmentTables.ContentWriter(tables: tables, size: size))
    }
}

// MARK: Sync

extension Store {
    /// Stored files some attachment uses that this machine has not seen whole on the sync
    /// server (it did not send them, nor fetch them): hash and size, at most `limit`.
    /// In the order of their hashes, after `after`.
    public func filesToSend(after: String = "", limit: Int = 1_000) throws -> [(sha256: String, size: Int64)] {
        try database.read {
            try database.query(
                """
                SELECT c.sha256, c.size FROM attachment_content AS c
                 WHERE c.sha256 > ? AND NOT EXISTS (SELECT 1 FROM sync_file AS f WHERE f.sha256 = c.sha256)
                   AND EXISTS (SELECT 1 FROM attachment AS a WHERE a.content_id = c.id)
                 ORDER BY c.sha256 LIMIT ?
                """, [.text(after), .integer(Int64(max(limit, 1)))]) { ($0.text(0), $0.int64(1)) }
        }
    }

    /// The files noted as on the sync server, in the order of their hashes after `after`.
    public func filesOnServer(after: String = "", limit: Int = 5_000) throws -> [String] {
        try database.read {
            try database.query(
                "SELECT sha256 FROM sync_file WHERE sha256 > ? ORDER BY sha256 LIMIT ?", [.text(after), .integer(Int64(max(limit, 1)))]
            ) { $0.text(0) }
        }
    }

    /// Notes that the server no longer holds these files: they are sent again.
    public func forgetFilesOnServer(_ hashes: [String]) throws {
        guard !hashes.isEmpty else { return }
        try database.write {
            for hash in hashes { try database.run("DELETE FROM sync_file WHERE sha256 = ?", [.text(hash)]) }
        }
    }

    /// Notes that the server holds these files whole: they are not sent again.
    public func markFilesOnServer(_ hashes: [String]) throws {
        guard !hashes.isEmpty else { return }
        try database.write {
            for hash in hashes { try database.run("INSERT OR IGNORE INTO sync_file (sha256) VALUES (?)", [.text(hash)]) }
        }
    }

    /// Gives `body` each chunk of the stored file with this SHA-256 in order (1 MiB; the last
    /// may be shorter; an empty file has one, empty), with the count: each read in a read
    /// transaction of its own, `body` called outside it (it may wait for a network). The
    /// bytes are hashed as they go: bytes that are not the file's throw at the end.
    /// - Throws: `StorageError.conflict` when the file is not stored, its chunks do not add
    ///   up to its size, or its bytes do not hash to it.
    public func forEachChunk(ofFile sha256: String, _ body: (_ index: Int, _ count: Int, _ bytes: [UInt8]) throws -> Void) throws {
        let tables = AttachmentTables(database: database)
        let count = max(try database.read { try tables.storedChunks(sha256: sha256).chunks.count }, 1)
        let digest = SHA256()
        for index in 0..<count {
            let bytes = try database.read { try tables.chunk(sha256: sha256, index: index) }
            bytes.withUnsafeBytes { digest.update($0) }
            try body(index, count, bytes)
        }
        guard digest.finish() == sha256 else {
            throw StorageError.conflict("the stored bytes of attachment \(sha256.prefix(12)) do not hash to it (damaged); run `scrollback check`")
        }
    }

    /// The awaited files whose SHA-256 starts with `prefix` (lower-case hex): hash, size and
    /// an attachment's name; at most `limit`.
    public func awaitedFiles(prefix: String, limit: Int = 2) throws -> [(sha256: String, size: Int64?, name: String)] {
        try database.read {
            try database.query(
                """
                SELECT awaited, max(size), min(name) FROM attachment WHERE awaited >= ? AND awaited < ?
                 GROUP BY awaited ORDER BY awaited LIMIT ?
                """, [.text(prefix.lowercased()), .text(prefix.lowercased() + "g"), .integer(Int64(limit))]
            ) { ($0.text(0), $0.optionalInt64(1), $0.text(2)) }
        }
    }

    /// The files attachments here await from other machines (hash, size as their op says).
    public func awaitedFiles(limit: Int = 10_000) throws -> [(sha256: String, size: Int64?)] {
        try database.read { try AttachmentTables(database: database).awaited(limit: limit) }
    }

    /// Stores the bytes of an awaited file fetched from the server (checked against its
    /// SHA-256: other bytes throw and nothing is kept), and points every attachment that
    /// awaited it at them, in one transaction.
    public func storeFetchedFile(sha256: String, _ source: any AttachmentSource) throws {
        try database.write {
            let tables = AttachmentTables(database: database)
            let stored: (id: Int64, facts: FileFacts)
            do {
                stored = try tables.store(source, expecting: sha256)
            } catch let error as AttachmentUnreadable {
                throw StorageError.conflict("the file \(sha256.prefix(12)) fetched from the sync server \(error.reason)")
            }
            try tables.arrived(sha256: sha256, content: stored.id, facts: stored.facts)
            try database.run("INSERT OR IGNORE INTO sync_file (sha256) VALUES (?)", [.text(sha256)])
        }
    }
}
