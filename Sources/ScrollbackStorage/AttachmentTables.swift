import CCrypto
import CSQLite
import Foundation
import ScrollbackModel

/// The one reader and writer of the attachment tables (`attachment`, `attachment_content`,
/// `attachment_chunk`): a message's files and their bytes, stored once per SHA-256 in
/// chunks, each written and read with SQLite's incremental blob I/O so that no file is ever
/// whole in memory.
struct AttachmentTables {
    let database: Database

    /// The bytes of one chunk row (the last of a file may be shorter).
    static let chunkSize = 1 << 20
    /// How much is read from a chunk at a time.
    static let readPiece = 256 << 10
    /// The largest file stored: 1 TiB (a size beyond is damage).
    static let largestFile: Int64 = 1 << 40

    /// Every attachment's bytes taken out, its file named as awaited by its SHA-256 (a
    /// snapshot's image: a new machine fetches the files from the server as it shows them).
    func awaitEveryFile() throws {
        try database.run(
            """
            UPDATE attachment SET awaited = (SELECT sha256 FROM attachment_content WHERE id = attachment.content_id), content_id = NULL
             WHERE content_id IS NOT NULL
            """)
        try database.run("DELETE FROM attachment_chunk")
        try database.run("DELETE FROM attachment_content")
    }

    // MARK: Writing

    /// Stores the bytes `source` gives and returns their content's id: the one already
    /// stored when the same bytes are (then what was written goes again, in this
    /// transaction). Fewer or more bytes than `source.size` throw, and so does a source
    /// that fails; the caller's transaction then keeps nothing of them. With the id, what
    /// the first bytes say the file is (`FileFacts`).
    /// - Parameter expected: the SHA-256 the bytes must have; others are kept as unreadable.
    ///
    /// Not in a savepoint of its own (which makes SQLite copy every page it changes to a
    /// statement journal first: a gigabyte of images written twice more): what a failing
    /// source or writer leaves of it is removed here instead.
    func store(_ source: any AttachmentSource, expecting expected: String? = nil) throws -> (id: Int64, facts: FileFacts) {
        let writer = try ContentWriter(tables: self, size: source.size)
        defer { writer.close() }
        do {
            return try store(source, with: writer, expecting: expected)
        } catch {
            try? writer.abandon()
            throw error
        }
    }

    private func store(_ source: any AttachmentSource, with writer: ContentWriter, expecting expected: String?) throws
        -> (id: Int64, facts: FileFacts)
    {
        // An error of the source's own (a damaged ZIP entry), not of the writing, is said so:
        // the attachment is then kept as missing, with the reason.
        var sinkFailed = false
        do {
            try source.read { piece in
                do {
                    try writer.take(piece)
                } catch {
                    sinkFailed = true
                    throw error
                }
            }
        } catch where !sinkFailed {
            if let unreadable = error as? AttachmentUnreadable { throw unreadable }
            throw AttachmentUnreadable(reason: (error as? any UserFacingError)?.userLine ?? "\(error)")
        }
        guard writer.written == writer.size else {
            throw AttachmentUnreadable(reason: "it gave \(writer.written) bytes, not the \(writer.size) it declares")
        }
        do {
            let stored = try writer.finish(expecting: expected)
            return (stored.id, stored.facts)
        } catch StorageError.conflict(let reason) where expected != nil {
            throw AttachmentUnreadable(reason: reason)
        }
    }

    /// The id the next content stored gets (see `ContentWriter`): contents from it on were
    /// stored after this call.
    func nextContentID() throws -> Int64 {
        try database.scalarInt(
            """
            SELECT max(coalesce((SELECT max(id) FROM attachment_content), 0),
                       coalesce((SELECT max(content_id) FROM attachment_chunk), 0)) + 1
            """)
    }

    /// Removes every content stored from `first` on, and what points at it: the files a
    /// failed import of a conversation stored, outside any savepoint.
    func removeContents(from first: Int64) throws {
        try database.run("UPDATE attachment SET content_id = NULL WHERE content_id >= ?", [.integer(first)])
        try database.run("DELETE FROM attachment_chunk WHERE content_id >= ?", [.integer(first)])
        try database.run("DELETE FROM attachment_content WHERE id >= ?", [.integer(first)])
    }

    /// The content stored under this SHA-256, if any.
    func content(sha256: String) throws -> Int64? {
        try database.queryFirst("SELECT id FROM attachment_content WHERE sha256 = ?", [.text(sha256)]) { $0.int64(0) }
    }

