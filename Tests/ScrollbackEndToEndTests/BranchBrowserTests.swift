import Foundation
import Testing

import ScrollbackModel
@testable import ScrollbackStorage
import TestSupport

/// Branches in the real binary, in tmux: the ChatGPT sample's regenerated answer.
@Suite("The browser in a terminal: branches")
struct BranchBrowserTests {
    static let sample = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("ScrollbackImportTests/Fixtures/chatgpt/conversations.json").path

    /// Starts the browser and opens "Postgres indexing" (the last by updated time) on its
    /// current branch, of `messages` messages.
    static func open(_ runner: BinaryRunner, readOnly: Bool = false, messages: Int) throws -> (TmuxSession, [String]) {
        let tmux = try TmuxSession(width: 80, height: 24, arguments: ["--db", runner.databasePath] + (readOnly ? ["--readonly"] : []))
        _ = try tmux.waitFor(text: "1 of 2")
        try tmux.send("G", "Enter")
        return (tmux, try tmux.waitFor(text: "message 1 of \(messages)"))
    }

    /// Back to the list and quit.
    static func quit(_ tmux: TmuxSession) throws {
        try tmux.send("q")
        _ = try tmux.waitFor(text: "of 2")
        try tmux.send("q")
        #expect(try tmux.waitForExit() == 0)
    }

    /// Opens "Postgres indexing" and focuses its second message, the answer given twice.
    static func openAnswer(_ runner: BinaryRunner) throws -> (TmuxSession, [String]) {
        let (tmux, _) = try open(runner, messages: 6)
        try tmux.send("}")
        return (tmux, try tmux.waitFor(text: "message 2 of 6"))
    }

    @Test("[ shows the other answer and the transcript follows; the choice is there on reopening; --readonly keeps nothing")
    func switchAndRemember() throws {
        let runner = try BinaryRunner()
        #expect(try runner.run(["import", Self.sample]).status == 0)
        func postgres() throws -> ConversationDTO? {
            try Store.open(path: runner.databasePath, readOnly: true).conversations.page(sort: .created, at: .first, limit: 5).items.last
        }
        let imported = try #require(try postgres())
        var (tmux, screen) = try Self.openAnswer(runner)
        #expect(screen.contains { $0.hasPrefix("‹ 2/2 › assistant") })
        #expect(screen.contains { $0.contains("You are missing an index") })
        try tmux.send("[")
        screen = try tmux.waitFor(text: "Version 1 of 2")
        #expect(screen.contains { $0.hasPrefix("‹ 1/2 › assistant") })
        #expect(screen.contains { $0.contains("First answer that was regenerated.") })
        #expect(!screen.contains { $0.contains("Here is the plan") })
        try Self.quit(tmux)

        // Reopened: the answer chosen.
        (tmux, screen) = try Self.open(runner, messages: 2)
        #expect(screen.contains { $0.contains("First answer that was regenerated.") })
        try Self.quit(tmux)
        // The choice is stored; the updated time (the list's order) is not touched.
        let conversation = try #require(try postgres())
        #expect(conversation.branchLength == 2 && conversation.seenCount == 7 && conversation.hiddenCount == 1)
        #expect(conversation.updatedAt == imported.updatedAt && conversation.title == "Postgres indexing")

        // Read-only: switching works until quit, and the file does not change.
        let before = try sha256(ofFile: runner.databasePath)
        (tmux, screen) = try Self.open(runner, readOnly: true, messages: 2)
        try tmux.send("}", "]")
        screen = try tmux.waitFor(text: "Version 2 of 2 · kept until you quit (read-only)")
        #expect(screen.contains { $0.contains("You are missing an index") })
        try Self.quit(tmux)
        #expect(try sha256(ofFile: runner.databasePath) == before)
        #expect((try? Data(contentsOf: URL(fileURLWithPath: runner.databasePath + "-wal")))?.count ?? 0 == 0)
        (tmux, screen) = try Self.open(runner, readOnly: true, messages: 2)
        #expect(screen.contains { $0.contains("First answer that was regenerated.") })
        try tmux.send("q", "q")
        #expect(try tmux.waitForExit() == 0)
    }
}
