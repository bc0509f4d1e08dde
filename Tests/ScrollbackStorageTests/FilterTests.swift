import Foundation
import Testing

import ScrollbackModel
@testable import ScrollbackStorage
import TestSupport

@Suite("Filtered lists, pinned first in every order, schema 4")
struct FilterTests {
    /// 400 conversations: ties on every key, several sources and models, some pinned.
    static func makeStore() throws -> Store {
        let store = try Store.open(path: ":memory:")
        let models: [String?] = ["gpt-4o", "GPT-4o-mini", "claude-3-5-sonnet", nil, "llama_3%", "o1"]
        try store.database.write {
            for index in 0..<400 {
                let created = Int64((index * 7) % 23) * 86_400_000
                let updated = created + Int64((index * 5) % 4) * 86_400_000
                let conversation = try store.addConversation(
                    title: ["alpha", "Beta", "beta", "gamma", "Ωmega", "日本"][index % 6], createdAt: created, updatedAt: updated,
                    pinned: index % 29 == 0, source: ["chatgpt", "claude", "llm", "demo"][index % 4], sourceID: "\(index)")
                try store.database.run(
                    "UPDATE conversation SET model = ? WHERE id = ?",
                    [models[index % models.count].map { .text($0) } ?? .null, .integer(conversation.id)])
            }
        }
        return store
    }

    static func all(_ store: Store) throws -> [ConversationDTO] {
        try store.database.query("SELECT \(SQLiteConversationRepository.columns) FROM conversation", [], SQLiteConversationRepository.conversation)
    }

    static let filters: [ConversationFilter] = [
        .none,
        ConversationFilter(pinnedOnly: true),
        ConversationFilter(source: "CLAUDE"),
        ConversationFilter(model: "GPT-4O"),
        ConversationFilter(model: "_3%"),
        ConversationFilter(since: Timestamp(milliseconds: 5 * 86_400_000)),
        ConversationFilter(since: Timestamp(milliseconds: 3 * 86_400_000), until: Timestamp(milliseconds: 12 * 86_400_000)),
        ConversationFilter(source: "llm", until: Timestamp(milliseconds: 9 * 86_400_000), pinnedOnly: true),
        ConversationFilter(source: "nobody"),
    ]

    @Test("every order and filter: pages both ways equal the definition (pinned first, then the order)", arguments: ConversationOrder.allCases)
    func pagesEqualDefinition(sort: ConversationOrder) throws {
        let store = try Self.makeStore()
        let everything = try Self.all(store)
        for filter in Self.filters {
            let expected = everything.filter(filter.admits).sorted { sort.sorts($0, before: $1) }.map(\.id)
            #expect(try store.conversations.count(filter: filter) == expected.count)
            for limit in [1, 9, 50, 1_000] {
                var forward: [Int64] = []
                var position = PagePosition.first
                while true {
                    let page = try store.conversations.page(sort: sort, filter: filter, at: position, limit: limit)
                    forward += page.items.map(\.id)
                    guard let next = page.next else { break }
                    position = .after(next)
                }
                #expect(forward == expected, "\(sort) \(filter) \(limit)")
                var backward: [Int64] = []
                position = .last
                while true {
                    let page = try store.conversations.page(sort: sort, filter: filter, at: position, limit: limit)
                    backward = page.items.map(\.id) + backward
                    guard let previous = page.previous else { break }
                    position = .before(previous)
                }
                #expect(backward == expected, "\(sort) \(filter) \(limit) backward")
            }
            // Each conversation's index is its place in the filtered order.
            for (place, id) in expected.enumerated() where place % 17 == 0 {
                let conversation = try #require(try store.conversations.conversation(id: id))
                #expect(try store.conversations.index(of: conversation, sort: sort, filter: filter) == place)
            }
        }
    }

