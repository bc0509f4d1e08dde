import Foundation
import Testing

import ScrollbackModel
@testable import ScrollbackStorage
import ScrollbackViewModels
import TestSupport

/// The reader on a conversation with branches: a focused message, its versions (`[`, `]`),
/// the branch followed below it, the choice kept (or not, read-only), the outline, search
/// and find across branches.
@Suite("Reader: branches")
@MainActor
struct BranchReaderTests {
    static let start = BrowserFixture.now.milliseconds - 3_600_000

    static func store() throws -> Store {
        let store = try Store.open(path: ":memory:")
        try store.addTree(title: "Sorting", start: start)
        return store
    }

    /// The contents of the branch shown, from the top, a page of two at a time.
    static func shown(_ reader: ReaderViewModel, _ store: Store) throws -> [String] {
        var result: [String] = []
        var position = PagePosition.first
        while true {
            let page = try store.messages.page(reader.branch, at: position, limit: 2)
            result += page.items.map(\.content)
            guard let next = page.next else { return result }
            position = .after(next)
        }
    }

    @Test("] and [ switch the focused message's version; the rest follows the remembered branch, else the newest")
    func switching() throws {
        let fixture = try BrowserFixture(store: Self.store())
        try fixture.press(.enter)
        let reader = try #require(fixture.browser.reader)
        #expect(try Self.shown(reader, fixture.store) == ["How do I sort a list?", "Call sort() in place.", "And descending?", "Pass by: >."])
        #expect(reader.focus == 0 && reader.focusedSiblings == nil)
        try fixture.press(.character("]"))
        #expect(fixture.browser.status?.hasPrefix("This message has no other version") == true)

        try fixture.press(.character("}"))
        #expect(reader.focus == 1 && reader.focusedSiblings! == (1, 3))
        #expect(reader.lines.contains { $0.text.hasPrefix("‹ 2/3 › assistant") })
        try fixture.press(.character("]"))
        #expect(fixture.browser.status == "Version 3 of 3")
        #expect(try Self.shown(reader, fixture.store) == ["How do I sort a list?", "Either works."])
        #expect(reader.focus == 1 && reader.branchCount == 2)
        try fixture.press(.character("]"))
        #expect(fixture.browser.status == "The last of 3 versions")
        // Back to the second answer: its follow-up comes back with it (remembered).
        try fixture.press(.character("["))
        #expect(try Self.shown(reader, fixture.store) == ["How do I sort a list?", "Call sort() in place.", "And descending?", "Pass by: >."])
        try fixture.press(.character("["))
        #expect(try Self.shown(reader, fixture.store) == ["How do I sort a list?", "Use sorted()."])
        try fixture.press(.character("["))
        #expect(fixture.browser.status == "The first of 3 versions")
    }

    @Test("the choice is kept for the conversation without changing its updated time; read-only keeps it until quit")
    func remembered() throws {
        let store = try Self.store()
        let before = try store.conversations.conversation(matching: StableID.uuid("test", "tree"))
        let readOnly = try BrowserFixture(store: store, readOnly: true)
        try readOnly.press(.enter, .character("}"), .character("["))
        #expect(try Self.shown(try #require(readOnly.browser.reader), store) == ["How do I sort a list?", "Use sorted()."])
        #expect(readOnly.browser.status == "Version 1 of 3 · kept until you quit (read-only)")
        #expect(try store.conversations.conversation(id: before.id) == before)

        let fixture = try BrowserFixture(store: store)
        try fixture.press(.enter, .character("}"), .character("["), .escape)
        let after = try #require(try store.conversations.conversation(id: before.id))
        #expect(after.updatedAt == before.updatedAt && after.branchLength == 2 && after.currentLeafID != before.currentLeafID)
        // Opened again: the branch chosen.
        try fixture.press(.enter)
        #expect(try Self.shown(try #require(fixture.browser.reader), store) == ["How do I sort a list?", "Use sorted()."])
        // And the follow-up of the second answer is still remembered from the first visit.
        try fixture.press(.character("}"), .character("]"))
        #expect(try Self.shown(try #require(fixture.browser.reader), store).count == 4)
    }

