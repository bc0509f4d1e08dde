import Foundation
import ScrollbackImport
import ScrollbackModel
import ScrollbackStorage
@testable import ScrollbackSync
import Testing
import TestSupport

/// A message's kind is synced: hidden on one machine, hidden on all; a message an earlier
/// import left out, put back where it stood, moves the message after it on every machine;
/// the server's schema says which programs may read it.
@Suite("Sync: message kinds", .serialized)
struct SyncKindsTests {
    /// A conversation as an earlier release stored it (no reasoning), then as this one reads
    /// the export (the reasoning between the question and the answer, hidden).
    static func conversation(withReasoning: Bool) -> ImportedConversation {
        let start: Int64 = 1_700_000_000_000
        var messages = [
            ImportedMessage(role: .user, content: "Why?", createdAt: Timestamp(milliseconds: start), nodeID: "q", parent: .root)
        ]
        if withReasoning {
            messages.append(
                ImportedMessage(
                    role: .assistant, content: "Thinking it over.", createdAt: Timestamp(milliseconds: start + 1_000), nodeID: "r",
                    parent: .node("q"), kind: .reasoning))
        }
        messages.append(
            ImportedMessage(
                role: .assistant, content: "Because.", createdAt: Timestamp(milliseconds: start + 2_000), nodeID: "a",
                parent: .node(withReasoning ? "r" : "q")))
        messages.append(
            ImportedMessage(
                role: .tool, content: "← bio\nModel set context updated.", createdAt: Timestamp(milliseconds: start + 3_000),
                nodeID: "t", parent: .node("a"), kind: withReasoning ? .internal : .text))
        return ImportedConversation(
            source: "chatgpt", sourceID: "kinds", title: "Kinds", model: "o3", createdAt: Timestamp(milliseconds: start),
            updatedAt: Timestamp(milliseconds: start), messages: messages, currentNodeID: "t")
    }

    @Test("kinds and a re-parented message reach the other machine; both export the same, and show the same seen transcript")
    func kindsSync() throws {
        let scene = try SyncScene()
        let a = try scene.machine("a")
        let b = try scene.machine("b")
        try a.turnOn()
        try b.turnOn()
        _ = try a.store.upsert(Self.conversation(withReasoning: false))
        try a.sync()
        try b.sync()
        let before = try #require(try b.store.conversations.page(sort: .created, at: .first, limit: 1).items.first)
        #expect(before.seenCount == 3 && before.hiddenCount == 0)

        // The newer import on a: the reasoning goes in between, the tool result is hidden.
        #expect(try a.store.upsert(Self.conversation(withReasoning: true)) == .updated)
        try a.sync()
        try b.sync()
        let after = try #require(try b.store.conversations.page(sort: .created, at: .first, limit: 1).items.first)
        #expect(after.seenCount == 2 && after.hiddenCount == 2 && after.messageCount == 4)
        let seen = try b.store.messages.page(try b.store.messages.branch(of: after, leaf: nil), at: .first, limit: 10).items
        #expect(seen.map(\.content) == ["Why?", "Because."])
        let all = try b.store.messages.page(
            try b.store.messages.branch(of: after, leaf: nil, showingHidden: true), at: .first, limit: 10).items
        #expect(all.map(\.content) == ["Why?", "Thinking it over.", "Because.", "← bio\nModel set context updated."])
        #expect(all.map(\.kind) == [.text, .reasoning, .text, .internal])
        #expect(after.branchLength == 4)
        #expect(try a.export() == b.export())
        #expect(try b.store.check().problems.isEmpty)
        // Nothing waits, and a third machine catching up gets the same.
        let c = try scene.machine("c")
        try c.turnOn()
        try c.sync()
        #expect(try c.export() == a.export())
    }

    @Test("the server's schema goes to version 4 (with the tables of files and of snapshots) at the first sync, from 1, 2 or 3; a program that knows only an older version is refused and told to upgrade")
    func serverVersion() throws {
        let scene = try SyncScene()
        let a = try scene.machine("a")
        try a.turnOn()
        // A server an earlier release made (version 1).
        _ = try scene.server.psql(scene.url, "UPDATE scrollback.schema_version SET version = 1")
        _ = try a.store.conversations.create(NewConversation(title: "One", createdAt: Timestamp(milliseconds: 1)))
        try a.sync()
        #expect(try scene.server.psql(scene.url, "SELECT version FROM scrollback.schema_version").hasPrefix("4"))
        #expect(SyncEngine.serverSchemaVersion == 4)
        #expect(try scene.server.psql(scene.url, "SELECT count(*) FROM scrollback.file_chunk").hasPrefix("0"))
        // A version-2 server (the release before files) is raised as well.
        _ = try scene.server.psql(
            scene.url,
            "DROP TABLE scrollback.file_chunk; DROP TABLE scrollback.file; DROP TABLE scrollback.snapshot_chunk; DROP TABLE scrollback.snapshot; DROP TABLE scrollback.snapshot_lease; UPDATE scrollback.schema_version SET version = 2")
        _ = try a.store.conversations.create(NewConversation(title: "Two", createdAt: Timestamp(milliseconds: 2)))
        try a.sync()
        #expect(try scene.server.psql(scene.url, "SELECT version FROM scrollback.schema_version").hasPrefix("4"))
        #expect(try scene.server.psql(scene.url, "SELECT count(*) FROM scrollback.file").hasPrefix("0"))
        #expect(try scene.server.psql(scene.url, "SELECT count(*) FROM scrollback.snapshot").hasPrefix("0"))
        // A version-3 server (the release before snapshots).
        _ = try scene.server.psql(
            scene.url,
            "DROP TABLE scrollback.snapshot_chunk; DROP TABLE scrollback.snapshot; DROP TABLE scrollback.snapshot_lease; UPDATE scrollback.schema_version SET version = 3")
        _ = try a.store.conversations.create(NewConversation(title: "Three", createdAt: Timestamp(milliseconds: 3)))
        try a.sync()
        #expect(try scene.server.psql(scene.url, "SELECT version FROM scrollback.schema_version").hasPrefix("4"))
        #expect(try scene.server.psql(scene.url, "SELECT count(*) FROM scrollback.snapshot_lease").hasPrefix("0"))
        // What an earlier release says of it (its check compares with its own version, 1).
        let refusal = SyncError.newerServerSchema(found: 2, known: 1).description
        #expect(refusal.contains("newer than this scrollback knows (1); upgrade scrollback on this machine; nothing was changed"))
    }
}
