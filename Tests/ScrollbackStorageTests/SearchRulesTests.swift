import Foundation
import Testing

import ScrollbackModel
@testable import ScrollbackStorage
import TestSupport

/// The search against a brute-force reading of the same rules (README → Searching), written
/// independently: Foundation's folding and ICU regular expressions over every message.
@Suite("Search rules against brute force")
struct SearchRulesTests {
    /// Words in several scripts; no ß, İ or final sigma, where Foundation's folding and
    /// SQLite's (simple case folding) differ on purpose.
    static let vocabulary: [String] = [
        "the", "the", "the", "a", "and", "to", "of", "go", "goes", "Go", "Zalgo", "golang", "AI", "AIs", "ai-driven",
        "refactor", "refactoring", "Refactored", "café", "cafe", "naïve", "résumé", "Résumé", "C#", "C", "C++", "std::vector",
        "std::vector<int>", "vector", "--force", "--force-with-lease", "force", "git", "push", "quick", "brown", "fox",
        "quick-brown", "東京", "東京で", "会議", "会議室を予約", "予約", "京都", "鰻丼", "鰻", "ラーメン", "東京tower", "tower",
        "towers", "회의", "한국어", "문장", "ภาษาไทย", "ภาษา", "ສະບາຍດີ", "ខ្មែរ", "မြန်မာ", "中文", "的", "是", "你好世界",
        "x->y", "->", "a_b", "o'neil", "3.14", "42", "v1.2", "π", "Ω", "日本語の敬語", "本語",
    ]

    static let queries: [String] = [
        "the", "zzzqx", "鰻丼", "会議", "東", "京", "go", "AI", "Go", "\"quick brown\"", "\"brown fox\"", "C#", "std::vector",
        "--force", "refactor", "cafe", "CAFÉ", "resume", "회의", "ภาษา", "ຍ", "x->y", "->", "tower", "東京tower",
        "vector go", "\"東京 tower\"", "本語", "3.14", "v1", "o'neil", "\"the quick", "quick\"", "a_b", "ai-driven", "π",
        "中", "你好", "世界", "ខ្មែរ", "သ", "AND", "NEAR", "*", "\"\"", "force-with", "ing",
    ]

    struct Message {
        let conversation: Int
        let text: String
        let time: Int64
        let order: Int
    }

    struct Corpus {
        var titles: [(text: String, time: Int64, order: Int)] = []
        var messages: [Message] = []
    }

    static func corpus(seed: UInt64, conversations: Int) -> Corpus {
        var random = SeededRandom(seed: seed)
        var corpus = Corpus()
        for index in 0..<conversations {
            // Few distinct times, so that ties are common and their order is tested too.
            let time = Int64(random.below(300)) * 86_400_000 + 1_600_000_000_000
            let title = (0..<(1 + random.below(3))).map { _ in vocabulary[random.below(vocabulary.count)] }.joined(separator: " ")
            corpus.titles.append((title, time, index))
            for _ in 0..<(1 + random.below(8)) {
                let words = (0..<(1 + random.below(12))).map { _ in vocabulary[random.below(vocabulary.count)] }
                var text = ""
                for word in words {
                    switch random.below(10) {
                    case 0: text += "\n"
                    case 1: text += ""  // no space: scripts run together
                    case 2: text += ", "
                    default: text += " "
                    }
                    text += word
                }
                let messageTime = time + Int64(random.below(5)) * 1_000
                corpus.messages.append(Message(conversation: index, text: text, time: messageTime, order: corpus.messages.count))
            }
        }
        return corpus
    }

    /// Stores the corpus (messages of a conversation in time order, as imports do).
    static func store(_ corpus: Corpus, in store: Store) throws -> [Int64] {
        var ids: [Int64] = []
        for (index, title) in corpus.titles.enumerated() {
            let conversation = try store.conversations.create(
                NewConversation(title: title.text, createdAt: Timestamp(milliseconds: title.time)))
            ids.append(conversation.id)
            let messages = corpus.messages.filter { $0.conversation == index }
            _ = try store.messages.append(
                messages.map { NewMessage(role: .user, content: $0.text, createdAt: Timestamp(milliseconds: $0.time)) },
                to: conversation.id)
        }
        return ids
    }

    /// The expected hits as (conversation index, message order or nil), in order.
    static func bruteForce(_ query: String, _ corpus: Corpus) -> [String] {
        let terms = BruteForce.terms(query).map(BruteForce.Matcher.init)
        guard !terms.isEmpty else { return [] }
        let titles = corpus.titles.filter { title in terms.allSatisfy { $0.matches(title.text) } }
            .sorted { ($0.time, $0.order) > ($1.time, $1.order) }
            .map { "t\($0.order)" }
        // Messages in time order; equal times in the order they were stored, which is by
        // conversation (each conversation's messages are stored together).
        let stored = corpus.messages.sorted { ($0.conversation, $0.order) < ($1.conversation, $1.order) }
        var storedIndex: [Int: Int] = [:]
        for (index, message) in stored.enumerated() { storedIndex[message.order] = index }
        let messages = corpus.messages.filter { message in terms.allSatisfy { $0.matches(message.text) } }
            .sorted { ($0.time, storedIndex[$0.order] ?? 0) > ($1.time, storedIndex[$1.order] ?? 0) }
            .map { "m\($0.order)" }
        return titles + messages
    }

