import Foundation
import Testing

import ScrollbackModel
@testable import ScrollbackStorage
import TestSupport

/// Narrowing the list by title (`title:`, `--title`, the browser's `\`): one rule, the
/// search's, in Swift (`admits`) and in SQL (`scrollback_title_matches`), whichever way the
/// rows are reached: the walk checked row by row (short prefixes), the title index's
/// candidates read by id (few) or checked along the walk (many), or no index at all while
/// it is being built.
@Suite("Narrowing by title")
struct TitleNarrowingTests {
    static let titles = [
        "Async Rust in practice", "rust: async traits", "Trusting the compiler", "Café au lait", "cafe OPENING hours",
        "東京旅行の計画", "京都と東京", "Zalgo t̶e̴x̵t", "C++ templates", "c# generics", "Node.js streams", "node js", "A haiku about rain",
        "Python 3.12", "pythonic code", "ÉCOLE primaire", "email from Ørsted", "untitled",
    ]

    /// `count` conversations, titles in turn, times tied in places, some pinned, two sources.
    static func makeStore(count: Int, titles: [String] = titles, rare: String = "Quiet") throws -> Store {
        let store = try Store.open(path: ":memory:")
        try store.inserting(about: .max) {
            for index in 0..<count {
                let created = Int64((index * 7) % 23) * 86_400_000
                // One in 997 is a title found nowhere else.
                let title = index % 997 == 500 ? "\(rare) \(index)" : titles[index % titles.count]
                _ = try store.addConversation(
                    title: title, createdAt: created, updatedAt: created + Int64(index % 4) * 3_600_000,
                    pinned: index % 31 == 0, source: index % 3 == 0 ? "claude" : "chatgpt", sourceID: "\(index)")
            }
        }
        return store
    }

    static let queries = [
        "rust", "RUST ASYNC", "async rust", "rus", "r", "t", "x", "cafe", "café", "CAFÉ au", "東京", "京", "c++", "c#", "node.js",
        "\"node js\"", "python", "py", "ecole", "orsted", "zalgo text", "nothing-at-all", "a haiku", "\"haiku about\"", "ab",
    ]

    /// Every page of `filter` in `sort` order, forward, and the count, against the rule.
    static func expectAsDefined(_ store: Store, _ filter: ConversationFilter, sort: ConversationOrder, limits: [Int]) throws {
        let everything = try store.database.query(
            "SELECT \(SQLiteConversationRepository.columns) FROM conversation", [], SQLiteConversationRepository.conversation)
        let expected = everything.filter(filter.admits).sorted { sort.sorts($0, before: $1) }.map(\.id)
        #expect(try store.conversations.count(filter: filter) == expected.count, "\(filter)")
        for limit in limits {
            var forward: [Int64] = []
            var position = PagePosition.first
            while true {
                let page = try store.conversations.page(sort: sort, filter: filter, at: position, limit: limit)
                forward += page.items.map(\.id)
                guard let next = page.next else { break }
                position = .after(next)
            }
            #expect(forward == expected, "\(sort) \(filter.description) \(limit)")
            var backward: [Int64] = []
            position = .last
            while true {
                let page = try store.conversations.page(sort: sort, filter: filter, at: position, limit: limit)
                backward = page.items.map(\.id) + backward
                guard let previous = page.previous else { break }
                position = .before(previous)
            }
            #expect(backward == expected, "\(sort) \(filter.description) \(limit) backward")
        }
        for (place, id) in expected.enumerated() where place % 97 == 0 {
            let conversation = try #require(try store.conversations.conversation(id: id))
            #expect(try store.conversations.index(of: conversation, sort: sort, filter: filter) == place)
        }
    }