    @Test("the pinned and time filters are index ranges: no temporary b-tree, no scan", arguments: ConversationOrder.allCases)
    func queryPlans(sort: ConversationOrder) throws {
        let store = try Self.makeStore()
        for filter in [ConversationFilter(pinnedOnly: true), ConversationFilter(since: Timestamp(milliseconds: 86_400_000))] {
            let middle = try #require(try store.conversations.page(sort: sort, filter: filter, at: .first, limit: 3).next)
            for position in [PagePosition.first, .last, .after(middle), .before(middle)] {
                store.database.recordedSQL = []
                _ = try store.conversations.page(sort: sort, filter: filter, at: position, limit: 2)
                for sql in store.database.recordedSQL ?? [] {
                    let arguments = [SQLValue](repeating: .integer(1), count: sql.filter { $0 == "?" }.count)
                    let plan = try store.database.queryPlan(sql, arguments).joined(separator: " | ")
                    #expect(plan.contains("SEARCH") && plan.contains("conversation_by_\(sort.rawValue)"), "\(plan)")
                    #expect(!plan.contains("TEMP B-TREE"), "\(plan)")
                    if sort == .updated && filter.since != nil { #expect(plan.contains("updated_at>"), "\(plan)") }
                }
            }
        }
        store.database.recordedSQL = nil
    }

    @Test("search and the oldest-first walk (export) take the same filter")
    func searchAndExportFiltered() throws {
        let store = try Self.makeStore()
        let everything = try Self.all(store)
        let filter = ConversationFilter(source: "llm", model: "GPT-4o")
        let hits = try store.search.search("alpha", filter: filter, after: nil, limit: 1_000).items
        let expected = Set(everything.filter { filter.admits($0) && $0.title == "alpha" }.map(\.id))
        #expect(!expected.isEmpty && Set(hits.map(\.conversation.id)) == expected)
        var walked: [Int64] = []
        var after: Int64?
        while true {
            let page = try store.conversations.oldestFirst(filter: filter, after: after, limit: 7)
            walked += page.map(\.id)
            guard let last = page.last else { break }
            after = last.id
        }
        #expect(walked == everything.filter(filter.admits).map(\.id).sorted())
    }

    @Test("a database of schema 3 upgrades to 4: backup, new indexes, an id of its own; pinned first by created and title")
    func upgradeFromThree() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("three.sqlite")
        do {
            let three = try Store.open(path: path, migrator: Migrator(migrations: Array(Migrator.scrollback.migrations.prefix(3))))
            #expect(three.migration.toVersion == 3)
            // Written with the SQL of schema 3 (today's writer keeps tombstones, which it lacks).
            for index in 0..<20 {
                try three.database.run(
                    "INSERT INTO conversation (id, public_id, title, source, created_at, updated_at, pinned) VALUES (?, ?, ?, 'local', ?, ?, ?)",
                    [.integer(Int64(index) * 1_000 * 65_536 + 1), .text(StableID.uuid("three", String(index))), .text("title \(19 - index)"),
                     .integer(Int64(index) * 1_000), .integer(Int64(index) * 1_000), .integer(index == 3 ? 1 : 0)])
            }
        }
        let store = try Store.open(path: path)
        #expect(store.migration.fromVersion == 3 && store.migration.toVersion == Migrator.scrollback.latestVersion)
        let backup = try #require(store.migration.backupPath)
        #expect(FileManager.default.fileExists(atPath: backup))
        #expect(try Store.open(path: backup, readOnly: true, migrator: Migrator(migrations: Array(Migrator.scrollback.migrations.prefix(3)))).conversations.count() == 20)
        let id = try store.settings.value(.databaseID)
        #expect(id.count == 32 && id.allSatisfy(\.isHexDigit))
        for sort in ConversationOrder.allCases {
            let first = try store.conversations.page(sort: sort, at: .first, limit: 2).items
            #expect(first.first?.title == "title 16" && first.first?.pinned == true, "\(sort)")
        }
        #expect(try store.conversations.page(sort: .title, at: .first, limit: 2).items.last?.title == "title 0")
        #expect(try store.check().problems.isEmpty)
        // Another database has another id.
        let other = try Store.open(path: folder.file("other.sqlite"))
        #expect(try other.settings.value(.databaseID) != id)
    }

