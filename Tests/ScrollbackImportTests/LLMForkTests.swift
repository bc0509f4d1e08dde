import Foundation
import Testing

@testable import ScrollbackImport
import ScrollbackModel
@testable import ScrollbackStorage
import TestSupport

/// llm 0.36 keeps one tree of messages (`hash`, `parent_hash`) that threads point into; a
/// thread forked from another (`forked_from`) shares its history up to the fork. A thread and
/// the threads forked from it, transitively, are one conversation keyed on the root thread.
/// The fixture `llm-0.36-forks.db` was made by the real llm (see make.sh and fork.py there).
@Suite("llm logs: forked threads as one conversation tree")
struct LLMForkTests {
    static let path = LLMImportTests.folder + "/llm-0.36-forks.db"
    static let root = "01m8qef71wz8jgxab36y31ftcv"
    static let train = "01m8qef87p45q2ncjgra0v2dmb"
    static let shinkansen = "01m8qef9wkj54exhr38fq0t18x"
    static let sameStart = "01m8qefby5jbczsapdnnv2dtdn"
    static let tides = "01m8qefct5m2t2zncy5j613xgn"

    /// Messages by their hashes in the fixture.
    enum Node {
        static let kyoto = "b2:70f8dc2f75aa9d342d127a9c6c57b673"
        static let kyotoAnswer = "b2:3553141aa46f1ed20a018e92b25f1d6e"
        static let food = "b2:ed7aef26005f5e5e9c7ce3f8265688b7"
        static let foodAnswer = "b2:846dca748c9631555e3e05a279cdcf25"
        static let nara = "b2:a761936b12d62534174626d469ac659d"
        static let naraAnswer = "b2:846abe02db3e917356ea0d0aab7c7aec"
        static let trains = "b2:ee95512fa33a7f15e4c61447386bd925"
        static let trainsAnswer = "b2:69b98079c8fa732e23a7cd1a34904017"
        static let fare = "b2:d20cd10704cd88105153f975baa0b032"
        static let fareAnswer = "b2:be6cf7ea8c8d91e4fea0f7e83c590fed"
        static let shinkansen = "b2:7cb8f8a0e75d4100a165cad18f0358b3"
        static let shinkansenAnswer = "b2:781007618cde7ab2ca98a6e17ea8a900"
    }

    /// The whole family, in the order stored: each message's role, node, parent's node and
    /// first line.
    static let family = [
        "user \(Node.kyoto) ← - Plan a trip to Kyoto.",
        "assistant \(Node.kyotoAnswer) ← \(Node.kyoto) {",
        "user \(Node.food) ← \(Node.kyotoAnswer) What about food? 抹茶?",
        "assistant \(Node.foodAnswer) ← \(Node.food) {",
        "user \(Node.nara) ← \(Node.foodAnswer) Any day trips? Nara?",
        "assistant \(Node.naraAnswer) ← \(Node.nara) {",
        "user \(Node.trains) ← \(Node.kyotoAnswer) What about trains instead?",
        "assistant \(Node.trainsAnswer) ← \(Node.trains) {",
        "user \(Node.fare) ← \(Node.trainsAnswer) And the fare? ¥?",
        "assistant \(Node.fareAnswer) ← \(Node.fare) {",
        "user \(Node.shinkansen) ← \(Node.trainsAnswer) Is the Shinkansen faster?",
        "assistant \(Node.shinkansenAnswer) ← \(Node.shinkansen) {",
    ]

    /// Each llm conversation's messages (see `family`), by source id.
    static func messages(_ store: Store) throws -> [String: [String]] {
        let rows = try store.database.query(
            """
            SELECT c.source_id, m.role, m.source_node_id, p.source_node_id, m.content FROM message m
            JOIN conversation c ON c.id = m.conversation_id LEFT JOIN message p ON p.id = m.parent_id
            WHERE c.source = 'llm' ORDER BY c.id, m.position
            """
        ) {
            ($0.text(0), "\($0.text(1)) \($0.optionalText(2) ?? "-") ← \($0.optionalText(3) ?? "-") \($0.text(4).split(separator: "\n").first ?? "")")
        }
        return Dictionary(grouping: rows, by: \.0).mapValues { $0.map(\.1) }
    }