    @Test("the search's rules: a word's start, case and accents folded, CJK anywhere, phrases in quotes")
    func rule() {
        func admits(_ words: String, _ title: String) -> Bool {
            ConversationFilter(title: words).admits(
                ConversationDTO(
                    id: 1, publicID: "", title: title, model: nil, source: "x", sourceID: nil, createdAt: Timestamp(milliseconds: 0),
                    updatedAt: Timestamp(milliseconds: 0), messageCount: 0, pinned: false))
        }
        #expect(admits("rust async", "Async Rust in practice"))
        #expect(admits("asy", "Async Rust"))
        #expect(!admits("sync", "Async Rust"))
        #expect(!admits("rust", "Trusting the compiler"))
        #expect(admits("cafe", "Café au lait") && admits("CAFÉ", "cafe OPENING"))
        #expect(admits("京", "東京旅行の計画"))
        // The strokes of Zalgo text are not removed as accents are: "text" is not in
        // "t̶e̴x̵t" (the index holds t, e, x, t), and "x" is inside its word for the rule.
        #expect(!admits("x", "Zalgo t̶e̴x̵t") && !admits("text", "Zalgo t̶e̴x̵t") && admits("zalgo", "Zalgo t̶e̴x̵t"))
        // The accents unicode61 removes join the letters, written apart or not.
        #expect(admits("cafe", "cafe\u{301} noir") && admits("naive", "nai\u{308}ve") && admits("café", "CAFE"))
        #expect(admits("node.js", "Node.js streams") && !admits("node.js", "node js"))
        #expect(admits("\"haiku about\"", "A haiku about rain") && !admits("\"about haiku\"", "A haiku about rain"))
        #expect(ConversationFilter(title: "   ").title == nil && ConversationFilter(title: "\"\"").title == nil)
        // Punctuation and emoji alone are looked for, as search does.
        #expect(admits("----", "---- a rule") && admits("🍕", "🍕 night") && !admits("🍕", "pizza"))
        #expect(ConversationFilter(title: "  rust  ").title == "rust")
        // Each term once (a word pasted 5,000 times is one), phrases kept in their quotes.
        #expect(ConversationFilter(title: Array(repeating: "rust", count: 5_000).joined(separator: " ")).title == "rust")
        #expect(ConversationFilter(title: "rust \"async traits\" rust Rust").title == "rust \"async traits\"")
        // Between a phrase's words, what shows nothing counts as the space it looks like.
        for title in ["A haiku \u{200B}about rain", "A haiku\u{200B}about rain", "A haiku\u{AD} about", "A haiku \u{2060}\u{FEFF} about"] {
            #expect(admits("\"haiku about\"", title), "\(title.unicodeScalars.map { String($0.value, radix: 16) })")
        }
        #expect(admits("\"haiku\u{200B} about\"", "A haiku about rain"))
        // A zero-width space between typed words parts them as a space does.
        #expect(admits("haiku\u{200B}rain", "A haiku about rain") && ConversationFilter(title: "haiku\u{200B}rain").title == "haiku rain")
        #expect(ConversationFilter(title: "\"haiku\"").title == "haiku" && ConversationFilter(title: "\u{200B}").title == nil)
        #expect(!admits("\"haiku about\"", "A haiku-about rain") && !admits("\"haiku about\"", "A haikuabout rain"))
    }

    @Test("phrases across invisible characters: the index proposes what the rule finds, by id and along the walk")
    func phrasesAcrossInvisibles() throws {
        let titles = ["A haiku \u{200B}about rain", "A haiku\u{AD}about snow", "haiku \u{2060}about", "haiku about", "haikuabout", "about haiku"]
        let store = try Self.makeStore(count: 120, titles: titles)
        for words in ["\"haiku about\"", "\"haiku\u{200B}about\"", "\"about rain\"", "\"about haiku\""] {
            for sort in ConversationOrder.allCases {
                try Self.expectAsDefined(store, ConversationFilter(title: words), sort: sort, limits: [7, 50])
            }
        }
        #expect(try store.conversations.count(filter: ConversationFilter(title: "\"haiku about\"")) == 80)
    }

    @Test("few candidates (read by id): pages both ways, counts and indexes as the rule says", arguments: ConversationOrder.allCases)
    func fewCandidates(sort: ConversationOrder) throws {
        let store = try Self.makeStore(count: 700)
        for words in Self.queries {
            try Self.expectAsDefined(store, ConversationFilter(title: words), sort: sort, limits: [7, 100])
        }
        try Self.expectAsDefined(store, ConversationFilter(source: "claude", pinnedOnly: true, title: "rust"), sort: sort, limits: [3])
        try Self.expectAsDefined(
            store, ConversationFilter(since: Timestamp(milliseconds: 5 * 86_400_000), until: Timestamp(milliseconds: 15 * 86_400_000), title: "c"),
            sort: sort, limits: [5])
    }

