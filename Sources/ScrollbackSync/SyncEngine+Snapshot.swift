import Foundation
import ScrollbackModel
import ScrollbackStorage

// Snapshots: the synced history as one sealed image on the server, so that a new machine
// catches up at the speed of its download instead of replaying every op.
//
// The server holds `scrollback.snapshot` (id, the machine that made it, chunk count, bytes,
// the op cursors it covers as two arrays, when it was begun and completed), its chunks in
// `scrollback.snapshot_chunk`, and `scrollback.snapshot_lease`, one row: the machine making
// one now, until when. An advisory lock would not survive a transaction pooler, and an
// upload spans many transactions.
//
// Each chunk is sealed with AES-256-GCM under the sync key; its associated data holds the
// snapshot's id, the chunk's index, the chunk count, the byte count and the cursors, so that
// a chunk swapped, moved from another snapshot, dropped or cut, or cursors changed on the
// server, do not open.

/// A snapshot the server lists as complete.
public struct SnapshotListing: Sendable, Equatable {
    public var id: String
    public var machine: String
    /// The plaintext bytes of each chunk but the last.
    public var chunkSize: Int
    public var chunks: Int
    public var bytes: Int64
    public var cursors: [String: Int64]
    /// When its image was made (milliseconds): the moment its history is of.
    public var startedAt: Int64 = 0
}

/// What `sync snapshot` sent.
public struct SnapshotReport: Sendable, Equatable {
    public var id: String
    public var chunks: Int
    public var bytes: Int64
    /// Chunks the server held already from a cut upload of the same snapshot.
    public var resumed: Int
    public var conversations: Int
    /// What the compaction after it removed from the server.
    public var compacted = CompactionReport()
}

/// Why a snapshot was not made.
public enum SnapshotError: Error, Equatable, UserFacingError, CustomStringConvertible {
    /// Another machine holds the lease.
    case leased(machine: String, until: String)
    /// The lease ran out (another machine took it) while this one uploaded.
    case leaseLost
    /// A received chunk does not open, or is out of its place; says which.
    case damaged(String)

    public var description: String {
        switch self {
        case .leased(let machine, let until):
            "machine \(machine) is making a snapshot (its lease runs until \(until)); nothing was sent; try again later"
        case .leaseLost:
            "another machine took the snapshot's lease while this one was sending (it had run out); what was sent stays on the server, and `scrollback sync snapshot` goes on from it"
        case .damaged(let message): message
        }
    }

    public var userLine: String { description }
}

extension SyncEngine {
    /// The plaintext of one snapshot chunk (`snapshotChunkSize` unless set), and the most a
    /// receiver takes (its memory holds two).
    public static let snapshotChunk = 4 << 20
    static let largestSnapshotChunk = 16 << 20
    /// How long a lease holds without being renewed.
    static let leaseSeconds = 600

    /// The cursors as one text, sorted: `machine:seq,…`.
    static func cursorText(_ cursors: [String: Int64]) -> String {
        cursors.sorted { $0.key < $1.key }.map { "\($0.key):\($0.value)" }.joined(separator: ",")
    }

    static func snapshotAAD(_ listing: SnapshotListing, index: Int) -> [UInt8] {
        Array(
            "scrollback-snapshot-v1\u{1F}\(listing.id)\u{1F}\(index)\u{1F}\(listing.chunks)\u{1F}\(listing.chunkSize)\u{1F}\(listing.bytes)\u{1F}\(cursorText(listing.cursors))"
                .utf8)
    }

    static func chunkCount(bytes: Int64, chunkSize: Int) -> Int {
        let whole = Int64(max(chunkSize, 1))
        return Int(clamping: max(1, (bytes + whole - 1) / whole))
    }

    // MARK: The lease

    /// Takes (or renews) the lease for this machine, or throws `SnapshotError.leased`.
    func takeLease() throws {
        let taken = try connection.query(
            """
            INSERT INTO scrollback.snapshot_lease AS l (id, machine_id, expires_at) VALUES (1, $1, now() + make_interval(secs => $2::int4))
            ON CONFLICT (id) DO UPDATE SET machine_id = excluded.machine_id, expires_at = excluded.expires_at
             WHERE l.expires_at < now() OR l.expires_at > now() + interval '1 day' OR l.machine_id = excluded.machine_id
            RETURNING machine_id
            """, [.text(machine), .text(String(Self.leaseSeconds))])
        guard taken.rows == 0 else { return }
        let holder = try connection.query(
            "SELECT machine_id, coalesce(to_char(expires_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS') || ' UTC', 'an unreadable time') FROM scrollback.snapshot_lease WHERE id = 1")
        throw SnapshotError.leased(machine: holder.text(0, 0) ?? "?", until: holder.text(0, 1) ?? "?")
    }

