import Foundation
import Testing

import ScrollbackModel
@testable import ScrollbackStorage
import TestSupport

@Suite("Keyset pagination")
struct PaginationTests {
    /// 300 conversations with many ties on every sort key, some pinned.
    static func makeStore() throws -> Store {
        let store = try Store.open(path: ":memory:")
        try store.database.write {
            for index in 0..<300 {
                // Few distinct times and titles, so ties are the rule, not the exception.
                let created = Int64((index * 7) % 13) * 1_000
                let updated = created + Int64((index * 5) % 4) * 1_000
                let titles = ["alpha", "Beta", "beta", "gamma", "Ωmega", "日本", "émile", "Zed"]
                try store.addConversation(
                    title: titles[index % titles.count], createdAt: created, updatedAt: updated, pinned: index % 37 == 0)
            }
        }
        return store
    }

    /// The expected order, computed without the index: the definition of each sort.
    static func expected(_ store: Store, _ sort: ConversationOrder) throws -> [Int64] {
        let all = try store.database.query("SELECT \(SQLiteConversationRepository.columns) FROM conversation", [], SQLiteConversationRepository.conversation)
        let sorted: [ConversationDTO]
        switch sort {
        case .updated:
            sorted = all.sorted {
                ($0.pinned ? 1 : 0, $0.updatedAt.milliseconds, $0.id) > ($1.pinned ? 1 : 0, $1.updatedAt.milliseconds, $1.id)
            }
        case .created:
            // Pinned first in every order.
            sorted = all.sorted {
                ($0.pinned ? 1 : 0, $0.createdAt.milliseconds, $0.id) > ($1.pinned ? 1 : 0, $1.createdAt.milliseconds, $1.id)
            }
        case .title:
            // NOCASE folds ASCII letters only.
            func folded(_ text: String) -> [UInt8] { Array(text.utf8).map { (65...90).contains($0) ? $0 + 32 : $0 } }
            sorted = all.sorted { lhs, rhs in
                if lhs.pinned != rhs.pinned { return lhs.pinned }
                let (a, b) = (folded(lhs.title), folded(rhs.title))
                return a == b ? lhs.id < rhs.id : a.lexicographicallyPrecedes(b)
            }
        }
        return sorted.map(\.id)
    }

    static func walkForward(_ store: Store, _ sort: ConversationOrder, limit: Int) throws -> [Int64] {
        var ids: [Int64] = []
        var position = PagePosition.first
        while true {
            let page = try store.conversations.page(sort: sort, at: position, limit: limit)
            #expect(page.items.count <= limit)
            ids += page.items.map(\.id)
            guard let next = page.next else { break }
            position = .after(next)
        }
        return ids
    }

    static func walkBackward(_ store: Store, _ sort: ConversationOrder, limit: Int) throws -> [Int64] {
        var ids: [Int64] = []
        var position = PagePosition.last
        while true {
            let page = try store.conversations.page(sort: sort, at: position, limit: limit)
            ids = page.items.map(\.id) + ids
            guard let previous = page.previous else { break }
            position = .before(previous)
        }
        return ids
    }

    @Test("walking every page equals one ordered select, both ways", arguments: ConversationOrder.allCases)
    func walkEqualsSelect(sort: ConversationOrder) throws {
        let store = try Self.makeStore()
        let expected = try Self.expected(store, sort)
        for limit in [1, 7, 50, 300, 1_000] {
            #expect(try Self.walkForward(store, sort, limit: limit) == expected)
            #expect(try Self.walkBackward(store, sort, limit: limit) == expected)
        }
        let first = try store.conversations.page(sort: sort, at: .first, limit: 10)
        #expect(first.previous == nil)
        let last = try store.conversations.page(sort: sort, at: .last, limit: 10)
        #expect(last.items.map(\.id) == Array(expected.suffix(10)))
        #expect(last.next == nil)
    }

    @Test("pinned conversations come first in the updated order")
    func pinnedFirst() throws {
        let store = try Self.makeStore()
        let page = try store.conversations.page(sort: .updated, at: .first, limit: 300)
        let pinnedCount = page.items.filter(\.pinned).count
        #expect(pinnedCount > 0)
        #expect(page.items.prefix(pinnedCount).allSatisfy { $0.pinned })
    }

