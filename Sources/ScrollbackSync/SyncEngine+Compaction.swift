import Foundation
import ScrollbackModel
import ScrollbackStorage

// Compaction: the ops a kept snapshot covers, that every machine that synced lately has
// passed, are deleted from the server, so that it grows with the history rather than with
// the number of edits. Each machine says how far it has come (`scrollback.progress`: its
// cursors, when it last synced) at the end of each sync; a machine away longer than
// `awayDays` that comes back to ops it never received catches up from the newest snapshot
// (`mergeSnapshotIfBehind`), its own unsent changes kept and sent as they would have been.

/// What a compaction removed.
public struct CompactionReport: Sendable, Equatable {
    public var ops = 0
    public var snapshots = 0
    public var files = 0
}

extension SyncEngine {
    /// Says how far this machine has come: its cursors, and its own ops as far as sent.
    func reportProgress() throws {
        var cursors = try store.syncCursors()
        let local = try store.localSyncState()
        cursors[machine] = max(0, local.nextSeq - 1 - Int64(local.pending))
        let arrays = Self.arrays(of: cursors)
        try connection.query(
            """
            INSERT INTO scrollback.progress (machine_id, synced_at, machines, seqs) VALUES ($1, now(), $2::text[], $3::int8[])
            ON CONFLICT (machine_id) DO UPDATE SET synced_at = excluded.synced_at, machines = excluded.machines, seqs = excluded.seqs
            """, [.text(machine)] + arrays)
    }

    /// Ops on the server after the newest snapshot's cursors (all of them when there is none),
    /// counted per machine from its highest number: one index lookup each.
    func opsSinceNewestSnapshot() throws -> Int64 {
        let newest = try Self.snapshots(on: connection, where: "complete_at IS NOT NULL", []).first
        let rows = try connection.query(
            "SELECT m.machine_id, (SELECT max(seq) FROM scrollback.op AS o WHERE o.machine_id = m.machine_id)::int8 FROM scrollback.machine AS m")
        var total: Int64 = 0
        for row in 0..<rows.rows {
            guard let machine = rows.text(row, 0), let last = rows.integer(row, 1) else { continue }
            total += max(0, last - (newest?.cursors[machine] ?? 0))
        }
        return total
    }

    /// Under the lease (after a snapshot): the snapshots kept are the newest and, for each of
    /// the last `keepMonths` months, the newest of that month; the others go, with cut
    /// uploads older than a day. Then the ops the oldest kept snapshot covers that every
    /// machine active in the last `awayDays` days has passed go, in the same transaction, and
    /// the files' chunks that nothing kept names (`liveFiles`: this machine's files and
    /// those the kept snapshots name) and that were sent before that snapshot.
    func compact(keepMonths: Int, awayDays: Int, liveFiles: [String]) throws -> CompactionReport {
        try transaction {
            var report = CompactionReport()
            let lease = try connection.query(
                "SELECT 1 FROM scrollback.snapshot_lease WHERE id = 1 AND machine_id = $1 AND expires_at > now() FOR UPDATE", [.text(machine)])
            guard lease.rows == 1 else { throw SnapshotError.leaseLost }
            let dropped = try connection.query(
                """
                WITH complete AS (SELECT id, started_at FROM scrollback.snapshot WHERE complete_at IS NOT NULL),
                     newest AS (SELECT id FROM complete ORDER BY started_at DESC, id LIMIT 1),
                     monthly AS (SELECT DISTINCT ON (date_trunc('month', started_at)) id FROM complete
                                  WHERE started_at > now() - make_interval(months => $1::int4)
                                  ORDER BY date_trunc('month', started_at), started_at DESC, id)
                DELETE FROM scrollback.snapshot
                 WHERE (complete_at IS NOT NULL AND id NOT IN (SELECT id FROM newest UNION SELECT id FROM monthly))
                    OR (complete_at IS NULL AND started_at < now() - interval '1 day')
                RETURNING id
                """, [.text(String(max(0, keepMonths)))])
            report.snapshots = dropped.rows
            guard let base = try Self.snapshots(on: connection, where: "complete_at IS NOT NULL", []).last else { return report }
            // Who must have passed an op before it goes: every machine that synced in the last
            // `awayDays` days, and every one registered since that has not said yet.
            let active = try connection.query(
                """
                SELECT m.machine_id, coalesce(array_to_string(p.machines, ','), ''), coalesce(array_to_string(p.seqs, ','), '')
                  FROM scrollback.machine AS m LEFT JOIN scrollback.progress AS p ON p.machine_id = m.machine_id
                 WHERE p.synced_at > now() - make_interval(days => $1::int4)
                    OR (p.machine_id IS NULL AND m.registered_at > now() - make_interval(days => $1::int4))
                """, [.text(String(max(1, awayDays)))])
            var passed: [String: [String: Int64]] = [:]
            for row in 0..<active.rows {
                guard let id = active.text(row, 0) else { continue }
                let machines = (active.text(row, 1) ?? "").split(separator: ",").map(String.init)
                let seqs = (active.text(row, 2) ?? "").split(separator: ",").compactMap { Int64($0) }
                passed[id] = machines.count == seqs.count ? Dictionary(zip(machines, seqs), uniquingKeysWith: { first, _ in first }) : [:]
            }
            for (origin, covered) in base.cursors.sorted(by: { $0.key < $1.key }) {
                var bound = covered
                for (id, cursors) in passed where id != origin { bound = min(bound, cursors[origin] ?? 0) }
                guard bound > 0 else { continue }
                let deleted = try connection.query(
                    "DELETE FROM scrollback.op WHERE machine_id = $1 AND seq <= $2::int8 RETURNING 1", [.text(origin), .text(String(bound))])
                report.ops += deleted.rows
                // How far it went: the server still knows what each machine sent.
                try connection.query(
                    """
                    INSERT INTO scrollback.compacted AS c (machine_id, through) VALUES ($1, $2::int8)
                    ON CONFLICT (machine_id) DO UPDATE SET through = greatest(c.through, excluded.through)
                    """, [.text(origin), .text(String(bound))])
            }
            // Files: those sent before the oldest kept snapshot that nothing kept names.
            let kept = try connection.query(
                "SELECT coalesce(array_to_string(array_agg(DISTINCT f), ','), '') FROM scrollback.snapshot, unnest(files) AS f WHERE complete_at IS NOT NULL")
            let named = Set((kept.text(0, 0) ?? "").split(separator: ",").map(String.init) + liveFiles)
            let old = try connection.query(
                "SELECT name FROM scrollback.file WHERE sent_at < (SELECT started_at FROM scrollback.snapshot WHERE id = $1)", [.text(base.id)])
            let gone = (0..<old.rows).compactMap { old.text($0, 0) }.filter { !named.contains($0) }
            if !gone.isEmpty {
                let list = "{" + gone.joined(separator: ",") + "}"
                try connection.query("DELETE FROM scrollback.file WHERE name = ANY($1::text[])", [.text(list)])
                try connection.query("DELETE FROM scrollback.file_chunk WHERE name = ANY($1::text[])", [.text(list)])
                report.files = gone.count
            }
            return report
        }
    }