    @Test("the outline lists every branch, marks the one shown, and Enter shows another")
    func outline() throws {
        let fixture = try BrowserFixture(store: Self.store())
        try fixture.press(.enter, .character("t"))
        #expect(fixture.browser.screen == .outline)
        let outline = try #require(fixture.browser.outline)
        // The question the three answers share has a line of its own, above them.
        #expect(outline.entries.map(\.firstLine) == ["How do I sort a list?", "Use sorted().", "Call sort() in place.", "Either works."])
        #expect(outline.entries.map(\.level) == [0, 1, 1, 1] && outline.entries.map(\.place) == [1, 2, 2, 2])
        #expect(outline.entries.map(\.sharedThrough) == [1, nil, nil, nil] && outline.branchCount == 3)
        #expect(outline.entries.map(\.isShown) == [false, false, true, false] && outline.selection == 2)
        #expect(outline.selectedBranchNumber == 2)
        try fixture.press(.character("j"), .enter)
        #expect(fixture.browser.screen == .reader)
        let reader = try #require(fixture.browser.reader)
        #expect(try Self.shown(reader, fixture.store) == ["How do I sort a list?", "Either works."])
        #expect(reader.focus == 1)
        // A conversation of one branch has no outline.
        try fixture.press(.escape, .escape)
    }

    @Test("search finds any branch and opens on the hit's branch with it focused; find stays on the branch shown")
    func searchAndFind() throws {
        let fixture = try BrowserFixture(store: Self.store())
        try fixture.press(.character("/"))
        try fixture.type("sorted")
        try fixture.press(.enter)
        #expect(fixture.browser.search?.hits.count == 1)
        try fixture.press(.enter)
        let reader = try #require(fixture.browser.reader)
        #expect(try Self.shown(reader, fixture.store) == ["How do I sort a list?", "Use sorted()."])
        #expect(reader.focusedMessage?.content == "Use sorted().")
        try fixture.press(.escape, .escape, .enter, .character("/"))
        try fixture.type("sorted")
        try fixture.press(.enter)
        #expect(fixture.browser.status?.hasPrefix("Not on this branch") == true)
    }

    @Test("token counts and time taken show in the message header when the source recorded them")
    func usageInHeader() throws {
        let store = try Store.open(path: ":memory:")
        let time = Timestamp(milliseconds: Self.start)
        _ = try store.upsert(
            ImportedConversation(
                source: "llm", sourceID: "u", title: "Usage", model: "gpt-4o", createdAt: time, updatedAt: time,
                messages: [
                    ImportedMessage(role: .user, content: "hi", createdAt: time),
                    ImportedMessage(
                        role: .assistant, content: "hello", createdAt: time, model: "gpt-4o",
                        usage: MessageUsage(inputTokens: 1_234, outputTokens: 56, durationMilliseconds: 3_250)),
                    ImportedMessage(role: .assistant, content: "again", createdAt: time, usage: MessageUsage(durationMilliseconds: 75_000)),
                ]))
        let fixture = try BrowserFixture(store: store, width: 120)
        try fixture.press(.enter)
        let headers = try #require(fixture.browser.reader).lines.filter { if case .header = $0.style { true } else { false } }.map(\.text)
        #expect(headers.count == 3)
        #expect(headers[1].hasSuffix(" · gpt-4o · 1,234 in · 56 out · 3.2 s"), "\(headers[1])")
        #expect(headers[2].hasSuffix(" · 75 s") && !headers[0].contains(" in · "))
    }

    @Test("another process adds a version and later deletes the conversation: the open reader shows the one, then says the other")
    func outsideChanges() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("h.sqlite")
        let store = try Store.open(path: path)
        let nodes = Array(Store.sortingTree.prefix(3)).filter { $0.id != "a1" }  // q1 → a2, one branch
        let conversation = try store.addTree(title: "Sorting", start: Self.start, nodes: nodes, current: "a2")
        let fixture = try BrowserFixture(store: store)
        try fixture.press(.enter, .character("t"))
        #expect(fixture.browser.status?.hasPrefix("One branch") == true)
        try fixture.press(.character("}"))
        let reader = try #require(fixture.browser.reader)
        #expect(reader.focusedSiblings == nil)