    /// Every hit of `query`, page by page, named as `bruteForce` names them.
    static func allHits(_ query: String, in store: Store, ids: [Int64], corpus: Corpus, pageSize: Int = 37) throws -> [String] {
        var conversationIndex: [Int64: Int] = [:]
        for (index, id) in ids.enumerated() { conversationIndex[id] = index }
        var firstTwin: [String: Int] = [:]
        for message in corpus.messages where firstTwin["\(message.conversation)|\(message.time)|\(message.text)"] == nil {
            firstTwin["\(message.conversation)|\(message.time)|\(message.text)"] = message.order
        }
        var names: [String] = []
        var cursor: Cursor?
        repeat {
            let page = try store.search.search(query, after: cursor, limit: pageSize)
            for hit in page.items {
                let index = conversationIndex[hit.conversation.id] ?? -1
                if let reference = hit.message {
                    let message = try #require(try store.database.queryFirst(
                        "SELECT content, created_at FROM message WHERE id = ?", [.integer(reference.id)]) { ($0.text(0), $0.int64(1)) })
                    // Messages with the same text and time in one conversation are the same
                    // to the rules; the first of them stands for each.
                    names.append("m\(firstTwin["\(index)|\(message.1)|\(message.0)"] ?? -1)")
                } else {
                    names.append("t\(index)")
                }
            }
            cursor = page.next
        } while cursor != nil
        return names
    }

    /// Same-text duplicates are indistinguishable to the rules: compare with each named by
    /// its first twin.
    static func canonical(_ names: [String], _ corpus: Corpus) -> [String] {
        var first: [String: Int] = [:]
        for message in corpus.messages {
            let key = "\(message.conversation)|\(message.text)|\(message.time)"
            if first[key] == nil { first[key] = message.order }
        }
        var byOrder: [Int: Int] = [:]
        for message in corpus.messages {
            byOrder[message.order] = first["\(message.conversation)|\(message.text)|\(message.time)"]
        }
        return names.map { name in
            guard name.hasPrefix("m"), let order = Int(name.dropFirst()) else { return name }
            return "m\(byOrder[order] ?? order)"
        }
    }

    @Test("every query class returns what the brute force returns, in the same order, across pages")
    func againstBruteForce() throws {
        let corpus = Self.corpus(seed: 7, conversations: 500)
        let store = try Store.open(path: ":memory:")
        let ids = try Self.store(corpus, in: store)
        #expect(corpus.messages.count > 2_000)
        var randomQueries: [String] = []
        var random = SeededRandom(seed: 99)
        for _ in 0..<60 {
            // Pieces of real words: starts and middles of words, one or two of them.
            let word = Array(Self.vocabulary[random.below(Self.vocabulary.count)])
            let start = random.below(word.count)
            let length = 1 + random.below(max(1, word.count - start))
            randomQueries.append(String(word[start..<min(word.count, start + length)]))
        }
        for query in Self.queries + randomQueries {
            let expected = Self.canonical(Self.bruteForce(query, corpus), corpus)
            let found = Self.canonical(try Self.allHits(query, in: store, ids: ids, corpus: corpus), corpus)
            #expect(found == expected, "query \(query): \(found.count) found, \(expected.count) expected")
        }
    }

    @Test("the rules in the README, by example")
    func examples() {
        #expect(SearchQuery("go").matches("it goes"))
        #expect(!SearchQuery("go").matches("Zalgo"))
        #expect(SearchQuery("refactor").matches("Refactoring it"))
        #expect(SearchQuery("cafe").matches("Café au lait"))
        #expect(SearchQuery("C#").matches("I like C# a lot"))
        #expect(!SearchQuery("C#").matches("ABC#"))
        #expect(SearchQuery("\"quick brown\"").matches("the quick\n  brown fox"))
        #expect(!SearchQuery("\"quick brown\"").matches("quick, brown"))
        #expect(SearchQuery("会議").matches("明日の会議室"))
        #expect(SearchQuery("std::vector").matches("use std::vector<int>"))
        #expect(!SearchQuery("std::vector").matches("std vector"))
        #expect(SearchQuery("a* OR b").terms.map(\.text) == ["a*", "OR", "b"])
        #expect(SearchQuery("\"\"").isEmpty)
        // A vowel sign or other combining mark continues its word: no match starts after it.
        #expect(!SearchQuery("निया").matches("दुनिया"))
        #expect(SearchQuery("दुनिया").matches("नमस्ते दुनिया"))
        #expect(!SearchQuery("yz").matches("x\u{20DD}yz"))
        #expect(SearchQuery("ไทย").matches("ภาษาไทย"))
    }

    @Test("newest first by the message's time, not by when it was stored")
    func newestFirst() throws {
        let store = try Store.open(path: ":memory:")
        try store.addConversation(title: "yesterday", createdAt: 1_790_000_000_000, messages: ["kettle today"])
        // An old export imported later: its messages are older, so they come after.
        try store.addConversation(title: "2019", createdAt: 1_550_000_000_000, messages: ["kettle long ago"])
        try store.addConversation(title: "2023", createdAt: 1_690_000_000_000, messages: ["kettle in between"])
        let hits = try store.search.search("kettle", after: nil, limit: 10).items
        #expect(hits.map(\.snippet) == ["kettle today", "kettle in between", "kettle long ago"])
        #expect(hits.map { $0.message?.createdAt.milliseconds ?? 0 } == [1_790_000_000_000, 1_690_000_000_000, 1_550_000_000_000])
    }

    @Test("paging through every hit of a common word while messages are inserted between pages: no repeat, no skip")
    func pagingWhileInserting() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("p.sqlite")
        let store = try Store.open(path: path)
        let writer = try Store.open(path: path)
        var random = SeededRandom(seed: 3)
        for index in 0..<300 {
            try store.addConversation(
                title: "c\(index)", createdAt: Int64(random.below(1_000_000)) * 1_000 + 1_500_000_000_000,
                messages: ["the kettle", "no", "the pot"])
        }
        let before = Set(try store.database.query(
            "SELECT id FROM message WHERE content LIKE 'the %'") { $0.int64(0) })
        var seen: [Int64] = []
        var cursor: Cursor?
        repeat {
            let page = try store.search.search("the", after: cursor, limit: 25)
            seen += page.items.compactMap { $0.message?.id }
            cursor = page.next
            // Another connection adds hits older and newer than the cursor.
            try writer.addConversation(
                title: "late", createdAt: Int64(random.below(1_000_000)) * 1_000 + 1_500_000_000_000, messages: ["the late one"])
        } while cursor != nil
        #expect(Set(seen).count == seen.count, "a hit was repeated")
        #expect(before.isSubset(of: Set(seen)), "a hit that was there all along was skipped")
        #expect(seen == seen.sorted(by: >))
    }
}