    /// One file's bytes on their way in, in the caller's transaction: chunk rows of 1 MiB
    /// made with `zeroblob` and filled through incremental blob I/O as the pieces come, hashed
    /// as they go. `finish` makes it a stored file (or finds it stored already); a writer
    /// not finished leaves rows that the caller's rollback, or `abandon`, removes.
    final class ContentWriter {
        let tables: AttachmentTables
        let size: Int
        let id: Int64
        private(set) var written = 0
        private let digest = SHA256()
        private var head: [UInt8] = []
        private var chunk: (blob: OpaquePointer, length: Int, at: Int)?
        private var index: Int64 = 0
        private var database: Database { tables.database }

        /// The page cache while it writes: small, so that a gigabyte of files goes through a
        /// few megabytes of memory (an import's own cache is 64 MB), put back after.
        static let cacheKiB: Int64 = 4_096
        private var cacheBefore: Int64?

        init(tables: AttachmentTables, size: Int) throws {
            guard size >= 0 else { throw StorageError.conflict("an attachment declares a negative size; nothing of it was kept") }
            self.tables = tables
            self.size = size
            let cache = try tables.database.scalarInt("PRAGMA cache_size")
            if size > 64 << 10 && (cache < 0 ? -cache : cache * 4) > Self.cacheKiB {
                try tables.database.execute("PRAGMA cache_size = -\(Self.cacheKiB)")
                cacheBefore = cache
            }
            id = try tables.nextContentID()
        }

        deinit { close() }

        /// Closes the open chunk's blob handle (what `finish` does too), and puts the page
        /// cache back; idempotent.
        func close() {
            if let open = chunk { sqlite3_blob_close(open.blob) }
            chunk = nil
            if let cache = cacheBefore {
                cacheBefore = nil
                try? database.execute("PRAGMA cache_size = \(cache)")
            }
        }

        private func closeChunk() throws {
            guard let open = chunk else { return }
            chunk = nil
            let code = sqlite3_blob_close(open.blob)
            guard code == SQLITE_OK else { throw database.error(code: code, sql: "writing an attachment's bytes") }
        }

        private func openChunk(at placed: Int) throws {
            let length = min(AttachmentTables.chunkSize, size - placed)
            try database.run(
                "INSERT INTO attachment_chunk (content_id, idx, data) VALUES (?, ?, zeroblob(?))",
                [.integer(id), .integer(index), .integer(Int64(length))])
            index += 1
            var blob: OpaquePointer?
            let code = sqlite3_blob_open(database.handle, "main", "attachment_chunk", "data", database.lastInsertRowID, 1, &blob)
            guard code == SQLITE_OK, let blob else { throw database.error(code: code, sql: "opening an attachment's chunk") }
            chunk = (blob, length, 0)
        }

        /// The next bytes, in order. More than the size declared throws.
        func take(_ piece: UnsafeRawBufferPointer) throws {
            guard piece.count <= size - written else {
                throw StorageError.conflict("an attachment gave more bytes than the \(size) it declares; nothing of it was kept")
            }
            digest.update(piece)
            if head.count < FileFacts.prefixLength {
                head += piece.prefix(FileFacts.prefixLength - head.count)
            }
            var offset = 0
            while offset < piece.count {
                if chunk == nil || chunk?.at == chunk?.length {
                    try closeChunk()
                    try openChunk(at: written + offset)
                }
                guard let open = chunk, let base = piece.baseAddress else { break }
                let count = min(piece.count - offset, open.length - open.at)
                let code = sqlite3_blob_write(open.blob, base + offset, Int32(count), Int32(open.at))
                guard code == SQLITE_OK else { throw database.error(code: code, sql: "writing an attachment's bytes") }
                chunk = (open.blob, open.length, open.at + count)
                offset += count
            }
            written += piece.count
        }