    /// Renews this machine's lease; throws `SnapshotError.leaseLost` when it is another's now.
    func renewLease() throws {
        let renewed = try connection.query(
            "UPDATE scrollback.snapshot_lease SET expires_at = now() + make_interval(secs => $2::int4) WHERE id = 1 AND machine_id = $1 RETURNING id",
            [.text(machine), .text(String(Self.leaseSeconds))])
        guard renewed.rows == 1 else { throw SnapshotError.leaseLost }
    }

    func releaseLease() {
        _ = try? connection.query("DELETE FROM scrollback.snapshot_lease WHERE id = 1 AND machine_id = $1", [.text(machine)])
    }

    // MARK: Making one

    /// Makes a snapshot of what this machine holds and sends it, under the lease: the image
    /// (`Store.writeSnapshotImage`) read a chunk at a time, sealed and inserted, a
    /// statement each (what the server holds of a cut upload stays); then marked complete.
    /// A cut upload is taken up again by the next call, from the chunks the server holds,
    /// with the same image (kept beside the database, its name in the store). Run after a
    /// sync, so that what it covers is on the server.
    /// - Parameter stopAfter: for tests: throws `SyncError.connectionLost` once that many
    ///   chunks were sent in this call.
    public func makeSnapshot(progress: ((Int, Int) -> Void)? = nil, stopAfter: Int? = nil) throws -> SnapshotReport {
        if !serverChecked {
            try checkServer()
            serverChecked = true
        }
        try takeLease()
        var keepImage = false
        var imagePath: String?
        defer {
            releaseLease()
            if !keepImage, let imagePath {
                unlink(imagePath)
                try? store.clearPendingSnapshot()
            }
        }
        var listing: SnapshotListing
        var conversations = 0
        let newestComplete = try Self.snapshots(on: connection, where: "complete_at IS NOT NULL", []).first
        if let pending = try store.pendingSnapshot(), let row = try snapshotRow(id: pending.id), row.machine == machine,
            FileManager.default.fileExists(atPath: pending.path), fileSize(pending.path) == row.bytes,
            // An image older than a snapshot another machine finished meanwhile is of no use.
            row.startedAt >= (newestComplete?.startedAt ?? 0)
        {
            listing = row
            imagePath = pending.path
        } else {
            if let pending = try store.pendingSnapshot() {
                unlink(pending.path)
                try store.clearPendingSnapshot()
            }
            let image = try store.writeSnapshotImage()
            let id = Outbox.newID()
            // Under a name of its own, noted in the store: a cut upload goes on with it.
            let kept = PathText.parent(of: image.path) + "/." + PathText.lastComponent(of: store.path) + ".upload-" + id
            guard rename(image.path, kept) == 0 else {
                store.removeSnapshotImage(image.path)
                throw StorageError.cannotOpen(path: kept, reason: String(cString: strerror(errno)).lowercased())
            }
            store.removeSnapshotImage(image.path)
            imagePath = kept
            try store.setPendingSnapshot(id: id, path: kept)
            listing = SnapshotListing(
                id: id, machine: machine, chunkSize: snapshotChunkSize, chunks: Self.chunkCount(bytes: image.bytes, chunkSize: snapshotChunkSize),
                bytes: image.bytes, cursors: image.cursors)
            conversations = image.conversations
            let machines = listing.cursors.keys.sorted()
            try connection.query(
                """
                INSERT INTO scrollback.snapshot (id, machine_id, chunk_size, chunks, bytes, machines, seqs, files)
                VALUES ($1, $2, $3::int4, $4::int4, $5::int8, $6::text[], $7::int8[], $8::text[])
                """,
                [.text(id), .text(machine), .text(String(listing.chunkSize)), .text(String(listing.chunks)), .text(String(listing.bytes)),
                 .text("{" + machines.joined(separator: ",") + "}"),
                 .text("{" + machines.map { String(listing.cursors[$0] ?? 0) }.joined(separator: ",") + "}"),
                 .text("{" + (try image.files.map { try key.fileName(sha256: $0) }).joined(separator: ",") + "}")])
        }
        guard let path = imagePath else { throw SnapshotError.damaged("the snapshot's image is gone") }
        keepImage = true
        let present = try connection.query("SELECT idx FROM scrollback.snapshot_chunk WHERE snapshot_id = $1", [.text(listing.id)])
        let there = Set((0..<present.rows).compactMap { present.integer($0, 0) })
        let file = open(path, O_RDONLY | O_CLOEXEC)
        guard file >= 0 else { throw StorageError.cannotOpen(path: path, reason: String(cString: strerror(errno)).lowercased()) }
        defer { close(file) }
        var buffer = [UInt8](repeating: 0, count: listing.chunkSize)
        // One buffer for the sealed chunk too: nonce, ciphertext and tag, sent from where it is.
        var sealed = [UInt8](repeating: 0, count: listing.chunkSize + 64)
        var sent = 0
        for index in 0..<listing.chunks {
            progress?(index, listing.chunks)
            guard !there.contains(Int64(index)) else { continue }
            if let stopAfter, sent >= stopAfter { throw SyncError.connectionLost("stopped after \(sent) chunks (a test)") }
            let offset = Int64(index) * Int64(listing.chunkSize)
            let length = Int(min(Int64(listing.chunkSize), listing.bytes - offset))
            let read = buffer.withUnsafeMutableBytes { pread(file, $0.baseAddress, length, off_t(offset)) }
            guard read == length else { throw StorageError.cannotOpen(path: path, reason: "the snapshot's image was cut short") }
            let aad = Self.snapshotAAD(listing, index: index)
            let count = try buffer.withUnsafeBytes { plain in
                try sealed.withUnsafeMutableBytes { out in try key.seal(UnsafeRawBufferPointer(rebasing: plain[0..<length]), aad: aad, into: out) }
            }
            _ = try sealed.withUnsafeBytes { out in
                try connection.query(
                    "INSERT INTO scrollback.snapshot_chunk (snapshot_id, idx, sealed) VALUES ($1, $2::int4, $3) ON CONFLICT DO NOTHING",
                    texts: [listing.id, String(index)], bytes: UnsafeRawBufferPointer(rebasing: out[0..<count]))
            }
            sent += 1
            if sent % 16 == 0 { try renewLease() }
        }
        try renewLease()
        try transaction {
            try connection.query("UPDATE scrollback.snapshot SET complete_at = now() WHERE id = $1", [.text(listing.id)])
            // Cut uploads of this machine that will never go on.
            try connection.query(
                "DELETE FROM scrollback.snapshot WHERE machine_id = $1 AND complete_at IS NULL AND id <> $2", [.text(machine), .text(listing.id)])
        }
        progress?(listing.chunks, listing.chunks)
        keepImage = false
        let live = try store.allAttachmentHashes().map { try key.fileName(sha256: $0) }
        let compacted = try compact(keepMonths: keepMonths, awayDays: awayDays, liveFiles: live)
        return SnapshotReport(
            id: listing.id, chunks: listing.chunks, bytes: listing.bytes, resumed: there.count, conversations: conversations,
            compacted: compacted)
    }