    /// Before a pull: when the server no longer holds the ops this machine would read next
    /// of some machine (a compaction passed it while it was away) and the newest snapshot
    /// covers them, that snapshot's state is merged here as a joining machine's would be
    /// (each field by its clock; what this machine changed and has not sent stays, and goes
    /// with the push as it would have), and the cursors move to the snapshot's. Returns
    /// whether it merged one.
    func mergeSnapshotIfBehind() throws -> Bool {
        guard try connection.query("SELECT count(*)::int8 FROM scrollback.compacted").integer(0, 0) ?? 0 > 0 else { return false }
        let candidates = try Self.usableSnapshots(on: connection)
        guard let newest = candidates.first else { return false }
        let cursors = try store.syncCursors()
        var behind = false
        for (origin, covered) in newest.cursors where origin != machine {
            let here = cursors[origin] ?? 0
            guard here < covered else { continue }
            let next = try connection.query(
                "SELECT count(*)::int8 FROM scrollback.op WHERE machine_id = $1 AND seq = $2::int8", [.text(origin), .text(String(here + 1))])
            if next.integer(0, 0) == 0 {
                behind = true
                break
            }
        }
        guard behind else { return false }
        var firstDamage: String?
        for candidate in candidates {
            let file = try Store.receivingFile(beside: store.path)
            defer {
                close(file.descriptor)
                for suffix in ["", "-journal", "-wal", "-shm"] { unlink(file.path + suffix) }
            }
            do {
                try Self.receive(candidate, on: connection, key: key, into: file.descriptor)
            } catch SnapshotError.damaged(let message) {
                // An older kept snapshot will do: the changes after it are on the server.
                if firstDamage == nil { firstDamage = message }
                continue
            }
            try merge(candidate, from: file.path)
            return true
        }
        throw SnapshotError.damaged(
            "\(firstDamage ?? "the server's snapshots do not open"); the changes it covers were compacted, so this machine cannot catch up without it: run `scrollback sync snapshot` on a machine that syncs, then `scrollback sync` here again (what this machine changed waits in its outbox)")
    }

    /// The state of the received image at `path` merged here by clocks, the cursors moved
    /// to the snapshot's.
    private func merge(_ newest: SnapshotListing, from path: String) throws {
        let image = try Store.open(path: path, createFolder: false, keepingCopy: false)
        let reader = Self.newMachineID()
        var after: Int64 = 0
        try store.applyingPages(about: Store.indexedPage) {
            while true {
                let page = try image.snapshotOps(as: reader, after: after, limit: 5_000)
                guard let last = page.last else { break }
                _ = try store.applySnapshotOps(page)
                after = last.seq
            }
        }
        var moved = newest.cursors
        moved.removeValue(forKey: machine)
        try store.advanceCursors(moved)
    }
}