        /// The file stored: its content id (the one stored before when the same bytes are,
        /// this writer's rows then removed), what its first bytes say, and its SHA-256.
        /// - Parameter expected: the hash the bytes must have (an export's record says it);
        ///   other bytes throw, and this writer's rows are removed.
        func finish(expecting expected: String? = nil) throws -> (id: Int64, facts: FileFacts, sha256: String) {
            try closeChunk()
            guard written == size else {
                try abandon()
                throw StorageError.conflict("an attachment gave \(written) bytes, not the \(size) it declares; nothing of it was kept")
            }
            let hash = digest.finish()
            if let expected, expected != hash {
                try abandon()
                throw StorageError.conflict("its bytes do not hash to the SHA-256 \(expected.prefix(12)) they were given under")
            }
            let facts = FileFacts.sniff(head)
            if let existing = try database.queryFirst("SELECT id FROM attachment_content WHERE sha256 = ?", [.text(hash)], { $0.int64(0) }) {
                // Stored already: unless what is stored is damaged, which these good bytes then
                // replace (for every attachment that points at it).
                var sound = true
                if case .failure = try tables.chunks(of: existing) {
                    sound = false
                } else {
                    do {
                        try tables.read(sha256: hash) { _ in }
                    } catch StorageError.conflict {
                        sound = false
                    }
                }
                guard !sound else {
                    try abandon()
                    return (existing, facts, hash)
                }
                try database.run("DELETE FROM attachment_chunk WHERE content_id = ?", [.integer(existing)])
                try database.run("UPDATE attachment_chunk SET content_id = ? WHERE content_id = ?", [.integer(existing), .integer(id)])
                try database.run(
                    "UPDATE attachment_content SET size = ?, chunk_size = ? WHERE id = ?",
                    [.integer(Int64(size)), .integer(Int64(AttachmentTables.chunkSize)), .integer(existing)])
                return (existing, facts, hash)
            }
            try database.run(
                "INSERT INTO attachment_content (id, sha256, size, chunk_size, unused_since) VALUES (?, ?, ?, ?, ?)",
                [.integer(id), .text(hash), .integer(Int64(size)), .integer(Int64(AttachmentTables.chunkSize)),
                 .integer(Timestamp.now().milliseconds)])
            close()
            return (id, facts, hash)
        }

        /// Removes what was written (nothing is kept of a file that failed half-way).
        func abandon() throws {
            close()
            try database.run("DELETE FROM attachment_chunk WHERE content_id = ?", [.integer(id)])
        }
    }

    /// The content stored for an attachment with this reference before (a ChatGPT file id
    /// names one file for good), so that a re-import does not read and write it again.
    func storedContent(reference: String) throws -> Int64? {
        guard Self.namesOneFile(reference) else { return nil }
        return try database.queryFirst(
            "SELECT content_id FROM attachment WHERE reference = ? AND content_id IS NOT NULL LIMIT 1", [.text(reference)]
        ) { $0.int64(0) }
    }

    /// A reference that stands for the same bytes wherever it appears: ChatGPT's file ids.
    /// (A path or URL may hold other bytes tomorrow.)
    static func namesOneFile(_ reference: String) -> Bool {
        reference.hasPrefix("file-service://") || reference.hasPrefix("sediment://")
    }

    /// What is stored of a message's attachments: position → (row id, content id).
    func stored(message: Int64) throws -> [Int: (id: Int64, content: Int64?)] {
        var found: [Int: (id: Int64, content: Int64?)] = [:]
        for row in try database.query(
            "SELECT position, id, content_id FROM attachment WHERE message_id = ?", [.integer(message)], { ($0.int(0), $0.int64(1), $0.optionalInt64(2)) })
        {
            found[row.0] = (row.1, row.2)
        }
        return found
    }

    func insert(message: Int64, position: Int, _ attachment: ImportedAttachment, content: Int64?) throws {
        let size: Int64? =
            if let content { try database.queryFirst("SELECT size FROM attachment_content WHERE id = ?", [.integer(content)]) { $0.int64(0) } } else {
                Self.declaredSize(attachment.size)
            }
        try insertRow(
            message: message, position: position, name: attachment.name, mime: attachment.mime, size: size,
            width: attachment.width.map(Int64.init), height: attachment.height.map(Int64.init), reference: attachment.reference,
            content: content, extracted: attachment.extracted, absence: attachment.absence, awaited: nil)
    }

    /// One attachment row; where its bytes are not here (`content` nil), why (`absence`) or
    /// whose they are (`awaited`, the hash another machine holds).
    private func insertRow(
        message: Int64, position: Int, name: String, mime: String?, size: Int64?, width: Int64?, height: Int64?, reference: String?,
        content: Int64?, extracted: String?, absence: String?, awaited: String?
    ) throws {
        let values: [SQLValue] = [
            .integer(message), .integer(Int64(position)), .text(name), SQLValue(mime), SQLValue(size), SQLValue(Self.dimension(width)),
            SQLValue(Self.dimension(height)), SQLValue(reference), SQLValue(content), SQLValue(extracted),
            SQLValue(content == nil && awaited == nil ? absence : nil),
        ]
        let columns = "message_id, position, name, mime, size, width, height, reference, content_id, extracted, absence"
        // An import's rows never await: their statement names no `awaited` (a file of schema
        // 12, which has none, takes them as it did).
        if content == nil, let awaited {
            try database.run("INSERT INTO attachment (\(columns), awaited) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", values + [.text(awaited)])
        } else {
            try database.run("INSERT INTO attachment (\(columns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", values)
        }
    }