    @Test("filter words: parsed, printed back, and refused with a reason")
    func parsing() throws {
        let now = Timestamp(milliseconds: 1_796_083_200_000)  // 2026-12-01T00:00:00Z
        let filter = try ConversationFilter.parse("model:gpt-4o since:2025-01 source:Claude until:2025 pinned", now: now)
        #expect(filter.model == "gpt-4o" && filter.source == "Claude" && filter.pinnedOnly)
        #expect(filter.since?.iso8601 == "2025-01-01T00:00:00.000Z")
        #expect(filter.until?.iso8601 == "2026-01-01T00:00:00.000Z")
        #expect(filter.description == "source:Claude model:gpt-4o since:2025-01-01 until:2025-12-31 pinned")
        #expect(try ConversationFilter.parse(filter.description, now: now) == filter)
        #expect(try ConversationFilter.parse("model:\"gpt 4\"", now: now).model == "gpt 4")
        // Quotes and backslashes inside quotes, and back through the description.
        let quoted = ConversationFilter(source: "we\"ird", model: "gpt 4 \"turbo\" \\x")
        #expect(try ConversationFilter.parse(quoted.description, now: now) == quoted, "\(quoted.description)")
        #expect(try ConversationFilter.parse("  ", now: now).isEmpty)
        // Times ago: days, weeks, calendar months and years.
        #expect(try ConversationFilter.time("7d", now: now, end: false).iso8601 == "2026-11-24T00:00:00.000Z")
        #expect(try ConversationFilter.time("2w", now: now, end: false).iso8601 == "2026-11-17T00:00:00.000Z")
        #expect(try ConversationFilter.time("3m", now: now, end: false).iso8601 == "2026-09-01T00:00:00.000Z")
        #expect(try ConversationFilter.time("1y", now: now, end: false).iso8601 == "2025-12-01T00:00:00.000Z")
        let march31 = Timestamp(milliseconds: 1_774_915_200_000)  // 2026-03-31
        #expect(try ConversationFilter.time("1m", now: march31, end: false).iso8601 == "2026-02-28T00:00:00.000Z")
        #expect(try ConversationFilter.time("2025-02-28", now: now, end: true).iso8601 == "2025-03-01T00:00:00.000Z")
        // Until a time takes in that instant; since it, from it.
        #expect(try ConversationFilter.time("2025-02-03T04:05:06.789Z", now: now, end: true).iso8601 == "2025-02-03T04:05:06.790Z")
        #expect(try ConversationFilter.time("2025-02-03T04:05:06.789Z", now: now, end: false).iso8601 == "2025-02-03T04:05:06.789Z")
        #expect(try ConversationFilter.parse("since:2025-02-03T04:05Z until:2025-02-03T04:05Z", now: now).description
            == "since:2025-02-03T04:05Z until:2025-02-03T04:05Z")
        // Before 1970 is 1970.
        #expect(try ConversationFilter.time("57y", now: now, end: false).milliseconds == 0)
        for (text, message) in [
            ("colour:red", "unknown filter 'colour:'; use source:, model:, project:, since:, until:, title: or pinned (title:colour:red finds it in titles)"),
            ("title:\" \"", "' ' has nothing to find in a title"),
            ("model:", "'model:' needs a value"),
            ("since:2025-02-30", "'2025-02-30' is not a date: use 2025-01-31, 2025-01, 2025, 2025-01-31T10:00Z (the years 1970 to 9999), or 7d, 2w, 3m, 1y for days, weeks, months, years ago"),
            ("since:99999999999d", "'99999999999d' is too far back (at most 20000 of a unit)"),
            ("since:2025 until:2024", "since 2025-01-01 is not before until 2024-12-31: nothing can match"),
            ("model:\"open", "a quote is not closed"),
            ("source:-x", "'-x' is not a source name (chatgpt, claude, llm, jsonl, demo…)"),
        ] {
            #expect(throws: FilterError(message), "\(text)") { try ConversationFilter.parse(text, now: now) }
        }
    }
}
