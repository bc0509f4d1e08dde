import Foundation
import Testing

@testable import ScrollbackImport
import ScrollbackModel
@testable import ScrollbackStorage
import TestSupport

/// llm logs record each response's token counts and time taken; they are kept on the answer.
/// llm messages carry node ids, so that a re-import finds them by those, also in a database
/// that stored them before node ids were kept.
@Suite("llm logs: token usage, timings and node ids")
struct LLMUsageTests {
    struct Row: Equatable, CustomStringConvertible {
        var role: String
        var node: String?
        var usage: MessageUsage

        var description: String {
            "\(role) \(node ?? "-") \(usage.inputTokens.map(String.init) ?? "-")/\(usage.outputTokens.map(String.init) ?? "-")/\(usage.durationMilliseconds.map(String.init) ?? "-")"
        }
    }

    static func rows(_ store: Store) throws -> [Row] {
        try store.database.query(
            "SELECT role, source_node_id, input_tokens, output_tokens, duration_ms FROM message ORDER BY conversation_id, position"
        ) {
            Row(
                role: $0.text(0), node: $0.optionalText(1),
                usage: MessageUsage(inputTokens: $0.optionalInt64(2), outputTokens: $0.optionalInt64(3), durationMilliseconds: $0.optionalInt64(4)))
        }
    }