    /// A size a source declares, kept when it could be a file's (up to `largestFile`).
    static func declaredSize(_ size: Int64?) -> Int64? {
        guard let size, size >= 0, size <= largestFile else { return nil }
        return size
    }

    /// A width or height the schema takes: positive and within 32 bits (a source's number
    /// out of that range is not kept).
    private static func dimension(_ value: Int64?) -> Int64? {
        guard let value, value > 0, value <= Int64(Int32.max) else { return nil }
        return value
    }

    // MARK: Sync

    /// A message's files as a sync op carries them, in order: the hash of the bytes stored
    /// here, or of those awaited from another machine.
    func synced(message id: Int64) throws -> [SyncAttachment] {
        try database.query(
            """
            SELECT a.name, a.mime, a.size, a.width, a.height, a.reference, coalesce(c.sha256, a.awaited), a.extracted, a.absence
              FROM attachment AS a LEFT JOIN attachment_content AS c ON c.id = a.content_id
             WHERE a.message_id = ? ORDER BY a.position
            """, [.integer(id)]
        ) { row in
            SyncAttachment(
                name: row.text(0), mime: row.optionalText(1), size: row.optionalInt64(2), width: row.optionalInt64(3),
                height: row.optionalInt64(4), reference: row.optionalText(5), sha256: row.optionalText(6), extracted: row.optionalText(7),
                absence: row.optionalText(8))
        }
    }

    /// Gives the message `id` the files another machine's op names (when they are not what it
    /// has): bytes stored here already are pointed at; others are awaited by their hash, to
    /// be fetched from the server. Whether anything changed.
    @discardableResult
    func replace(message id: Int64, with list: [SyncAttachment]) throws -> Bool {
        guard try synced(message: id) != list else { return false }
        try database.run("DELETE FROM attachment WHERE message_id = ?", [.integer(id)])
        for (position, attachment) in list.enumerated() {
            let content = try attachment.sha256.flatMap { try self.content(sha256: $0) }
            let size = try content.flatMap { content in
                try database.queryFirst("SELECT size FROM attachment_content WHERE id = ?", [.integer(content)]) { $0.int64(0) }
            } ?? Self.declaredSize(attachment.size)
            try insertRow(
                message: id, position: position, name: attachment.name, mime: attachment.mime, size: size, width: attachment.width,
                height: attachment.height, reference: attachment.reference, content: content, extracted: attachment.extracted,
                absence: attachment.absence, awaited: attachment.sha256)
        }
        return true
    }

    /// The files awaited from another machine: hash and size (as its op says), each once.
    func awaited(limit: Int = 10_000) throws -> [(sha256: String, size: Int64?)] {
        try database.query(
            "SELECT awaited, max(size) FROM attachment WHERE awaited IS NOT NULL GROUP BY awaited ORDER BY awaited LIMIT ?",
            [.integer(Int64(limit))]) { ($0.text(0), $0.optionalInt64(1)) }
    }

    /// The content stored under this hash and its chunks, their shape checked.
    /// - Throws: `StorageError.conflict` when no such content is stored or its chunks do not
    ///   add up to its size.
    func storedChunks(sha256: String) throws -> (content: Int64, chunks: [(row: Int64, length: Int)]) {
        guard let content = try content(sha256: sha256) else {
            throw StorageError.conflict("no attachment's bytes have the SHA-256 \(sha256.prefix(12)) here (deleted meanwhile?)")
        }
        switch try chunks(of: content) {
        case .success(let found): return (content, found)
        case .failure(let problem):
            throw StorageError.conflict("the stored bytes of attachment \(sha256.prefix(12)) are damaged (\(problem.text)); run `scrollback check`")
        }
    }