    private func fileSize(_ path: String) -> Int64 {
        var status = stat()
        return stat(path, &status) == 0 ? Int64(status.st_size) : -1
    }

    func snapshotRow(id: String) throws -> SnapshotListing? {
        try Self.snapshots(on: connection, where: "id = $1", [.text(id)]).first
    }

    /// Snapshots whose rows are as they should be (others are passed over), newest first.
    static func snapshots(on connection: PostgresConnection, where condition: String, _ parameters: [PostgresValue]) throws
        -> [SnapshotListing]
    {
        let rows = try connection.query(
            """
            SELECT id, machine_id, chunks::int8, bytes, array_to_string(machines, ','), array_to_string(seqs, ','),
                   cardinality(machines)::int8, cardinality(seqs)::int8, chunk_size::int8,
                   (extract(epoch FROM started_at) * 1000)::int8
              FROM scrollback.snapshot WHERE \(condition) ORDER BY started_at DESC, id
            """, parameters)
        var found: [SnapshotListing] = []
        for row in 0..<rows.rows {
            guard let id = rows.text(row, 0), HybridClock.isMachineID(id), let machine = rows.text(row, 1), HybridClock.isMachineID(machine),
                let chunks = rows.integer(row, 2), let bytes = rows.integer(row, 3), bytes >= 0, bytes <= 1 << 44,
                let chunkSize = rows.integer(row, 8), chunkSize >= 1, chunkSize <= Int64(largestSnapshotChunk),
                chunks == Int64(chunkCount(bytes: bytes, chunkSize: Int(chunkSize))), let machineText = rows.text(row, 4),
                let seqText = rows.text(row, 5),
                rows.integer(row, 6) == rows.integer(row, 7)
            else { continue }
            let machines = machineText.isEmpty ? [] : machineText.split(separator: ",").map(String.init)
            let seqs = seqText.isEmpty ? [] : seqText.split(separator: ",").compactMap { Int64($0) }
            guard machines.count == seqs.count, machines.allSatisfy(HybridClock.isMachineID), seqs.allSatisfy({ $0 >= 0 }) else { continue }
            found.append(
                SnapshotListing(
                    id: id, machine: machine, chunkSize: Int(chunkSize), chunks: Int(chunks), bytes: bytes,
                    cursors: Dictionary(zip(machines, seqs), uniquingKeysWith: { first, _ in first }), startedAt: rows.integer(row, 9) ?? 0))
        }
        return found
    }

