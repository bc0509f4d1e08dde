import Foundation
@testable import ScrollbackExport
import Testing

import ScrollbackImport
import ScrollbackModel
@testable import ScrollbackStorage
import ScrollbackViewModels
import TestSupport

/// The reader shows what the person saw; `z` shows the rest, dimmed and marked, and hides it
/// again; Tab opens a tool line. Branches, finding and the outline count what is shown.
@Suite("Reader: hidden messages")
@MainActor
struct HiddenMessagesTests {
    static let start = BrowserFixture.now.milliseconds - 3_600_000

    static func store() throws -> Store {
        let store = try Store.open(path: ":memory:")
        try store.addTree(title: "Repo changes", start: start, nodes: Store.hiddenTree, current: "x1")
        return store
    }

    static func shown(_ reader: ReaderViewModel, _ store: Store) throws -> [String] {
        try store.messages.page(reader.branch, at: .first, limit: 50).items.map { String($0.content.prefix(12)) }
    }

    @Test("z shows the hidden messages on the same branch and hides them again; the focus stays, or goes to the seen one above")
    func toggle() throws {
        let fixture = try BrowserFixture(store: Self.store())
        #expect(fixture.browser.list.selected?.seenCount == 3)
        try fixture.press(.enter)
        let reader = try #require(fixture.browser.reader)
        // The current leaf is a reasoning-only regeneration: the seen branch ends at the answer.
        #expect(try Self.shown(reader, fixture.store) == ["What changed", "Bash(git sta", "Eleven files"])
        #expect(reader.focusedSiblings == nil && reader.tree == nil)
        try fixture.press(.character("}"))
        #expect(reader.focusedMessage?.kind == .tool)

        try fixture.press(.character("z"))
        #expect(reader.showsHidden)
        // Counted on the branch shown: the regeneration that only reasoned is another.
        #expect(fixture.browser.status == "Showing 3 hidden messages, dimmed (z hides them); 1 more on other branches (t)")
        #expect(
            try Self.shown(reader, fixture.store) == ["What changed", "Thinking: lo", "→ browser\nse", "← browser\nev", "Bash(git sta", "Eleven files"])
        // The focused message kept its place in the story: the tool call, now 5th.
        #expect(reader.focusedMessage?.kind == .tool && reader.focus == 4)
        // The hidden regeneration is a version here.
        try fixture.press(.character("}"))
        #expect(reader.focusedSiblings?.count == 2)
        try fixture.press(.character("]"))
        #expect(try Self.shown(reader, fixture.store).last == "Maybe more?")