    /// The bytes of chunk `index` of the content with this hash (see `Store.fileChunk`).
    func chunk(sha256: String, index: Int) throws -> [UInt8] {
        let chunks = try storedChunks(sha256: sha256).chunks
        if chunks.isEmpty && index == 0 { return [] }
        guard chunks.indices.contains(index) else {
            throw StorageError.conflict("attachment \(sha256.prefix(12)) has no chunk \(index + 1)")
        }
        var blob: OpaquePointer?
        let code = sqlite3_blob_open(database.handle, "main", "attachment_chunk", "data", chunks[index].row, 0, &blob)
        guard code == SQLITE_OK, let blob else { throw database.error(code: code, sql: "reading an attachment's bytes") }
        defer { sqlite3_blob_close(blob) }
        var bytes = [UInt8](repeating: 0, count: chunks[index].length)
        let read = bytes.withUnsafeMutableBytes { buffer in
            sqlite3_blob_read(blob, buffer.baseAddress, Int32(buffer.count), 0)
        }
        guard read == SQLITE_OK else { throw database.error(code: read, sql: "reading an attachment's bytes") }
        return bytes
    }

    /// The bytes awaited under `sha256` are here now (content `content`): every attachment
    /// that waited for them points at them.
    func arrived(sha256: String, content: Int64, facts: FileFacts?) throws {
        for id in try database.query("SELECT id FROM attachment WHERE awaited = ?", [.text(sha256)], { $0.int64(0) }) {
            try fill(attachment: id, content: content, facts: facts)
        }
    }

    /// Puts back an attachment an undo brings back, pointing at its bytes again (missing,
    /// saying so, when they were freed since).
    func restore(_ attachment: AttachmentDTO, message: Int64) throws {
        let content = try attachment.sha256.flatMap { hash in
            try database.queryFirst("SELECT id FROM attachment_content WHERE sha256 = ?", [.text(hash)]) { $0.int64(0) }
        }
        let absence = attachment.sha256 != nil && content == nil ? "freed after its conversation was deleted" : attachment.absence
        // Bytes another machine holds stay awaited.
        try insertRow(
            message: message, position: attachment.position, name: attachment.name, mime: attachment.mime, size: attachment.size,
            width: attachment.width.map(Int64.init), height: attachment.height.map(Int64.init), reference: attachment.reference,
            content: content, extracted: attachment.extracted, absence: absence, awaited: content == nil ? attachment.awaited : nil)
    }

    /// Gives a missing attachment the bytes a later import found (and what their first
    /// bytes say, over what the source declared).
    func fill(attachment id: Int64, content: Int64, facts: FileFacts?) throws {
        try database.run(
            """
            UPDATE attachment SET content_id = ?1, absence = NULL, awaited = NULL, size = (SELECT size FROM attachment_content WHERE id = ?1),
                   mime = coalesce(?3, mime),
                   width = CASE WHEN ?3 IS NULL THEN width ELSE ?4 END, height = CASE WHEN ?3 IS NULL THEN height ELSE ?5 END
             WHERE id = ?2
            """,
            [.integer(content), .integer(id), SQLValue(facts?.mime), SQLValue(Self.dimension(facts?.width.map(Int64.init))),
             SQLValue(Self.dimension(facts?.height.map(Int64.init)))])
    }

    /// Frees the bytes no attachment uses: those left unused before `cutoff`, and those of
    /// `contents` (ones this process left unused, where nothing can bring them back). The
    /// number of files and bytes freed.
    @discardableResult
    func collect(unusedBefore cutoff: Timestamp?, contents: [Int64] = []) throws -> (files: Int, bytes: Int64) {
        var doomed = Set<Int64>()
        if let cutoff {
            doomed.formUnion(
                try database.query(
                    "SELECT id FROM attachment_content WHERE unused_since IS NOT NULL AND unused_since < ?",
                    [.integer(cutoff.milliseconds)]) { $0.int64(0) })
        }
        for id in contents {
            let unused = try database.scalarInt(
                "SELECT count(*) FROM attachment_content WHERE id = ? AND unused_since IS NOT NULL", [.integer(id)])
            if unused > 0 { doomed.insert(id) }
        }
        var bytes: Int64 = 0
        for id in doomed.sorted() {
            // Checked again: another conversation may have taken it since it was marked.
            guard try database.scalarInt("SELECT count(*) FROM attachment WHERE content_id = ?", [.integer(id)]) == 0 else {
                try database.run("UPDATE attachment_content SET unused_since = NULL WHERE id = ?", [.integer(id)])
                continue
            }
            bytes += try database.scalarInt("SELECT size FROM attachment_content WHERE id = ?", [.integer(id)])
            try database.run("DELETE FROM attachment_chunk WHERE content_id = ?", [.integer(id)])
            try database.run("DELETE FROM attachment_content WHERE id = ?", [.integer(id)])
        }
        return (doomed.count, bytes)
    }