    // MARK: A new machine from one

    /// The newest complete snapshot on the server at `conninfo`, if any.
    public static func newestSnapshot(conninfo: String) throws -> SnapshotListing? {
        let connection = try PostgresConnection(conninfo: conninfo)
        return try usableSnapshots(on: connection).first
    }

    /// The complete snapshots a machine can start from, newest image first: those whose
    /// cursors reach every machine's compacted changes (the changes after them are all on the
    /// server; an older image whose upload finished late does not). A complete row that is
    /// not as scrollback writes it, with none left to use, is said (`SnapshotError.damaged`).
    static func usableSnapshots(on connection: PostgresConnection) throws -> [SnapshotListing] {
        let listed = try snapshots(on: connection, where: "complete_at IS NOT NULL", [])
        let compacted = try connection.query("SELECT machine_id, through FROM scrollback.compacted")
        var through: [String: Int64] = [:]
        for row in 0..<compacted.rows {
            if let machine = compacted.text(row, 0), let seq = compacted.integer(row, 1) { through[machine] = seq }
        }
        let usable = listed.filter { listing in through.allSatisfy { (listing.cursors[$0.key] ?? 0) >= $0.value } }
        if usable.isEmpty {
            let rows = try connection.query("SELECT count(*)::int8 FROM scrollback.snapshot WHERE complete_at IS NOT NULL")
            if (rows.integer(0, 0) ?? 0) > 0 {
                throw SnapshotError.damaged(
                    listed.isEmpty
                        ? "the server's snapshot rows are not as scrollback writes them (changed by someone?); run `scrollback sync snapshot` on a machine that syncs to make a new one"
                        : "the server's snapshots are older than the changes it compacted; run `scrollback sync snapshot` on a machine that syncs to make a new one")
            }
        }
        return usable
    }

    /// Receives `listing` into the new file at `path` (open as `descriptor`): every chunk
    /// opened under `key` in its place and written; synced. Memory holds two chunks at most.
    /// - Throws: `SnapshotError.damaged` when a chunk does not open, is missing or out of
    ///   place; `SyncError` when the connection fails.
    public static func receive(
        _ listing: SnapshotListing, conninfo: String, key: SyncKey, into descriptor: Int32, progress: ((Int, Int) -> Void)? = nil
    ) throws {
        try receive(listing, on: try PostgresConnection(conninfo: conninfo), key: key, into: descriptor, progress: progress)
    }

