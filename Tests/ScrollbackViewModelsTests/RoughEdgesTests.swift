import Testing

import ScrollbackModel
@testable import ScrollbackStorage
import ScrollbackViewModels
import TerminalText
import TestSupport

/// The browser's rough edges a new user met, each as it was seen on screen.
@Suite("Browser rough edges")
@MainActor
struct RoughEdgesTests {
    @Test("PgDn and PgUp scroll by a screen keeping the selection's line; at the ends it goes to the first or last row")
    func pageKeepsLine() throws {
        let fixture = try BrowserFixture(store: BrowserFixture.store(count: 100), height: 12)
        let list = fixture.browser.list
        #expect(list.viewportHeight == 10)
        try fixture.press(.character("j"), .character("j"), .character("j"))
        try fixture.press(.pageDown)
        // The first PgDn scrolls a whole screen: row 3 becomes row 13, still the 4th line.
        #expect(list.selection == 13 && list.top == 10)
        try fixture.press(.pageDown, .pageUp)
        #expect(list.selection == 13 && list.top == 10)
        try fixture.press(.pageUp)
        #expect(list.selection == 3 && list.top == 0)
        try fixture.press(.pageUp)
        #expect(list.selection == 0 && list.top == 0)
        try fixture.press(.character("G"), .character("k"), .character("k"))
        #expect(list.selection == 97)
        try fixture.press(.pageDown)
        #expect(list.selection == 99 && list.top == 90)
        try fixture.press(.control("u"))
        #expect(list.selection == 94 && list.top == 85)
    }

    @Test("after undoing a marked delete, the first restored row is selected and in view")
    func undoShowsRestored() throws {
        let fixture = try BrowserFixture(store: BrowserFixture.store(count: 40), height: 12)
        let browser = fixture.browser
        try fixture.press(.character(" "), .character(" "), .character(" "))
        try fixture.press(.character("D"), .character("y"))
        #expect(fixture.selectedTitle == "conversation 3")
        try fixture.press(.character("j"), .character("j"), .character("j"), .character("j"))
        try fixture.press(.character("u"))
        #expect(browser.status == "Restored 3 conversations — Ctrl-R redoes")
        #expect(fixture.selectedTitle == "conversation 0")
        #expect(browser.list.top == 0)
        let visible = browser.list.visibleRows.map(\.conversation.title)
        #expect(Array(visible.prefix(3)) == ["conversation 0", "conversation 1", "conversation 2"])
    }

    @Test("the delete question always ends with its answer keys, the titles cut to fit; one wording for one and many")
    func deleteQuestionFits() throws {
        let long = String(repeating: "A very long title about sourdough ", count: 8)
        for width in [19, 20, 30, 46, 80, 200] {  // 19: the narrowest screen (20) less its margin
            let one = DeleteQuestion.text(titles: [long], count: 1, messages: 12, answers: "(y/n)", width: width)
            #expect(one.hasSuffix("? (y/n)") && DisplayWidth.of(one) <= width, "\(width): \(one)")
            let many = DeleteQuestion.text(titles: [long, "b", "c"], count: 1_204, messages: 1, answers: "[y/N]", width: width)
            #expect(many.hasPrefix("Delete 1,204") && many.hasSuffix("? [y/N]") && DisplayWidth.of(many) <= width, "\(width): \(many)")
            if width >= 80 {
                #expect(one.hasSuffix(" with 12 messages? (y/n)") && many.contains(" with 1 message? "), "\(width)")
            }
        }
        #expect(DeleteQuestion.text(titles: ["Kyoto"], count: 1, messages: 1, answers: "(y/n)", width: 80) == "Delete “Kyoto” with 1 message? (y/n)")
        #expect(
            DeleteQuestion.text(titles: ["a", "b"], count: 2, messages: 5, answers: "(y/n)", width: 80)
                == "Delete 2 conversations (“a”, “b”) with 5 messages? (y/n)")
        // Hostile titles cannot act on the terminal.
        let evil = DeleteQuestion.text(titles: ["x\u{1B}[2Jy\u{7}"], count: 1, messages: 1, answers: "(y/n)", width: 80)
        #expect(!evil.unicodeScalars.contains { $0.value < 0x20 })

        let fixture = try BrowserFixture(store: BrowserFixture.store(count: 5), width: 46)
        _ = try fixture.store.conversations.rename(id: try #require(fixture.browser.list.selected).id, to: long)
        try fixture.browser.list.reload(keeping: fixture.browser.list.selected?.id)
        try fixture.press(.character("d"))
        let question = try #require(fixture.browser.deleteQuestion(width: 45))
        #expect(question.hasSuffix("with 2 messages? (y/n)") && DisplayWidth.of(question) <= 45, "\(question)")
    }

    @Test("n and N go through the matches of this conversation in order, and say so at the ends, never leaving it")
    func findInOrder() throws {
        let store = try Store.open(path: ":memory:")
        try store.addConversation(
            title: "other walrus", createdAt: 9_000, messages: ["walrus elsewhere"])
        try store.addConversation(
            title: "tusks", createdAt: 1_000,
            messages: (0..<30).map { [3, 11, 20].contains($0) ? "the walrus at \($0)" : "filler \($0)" })
        let fixture = try BrowserFixture(store: store, height: 10)
        let browser = fixture.browser
        try fixture.press(.character("/"))
        try fixture.type("walrus")
        try fixture.press(.enter)
        let hits = try #require(browser.search?.hits)
        // Open the hit at message 11 (hits are newest first).
        let index = try #require(hits.firstIndex { $0.message?.position == 11 })
        for _ in 0..<index { try fixture.press(.character("j")) }
        try fixture.press(.enter)
        #expect(browser.reader?.conversation.title == "tusks")
        #expect(browser.reader?.find?.positions == [3, 11, 20])
        #expect(browser.reader?.focus == 11)
        try fixture.press(.character("n"))
        #expect(browser.reader?.find?.current == 2 && browser.reader?.topPosition == 20)
        try fixture.press(.character("n"))
        #expect(browser.status == "Wrapped to the first match" && browser.reader?.topPosition == 3)
        try fixture.press(.character("N"))
        #expect(browser.status == "Wrapped to the last match" && browser.reader?.conversation.title == "tusks")
    }

    @Test("while the screen is too small to show anything, keys do nothing: no delete, no rename, no answer to an unseen question")
    func tooSmallTakesNoKeys() throws {
        let fixture = try BrowserFixture(store: BrowserFixture.store(count: 9))
        let browser = fixture.browser
        browser.resize(width: 19, height: 5)
        try fixture.press(.character("d"), .character("y"), .character("r"), .character("j"))
        #expect(browser.prompt == nil && browser.list.selection == 0)
        #expect(try fixture.store.conversations.count() == 9)
        // A question open when the screen shrinks cannot be answered until it shows again.
        browser.resize(width: 80, height: 24)
        try fixture.press(.character("d"))
        browser.resize(width: 15, height: 4)
        try fixture.press(.character("y"))
        #expect(try fixture.store.conversations.count() == 9)
        browser.resize(width: 80, height: 24)
        try fixture.press(.character("y"))
        #expect(try fixture.store.conversations.count() == 8)
        // q still quits from the list.
        browser.resize(width: 10, height: 3)
        #expect(try browser.handle(.character("q")) == false)
    }
}