    // MARK: Reading

    static let columns = """
        a.id, a.message_id, m.position, a.position, a.name, a.mime, a.size, a.width, a.height, a.reference, c.sha256,
        a.extracted, a.absence, a.awaited
        """

    static func attachment(_ row: Row) -> AttachmentDTO {
        AttachmentDTO(
            id: row.int64(0), messageID: row.int64(1), messagePosition: row.int(2), position: row.int(3), name: row.text(4),
            mime: row.optionalText(5), size: row.optionalInt64(6), width: row.optionalInt64(7).map { Int($0) },
            height: row.optionalInt64(8).map { Int($0) }, reference: row.optionalText(9), sha256: row.optionalText(10),
            extracted: row.optionalText(11), absence: row.optionalText(12), awaited: row.optionalText(13))
    }

    /// Whether any message has an attachment (false too for a database of an older schema,
    /// opened read-only, which has no attachment table).
    func any() throws -> Bool {
        guard try database.scalarInt("SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'attachment'") > 0 else {
            return false
        }
        return try database.scalarInt("SELECT EXISTS (SELECT 1 FROM attachment)") != 0
    }

    /// Every attachment of a conversation, in message order, then in their own.
    func list(conversation id: Int64) throws -> [AttachmentDTO] {
        try database.query(
            """
            SELECT \(Self.columns) FROM message AS m
              JOIN attachment AS a ON a.message_id = m.id
              LEFT JOIN attachment_content AS c ON c.id = a.content_id
             WHERE m.conversation_id = ? ORDER BY m.position, a.position
            """, [.integer(id)], Self.attachment)
    }

    /// The attachments of these messages, by message.
    /// One query a page (in pieces below SQLite's limit of bound values), not one a message.
    func list(messages ids: [Int64]) throws -> [Int64: [AttachmentDTO]] {
        var found: [Int64: [AttachmentDTO]] = [:]
        var start = 0
        while start < ids.count {
            let piece = ids[start..<min(start + 500, ids.count)]
            let placeholders = Array(repeating: "?", count: piece.count).joined(separator: ", ")
            for attachment in try database.query(
                """
                SELECT \(Self.columns) FROM attachment AS a
                  JOIN message AS m ON m.id = a.message_id
                  LEFT JOIN attachment_content AS c ON c.id = a.content_id
                 WHERE a.message_id IN (\(placeholders)) ORDER BY a.message_id, a.position
                """, piece.map { .integer($0) }, Self.attachment)
            {
                found[attachment.messageID, default: []].append(attachment)
            }
            start += piece.count
        }
        return found
    }

    /// The stored contents whose SHA-256 starts with `prefix` (lower-case hex): their hash
    /// and size; at most `limit`.
    func contents(prefix: String, limit: Int = 2) throws -> [(sha256: String, size: Int64)] {
        try database.query(
            "SELECT sha256, size FROM attachment_content WHERE sha256 >= ? AND sha256 < ? ORDER BY sha256 LIMIT ?",
            [.text(prefix), .text(prefix + "g"), .integer(Int64(limit))]) { ($0.text(0), $0.int64(1)) }
    }