    static func receive(
        _ listing: SnapshotListing, on connection: PostgresConnection, key: SyncKey, into descriptor: Int32,
        progress: ((Int, Int) -> Void)? = nil
    ) throws {
        var written: Int64 = 0
        var next = 0
        // One buffer for every chunk: each is opened from where libpq holds it, straight
        // into it, and written from it.
        var plain = [UInt8](repeating: 0, count: listing.chunkSize + 16)
        while next < listing.chunks {
            progress?(next, listing.chunks)
            let page = try connection.query(
                """
                SELECT idx::int8, sealed FROM scrollback.snapshot_chunk
                 WHERE snapshot_id = $1 AND idx >= $2::int4 AND octet_length(sealed) <= $3::int4 ORDER BY idx LIMIT 2
                """, [.text(listing.id), .text(String(next)), .text(String(listing.chunkSize + 64))])
            if page.rows > 0, page.type(1) != 17 { throw SyncError.changedColumn(name: "sealed", type: "bytea", table: "scrollback.snapshot_chunk") }
            guard page.rows > 0 else { throw SnapshotError.damaged("chunk \(next) of \(listing.chunks) of the server's snapshot is missing") }
            for row in 0..<page.rows {
                guard next < listing.chunks else { break }
                guard page.integer(row, 0) == Int64(next) else {
                    throw SnapshotError.damaged("chunk \(next) of \(listing.chunks) of the server's snapshot is missing")
                }
                let aad = snapshotAAD(listing, index: next)
                let opened = plain.withUnsafeMutableBytes { out in page.withBytes(row, 1) { key.open($0, aad: aad, into: out) } }
                guard let opened, let length = opened else {
                    throw SnapshotError.damaged("chunk \(next) of \(listing.chunks) of the server's snapshot does not open with this key in its place")
                }
                let expected = min(Int64(listing.chunkSize), listing.bytes - written)
                guard Int64(length) == expected else {
                    throw SnapshotError.damaged("chunk \(next) of the server's snapshot holds \(length) bytes, not \(expected)")
                }
                var offset = 0
                while offset < length {
                    let wrote = plain.withUnsafeBytes { write(descriptor, $0.baseAddress.map { $0 + offset }, length - offset) }
                    guard wrote > 0 else {
                        if errno == EINTR { continue }
                        if errno == ENOSPC || errno == EDQUOT { throw StorageError.diskFull(path: "the database's folder") }
                        throw StorageError.cannotOpen(path: "the snapshot being received", reason: String(cString: strerror(errno)).lowercased())
                    }
                    offset += wrote
                }
                // The disk starts on it now, while the rest comes: the sync at the end waits
                // for less.
                startWriteback(descriptor, offset: written, length: Int64(length))
                written += Int64(length)
                next += 1
            }
        }
        guard written == listing.bytes else { throw SnapshotError.damaged("the server's snapshot holds \(written) bytes, not \(listing.bytes)") }
        guard fsync(descriptor) == 0 else { throw StorageError.diskFull(path: "the database's folder") }
        progress?(listing.chunks, listing.chunks)
    }

    /// A new machine's database from the newest snapshot on the server at `conninfo`: received
    /// beside the database at `databasePath` (a private file that is removed whatever
    /// happens), every chunk opened in its place, adopted as a new machine's (its id
    /// returned), then put in place of the database, which must hold nothing
    /// (`Store.holdsNothing`) and be open in no other scrollback process. Nil when the server
    /// has no snapshot; the changes after it come with the next sync.
    /// - Throws: `SnapshotError.damaged`, `SyncError`, `StorageError`: nothing of the
    ///   snapshot was kept, and the database is as it was.
    /// - Parameter phases: told how long each step took, in milliseconds (the bench).
    public static func catchUp(
        conninfo: String, key: SyncKey, databasePath: String, progress: ((Int, Int) -> Void)? = nil,
        phases: ((String, Double) -> Void)? = nil
    ) throws -> (machine: String, listing: SnapshotListing)? {
        var last = Date()
        func lap(_ name: String) {
            let now = Date()
            phases?(name, now.timeIntervalSince(last) * 1000)
            last = now
        }
        let connection = try PostgresConnection(conninfo: conninfo)
        let candidates = try usableSnapshots(on: connection)
        lap("find")
        var first: (any Error)?
        // The newest first; a damaged one gives way to the one before it (the changes after
        // every kept snapshot are on the server).
        for listing in candidates {
            let file = try Store.receivingFile(beside: databasePath)
            defer {
                close(file.descriptor)
                for suffix in ["", "-journal", "-wal", "-shm"] { unlink(file.path + suffix) }
            }
            do {
                try receive(listing, on: connection, key: key, into: file.descriptor, progress: progress)
            } catch let error as SnapshotError {
                if first == nil { first = error }
                continue
            }
            lap("receive")
            let machine = newMachineID()
            try Store.adoptSnapshotImage(at: file.path, machine: machine, cursors: listing.cursors)
            lap("adopt")
            try Store.replaceEmptyDatabase(at: databasePath, with: file.path)
            lap("replace")
            return (machine, listing)
        }
        if let first { throw first }
        return nil
    }
}
