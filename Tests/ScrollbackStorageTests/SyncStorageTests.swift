import Foundation
import ScrollbackModel
import Testing
import TestSupport

@testable import ScrollbackStorage

@Suite("Sync's local side: schema 5, the outbox, records, clocks")
struct SyncStorageTests {
    @Test("a database of schema 4 upgrades to 5: backup first, the sync tables, data kept, check clean; deletes then stay deleted")
    func upgradeFromFour() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("four.sqlite")
        do {
            let four = try Store.open(path: path, migrator: Migrator(migrations: Array(Migrator.scrollback.migrations.prefix(4))))
            #expect(four.migration.toVersion == 4)
            // Written with the SQL of schema 4.
            for index in 0..<5 {
                try four.database.run(
                    "INSERT INTO conversation (id, public_id, title, source, source_id, created_at, updated_at) VALUES (?, ?, ?, 'chatgpt', ?, ?, ?)",
                    [.integer(Int64(index + 1) * 1_000 * 65_536), .text(StableID.uuid("chatgpt", "c\(index)")), .text("four \(index)"),
                     .text("c\(index)"), .integer(Int64(index + 1) * 1_000), .integer(Int64(index + 1) * 1_000)])
            }
        }
        let store = try Store.open(path: path)
        #expect(store.migration.fromVersion == 4 && store.migration.toVersion == Migrator.scrollback.latestVersion)
        let backup = try #require(store.migration.backupPath)
        #expect(try Store.open(path: backup, readOnly: true, migrator: Migrator(migrations: Array(Migrator.scrollback.migrations.prefix(4))))
            .conversations.count() == 5)
        for table in ["sync_outbox", "sync_clock", "sync_tombstone", "sync_cursor", "sync_parked", "sync_shadow"] {
            #expect(try store.database.scalarInt("SELECT count(*) FROM sqlite_schema WHERE name = ?", [.text(table)]) == 1, "\(table)")
        }
        #expect(try store.conversations.count() == 5)
        #expect(try store.check().problems.isEmpty)
        #expect(try store.localSyncState().machine == nil)
        // A delete leaves a tombstone; the same export imported again leaves it out.
        let first = try #require(try store.conversations.page(sort: .title, filter: .none, at: .first, limit: 1).items.first)
        #expect(try store.conversations.delete(id: first.id))
        let again = ImportedConversation(
            source: "chatgpt", sourceID: "c0", title: "four 0", model: nil, createdAt: Timestamp(milliseconds: 1_000),
            updatedAt: Timestamp(milliseconds: 1_000), messages: [])
        #expect(try store.upsert(again) == .deleted)
        #expect(try store.upsert(again, restoring: true) == .inserted)
        #expect(try store.conversations.count() == 5)
    }

    @Test("a database of schema 5 upgrades to 6: backup first, each message's clock moved from sync_clock into its row, the conversations' stay; sync goes on by them")
    func upgradeFromFive() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("five.sqlite")
        let machine = String(repeating: "b", count: 32)
        let old = HybridClock(wall: 1_700_000_000_000, counter: 0, machine: machine)
        let later = HybridClock(wall: 1_700_000_500_000, counter: 2, machine: machine)
        let five = Migrator(migrations: Array(Migrator.scrollback.migrations.prefix(5)))
        let conversation = StableID.uuid("five", "conversation")
        let clocked = StableID.uuid("five", "clocked"), older = StableID.uuid("five", "older")
        do {
            let store = try Store.open(path: path, migrator: five)
            #expect(store.migration.toVersion == 5)
            // Written with the SQL of schema 5: a synced conversation, its two messages (one
            // with a clock, one from before sync), a title's clock.
            try store.database.execute(
                """
                INSERT INTO conversation (id, public_id, title, source, created_at, updated_at)
                VALUES (65536000, '\(conversation)', 'Five', 'local', 1000, 2000);
                INSERT INTO message (id, public_id, conversation_id, position, role, content, created_at, parent_id)
                VALUES (65536001, '\(clocked)', 65536000, 0, 'user', 'question', 1000, NULL),
                       (65536002, '\(older)', 65536000, 1, 'assistant', 'answer', 2000, 65536001);
                UPDATE conversation SET current_leaf_id = 65536002, branch_length = 2 WHERE id = 65536000;
                INSERT INTO sync_clock (entity, field, clock) VALUES
                    ('\(clocked)', '*', '\(old.text)'), ('\(conversation)', 'title', '\(later.text)'), ('\(conversation)', '*', '\(old.text)');
                INSERT INTO settings (key, value) VALUES ('sync.machine', '\(machine)'), ('sync.next_seq', '1'), ('sync.clock', '\(later.text)');
                """)
        }
        let store = try Store.open(path: path)
        #expect(store.migration.fromVersion == 5 && store.migration.toVersion == Migrator.scrollback.latestVersion)
        let backup = try #require(store.migration.backupPath)
        #expect(try Store.open(path: backup, readOnly: true, migrator: five).database.scalarInt("SELECT count(*) FROM sync_clock") == 3)
        let clocks = try store.database.query("SELECT public_id, clock FROM message ORDER BY id") { ($0.text(0), $0.optionalText(1)) }
        #expect(clocks.map(\.0) == [clocked, older] && clocks.map(\.1) == [old.text, nil])
        let kept = try store.database.query("SELECT entity, field FROM sync_clock ORDER BY entity, field") { "\($0.text(0)) \($0.text(1))" }
        #expect(kept == ["\(conversation) *", "\(conversation) title"])
        let problems = try store.check().problems
        #expect(problems.isEmpty, "\(problems)")
        // Sync goes on by them: an op for the clocked message older than its clock changes
        // nothing; a newer one does, and its clock is the message's.
        let other = String(repeating: "c", count: 32)
        func op(_ seq: Int64, _ clock: HybridClock, _ content: String) -> IncomingOp {
            IncomingOp(
                machine: other, seq: seq, entity: clocked, clock: clock,
                plaintext: SyncRecord(kind: .message, conversation: conversation, createdAt: 1_000, role: "user", content: content).encoded())
        }
        let before = HybridClock(wall: 1_600_000_000_000, counter: 0, machine: other)
        let after = HybridClock(wall: 1_800_000_000_000, counter: 0, machine: other)
        #expect(try store.apply([op(1, before, "older text")], from: other, through: 1).ignored == 1)
        #expect(try store.apply([op(2, after, "newer text")], from: other, through: 2).applied == 1)
        #expect(try store.database.query("SELECT content, clock FROM message WHERE public_id = '\(clocked)'") { "\($0.text(0)) \($0.text(1))" }
            == ["newer text \(after.text)"])
        #expect(try store.database.scalarInt("SELECT count(*) FROM sync_clock WHERE entity = ?", [.text(clocked)]) == 0)
        // Sync turned off for good: no clock is left, in either place.
        try store.turnSyncOff(forget: true)
        #expect(try store.database.scalarInt("SELECT count(*) FROM message WHERE clock IS NOT NULL") == 0)
        #expect(try store.database.scalarInt("SELECT count(*) FROM sync_clock") == 0)
    }

    @Test("ops are numbered without gaps, in the transaction of their change; a change rolled back leaves no op")
    func gapless() throws {
        let store = try Store.open(path: ":memory:")
        _ = try store.turnSyncOn(machine: String(repeating: "a", count: 32), joining: false)
        let one = try store.addConversation(title: "one", createdAt: 1_000, messages: ["q", "a"])
        // Each message made with sync on has its op's clock in its row.
        #expect(try store.database.query("SELECT m.clock = o.clock FROM message AS m JOIN sync_outbox AS o ON o.entity = m.public_id") {
            $0.bool(0)
        } == [true, true])
        _ = try store.conversations.rename(id: one.id, to: "uno")
        // A savepoint that fails: its ops go with it, and the next op follows the last kept.
        #expect(throws: (any Error).self) {
            try store.transaction {
                _ = try store.conversations.rename(id: one.id, to: "rolled back")
                throw StorageError.invalidTitle
            }
        }
        _ = try store.conversations.setPinned(id: one.id, true)
        // A conversation whose message fails mid-import is taken back with its ops.
        let broken = ImportedConversation(
            source: "x", sourceID: "1", title: "broken", model: nil, createdAt: Timestamp(milliseconds: 5_000),
            updatedAt: Timestamp(milliseconds: 5_000),
            messages: [
                ImportedMessage(role: .user, content: "a", createdAt: Timestamp(milliseconds: 5_000), publicID: "same"),
                ImportedMessage(role: .user, content: "b", createdAt: Timestamp(milliseconds: 5_001), publicID: "same"),
            ])
        #expect(throws: (any Error).self) { try store.transaction { _ = try store.upsert(broken) } }
        try store.transaction {
            _ = try? store.upsert(broken)
            _ = try store.conversations.rename(id: one.id, to: "after")
        }
        let ops = try store.outgoing(limit: 100)
        #expect(ops.map(\.seq) == Array(1...Int64(ops.count)))
        let kinds = ops.compactMap { SyncRecord(decoding: $0.plaintext)?.kind }
        #expect(kinds == [.conversation, .message, .message, .leaf, .title, .pin, .title])
        #expect(try store.database.scalarInt("SELECT count(*) FROM conversation WHERE title = 'broken'") == 0)
        #expect(try store.database.scalarInt("SELECT count(*) FROM sync_tombstone") == 0)
        // Sent ops are not sent again; numbering goes on after them. The outbox keeps them
        // until all of it is sent, then is emptied whole.
        try store.markSent(through: 3)
        _ = try store.conversations.rename(id: one.id, to: "later")
        let total = Int64(ops.count + 1)
        #expect(try store.outgoing(limit: 100).map(\.seq) == Array(4...total))
        #expect(try store.localSyncState().pending == Int(total) - 3)
        #expect(try store.database.scalarInt("SELECT count(*) FROM sync_outbox") == total)
        try store.markSent(through: 2)  // an older mark changes nothing
        #expect(try store.localSyncState().pending == Int(total) - 3)
        try store.markSent(through: total)
        #expect(try store.database.scalarInt("SELECT count(*) FROM sync_outbox") == 0)
        #expect(try store.localSyncState().pending == 0 && store.outgoing(limit: 100).isEmpty)
        _ = try store.conversations.setPinned(id: one.id, false)
        #expect(try store.outgoing(limit: 100).map(\.seq) == [total + 1])
        #expect(try store.localSyncState().nextSeq == total + 2)
    }

    @Test("a repaired branch stays here: check --repair sends nothing, and check says a sync cut short may be why")
    func repairStaysLocal() throws {
        let store = try Store.open(path: ":memory:")
        _ = try store.turnSyncOn(machine: String(repeating: "b", count: 32), joining: false)
        let one = try store.addConversation(title: "one", createdAt: 1_000, messages: ["q", "a"])
        let before = try store.localSyncState().pending
        // As a catch-up cut short leaves it: messages, and the branch still to come.
        try store.database.execute("UPDATE conversation SET current_leaf_id = NULL, branch_length = 0 WHERE id = \(one.id)")
        let problems = try store.check().problems
        #expect(!problems.isEmpty && problems.allSatisfy { !$0.hasPrefix("branches") || $0.contains("run `scrollback sync` first") })
        try store.repair()
        #expect(try store.check().problems.isEmpty)
        #expect(try store.localSyncState().pending == before)
        // A branch chosen later is sent as usual.
        _ = try store.conversations.rename(id: one.id, to: "uno")
        #expect(try store.localSyncState().pending == before + 1)
    }

    @Test("a record read from any bytes is the record written, or nil: never a trap")
    func records() throws {
        let record = SyncRecord(
            kind: .message, conversation: "c", model: "m", createdAt: -5, parent: "p", role: "user", content: "héllo\u{0}",
            nodeID: "n", inputTokens: Int64.max, outputTokens: 0, durationMilliseconds: Int64.min)
        let bytes = record.encoded()
        #expect(SyncRecord(decoding: bytes) == record)
        // Every cut, and random damage.
        for length in 0..<bytes.count {
            let cut = SyncRecord(decoding: Array(bytes.prefix(length)))
            #expect(cut == nil || cut?.kind == .message)
        }
        var random = SeededRandom(seed: 3)
        for _ in 0..<2_000 {
            var damaged = bytes
            damaged[Int(random.next() % UInt64(damaged.count))] = UInt8(truncatingIfNeeded: random.next())
            _ = SyncRecord(decoding: damaged)
            let noise = (0..<Int(random.next() % 40)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            _ = SyncRecord(decoding: noise)
        }
        // A length past the end is refused, not read.
        #expect(SyncRecord(decoding: [1, 0xFF, 0xFF, 0xFF, 0xFF, 65]) == nil)
        // An unknown tag is skipped (a later version's field).
        #expect(SyncRecord(decoding: [99, 0, 0, 0, 1, 7] + SyncRecord(kind: .restore).encoded())?.kind == .restore)
    }

    @Test("clock readings: text that sorts as they do, ticks after every reading seen, bad text refused")
    func clocks() throws {
        let machine = String(repeating: "b", count: 32)
        var clock = HybridClock.origin(of: machine)
        var readings: [HybridClock] = []
        for now in [5, 5, 5, 4, 9, 9] as [Int64] {
            clock = clock.tick(now: now)
            readings.append(clock)
        }
        #expect(readings == readings.sorted() && Set(readings).count == readings.count)
        #expect(readings.map(\.text) == readings.map(\.text).sorted())
        let remote = HybridClock(wall: 1_000, counter: 7, machine: String(repeating: "c", count: 32))
        let after = clock.observing(remote).tick(now: 10)
        #expect(after > remote && after.machine == machine)
        for reading in readings + [remote, after] { #expect(HybridClock(text: reading.text) == reading) }
        #expect(HybridClock(text: "") == nil)
        #expect(HybridClock(text: String(repeating: "z", count: 52)) == nil)
        #expect(HybridClock(text: "000000000000" + "00000000" + String(repeating: "B", count: 32)) == nil)
        // Out of range numbers are clamped, never trapped on.
        #expect(HybridClock(wall: Int64.max, counter: -1, machine: machine).wall == HybridClock.wallLimit)
        #expect(HybridClock(wall: HybridClock.wallLimit, counter: HybridClock.counterLimit, machine: machine).tick(now: 0).wall
            == HybridClock.wallLimit)
    }

    /// One writer per table, checked in the sources (the released migrations are history):
    /// a second writer's rows would pass its owner by (the outbox, the settings' one list).
    @Test("one writer per table: Writer for conversations, messages and branches; SettingsTable for settings; Outbox for the outbox", arguments: [
        ("conversation|message|branch_choice", "ScrollbackStorage/Writer.swift"),
        ("settings", "ScrollbackStorage/SettingsTable.swift"),
        ("sync_outbox", "ScrollbackStorage/Outbox.swift"),
    ])
    func oneWriter(tables: String, owner: String) throws {
        let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Sources")
        var statement = #"(INSERT( OR [A-Z]+)? INTO|UPDATE|DELETE FROM|REPLACE INTO)\s+("# + tables + #")\b"#
        // Settings are read through their one owner too, by the keys of one list.
        if tables == "settings" { statement = #"(INSERT( OR [A-Z]+)? INTO|UPDATE|DELETE FROM|REPLACE INTO|FROM)\s+settings\b"# }
        let pattern = try NSRegularExpression(pattern: statement)
        var writers: Set<String> = []
        let files = FileManager.default.enumerator(atPath: sources.path)
        while let file = files?.nextObject() as? String {
            guard file.hasSuffix(".swift"), !file.hasPrefix("scrollback-bench/") else { continue }
            let text = try String(contentsOf: sources.appendingPathComponent(file), encoding: .utf8)
            for match in pattern.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                let line = text[..<(Range(match.range, in: text)?.lowerBound ?? text.startIndex)].split(separator: "\n").count
                writers.insert("\(file):\(line)")
            }
        }
        let outside = writers.filter { !$0.hasPrefix(owner) && !$0.hasPrefix("ScrollbackStorage/Schema.swift") }
        #expect(outside.isEmpty, "\(outside.sorted())")
        #expect(writers.contains { $0.hasPrefix(owner) })
    }
}