/// The rules, read independently of `SearchQuery`: Foundation folds, ICU matches.
enum BruteForce {
    struct Term {
        let text: String
        let phrase: Bool
    }

    static func terms(_ query: String) -> [Term] {
        var terms: [Term] = []
        // Quotes split the query into alternating plain and quoted stretches.
        for (index, stretch) in query.components(separatedBy: "\"").enumerated() {
            if index % 2 == 1 {
                let words = stretch.split(whereSeparator: \.isWhitespace)
                if !words.isEmpty { terms.append(Term(text: words.joined(separator: " "), phrase: true)) }
            } else {
                terms += stretch.split(whereSeparator: \.isWhitespace).map { Term(text: String($0), phrase: false) }
            }
        }
        return terms
    }

    static func fold(_ text: String) -> String {
        text.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: Locale(identifier: "en_US_POSIX"))
    }

    /// Letters and digits of the scripts written with spaces.
    static let wordClass =
        "[[\\p{L}\\p{N}\\p{Co}]&&[^\\p{Han}\\p{Hiragana}\\p{Katakana}\\p{Hangul}\\p{Thai}\\p{Lao}\\p{Khmer}\\p{Myanmar}\\x{30FC}]]"

    /// One term as a regular expression: its folded text (white space runs as `\\s+` in a
    /// phrase), after no letter or digit when it starts with one.
    struct Matcher {
        let regex: NSRegularExpression?

        init(_ term: Term) {
            let folded = fold(term.text)
            guard let first = folded.unicodeScalars.first else {
                regex = nil
                return
            }
            let pieces =
                term.phrase
                ? folded.split(separator: " ").map { NSRegularExpression.escapedPattern(for: String($0)) }
                : [NSRegularExpression.escapedPattern(for: folded)]
            var pattern = pieces.joined(separator: "\\s+")
            let firstIsWord = (try? NSRegularExpression(pattern: "^" + wordClass))?.firstMatch(
                in: String(first), range: NSRange(location: 0, length: String(first).utf16.count)) != nil
            if firstIsWord { pattern = "(?<!" + wordClass + ")" + pattern }
            regex = try? NSRegularExpression(pattern: pattern)
        }

        func matches(_ text: String) -> Bool {
            guard let regex else { return false }
            let haystack = fold(text)
            return regex.firstMatch(in: haystack, range: NSRange(location: 0, length: haystack.utf16.count)) != nil
        }
    }
}