    /// Each llm conversation's current leaf (its node) and title, by source id.
    static func conversations(_ store: Store) throws -> [String: String] {
        let rows = try store.database.query(
            """
            SELECT c.source_id, m.source_node_id, c.title, c.message_count FROM conversation c
            LEFT JOIN message m ON m.id = c.current_leaf_id WHERE c.source = 'llm'
            """
        ) { ($0.text(0), "\($0.optionalText(1) ?? "-") \($0.text(2)) (\($0.text(3)))") }
        return Dictionary(uniqueKeysWithValues: rows)
    }

    /// A copy of the fixture, changed by `sql` through the sqlite3 shell.
    static func copy(in folder: TemporaryDirectory, _ sql: String) throws -> String {
        let copy = folder.path + "/logs.db"
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        #expect(try runSQLiteShell(copy, sql).status == 0)
        return copy
    }

    @Test("A thread with its forks is one tree under the root thread; the branch shown is the thread used last")
    func families() throws {
        let before = try sha256(ofFile: Self.path)
        let store = try Store.open(path: ":memory:")
        let summary = Importer(store: store).run(paths: [Self.path], format: .llm)
        #expect(summary.inserted == 3 && summary.failed.isEmpty && summary.skipped.isEmpty, "\(summary.skipped)")
        let messages = try Self.messages(store)
        #expect(messages[Self.root] == Self.family)
        // Not a fork, though it starts with the same two messages: a conversation of its own, as before.
        #expect(messages[Self.sameStart] == [Self.family[0], Self.family[1]])
        #expect(messages[Self.tides]?.count == 2)
        #expect(messages[Self.train] == nil && messages[Self.shinkansen] == nil)
        let conversations = try Self.conversations(store)
        #expect(conversations[Self.root] == "\(Node.naraAnswer) Plan a trip to Kyoto. (12)")
        #expect(conversations[Self.sameStart] == "\(Node.kyotoAnswer) Plan a trip to Kyoto. (2)")
        // The answers keep their counts, as in a thread without forks.
        let usage = try store.database.query(
            "SELECT input_tokens, output_tokens FROM message WHERE source_node_id = ? ORDER BY id", [.text(Node.fareAnswer)]
        ) { "\($0.optionalInt64(0) ?? -1)/\($0.optionalInt64(1) ?? -1)" }
        #expect(usage == ["4/15"])

        let again = Importer(store: store).run(paths: [Self.path], format: .llm)
        #expect(again.inserted == 0 && again.updated == 0 && again.unchanged == 3)
        #expect(try Self.messages(store) == messages)
        #expect(try sha256(ofFile: Self.path) == before)
    }

    @Test("Over a database imported before forks were read: the forks join the root's tree once; their earlier conversations stay")
    func reimportOverEarlierImport() throws {
        let folder = try TemporaryDirectory()
        // Without forked_from each thread imports on its own: what the earlier version stored.
        let earlier = try Self.copy(in: folder, "UPDATE threads SET forked_from = NULL")
        let store = try Store.open(path: ":memory:")
        #expect(Importer(store: store).run(paths: [earlier], format: .llm).inserted == 5)
        #expect(try Self.messages(store)[Self.root] == Array(Self.family[0..<6]))
        let ids = try store.database.query("SELECT source_node_id, public_id FROM message ORDER BY id") { "\($0.text(0)) \($0.text(1))" }

        let summary = Importer(store: store).run(paths: [Self.path], format: .llm)
        #expect(summary.inserted == 0 && summary.updated == 1 && summary.unchanged == 2, "\(summary)")
        let messages = try Self.messages(store)
        #expect(messages[Self.root] == Self.family)
        #expect(messages[Self.train]?.count == 6 && messages[Self.shinkansen]?.count == 6)
        #expect(try Self.conversations(store)[Self.root] == "\(Node.naraAnswer) Plan a trip to Kyoto. (12)")
        // Every message stored before keeps its id.
        let after = Set(try store.database.query("SELECT source_node_id, public_id FROM message") { "\($0.text(0)) \($0.text(1))" })
        #expect(ids.allSatisfy(after.contains))
        #expect(after.count == ids.count + 6)

        let again = Importer(store: store).run(paths: [Self.path], format: .llm)
        #expect(again.inserted == 0 && again.updated == 0 && again.unchanged == 3)
    }

