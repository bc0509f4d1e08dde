import Foundation
import Testing

import ScrollbackModel
@testable import ScrollbackStorage
import TestSupport

/// `Store.stats(perModel:)`: conversations, messages and tokens per model.
@Suite("Counts per model")
struct ModelStatsTests {
    @Test("a message counts under its own model, else its conversation's, else none; token sums of what is known")
    func perModel() throws {
        let store = try Store.open(path: ":memory:")
        let first = try store.addConversation(title: "a", createdAt: 1, messages: ["q", "a", "q", "a"])
        let second = try store.addConversation(title: "b", createdAt: 2, messages: ["q", "a"])
        let third = try store.addConversation(title: "c", createdAt: 3, messages: ["q"])
        try store.database.write {
            // The answers of the first by "big", one of them with counts; the second's model is "".
            try store.database.run(
                "UPDATE message SET model = 'big' WHERE conversation_id = ? AND role = 'assistant'", [.integer(first.id)])
            try store.database.run(
                """
                UPDATE message SET input_tokens = 10, output_tokens = 20
                 WHERE id = (SELECT min(id) FROM message WHERE conversation_id = ? AND role = 'assistant')
                """, [.integer(first.id)])
            try store.database.run("UPDATE message SET input_tokens = 5 WHERE conversation_id = ? AND role = 'user'", [.integer(second.id)])
            try store.database.run("UPDATE conversation SET model = '' WHERE id = ?", [.integer(second.id)])
            try store.database.run("UPDATE message SET model = 'big' WHERE conversation_id = ?", [.integer(third.id)])
        }
        #expect(try store.stats().models == [])
        #expect(
            try store.stats(perModel: true).models == [
                ModelStats(model: "big", conversations: 2, messages: 3, inputTokens: 10, outputTokens: 20),
                ModelStats(model: "test-model", conversations: 1, messages: 2, inputTokens: nil, outputTokens: nil),
                ModelStats(model: nil, conversations: 1, messages: 2, inputTokens: 5, outputTokens: nil),  // a tie: named ones first
            ])
    }

    @Test("sums beyond Int64 do not overflow: they are the largest Int64")
    func hugeSums() throws {
        let store = try Store.open(path: ":memory:")
        _ = try store.addConversation(title: "a", createdAt: 1, messages: ["q", "a", "q"])
        try store.database.run("UPDATE message SET input_tokens = 9223372036854775807, output_tokens = 1")
        let models = try store.stats(perModel: true).models
        #expect(models == [ModelStats(model: "test-model", conversations: 1, messages: 3, inputTokens: Int64.max, outputTokens: 3)])
    }
}
