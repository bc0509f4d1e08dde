import Foundation
import Testing

import ScrollbackModel
import ScrollbackStorage
import TestSupport

/// The filter line and pinning in the real binary, in a real terminal.
@Suite("Filter and pin in the browser")
struct BrowserDailyUseTests {
    @Test("f filters the list (header and count say so), Esc clears it; p pins the selected row to the top of every order")
    func filterAndPin() throws {
        let runner = try BinaryRunner()
        #expect(try runner.run(["demo", "--count", "300", "--seed", "6"]).status == 0)
        let store = try Store.open(path: runner.databasePath, readOnly: true)
        let expected = try store.conversations.count(filter: ConversationFilter(model: "claude"))
        let tmux = try TmuxSession(width: 100, height: 20, arguments: ["--db", runner.databasePath])
        _ = try tmux.waitFor(text: "1 of 300")
        try tmux.send("f")
        _ = try tmux.waitFor(text: "Filter:")
        try tmux.type("model:claude")
        try tmux.send("Enter")
        var screen = try tmux.waitFor("the filtered list") { $0[0].contains("· model:claude") }
        try tmux.send("G")
        screen = try tmux.waitFor("the filtered count") { BrowserEndToEndTests.footer($0).hasPrefix(" \(expected) of \(expected) (filtered)") }
        #expect(screen.dropFirst().dropLast().filter { !$0.isEmpty }.allSatisfy { $0.contains("claude") }, "\(screen)")
        try tmux.send("Escape")
        _ = try tmux.waitFor(text: "Filter cleared: every conversation")
        try tmux.send("g")
        _ = try tmux.waitFor(text: "1 of 300")

        // Pin the row at the bottom: it goes first, in every order.
        try tmux.send("G", "p")
        screen = try tmux.waitFor(text: "Pinned the conversation")
        #expect(BrowserEndToEndTests.footer(screen).contains("Pinned the conversation"))
        try tmux.send("j")
        screen = try tmux.waitFor(text: "2 of 300")
        #expect(screen[1].contains("⚑"))
        try tmux.send("q")
        #expect(try tmux.waitForExit() == 0)
        let pinned = try Store.open(path: runner.databasePath, readOnly: true).conversations.page(
            sort: .title, filter: ConversationFilter(pinnedOnly: true), at: .first, limit: 400)
        #expect(!pinned.items.isEmpty)
    }
}
