import Testing

import ScrollbackModel
@testable import ScrollbackStorage
import ScrollbackViewModels
import TestSupport

/// Pinning (one or the marked ones, one transaction, one undo), and acting on the
/// conversation being read: rename, delete, pin, undo.
@Suite("Pin, and acting from the reader")
@MainActor
struct PinAndReaderActionsTests {
    @Test("p pins the selected conversation, which goes first in every order and stays selected; u undoes")
    func pinOne() throws {
        let fixture = try BrowserFixture(store: BrowserFixture.store(count: 20))
        let browser = fixture.browser
        try fixture.press(.character("G"), .character("p"))
        #expect(browser.status == "Pinned the conversation (first in every order) — u undoes")
        #expect(fixture.selectedTitle == "conversation 19" && browser.list.selection == 0 && browser.list.selected?.pinned == true)
        for _ in 0..<3 {
            try fixture.press(.character("s"))
            #expect(browser.list.row(at: 0)?.title == "conversation 19", "\(browser.list.order)")
        }
        // Its updated time did not change.
        let selectedID = try #require(browser.list.selected?.id)
        let pinned = try #require(try fixture.store.conversations.conversation(id: selectedID))
        #expect(pinned.updatedAt.milliseconds == BrowserFixture.now.milliseconds - 19 * 60_000)
        try fixture.press(.character("u"))
        #expect(browser.status == "Pin undone — Ctrl-R redoes")
        #expect(try fixture.store.conversations.conversation(id: pinned.id)?.pinned == false)
        #expect(fixture.selectedTitle == "conversation 19" && browser.list.selection == 19)
        try fixture.press(.character("p"), .character("p"))
        #expect(browser.status == "Unpinned the conversation — u undoes")
    }

    @Test("with marks, p pins all of them in one transaction (unpins when all are pinned), and one u undoes it all")
    func pinMarked() throws {
        let fixture = try BrowserFixture(store: BrowserFixture.store(count: 20))
        let browser = fixture.browser
        try fixture.press(.character("j"), .character(" "), .character("j"), .character(" "), .character("j"), .character(" "))
        try fixture.press(.character("p"))
        #expect(browser.status == "Pinned 3 conversations (first in every order) — u undoes")
        let pinned = try fixture.store.conversations.count(filter: ConversationFilter(pinnedOnly: true))
        #expect(pinned == 3)
        #expect(browser.list.visibleRows.prefix(3).map(\.conversation.title) == ["conversation 1", "conversation 3", "conversation 5"])
        try fixture.press(.character("p"))
        #expect(browser.status == "Unpinned 3 conversations — u undoes")
        try fixture.press(.character("u"))
        #expect(try fixture.store.conversations.count(filter: ConversationFilter(pinnedOnly: true)) == 3)

        let readOnly = try BrowserFixture(store: fixture.store, readOnly: true)
        try readOnly.press(.character("p"))
        #expect(readOnly.browser.status == "read-only: cannot pin")
    }

    @Test("from the reader: rename and pin act on the conversation read; delete asks, then shows the list on the next row; u brings it back")
    func readerActions() throws {
        let fixture = try BrowserFixture(store: BrowserFixture.store(count: 10))
        let browser = fixture.browser
        try fixture.press(.character("j"), .character("j"), .enter)
        #expect(browser.reader?.conversation.title == "conversation 2")
        try fixture.press(.character("r"), .control("u"))
        try fixture.type("Renamed while reading")
        try fixture.press(.enter)
        #expect(browser.screen == .reader && browser.reader?.conversation.title == "Renamed while reading")
        #expect(browser.list.selected?.title == "Renamed while reading")
        try fixture.press(.character("p"))
        #expect(browser.reader?.conversation.pinned == true)
        try fixture.press(.character("p"))
        #expect(browser.reader?.conversation.pinned == false)

        try fixture.press(.character("d"))
        #expect(browser.deleteQuestion(width: 80) == "Delete “Renamed while reading” with 2 messages? (y/n)")
        try fixture.press(.character("y"))
        #expect(browser.screen == .list && browser.reader == nil)
        #expect(fixture.selectedTitle == "conversation 3")
        #expect(try fixture.store.conversations.count() == 9)
        try fixture.press(.character("u"))
        #expect(fixture.selectedTitle == "Renamed while reading")
        #expect(try fixture.store.conversations.count() == 10)
    }
}