    /// Gives the bytes of the content with this hash to `sink`, in order, a piece at a time,
    /// hashing them as they go: bytes that are not the ones stored throw at the end (the
    /// caller then keeps nothing of what it was given).
    /// - Throws: `StorageError.conflict` when no such content is stored, when its chunks do
    ///   not add up to its size, or when they do not hash to it.
    func read(sha256: String, _ sink: (UnsafeRawBufferPointer) throws -> Void) throws {
        let chunks = try storedChunks(sha256: sha256).chunks
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.readPiece, alignment: 16)
        defer { buffer.deallocate() }
        let digest = SHA256()
        for chunk in chunks {
            var blob: OpaquePointer?
            let code = sqlite3_blob_open(database.handle, "main", "attachment_chunk", "data", chunk.row, 0, &blob)
            guard code == SQLITE_OK, let blob else { throw database.error(code: code, sql: "reading an attachment's bytes") }
            defer { sqlite3_blob_close(blob) }
            var at = 0
            while at < chunk.length {
                let count = min(Self.readPiece, chunk.length - at)
                guard let base = buffer.baseAddress else { break }
                let read = sqlite3_blob_read(blob, base, Int32(count), Int32(at))
                guard read == SQLITE_OK else { throw database.error(code: read, sql: "reading an attachment's bytes") }
                let piece = UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(buffer)[0..<count])
                digest.update(piece)
                try sink(piece)
                at += count
            }
        }
        guard digest.finish() == sha256 else {
            throw StorageError.conflict(
                "the stored bytes of attachment \(sha256.prefix(12)) are damaged (they no longer hash to it); run `scrollback check`")
        }
    }

    func totals() throws -> AttachmentTotals {
        try database.queryFirst(
            """
            SELECT (SELECT count(*) FROM attachment), (SELECT count(*) FROM attachment WHERE content_id IS NULL),
                   (SELECT count(*) FROM attachment_content WHERE unused_since IS NULL),
                   (SELECT CAST(min(total(size), 9.0e18) AS INTEGER) FROM attachment_content WHERE unused_since IS NULL),
                   (SELECT count(*) FROM attachment_content WHERE unused_since IS NOT NULL),
                   (SELECT CAST(min(total(size), 9.0e18) AS INTEGER) FROM attachment_content WHERE unused_since IS NOT NULL)
            """
        ) {
            AttachmentTotals(
                attachments: $0.int(0), missing: $0.int(1), files: $0.int(2), bytes: $0.int64(3), unusedFiles: $0.int(4), unusedBytes: $0.int64(5))
        }
            ?? AttachmentTotals(attachments: 0, missing: 0, files: 0, bytes: 0)
    }

    // MARK: Repairing

    /// What `check --repair` does with stored files: one whose bytes are damaged (its chunks
    /// not the shape of its size, or not hashing to it) is let go, its attachments kept as
    /// missing, saying so, so that importing the export again brings it back (the fill of a
    /// missing attachment); chunks of no stored file go; unused marks are made right. How
    /// many files were let go.
    @discardableResult
    func repairDamaged() throws -> Int {
        var damaged: [Int64] = []
        let contents = try database.query("SELECT id, sha256 FROM attachment_content ORDER BY id") { ($0.int64(0), $0.text(1)) }
        for (id, hash) in contents {
            if case .failure = try chunks(of: id) {
                damaged.append(id)
                continue
            }
            do {
                try read(sha256: hash) { _ in }
            } catch StorageError.conflict {
                damaged.append(id)
            }
        }
        for id in damaged {
            try database.run(
                """
                UPDATE attachment SET content_id = NULL,
                       absence = 'its stored bytes were damaged and let go by check --repair; import the export again to bring them back'
                 WHERE content_id = ?
                """, [.integer(id)])
            try database.run("DELETE FROM attachment_chunk WHERE content_id = ?", [.integer(id)])
            try database.run("DELETE FROM attachment_content WHERE id = ?", [.integer(id)])
        }
        try database.run("DELETE FROM attachment_chunk WHERE content_id NOT IN (SELECT id FROM attachment_content)")
        try database.run("DELETE FROM attachment WHERE NOT EXISTS (SELECT 1 FROM message WHERE id = attachment.message_id)")
        try database.run(
            """
            UPDATE attachment SET content_id = NULL, absence = 'its stored bytes were lost; import the export again to bring them back'
             WHERE content_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM attachment_content WHERE id = attachment.content_id)
            """)
        try database.run(
            """
            UPDATE attachment_content SET unused_since = NULL
             WHERE unused_since IS NOT NULL AND EXISTS (SELECT 1 FROM attachment WHERE content_id = attachment_content.id)
            """)
        try database.run(
            """
            UPDATE attachment_content SET unused_since = CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)
             WHERE unused_since IS NULL AND NOT EXISTS (SELECT 1 FROM attachment WHERE content_id = attachment_content.id)
            """)
        return damaged.count
    }

    // MARK: Checking

    /// What is wrong with the shape of a stored file, said in a few words.
    struct ShapeProblem: Error {
        let text: String
    }

    /// The chunk rows of a stored file, in order, when they are exactly what scrollback
    /// writes for its size (chunks of `chunkSize`, the last one the rest, numbered from 0,
    /// every one a blob): `read` and `check` both go by it, so they agree.
    func chunks(of content: Int64) throws -> Result<[(row: Int64, length: Int)], ShapeProblem> {
        guard let stored = try database.queryFirst(
            "SELECT size, chunk_size FROM attachment_content WHERE id = ?", [.integer(content)], { (size: $0.int64(0), chunkSize: $0.int64(1)) })
        else { return .failure(ShapeProblem(text: "it is not stored")) }
        // Numbers from the file, checked before any arithmetic with them.
        guard stored.chunkSize == Int64(Self.chunkSize) else {
            return .failure(ShapeProblem(text: "its chunk size \(stored.chunkSize) is not the \(Self.chunkSize) scrollback writes"))
        }
        guard (0...Self.largestFile).contains(stored.size) else {
            return .failure(ShapeProblem(text: "its recorded size \(stored.size) is out of range"))
        }
        let rows = try database.query(
            "SELECT rowid, idx, length(data), typeof(data) FROM attachment_chunk WHERE content_id = ? ORDER BY idx", [.integer(content)]
        ) { (row: $0.int64(0), index: $0.int64(1), length: $0.int64(2), type: $0.text(3)) }
        let size = stored.size
        let whole = Int64(Self.chunkSize)
        let expected = size == 0 ? 0 : (size + whole - 1) / whole
        guard Int64(rows.count) == expected else {
            return .failure(ShapeProblem(text: "its \(size) bytes should be in \(expected) chunk\(expected == 1 ? "" : "s"), not \(rows.count)"))
        }
        var chunks: [(row: Int64, length: Int)] = []
        for (offset, row) in rows.enumerated() {
            let place = Int64(offset)
            let length = place == expected - 1 ? size - place * whole : whole
            guard row.type == "blob", row.index == place, row.length == length else {
                return .failure(ShapeProblem(text: "chunk \(offset + 1) of \(expected) is not the \(length) bytes it should be"))
            }
            chunks.append((row.row, Int(length)))
        }
        return .success(chunks)
    }

    /// What is wrong with the stored attachments: every content's bytes hashed again and
    /// compared, its chunks counted and measured, and every reference between the tables
    /// followed. At most 20 problems.
    func problems() throws -> [String] {
        var problems: [String] = []
        let contents = try database.query("SELECT id, sha256 FROM attachment_content ORDER BY id") { (id: $0.int64(0), sha256: $0.text(1)) }
        for content in contents where problems.count < 20 {
            let name = "attachment \(content.sha256.prefix(12))"
            if case .failure(let problem) = try chunks(of: content.id) {
                problems.append("\(name): \(problem.text); run `scrollback check --repair`, then import the export again")
                continue
            }
            // The read hashes what it reads, and throws when that is not the file's hash.
            do {
                try read(sha256: content.sha256) { _ in }
            } catch StorageError.conflict {
                problems.append(
                    "\(name): its bytes no longer match their SHA-256 (damaged); run `scrollback check --repair`, then import the export again")
            }
        }
        problems += try database.query(
            """
            SELECT DISTINCT content_id FROM attachment_chunk
             WHERE content_id NOT IN (SELECT id FROM attachment_content) LIMIT 5
            """) { "attachment bytes: chunks of content \($0.int64(0)) belong to no stored file; run `scrollback check --repair`" }
        problems += try database.query(
            """
            SELECT a.id FROM attachment AS a
             WHERE (a.content_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM attachment_content WHERE id = a.content_id))
                OR NOT EXISTS (SELECT 1 FROM message WHERE id = a.message_id)
             LIMIT 5
            """) { "attachment \($0.int64(0)): belongs to no message or points at bytes that are not stored; run `scrollback check --repair`" }
        problems += try database.query(
            """
            SELECT c.sha256 FROM attachment_content AS c
             WHERE (c.unused_since IS NULL) = NOT EXISTS (SELECT 1 FROM attachment WHERE content_id = c.id) LIMIT 5
            """) { "attachment \($0.text(0).prefix(12)): marked used when it is not, or unused when it is; run `scrollback check --repair`" }
        return Array(problems.prefix(20))
    }
}

/// SHA-256 through libcrypto, fed in pieces.
final class SHA256 {
    private let context: OpaquePointer?

    init() {
        context = EVP_MD_CTX_new()
        if let context { EVP_DigestInit_ex(context, EVP_sha256(), nil) }
    }

    deinit { EVP_MD_CTX_free(context) }

    func update(_ piece: UnsafeRawBufferPointer) {
        guard let context, let base = piece.baseAddress, piece.count > 0 else { return }
        EVP_DigestUpdate(context, base, piece.count)
    }

    /// The digest in lower-case hex (once: the context is spent).
    func finish() -> String {
        guard let context else { return "" }
        var digest = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        EVP_DigestFinal_ex(context, &digest, &length)
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(64)
        for byte in digest.prefix(Int(length)) {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0xF)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