    @Test("rows inserted, deleted or renamed between pages never make another row skipped or repeated",
          arguments: ConversationOrder.allCases)
    func changesBetweenPages(sort: ConversationOrder) throws {
        let store = try Self.makeStore()
        let original = Set(try Self.expected(store, sort))
        var seen: [Int64] = []
        var deletedIDs: Set<Int64> = []
        var renamedIDs: Set<Int64> = []
        var position = PagePosition.first
        var round = 0
        while true {
            let page = try store.conversations.page(sort: sort, at: position, limit: 20)
            seen += page.items.map(\.id)
            round += 1
            // Between pages: add rows that sort anywhere, delete one ahead and one behind,
            // and rename one ahead across the page boundary.
            for offset in 0..<3 {
                try store.addConversation(
                    title: ["aardvark", "mango", "zzz"][offset], createdAt: Int64(offset * 6_000),
                    updatedAt: Int64(offset * 6_000 + 500), pinned: offset == 1 && round % 2 == 0)
            }
            let remaining = try Self.expected(store, sort).filter { original.contains($0) && !seen.contains($0) }
            if let ahead = remaining.last {
                _ = try store.conversations.delete(id: ahead)
                deletedIDs.insert(ahead)
            }
            if let behind = seen.first(where: { !deletedIDs.contains($0) }) {
                _ = try store.conversations.delete(id: behind)
                deletedIDs.insert(behind)
            }
            if remaining.count > 2 {
                let target = remaining[remaining.count / 2]
                _ = try store.conversations.rename(id: target, to: "renamed \(round)")
                renamedIDs.insert(target)
            }
            guard let next = page.next else { break }
            position = .after(next)
        }
        #expect(seen.count == Set(seen).count, "a row was shown twice")
        // Every original row that was neither deleted nor renamed (a rename may move a row
        // in the title order) was seen exactly once.
        let stable = original.subtracting(deletedIDs).subtracting(sort == .title ? renamedIDs : [])
        #expect(stable.subtracting(seen).isEmpty, "a row that existed throughout was skipped")
    }

    @Test("a malformed token, or one from another listing, is a typed error")
    func badTokens() throws {
        let store = try Self.makeStore()
        let damaged = ["sb1\u{1F}q\u{1F}1", "sb1\u{1F}u\u{1F}x\u{1F}1\u{1F}1", "sb1\u{1F}c\u{1F}1", "sb2\u{1F}c\u{1F}1\u{1F}2"]
        let tokens = ["", "hello", "!!!!", "c2IxH3UfMQ", "a=b"] + damaged.map { Data($0.utf8).base64EncodedString() }
        for token in tokens {
            #expect(throws: StorageError.self) { try Cursor(token: token) }
        }
        let titleCursor = try #require(try store.conversations.page(sort: .title, at: .first, limit: 5).next)
        for sort in [ConversationOrder.updated, .created] {
            #expect(throws: StorageError.invalidCursor(reason: "the token is for the list sorted by title")) {
                try store.conversations.page(sort: sort, at: .after(titleCursor), limit: 5)
            }
        }
        // A token survives its text form.
        let parsed = try Cursor(token: titleCursor.token)
        #expect(parsed == titleCursor)
        let titleWithSeparator = Cursor(.title(pinned: true, title: "a\u{1F}b", id: 3))
        #expect(try Cursor(token: titleWithSeparator.token) == titleWithSeparator)
    }

    @Test("every page query searches its index, with no temporary b-tree", arguments: ConversationOrder.allCases)
    func queryPlans(sort: ConversationOrder) throws {
        let store = try Self.makeStore()
        let middle = try #require(try store.conversations.page(sort: sort, at: .first, limit: 100).next)
        let index = "conversation_by_\(sort.rawValue)"
        for position in [PagePosition.first, .last, .after(middle), .before(middle)] {
            store.database.recordedSQL = []
            _ = try store.conversations.page(sort: sort, at: position, limit: 50)
            let sql = try #require(store.database.recordedSQL?.last)
            let arguments = [SQLValue](repeating: .integer(1), count: sql.filter { $0 == "?" }.count)
            let plan = try store.database.queryPlan(sql, arguments).joined(separator: " | ")
            #expect(plan.contains("USING INDEX \(index)"), "\(position): \(plan)")
            #expect(!plan.contains("TEMP B-TREE"), "\(position): \(plan)")
            #expect(!sql.uppercased().contains("OFFSET"))
            if case .after = position { #expect(plan.contains("SEARCH"), "\(plan)") }
            if case .before = position { #expect(plan.contains("SEARCH"), "\(plan)") }
        }
        store.database.recordedSQL = nil
    }
}
