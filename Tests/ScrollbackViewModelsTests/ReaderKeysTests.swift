import ScrollbackModel
@testable import ScrollbackStorage
@testable import ScrollbackViewModels
import Testing
import TestSupport

/// Keys a less, mutt or tig user reaches for, and a word for a key that does nothing.
@MainActor
@Suite("Keys from less, mutt and tig; a key that does nothing says so")
struct ReaderKeysTests {
    @Test("Space and b page the reader as PgDn and PgUp do")
    func spaceAndB() throws {
        let fixture = try BrowserFixture(store: BrowserFixture.store(count: 3, messages: 60), height: 12)
        try fixture.press(.enter)
        let reader = try #require(fixture.browser.reader)
        let start = reader.topLine
        try fixture.press(.character(" "))
        let paged = reader.topLine
        #expect(paged > start)
        try fixture.press(.character("b"))
        #expect(reader.topLine == start)
        try fixture.press(.pageDown)
        #expect(reader.topLine == paged)
    }

    @Test("J and K open the next and previous conversation of the list from the reader, and say where the list ends")
    func nextConversation() throws {
        let fixture = try BrowserFixture(store: BrowserFixture.store(count: 3))
        try fixture.press(.enter, .character("J"))
        #expect(fixture.browser.reader?.conversation.title == "conversation 1")
        try fixture.press(.character("J"), .character("J"))
        #expect(fixture.browser.reader?.conversation.title == "conversation 2" && fixture.browser.status == "The last conversation of the list")
        try fixture.press(.character("K"))
        #expect(fixture.browser.reader?.conversation.title == "conversation 1")
        try fixture.press(.escape)
        #expect(fixture.browser.screen == .list && fixture.selectedTitle == "conversation 1")
    }

    @Test("Ctrl-N and Ctrl-P move; a count moves that many (5j), shown as it is typed; it does not repeat what is not a move")
    func countsAndControlKeys() throws {
        let fixture = try BrowserFixture(store: BrowserFixture.store(count: 30))
        try fixture.press(.control("n"), .control("n"))
        #expect(fixture.selectedTitle == "conversation 2")
        try fixture.press(.control("p"))
        #expect(fixture.selectedTitle == "conversation 1")
        try fixture.press(.character("1"), .character("2"))
        #expect(fixture.browser.status == "12")
        try fixture.press(.character("j"))
        #expect(fixture.selectedTitle == "conversation 13")
        try fixture.press(.character("5"), .character("k"))
        #expect(fixture.selectedTitle == "conversation 8")
        // A count before what is not a move acts once: one conversation pinned.
        try fixture.press(.character("3"), .character("p"))
        #expect(try fixture.store.conversations.page(sort: .updated, filter: ConversationFilter(pinnedOnly: true), at: .first, limit: 50).items.count == 1)
        // ... and says so, not a word lost: the count is not kept for the next key either.
        #expect(fixture.browser.status?.hasSuffix(" · once: a count repeats only moving keys") == true, "\(fixture.browser.status ?? "")")
        #expect(fixture.browser.count == nil)
        // Esc drops a count.
        try fixture.press(.character("4"), .escape, .character("j"))
        #expect(fixture.browser.list.selected != nil)
    }

    @Test("a count before ] or [ switches that many versions; before z it acts once and says so")
    func countsOnVersions() throws {
        let store = try Store.open(path: ":memory:")
        try store.addTree(title: "Sorting", start: BrowserFixture.now.milliseconds - 60_000, current: "a1")
        try store.addTree(title: "Repo changes", start: BrowserFixture.now.milliseconds - 3_600_000, nodes: Store.hiddenTree, current: "a1", sourceID: "hidden")
        let fixture = try BrowserFixture(store: store)
        try fixture.press(.enter, .character("}"))
        #expect(fixture.browser.reader?.focusedSiblings?.index == 0)
        try fixture.press(.character("2"), .character("]"))
        #expect(fixture.browser.reader?.focusedSiblings?.index == 2 && fixture.browser.status == "Version 3 of 3", "\(fixture.browser.status ?? "")")
        try fixture.press(.character("9"), .character("["))
        #expect(fixture.browser.reader?.focusedSiblings?.index == 0)
        try fixture.press(.character("J"), .character("3"), .character("z"))
        #expect(fixture.browser.reader?.showsHidden == true)
        #expect(fixture.browser.status == "Showing 3 hidden messages, dimmed (z hides them); 1 more on other branches (t) · once: a count repeats only moving keys")
    }

    @Test("a key that does nothing on this screen says so, and where it does something")
    func unboundKeys() throws {
        let fixture = try BrowserFixture(store: BrowserFixture.store(count: 3))
        try fixture.press(.character("Y"))
        #expect(fixture.browser.status == "Y does nothing here (in the reader: copy the code block under the cursor); ? lists the keys of this screen")
        try fixture.press(.character("Q"))
        #expect(fixture.browser.status == "Q does nothing here (? lists the keys of this screen)")
        try fixture.press(.enter, .character("D"))
        #expect(fixture.browser.status?.hasPrefix("D does nothing here (in the list: delete every marked conversation") == true, "\(fixture.browser.status ?? "")")
    }
}