        // Another process imports a newer export: a regenerated answer beside a2.
        let other = try Store.open(path: path)
        try other.addTree(title: "Sorting", start: Self.start, nodes: nodes + [Store.sortingTree[5]], current: "a2")
        #expect(try fixture.browser.idle())
        #expect(fixture.browser.reader === reader && reader.focus == 1)
        #expect(reader.focusedSiblings! == (0, 2))
        try fixture.press(.character("]"))
        #expect(try Self.shown(reader, store) == ["How do I sort a list?", "Either works."])

        // And then deletes it, while the outline is open.
        try fixture.press(.character("t"))
        #expect(fixture.browser.screen == .outline)
        #expect(try other.conversations.delete(ids: [conversation.id]) == 1)
        #expect(try fixture.browser.idle())
        #expect(fixture.browser.screen == .list && fixture.browser.reader == nil)
        #expect(fixture.browser.status == "“Sorting” was deleted by another process")
    }

    @Test("another process changes texts, adds matches and branches: the reader, its find and the outline's selection follow")
    func outsideTextsFindAndOutline() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("h.sqlite")
        let store = try Store.open(path: path)
        try store.addTree(title: "Sorting", start: Self.start)
        let fixture = try BrowserFixture(store: store)
        try fixture.press(.enter, .character("/"))
        try fixture.type("sort")
        try fixture.press(.enter)
        let reader = try #require(fixture.browser.reader)
        #expect(reader.find?.positions == [0, 1])

        // A newer export: the follow-up now mentions sorting too, and one more version.
        var nodes = Store.sortingTree
        nodes[3].text = "And descending? Can sort do that?"
        nodes.append(TreeNode("a6", "q1", .assistant, "A sixth answer.", minute: 7))
        let other = try Store.open(path: path)
        try other.addTree(title: "Sorting", start: Self.start, nodes: nodes)
        #expect(try fixture.browser.idle())
        #expect(reader.lines.contains { $0.text == "And descending? Can sort do that?" })
        #expect(reader.find?.positions == [0, 1, 2] && reader.find?.current == 0)

        // The outline keeps its selection when another process writes.
        try fixture.press(.character("t"), .character("j"), .character("j"))
        #expect(fixture.browser.screen == .outline && fixture.browser.outline?.selection == 4)
        let selected = try #require(fixture.browser.outline?.selected?.leaf)
        try other.addConversation(title: "unrelated", createdAt: Self.start)
        #expect(try fixture.browser.idle())
        #expect(fixture.browser.outline?.selected?.leaf == selected)
        nodes.append(TreeNode("a7", "q1", .assistant, "A seventh answer.", minute: 8))
        try other.addTree(title: "Sorting", start: Self.start, nodes: nodes)
        #expect(try fixture.browser.idle())
        #expect(fixture.browser.outline?.branchCount == 5 && fixture.browser.outline?.selected?.leaf == selected)
    }

    @Test("a search hit or a rename undone after another process deleted the conversation says so")
    func deletedUnderSearchAndUndo() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("h.sqlite")
        let store = try Store.open(path: path)
        let conversation = try store.addTree(title: "Sorting", start: Self.start)
        let fixture = try BrowserFixture(store: store)
        try fixture.press(.character("r"), .control("u"))
        try fixture.type("Renamed")
        try fixture.press(.enter, .character("/"))
        try fixture.type("sorted")
        try fixture.press(.enter)
        let other = try Store.open(path: path)
        #expect(try other.conversations.delete(ids: [conversation.id]) == 1)
        try fixture.press(.enter)
        #expect(fixture.browser.status == "“Renamed” was deleted by another process" && fixture.browser.reader == nil)
        try fixture.press(.escape, .character("u"))
        #expect(fixture.browser.status == "Cannot undo the rename: another process deleted the conversation")
    }
}
