import Testing

import ScrollbackModel
@testable import ScrollbackStorage
import ScrollbackViewModels
import TestSupport

@Suite("Conversation list view model")
@MainActor
struct ConversationListTests {
    @Test("scrolls 10,000 conversations top to bottom and back, with bounded rows loaded")
    func scrollEverything() throws {
        let fixture = try BrowserFixture(store: BrowserFixture.store(count: 10_000, messages: 0))
        let list = fixture.browser.list
        #expect(list.total == 10_000)
        var maximumLoaded = 0
        for expected in 1..<10_000 {
            try fixture.press(.character("j"))
            #expect(list.selection == expected)
            if expected % 997 == 0 { #expect(fixture.selectedTitle == "conversation \(expected)") }
            maximumLoaded = max(maximumLoaded, list.rows.count)
        }
        #expect(fixture.selectedTitle == "conversation 9999")
        try fixture.press(.character("j"))
        #expect(list.selection == 9_999)
        for expected in stride(from: 9_998, through: 0, by: -1) {
            try fixture.press(.character("k"))
            #expect(list.selection == expected)
            maximumLoaded = max(maximumLoaded, list.rows.count)
        }
        #expect(fixture.selectedTitle == "conversation 0")
        #expect(maximumLoaded <= 700, "loaded rows must stay bounded")
        // Every visible row is the right one.
        #expect(list.visibleRows.map(\.conversation.title) == (0..<22).map { "conversation \($0)" })
    }

    @Test("paging down and up with a tall screen and a small window reaches both ends, bounded",
          arguments: [(60, 100, 300), (22, 100, 300), (100, 50, 150), (7, 10, 30)])
    func tallPages(viewport: Int, pageSize: Int, maximumLoaded: Int) throws {
        let store = try BrowserFixture.store(count: 3_000, messages: 0)
        let list = ConversationListViewModel(conversations: store.conversations, order: .updated, pageSize: pageSize, maximumLoaded: maximumLoaded)
        list.viewportHeight = viewport
        try list.load()
        var steps = 0
        var most = 0
        while list.selection < list.total - 1 && steps < 10_000 {
            try list.pageDown()
            steps += 1
            most = max(most, list.rows.count)
            #expect(list.visibleRows.count == min(viewport, list.total - list.top))
        }
        #expect(list.selection == 2_999)
        #expect(list.selected?.title == "conversation 2999")
        while list.selection > 0 && steps < 20_000 {
            try list.pageUp()
            steps += 1
            most = max(most, list.rows.count)
        }
        #expect(list.selection == 0)
        #expect(list.selected?.title == "conversation 0")
        #expect(steps < 20_000, "paging never reached the end")
        #expect(most <= max(maximumLoaded, 3 * pageSize) + pageSize + 2 * viewport)
    }

    @Test("G shows the last conversation at once, then k and paging up work from there")
    func endThenUp() throws {
        let fixture = try BrowserFixture(store: BrowserFixture.store(count: 5_000, messages: 0))
        let list = fixture.browser.list
        fixture.store.database.recordedSQL = []
        try fixture.press(.character("G"))
        // One page query, from the end: no walking through the middle.
        let pageQueries = (fixture.store.database.recordedSQL ?? []).filter { $0.hasPrefix("SELECT conversation.id") }
        #expect(pageQueries.count == 1)
        #expect(list.selection == 4_999)
        #expect(fixture.selectedTitle == "conversation 4999")
        #expect(list.visibleRows.last?.conversation.title == "conversation 4999")
        #expect(list.visibleRows.count == 22)
        try fixture.press(.character("k"))
        #expect(fixture.selectedTitle == "conversation 4998")
        for _ in 0..<30 { try fixture.press(.pageUp) }
        #expect(list.selection == 4_998 - 30 * 22)
        #expect(fixture.selectedTitle == "conversation \(4_998 - 30 * 22)")
        try fixture.press(.character("g"))
        #expect(fixture.selectedTitle == "conversation 0")
        try fixture.press(.end, .control("u"))
        #expect(list.selection == 4_999 - 11)
        try fixture.press(.control("d"), .pageDown, .down)
        #expect(list.selection == 4_999)
    }

    @Test("delete asks first; undo brings the conversation back with its messages")
    func deleteAndUndo() throws {
        let fixture = try BrowserFixture(store: BrowserFixture.store(count: 30))
        let browser = fixture.browser
        try fixture.press(.character("j"), .character("j"))
        let doomed = try #require(browser.list.selected)
        try fixture.press(.character("d"))
        guard case .confirmDelete(let ids, _, _) = browser.prompt else {
            Issue.record("d should ask")
            return
        }
        #expect(ids == [doomed.id])
        #expect(browser.deleteQuestion(width: 80) == "Delete “conversation 2” with 2 messages? (y/n)")
        try fixture.press(.character("n"))
        #expect(browser.prompt == nil && browser.status == "Nothing deleted")
        #expect(try fixture.store.conversations.count() == 30)

        try fixture.press(.character("d"), .character("y"))
        #expect(try fixture.store.conversations.count() == 29)
        #expect(browser.status == "Deleted 1 conversation — u undoes")
        #expect(fixture.selectedTitle == "conversation 3")
        #expect(browser.list.selection == 2)
        #expect(browser.list.total == 29)

        try fixture.press(.character("u"))
        #expect(try fixture.store.conversations.count() == 30)
        #expect(fixture.selectedTitle == "conversation 2")
        #expect(try fixture.store.conversations.conversation(id: doomed.id) == doomed)
        #expect(try fixture.store.messages.count(conversationID: doomed.id) == 2)
        #expect(try fixture.store.search.search("conversation 2", after: nil, limit: 50).items.contains { $0.conversation.id == doomed.id })
        try fixture.press(.character("u"))
        #expect(browser.status == "Nothing more to undo — Ctrl-R redoes")
    }

    @Test("marks, then D deletes them all in one go after one question; undo restores all")
    func batchDelete() throws {
        let fixture = try BrowserFixture(store: BrowserFixture.store(count: 50))
        let browser = fixture.browser
        try fixture.press(.character("D"))
        #expect(browser.status == "Nothing is marked: Space marks a conversation")
        try fixture.press(.character(" "), .character(" "), .character("j"), .character(" "))
        #expect(browser.list.marks.count == 3)
        let markedTitles = Set(try browser.list.marks.compactMap { try fixture.store.conversations.conversation(id: $0)?.title })
        #expect(markedTitles == ["conversation 0", "conversation 1", "conversation 3"])
        // Far away marks are kept while scrolling.
        try fixture.press(.character("G"), .character(" "))
        #expect(browser.list.marks.count == 4)
        try fixture.press(.character("D"))
        guard case .confirmDelete = browser.prompt else {
            Issue.record("D should ask")
            return
        }
        #expect(
            browser.deleteQuestion(width: 200)
                == "Delete 4 conversations (“conversation 0”, “conversation 1”, “conversation 3” and 1 more) with \(4 * 2) messages? (y/n)")
        try fixture.press(.character("y"))
        #expect(try fixture.store.conversations.count() == 46)
        #expect(browser.list.marks.isEmpty)
        #expect(browser.status == "Deleted 4 conversations — u undoes")
        try fixture.press(.character("u"))
        #expect(try fixture.store.conversations.count() == 50)
        #expect(try fixture.store.check().isHealthy)
        // Esc clears marks.
        try fixture.press(.character("g"), .character(" "), .escape)
        #expect(browser.list.marks.isEmpty)
    }

