import Foundation
import Testing

@testable import ScrollbackModel
@testable import ScrollbackStorage
import TestSupport

/// The search's rules and its index must agree on where words start: the index proposes,
/// the rules decide, so a match the rules accept that the index cannot propose is lost
/// whenever the index is asked (and found when the newest rows are read instead). For
/// every code point outside the CJK class, a title "ab·cd" (· the code point) is indexed,
/// and "cd" must start a word for the rules only where the index holds a token "cd".
@Suite("The search's rules and its index agree on word starts")
struct IndexAgreementTests {
    static func disagreements(in values: [UInt32]) throws -> [String] {
        let store = try Store.open(path: ":memory:")
        var scalars: [UInt32: Unicode.Scalar] = [:]
        try store.database.write {
            for value in values {
                guard let scalar = Unicode.Scalar(value), !SearchText.isCJK(scalar) else { continue }
                scalars[value] = scalar
                try store.database.run(
                    "INSERT INTO conversation_fts (rowid, title) VALUES (?, ?)", [.integer(Int64(value)), .text("ab" + String(Character(scalar)) + "cd")])
            }
        }
        let split = Set(try store.database.query(
            "SELECT rowid FROM conversation_fts WHERE conversation_fts MATCH '\"cd\"'", [], { UInt32(truncatingIfNeeded: $0.int64(0)) }))
        return scalars.keys.sorted().compactMap { value in
            guard let scalar = scalars[value] else { return nil }
            // The rules may see one word where the index sees two (a combining mark: the index
            // then proposes more than matches); never the other way.
            let rulesSplit = SearchQuery("cd").matches("ab" + String(Character(scalar)) + "cd")
            return rulesSplit && !split.contains(value) ? String(format: "U+%04X", value) : nil
        }
    }

    @Test("every code point of the Basic Multilingual Plane")
    func basicPlane() throws {
        let found = try Self.disagreements(in: Array(0x80...0xFFFF))
        #expect(found.isEmpty, "the index keeps these inside words, the rules end a word there: \(found.prefix(40))")
    }

    @Test("the other planes, one code point in seven, and the edges of every range")
    func otherPlanes() throws {
        var values = Set(stride(from: UInt32(0x10000), through: 0x10FFFF, by: 7))
        for range in IndexWordCharacters.ranges {
            for value in [range.lowerBound, range.upperBound, range.lowerBound &- 1, range.upperBound &+ 1] where value >= 0x10000 && value <= 0x10FFFF {
                values.insert(value)
            }
        }
        let found = try Self.disagreements(in: values.sorted())
        #expect(found.isEmpty, "the index keeps these inside words, the rules end a word there: \(found.prefix(40))")
    }

    @Test("a word after a bidi isolate or a newer emoji is found by the index and the rules alike")
    func examples() throws {
        let store = try Store.open(path: ":memory:")
        _ = try store.addConversation(title: "Hidden\u{2066}isolate\u{2069} text", createdAt: 1)
        _ = try store.addConversation(title: "🧑coder notes", createdAt: 2)
        for words in ["hidden", "text", "🧑"] {
            #expect(try store.conversations.count(filter: ConversationFilter(title: words)) == 1, "\(words)")
            #expect(try store.conversations.page(sort: .updated, filter: ConversationFilter(title: words), at: .first, limit: 5).items.count == 1)
        }
        // Inside a word for both: not a word's start.
        #expect(try store.conversations.count(filter: ConversationFilter(title: "isolate")) == 0)
        #expect(try store.conversations.count(filter: ConversationFilter(title: "coder")) == 0)
    }
}