        // Focused on hidden reasoning, z goes back to the seen message above it.
        try fixture.press(.character("g"))
        try fixture.press(.character("}"))
        #expect(reader.focusedMessage?.kind == .reasoning)
        try fixture.press(.character("z"))
        #expect(!reader.showsHidden && reader.focus == 0)
        #expect(fixture.browser.status == "Showing what you saw (z shows the hidden again)")
        #expect(try Self.shown(reader, fixture.store) == ["What changed", "Bash(git sta", "Eleven files"])
        // A version chosen with z on that only reasoned is no branch of what was seen: every
        // view shows the seen branch, z again that branch with its hidden messages.
        try fixture.press(.character("z"))
        #expect(try Self.shown(reader, fixture.store).last == "Eleven files")
        let stored = try #require(try fixture.store.conversations.conversation(id: reader.conversation.id))
        #expect(try fixture.store.messages.page(try fixture.store.messages.branch(of: stored, leaf: nil), at: .first, limit: 50).items.last?.content == "Eleven files changed.")
    }

    @Test("what z shows is what c, |, the pager and x hand on: the hidden messages too, as export --hidden writes them; without z, what was seen")
    func textOut() throws {
        let fixture = try BrowserFixture(store: Self.store())
        let browser = fixture.browser
        let conversation = try #require(browser.list.selected)
        let seen = try Exporter(store: fixture.store).render(conversation, as: .md)
        let all = try Exporter(store: fixture.store, showingHidden: true).render(conversation, as: .md)
        #expect(!seen.contains("Thinking") && all.contains("Thinking: look at git"))
        try fixture.press(.enter, .character("c"))
        #expect(browser.takeEffect() == .copy(text: seen, what: "the conversation as Markdown"))
        try fixture.press(.character("z"), .character("c"))
        #expect(browser.takeEffect() == .copy(text: all, what: "the conversation as Markdown, hidden messages included (z)"))
        try fixture.press(.character("|"))
        try fixture.type("wc -c")
        try fixture.press(.enter)
        #expect(browser.takeEffect() == .pipe(command: "wc -c", input: all))
        try fixture.press(.character("x"), .enter)
        guard case .export(let ids, _, let hidden) = browser.takeEffect() else {
            Issue.record("x then Enter should export")
            return
        }
        #expect(ids == [conversation.id] && hidden)
        // A name whose extension says no format: asked again, nothing written.
        try fixture.press(.character("x"))
        try fixture.type("notes.exe")
        try fixture.press(.enter)
        #expect(browser.takeEffect() == nil && browser.status == "End the name in .md, .json or .jsonl: it says the format")
        guard case .export = browser.prompt else {
            Issue.record("the prompt should stay open")
            return
        }
        try fixture.press(.escape)
        // z off again: what was seen.
        try fixture.press(.character("z"), .character("x"), .enter)
        guard case .export(_, _, let hiddenNow) = browser.takeEffect() else {
            Issue.record("x then Enter should export")
            return
        }
        #expect(!hiddenNow)
        try fixture.press(.character("|"))
        try fixture.type("wc -c")
        try fixture.press(.enter)
        #expect(browser.takeEffect() == .pipe(command: "wc -c", input: seen))
    }

    @Test("f on a tool result that names a subagent opens its conversation; Esc comes back to the call, where it was, then to the list")
    func followSubagent() throws {
        let store = try Store.open(path: ":memory:")
        let agent = try store.addTree(
            title: "Subagent: Find every TODO", start: Self.start - 120_000,
            nodes: [TreeNode("s1", nil, .user, "Find every TODO", minute: 0), TreeNode("s2", "s1", .assistant, "Found 3.", minute: 1)], current: "s2",
            sourceID: "agent")
        try store.addTree(
            title: "Clean up", start: Self.start,
            nodes: [
                TreeNode("u", nil, .user, "Clean up", minute: 0),
                TreeNode("c", "u", .assistant, "Task(Find TODOs)", minute: 1, kind: .tool),
                TreeNode("r", "c", .tool, "Found 3.\n\n" + ConversationLink.subagentLine(agent.publicID), minute: 2, kind: .tool),
                TreeNode("x", "r", .tool, "Found 4.\n\n" + ConversationLink.subagentLine("00000000-0000-0000-0000-000000000000"), minute: 3, kind: .tool),
                TreeNode("a", "x", .assistant, "Three TODOs.", minute: 4),
            ], current: "a", sourceID: "main")
        let fixture = try BrowserFixture(store: store)
        #expect(fixture.selectedTitle == "Clean up")
        try fixture.press(.enter, .character("f"))
        #expect(fixture.browser.status == "This message names no subagent (f opens one from the tool result it came back as)")
        try fixture.press(.character("}"), .character("}"), .character("f"))
        #expect(fixture.browser.reader?.conversation.title == "Subagent: Find every TODO")
        #expect(fixture.browser.status == "The subagent's conversation (Esc goes back to the call)")
        try fixture.press(.escape)
        #expect(fixture.browser.reader?.conversation.title == "Clean up" && fixture.browser.reader?.focus == 2)
        #expect(fixture.browser.status == "Back in “Clean up”")
        // A subagent not imported: said, nothing opened.
        try fixture.press(.character("}"), .character("f"))
        #expect(fixture.browser.reader?.conversation.title == "Clean up")
        #expect(fixture.browser.status?.hasPrefix("The subagent's conversation is not here") == true, "\(fixture.browser.status ?? "")")
        try fixture.press(.escape)
        #expect(fixture.browser.screen == .list)
    }

    @Test("Tab opens and closes the focused tool line; elsewhere it says what it does; z where nothing is hidden says so")
    func tab() throws {
        let store = try Self.store()
        try store.addTree(title: "Plain", start: Self.start - 60_000, sourceID: "plain")
        let fixture = try BrowserFixture(store: store)
        try fixture.press(.enter)
        let reader = try #require(fixture.browser.reader)
        let collapsed = reader.lines.filter { $0.style == .summary }.count
        #expect(collapsed == 1)
        try fixture.press(.tab)
        #expect(fixture.browser.status == "Tab opens a tool line (▸); this message is shown whole")
        try fixture.press(.character("}"), .tab)
        #expect(reader.lines.filter { $0.style == .summary }.isEmpty)
        #expect(reader.lines.contains { $0.text == "M file11.swift" })
        try fixture.press(.tab)
        #expect(reader.lines.filter { $0.style == .summary }.count == 1)
        try fixture.press(.escape, .character("j"), .enter)
        #expect(fixture.browser.reader?.conversation.title == "Plain")
        try fixture.press(.character("z"))
        #expect(fixture.browser.status == "Nothing hidden: you saw every message of this conversation")
    }

    @Test("search and find see the hidden text only where it is shown")
    func finding() throws {
        let fixture = try BrowserFixture(store: Self.store())
        #expect(try fixture.store.search.search("Thinking", after: nil, limit: 5).items.isEmpty)
        try fixture.press(.enter, .character("/"))
        try fixture.type("Thinking")
        try fixture.press(.enter)
        #expect(fixture.browser.reader?.find == nil)
        // Said where it is, not "not in this conversation".
        #expect(fixture.browser.status?.contains("Only in hidden messages: “Thinking” (z shows them") == true, "\(fixture.browser.status ?? "")")
        try fixture.press(.character("z"), .character("/"))
        try fixture.type("Thinking")
        try fixture.press(.enter)
        #expect(fixture.browser.reader?.find?.positions == [1])
        // z hides them again: the find has nothing left to show, and says so.
        try fixture.press(.character("z"))
        #expect(fixture.browser.reader?.find == nil)
        #expect(fixture.browser.status?.contains("“Thinking” is only in hidden messages") == true, "\(fixture.browser.status ?? "")")
        // A find of seen text goes on at its new places when z shows the hidden between them.
        try fixture.press(.character("/"))
        try fixture.type("Eleven")
        try fixture.press(.enter)
        let seenPlaces = try #require(fixture.browser.reader?.find?.positions)
        try fixture.press(.character("z"))
        let shownPlaces = try #require(fixture.browser.reader?.find?.positions)
        #expect(seenPlaces.count == 1 && shownPlaces.count == 1 && shownPlaces != seenPlaces, "\(seenPlaces) \(shownPlaces)")
        // Something nowhere: not in this conversation.
        try fixture.press(.character("/"))
        try fixture.type("walrus")
        try fixture.press(.enter)
        #expect(fixture.browser.status?.contains("Only in hidden") == false)
    }
}