    @Test("llm before 0.32: each response's input and output tokens and duration on its answer; node ids from the response id")
    func legacyUsage() throws {
        let store = try Store.open(path: ":memory:")
        let summary = Importer(store: store).run(paths: [LLMImportTests.folder + "/llm-0.31.1.db"], format: .llm)
        #expect(summary.inserted == 2 && summary.failed.isEmpty)
        let rows = try Self.rows(store).map(\.description)
        #expect(
            rows == [
                "user 01m8nx166sz932jhjxds08dr5f:prompt -/-/-", "assistant 01m8nx166sz932jhjxds08dr5f:response 6/17/0",
                "user 01m8nx1700ybtt5qc74m0xztb5:prompt -/-/-", "assistant 01m8nx1700ybtt5qc74m0xztb5:response 4/25/0",
                "system 01m8nx17rc1y55p4cccrrsfz7k:system -/-/-", "user 01m8nx17rc1y55p4cccrrsfz7k:prompt -/-/-",
                "assistant 01m8nx17rc1y55p4cccrrsfz7k:response 2/15/0",
            ])
    }

    @Test("llm 0.32 on: each turn's counts and duration on the answer that ends it; node ids are the message hashes")
    func threadUsage() throws {
        let store = try Store.open(path: ":memory:")
        let summary = Importer(store: store).run(paths: [LLMImportTests.folder + "/llm-0.36.db"], format: .llm)
        #expect(summary.inserted == 2 && summary.failed.isEmpty)
        let rows = try Self.rows(store)
        #expect(rows.map { "\($0.role) \($0.usage.inputTokens.map(String.init) ?? "-")/\($0.usage.outputTokens.map(String.init) ?? "-")" } == [
            "user -/-", "assistant 3/14", "user -/-", "assistant 4/15", "system -/-", "user -/-", "assistant 9/19",
        ])
        #expect(rows.allSatisfy { $0.node?.hasPrefix("b2:") == true })
        #expect(rows.filter { $0.role == "assistant" }.allSatisfy { $0.usage.durationMilliseconds == 0 })
    }

    @Test("negative, absurd, text and fractional counts are left out, never trap; the rest imports")
    func hostileCounts() throws {
        let folder = try TemporaryDirectory()
        let legacy = folder.file("legacy.db")
        let threads = folder.file("threads.db")
        try FileManager.default.copyItem(atPath: LLMImportTests.folder + "/llm-0.31.1.db", toPath: legacy)
        try FileManager.default.copyItem(atPath: LLMImportTests.folder + "/llm-0.36.db", toPath: threads)
        do {
            let database = try Database.open(path: legacy, access: .readWrite)
            // llm's own triggers keep its search table: trusted for this test's write.
            try database.execute(
                """
                PRAGMA trusted_schema = ON;
                UPDATE responses SET input_tokens = -5, output_tokens = 9223372036854775807, duration_ms = 'soon'
                 WHERE id = '01m8nx166sz932jhjxds08dr5f';
                UPDATE responses SET input_tokens = 1e300, output_tokens = 2.5, duration_ms = -1 WHERE id = '01m8nx1700ybtt5qc74m0xztb5';
                UPDATE responses SET input_tokens = 1000000000, output_tokens = 1000000001, duration_ms = 2592000000
                 WHERE id = '01m8nx17rc1y55p4cccrrsfz7k';
                """)
        }
        do {
            let database = try Database.open(path: threads, access: .readWrite)
            try database.execute("PRAGMA trusted_schema = ON; UPDATE turns SET input_tokens = -9223372036854775808, output_tokens = x'00ff', duration_ms = 1e19")
        }
        let store = try Store.open(path: ":memory:")
        let summary = Importer(store: store).run(paths: [legacy, threads], format: .llm)
        #expect(summary.inserted == 4 && summary.failed.isEmpty && summary.skipped.isEmpty)
        let answers = try Self.rows(store).filter { $0.role == "assistant" }.map(\.usage)
        #expect(
            answers == [
                MessageUsage(), MessageUsage(),
                MessageUsage(inputTokens: 1_000_000_000, outputTokens: nil, durationMilliseconds: 2_592_000_000),
                MessageUsage(), MessageUsage(), MessageUsage(),
            ])
    }

    @Test(
        "re-importing an llm log into a database that stored it before node ids were kept duplicates nothing and records them",
        arguments: ["llm-0.31.1.db", "llm-0.36.db", "llm-0.31.1-upgraded-by-0.36.db", "llm-0.31.1-continued-by-0.36.db"])
    func reimportOverNodelessRows(file: String) throws {
        let store = try Store.open(path: ":memory:")
        let path = LLMImportTests.folder + "/" + file
        let first = Importer(store: store).run(paths: [path], format: .llm)
        #expect(first.inserted > 0 && first.failed.isEmpty)
        let stored = try Self.rows(store)
        let ids = try store.database.query("SELECT id, public_id FROM message ORDER BY id") { "\($0.int64(0)) \($0.text(1))" }
        // The rows as a release before node ids stored them.
        try store.database.execute("UPDATE message SET source_node_id = NULL")
        #expect(try store.database.scalarInt("SELECT count(*) FROM message WHERE source_node_id IS NOT NULL") == 0)

        let again = Importer(store: store).run(paths: [path], format: .llm)
        #expect(again.inserted == 0 && again.failed.isEmpty)
        #expect(try store.conversations.count() == first.inserted)
        #expect(try store.database.query("SELECT id, public_id FROM message ORDER BY id") { "\($0.int64(0)) \($0.text(1))" } == ids)
        // Matched by parent, role and text; their node ids recorded again.
        #expect(try Self.rows(store) == stored)
        let third = Importer(store: store).run(paths: [path], format: .llm)
        #expect(third.unchanged == first.inserted)
    }

    @Test("a legacy conversation imported, then continued by a newer llm (a thread of the same id): the new messages are added, nothing twice")
    func legacyContinuedInAThread() throws {
        let store = try Store.open(path: ":memory:")
        let legacy = LLMImportTests.folder + "/llm-0.31.1.db"
        let continued = LLMImportTests.folder + "/llm-0.31.1-continued-by-0.36.db"
        #expect(Importer(store: store).run(paths: [legacy], format: .llm).inserted == 2)
        let before = try Self.rows(store)
        let again = Importer(store: store).run(paths: [continued], format: .llm)
        #expect(again.inserted == 0 && again.updated == 1 && again.unchanged == 1 && again.failed.isEmpty)
        #expect(try store.conversations.count() == 2)
        let rows = try Self.rows(store)
        #expect(rows.count == before.count + 2)
        #expect(Array(rows.prefix(before.count)) == before)
        let added = rows.suffix(2)
        #expect(added.map(\.role) == ["user", "assistant"])
        #expect(added.allSatisfy { $0.node?.hasPrefix("b2:") == true })
        #expect(added.last?.usage.inputTokens != nil)
        // One branch: the continuation follows the last legacy answer.
        let conversation = try #require(try ImportTests.conversation(store, source: "llm", id: "01m8nx17rc1y55p4cccrrsfz7m"))
        #expect(conversation.messageCount == 5 && !conversation.isBranched)
        #expect(try ImportTests.transcript(store, source: "llm", id: "01m8nx17rc1y55p4cccrrsfz7m").map { $0.prefix { $0 != "\n" } } == [
            "system: You are terse.", "user: Say hi", "assistant: {", "user: Continue the legacy one", "assistant: {",
        ])
        // And the other way: the continued log first, then the older one: an older copy.
        let other = try Store.open(path: ":memory:")
        #expect(Importer(store: other).run(paths: [continued], format: .llm).inserted == 2)
        let older = Importer(store: other).run(paths: [legacy], format: .llm)
        #expect(older.unchanged == 2 && older.inserted == 0 && older.updated == 0)
        #expect(try other.messages.count() == 9)
        // The copies in the thread keep the legacy answer's model and counts.
        #expect(try Self.rows(other).filter { $0.role == "assistant" }.allSatisfy { $0.usage.outputTokens != nil })
    }
}