    @Test("rename edits the title in place; a blank title is refused; undo renames back")
    func rename() throws {
        let fixture = try BrowserFixture(store: BrowserFixture.store(count: 5))
        let browser = fixture.browser
        try fixture.press(.character("r"))
        guard case .rename(_, let editor) = browser.prompt else {
            Issue.record("r should open the editor")
            return
        }
        #expect(editor.text == "conversation 0")
        try fixture.press(.control("u"))
        try fixture.type("Trip to 京都")
        try fixture.press(.home, .delete, .character("t"), .end, .backspace, .character("都"), .enter)
        #expect(fixture.selectedTitle == "trip to 京都")
        #expect(browser.status == "Renamed — u undoes")
        try fixture.press(.character("r"), .control("u"), .character(" "), .enter)
        // The storage layer's words, as `scrollback rename` says them.
        #expect(browser.status == "A title cannot be empty or blank; type some text")
        try fixture.press(.escape)
        #expect(browser.prompt == nil && browser.status == "Rename cancelled")
        #expect(fixture.selectedTitle == "trip to 京都")
        try fixture.press(.character("r"), .control("w"))
        try fixture.type("Kyoto")
        try fixture.press(.enter)
        #expect(fixture.selectedTitle == "trip to Kyoto")
        try fixture.press(.character("u"))
        #expect(fixture.selectedTitle == "trip to 京都")
    }