    @Test("many candidates (the walk, checked row by row past the probe), and the index proposing what the rule refuses")
    func manyCandidates() throws {
        // More than `fewCandidates` titles proposed for "node.js" (the index reads the words
        // "node js", which the rule refuses), of which one in 997 passes: the first rows of
        // the walk hold too few, and the order's index is walked with the candidates.
        let titles = ["Zalgo t̶e̴x̵t", "Async Rust", "node js rust", "Rust belt", "x marks the spot", "Trusting", "node js"]
        let store = try Self.makeStore(count: ConversationListQuery.fewCandidates * 4, titles: titles, rare: "Node.js streams")
        let proposed = try store.database.scalarInt(
            "SELECT count(*) FROM conversation_fts WHERE conversation_fts MATCH ?", [.text(try #require(SearchQuery("node.js").indexExpression))])
        #expect(proposed > ConversationListQuery.fewCandidates)
        for (words, limits) in [("node.js", [7, 999]), ("node.js streams", [999]), ("x", [999]), ("text", [999]), ("ab", [999])] {
            try Self.expectAsDefined(store, ConversationFilter(title: words), sort: .updated, limits: limits)
        }
        #expect(try store.conversations.count(filter: ConversationFilter(title: "node.js")) == 20)
        try Self.expectAsDefined(store, ConversationFilter(title: "node.js"), sort: .title, limits: [9])
        try Self.expectAsDefined(store, ConversationFilter(pinnedOnly: true, title: "r"), sort: .created, limits: [60])
    }

    @Test("while the title index is being built, narrowing checks every row and still finds every title")
    func indexBeingBuilt() throws {
        let store = try Self.makeStore(count: 300)
        try store.database.write {
            try store.database.run("INSERT INTO conversation_fts (conversation_fts) VALUES ('delete-all')")
            try store.database.run("INSERT INTO search_backlog (name, below) VALUES ('conversation', (SELECT max(id) + 1 FROM conversation))")
        }
        for words in ["rust", "京", "cafe", "t"] {
            try Self.expectAsDefined(store, ConversationFilter(title: words), sort: .updated, limits: [10])
            #expect(try store.conversations.count(filter: ConversationFilter(title: words)) > 0, "\(words)")
        }
    }

    @Test("the SQL function on every connection: NULL and invalid UTF-8 are no match, never a crash")
    func sqlFunction() throws {
        let store = try Self.makeStore(count: 3)
        let name = TitleMatchFunction.name
        #expect(try store.database.scalarInt("SELECT \(name)('Async Rust', 'rust')") == 1)
        #expect(try store.database.scalarInt("SELECT \(name)(NULL, 'rust')") == 0)
        #expect(try store.database.scalarInt("SELECT \(name)('rust', NULL)") == 0)
        #expect(try store.database.scalarInt("SELECT \(name)(CAST(x'fffe2072757374' AS TEXT), 'rust')") == 1)
        #expect(try store.database.scalarInt("SELECT \(name)(x'00', '')") == 0)
        let folder = try TemporaryDirectory()
        _ = try Store.open(path: folder.file("h.sqlite"))
        let readOnly = try Store.open(path: folder.file("h.sqlite"), readOnly: true)
        #expect(try readOnly.database.scalarInt("SELECT \(name)('日本語', '日本')") == 1)
    }

    @Test("the filter line: title:WORDS and plain words both narrow by title; printed back and parsed the same")
    func filterLine() throws {
        let now = Timestamp(milliseconds: 1_800_000_000_000)
        let plain = try ConversationFilter.parse("rust async source:claude", now: now)
        #expect(plain.title == "rust async" && plain.source == "claude")
        #expect(plain.description == "source:claude title:\"rust async\"")
        #expect(try ConversationFilter.parse(plain.description, now: now) == plain)
        let phrase = try ConversationFilter.parse("\"haiku about\" title:re:invent", now: now)
        #expect(phrase.title == "\"haiku about\" re:invent")
        #expect(try ConversationFilter.parse(phrase.description, now: now) == phrase, "\(phrase.description)")
        // (A one-word phrase is that word.)
        #expect(try ConversationFilter.parse("title:\"a \\\"b\\\" c\"", now: now).title == "a b c")
        #expect(try ConversationFilter.parse("title:\"a \\\"b d\\\" c\"", now: now).title == "a \"b d\" c")
    }
}
