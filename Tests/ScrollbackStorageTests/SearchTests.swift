import Foundation
import Testing

import ScrollbackModel
@testable import ScrollbackStorage
import TestSupport

@Suite("Search")
struct SearchTests {
    static func makeStore() throws -> Store {
        let store = try Store.open(path: ":memory:")
        try store.addConversation(title: "Sourdough starter", createdAt: 1, messages: ["How do I feed my starter?", "Twice a day."])
        try store.addConversation(title: "東京旅行の計画", createdAt: 2, messages: ["東京で美味しいラーメン屋を教えて", "新宿と渋谷にあります。"])
        try store.addConversation(
            title: "Shell quoting", createdAt: 3,
            messages: [#"Why does "hello world" need quotes?"#, "Because of word splitting: rm * AND (stuff) NEAR x."])
        try store.addConversation(title: "Unrelated", createdAt: 4, messages: ["Nothing to see here.", "ok"])
        return store
    }

    func search(_ store: Store, _ query: String, limit: Int = 50) throws -> [SearchHit] {
        try store.search.search(query, after: nil, limit: limit).items
    }

    @Test("a word finds titles first, then messages, case-insensitively, with match ranges")
    func word() throws {
        let store = try Self.makeStore()
        let hits = try search(store, "STARTER")
        #expect(hits.count == 2)
        #expect(hits[0].message == nil)
        #expect(hits[0].snippet == "Sourdough starter")
        #expect(hits[0].matches == [10..<17])
        let message = try #require(hits[1].message)
        #expect(message.position == 0 && message.role == .user)
        #expect(hits[1].snippet == "How do I feed my starter?")
        #expect(hits[1].matches == [17..<24])
    }

    @Test("CJK text is found by substring, long and short")
    func cjk() throws {
        let store = try Self.makeStore()
        let ramen = try search(store, "ラーメン")
        #expect(ramen.count == 1)
        #expect(ramen[0].conversation.title == "東京旅行の計画")
        #expect(ramen[0].snippet == "東京で美味しいラーメン屋を教えて")
        #expect(ramen[0].matches == [7..<11])
        // Two characters: below the trigram index's reach, still found.
        let tokyo = try search(store, "東京")
        #expect(tokyo.map { $0.message?.position } == [nil, 0])
        let shinjuku = try search(store, "新宿")
        #expect(shinjuku.map(\.snippet) == ["新宿と渋谷にあります。"])
        #expect(shinjuku[0].matches == [0..<2])
    }

    @Test("quotes, operators and stray syntax are searched for as text", arguments: [
        #""hello world""#, #"hello""#, "rm *", "AND", "NEAR", "(stuff)", "stuff)", "(", "*", "\"", "-x", "NOT", "a:b", "^x",
    ])
    func literal(query: String) throws {
        let store = try Self.makeStore()
        let hits = try search(store, query)
        for hit in hits {
            let text = hit.snippet.lowercased()
            #expect(SearchQuery(query).matches(hit.snippet), "\(query) found \(hit.snippet)")
            for term in query.split(separator: " ") where !term.contains("\"") {
                #expect(text.contains(term.lowercased()), "\(query) found \(hit.snippet)")
            }
        }
        if ["rm *", "AND", "NEAR", "(stuff)", "stuff)", "(", "*", #""hello world""#].contains(query) {
            #expect(hits.contains { $0.conversation.title == "Shell quoting" }, "\(query)")
        }
        if query == "a:b" || query == "^x" { #expect(hits.isEmpty) }
    }

    @Test("every word must occur in the same message")
    func allWords() throws {
        let store = try Self.makeStore()
        #expect(try search(store, "feed starter").count == 1)
        #expect(try search(store, "feed quotes").isEmpty)
        #expect(try search(store, "   ").isEmpty)
    }

    @Test("deleted conversations are gone from results")
    func deletedGone() throws {
        let store = try Self.makeStore()
        let before = try search(store, "starter")
        let id = try #require(before.first?.conversation.id)
        _ = try store.conversations.delete(id: id)
        #expect(try search(store, "starter").isEmpty)
        #expect(try search(store, "Twice").isEmpty)
    }

    @Test("renamed titles are found by their new name only")
    func renamed() throws {
        let store = try Self.makeStore()
        let id = try #require(try search(store, "Unrelated").first?.conversation.id)
        _ = try store.conversations.rename(id: id, to: "Walrus facts")
        #expect(try search(store, "Unrelated").isEmpty)
        #expect(try search(store, "walrus").map(\.conversation.id) == [id])
    }

    @Test("results page through titles and messages without repeats")
    func paging() throws {
        let store = try Store.open(path: ":memory:")
        for index in 0..<25 {
            try store.addConversation(title: "kettle \(index)", createdAt: Int64(index), messages: ["the kettle sings", "no match", "kettle again"])
        }
        var all: [SearchHit] = []
        var cursor: Cursor?
        repeat {
            let page = try store.search.search("kettle", after: cursor, limit: 7)
            all += page.items
            cursor = page.next
        } while cursor != nil
        #expect(all.count == 25 + 50)
        #expect(all.prefix(25).allSatisfy { $0.message == nil })
        let keys = all.map { "\($0.conversation.id)-\($0.message?.id ?? -1)" }
        #expect(Set(keys).count == keys.count)
        let listCursor = Cursor(.created(pinned: false, createdAt: 1, id: 1))
        #expect(throws: StorageError.invalidCursor(reason: "the token is for the list sorted by created")) {
            try store.search.search("kettle", after: listCursor, limit: 5)
        }
    }

    @Test("snippets are cut around the first match, folded to one line")
    func snippets() throws {
        let long = String(repeating: "filler words here. ", count: 40) + "the NEEDLE is here\nand more text " + String(repeating: "tail ", count: 40)
        let (snippet, matches) = Snippet.make(from: long, query: SearchQuery("needle"))
        #expect(snippet.hasPrefix("…") && snippet.hasSuffix("…"))
        #expect(!snippet.contains("\n"))
        #expect(snippet.count <= Snippet.length + 2)
        let characters = Array(snippet)
        #expect(matches.count == 1)
        let range = try #require(matches.first)
        #expect(String(characters[range]) == "NEEDLE")
        let (emoji, emojiMatches) = Snippet.make(from: "👩‍💻 café e\u{301}te\u{301}", query: SearchQuery("été"))
        #expect(emojiMatches.map { String(Array(emoji)[$0]) } == ["e\u{301}te\u{301}"])
    }

    @Test("search queries walk an index in order: no temporary b-tree", arguments: ["kettle", "ke", "kettle ke"])
    func queryPlans(query: String) throws {
        let store = try Store.open(path: ":memory:")
        for index in 0..<30 {
            try store.addConversation(title: "kettle \(index)", createdAt: Int64(index), messages: ["the kettle sings"])
        }
        store.database.recordedSQL = []
        let first = try store.search.search(query, after: nil, limit: 10)
        let next = try #require(first.next)
        _ = try store.search.search(query, after: next, limit: 40)
        let statements = store.database.recordedSQL ?? []
        #expect(statements.count >= 3)
        for sql in statements {
            let arguments = [SQLValue](repeating: .text("%ke%"), count: sql.filter { $0 == "?" }.count)
            let plan = try store.database.queryPlan(sql, arguments).joined(separator: " | ")
            #expect(!plan.contains("TEMP B-TREE"), "\(sql): \(plan)")
        }
    }
}