    @Test("s cycles the order, keeps the selection and remembers the choice")
    func sortOrder() throws {
        let fixture = try BrowserFixture(store: BrowserFixture.store(count: 12))
        try fixture.press(.character("j"), .character("j"), .character("j"))
        try fixture.press(.character("s"))
        #expect(fixture.browser.list.order == .created)
        #expect(fixture.selectedTitle == "conversation 3")
        try fixture.press(.character("s"))
        #expect(fixture.browser.list.order == .title)
        #expect(fixture.selectedTitle == "conversation 3")
        // Titles sort as text: 0, 1, 10, 11, 2, 3
        #expect(fixture.browser.list.selection == 5)
        #expect(try fixture.store.settings.value(.listSort) == .title)
        let again = try BrowserFixture(store: fixture.store)
        #expect(again.browser.list.order == .title)
    }

    @Test("read-only: every editing key leaves the data alone and says read-only")
    func readOnly() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("h.sqlite")
        do {
            let store = try Store.open(path: path)
            for index in 0..<5 { try store.addConversation(title: "c\(index)", createdAt: Int64(index), messages: ["m"]) }
        }
        let before = try sha256(ofFile: path)
        do {
            let fixture = try BrowserFixture(store: Store.open(path: path, readOnly: true), readOnly: true)
            let browser = fixture.browser
            for (key, action) in [("d", "delete"), ("r", "rename"), ("D", "delete"), ("u", "undo")] {
                try fixture.press(.character(Character(key)))
                #expect(browser.prompt == nil, "\(key)")
                #expect(browser.status == "read-only: cannot \(action)", "\(key)")
            }
            try fixture.press(.character(" "), .character("s"))
            #expect(browser.list.order == .created)
            try fixture.press(.enter, .character("j"), .escape, .character("/"))
            try fixture.type("c1")
            try fixture.press(.enter)
            #expect(browser.screen == .results)
        }
        #expect(try sha256(ofFile: path) == before)
        #expect(try folder.listing().filter { !$0.hasSuffix("-shm") && !$0.hasSuffix("-wal") } == ["h.sqlite"])
    }

    @Test("another process's changes are noticed when idle; the selection stays on its conversation")
    func refreshAfterOutsideChange() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("h.sqlite")
        do {
            let store = try Store.open(path: path)
            for index in 0..<40 {
                try store.addConversation(title: "c\(index)", createdAt: 1_000_000 - Int64(index) * 1_000)
            }
        }
        let fixture = try BrowserFixture(store: Store.open(path: path))
        try fixture.press(.character("j"), .character("j"), .character("j"), .character("j"), .character("j"))
        #expect(fixture.selectedTitle == "c5")
        #expect(try fixture.browser.idle() == false)
        let other = try Store.open(path: path)
        // Three newer conversations arrive above, and one above the selection is deleted.
        for index in 0..<3 { try other.addConversation(title: "new \(index)", createdAt: 2_000_000 + Int64(index)) }
        let gone = try other.conversations.page(sort: .updated, at: .first, limit: 10).items.first { $0.title == "c1" }
        _ = try other.conversations.delete(id: try #require(gone).id)
        #expect(try fixture.browser.idle())
        #expect(fixture.selectedTitle == "c5")
        #expect(fixture.browser.list.total == 42)
        #expect(fixture.browser.list.selection == 7)
        // The selected conversation itself deleted elsewhere: the next one is selected.
        _ = try other.conversations.delete(id: try #require(fixture.browser.list.selected).id)
        try fixture.browser.idle()
        #expect(fixture.selectedTitle == "c6")
    }
}
