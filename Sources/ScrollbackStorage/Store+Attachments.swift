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