    @Test("Threads forked from each other in a loop: one conversation under the oldest, with the reason")
    func forkLoop() throws {
        let folder = try TemporaryDirectory()
        let copy = try Self.copy(in: folder, "UPDATE threads SET forked_from = '\(Self.shinkansen)' WHERE id = '\(Self.root)'")
        let store = try Store.open(path: ":memory:")
        let summary = Importer(store: store).run(paths: [copy], format: .llm)
        #expect(summary.inserted == 3 && summary.failed.isEmpty)
        #expect(summary.skipped.map(\.record) == ["thread \(Self.root)"])
        #expect(summary.skipped.first?.reason.contains("in a loop") == true)
        #expect(try Self.messages(store)[Self.root] == Self.family)
    }

    @Test("A fork of a thread that is not in the log: a conversation of its own, with its forks, and the reason")
    func forkOfMissingThread() throws {
        let folder = try TemporaryDirectory()
        let copy = try Self.copy(in: folder, "UPDATE threads SET forked_from = 'gone' WHERE id = '\(Self.train)'")
        let store = try Store.open(path: ":memory:")
        let summary = Importer(store: store).run(paths: [copy], format: .llm)
        #expect(summary.inserted == 4 && summary.failed.isEmpty)
        #expect(summary.skipped.map { "\($0.record): \($0.reason)" } == [
            "thread \(Self.train): forked from thread gone, which is not in the log: imported as a conversation of its own"
        ])
        let messages = try Self.messages(store)
        #expect(messages[Self.root] == Array(Self.family[0..<6]))
        #expect(messages[Self.train] == Array(Self.family[0..<2] + Self.family[6...]))
        #expect(try Self.conversations(store)[Self.train] == "\(Node.shinkansenAnswer) Kyoto, by train (8)")
    }

    @Test("A message whose parent is missing starts a branch of its own; a loop of parents ends where it closes; never a trap")
    func brokenParents() throws {
        let folder = try TemporaryDirectory()
        let missing = try Self.copy(in: folder, "UPDATE messages SET parent_hash = 'b2:gone' WHERE hash = '\(Node.trains)'")
        let store = try Store.open(path: ":memory:")
        let summary = Importer(store: store).run(paths: [missing], format: .llm)
        #expect(summary.inserted == 3 && summary.failed.isEmpty)
        #expect(summary.skipped.map(\.record) == ["thread \(Self.train)"])
        var expected = Self.family
        expected[6] = "user \(Node.trains) ← - What about trains instead?"
        #expect(try Self.messages(store)[Self.root] == expected)

        // The first message made a child of the last: every thread's walk runs into the loop.
        let loopFolder = try TemporaryDirectory()
        let loop = try Self.copy(in: loopFolder, "UPDATE messages SET parent_hash = '\(Node.shinkansenAnswer)' WHERE hash = '\(Node.kyoto)'")
        let looped = try Store.open(path: ":memory:")
        let result = Importer(store: looped).run(paths: [loop], format: .llm)
        #expect(result.inserted == 3 && result.failed.isEmpty)
        #expect(result.skipped.allSatisfy { $0.reason.contains("loop of parents") } && !result.skipped.isEmpty)
        let family = try Self.messages(looped)[Self.root] ?? []
        // Each message once, every parent stored before its child.
        #expect(Set(family.map { $0.split(separator: " ")[1] }).count == 12 && family.count == 12)
        #expect(try looped.database.scalarInt("SELECT count(*) FROM message m JOIN message p ON p.id = m.parent_id WHERE p.position >= m.position") == 0)
    }

    @Test("A thread whose tip is missing or names no message in the log: said, never dropped without a word")
    func missingTips() throws {
        for (sql, reason) in [
            ("UPDATE threads SET tip_message_hash = NULL WHERE id = '\(Self.tides)'", "no messages (its tip names none)"),
            ("UPDATE threads SET tip_message_hash = 'b2:gone' WHERE id = '\(Self.tides)'", "its tip names a message that is not in the log"),
        ] {
            let folder = try TemporaryDirectory()
            let copy = try Self.copy(in: folder, sql)
            let store = try Store.open(path: ":memory:")
            let summary = Importer(store: store).run(paths: [copy], format: .llm)
            #expect(summary.failed.isEmpty)
            #expect(summary.skipped.map { "\($0.record): \($0.reason)" } == ["thread \(Self.tides): \(reason)"], "\(summary.skipped)")
        }
    }
}
