import Testing

import ScrollbackModel
@testable import ScrollbackStorage
import ScrollbackViewModels
import TerminalText
import TestSupport

/// Pastes, bursts of keys and hostile titles against the editors and the delete question.
@MainActor
@Suite("Editors and questions under attack")
struct EditorHardeningTests {
    @Test("a paste into the rename editor is text: its line break saves nothing and its 'dy' deletes nothing")
    func pasteIntoRename() throws {
        let fixture = try BrowserFixture(store: BrowserFixture.store(count: 5))
        let browser = fixture.browser
        try fixture.press(.character("r"), .control("u"), .paste("Pasted title\ndy\r\nq\tx\u{1B}[2J"))
        guard case .rename(_, let editor) = browser.prompt else {
            Issue.record("the editor should still be open")
            return
        }
        #expect(editor.text == "Pasted title dy q x[2J")
        #expect(try fixture.store.conversations.count() == 5)
        try fixture.press(.enter)
        #expect(fixture.selectedTitle == "Pasted title dy q x[2J")
        #expect(browser.prompt == nil)
    }

    @Test("outside an editor a paste is ignored with a note; in the question it answers nothing")
    func pasteOutsideEditors() throws {
        let fixture = try BrowserFixture(store: BrowserFixture.store(count: 5))
        let browser = fixture.browser
        try fixture.press(.paste("dyq"))
        #expect(browser.prompt == nil && browser.screen == .list)
        #expect(browser.status?.hasPrefix("Paste ignored") == true)
        try fixture.press(.character("d"), .paste("y"))
        #expect(browser.prompt != nil)
        #expect(try fixture.store.conversations.count() == 5)
        try fixture.press(.character("n"))
        try fixture.press(.character("/"), .paste("needle\nin a haystack"))
        guard case .search(let editor) = browser.prompt else {
            Issue.record("the search prompt should still be open")
            return
        }
        #expect(editor.text == "needle in a haystack")
    }

    @Test("y answers the delete question only once the question was drawn")
    func burstDoesNotConfirm() throws {
        let fixture = try BrowserFixture(store: BrowserFixture.store(count: 5))
        let browser = fixture.browser
        // Keys that arrive in one burst: no frame between them.
        for key: Key in [.character("d"), .character("y"), .character("Y")] { _ = try browser.handle(key) }
        #expect(try fixture.store.conversations.count() == 5)
        #expect(browser.prompt != nil)
        #expect(browser.promptShown(), "the front end is told to drop what was typed ahead")
        #expect(!browser.promptShown(), "only once")
        _ = try browser.handle(.character("y"))
        #expect(try fixture.store.conversations.count() == 4)
    }

    @Test("typing and pasting stop at 1,000 characters, with a note; a paste of a megabyte is one insertion")
    func limit() throws {
        let fixture = try BrowserFixture(store: BrowserFixture.store(count: 5))
        let browser = fixture.browser
        try fixture.press(.character("r"), .control("u"), .paste(String(repeating: "0123456789", count: 100_000)))
        guard case .rename(_, var editor) = browser.prompt else {
            Issue.record("the editor should still be open")
            return
        }
        #expect(editor.characters.count == LineEditor.defaultLimit)
        #expect(browser.status == "cut to 1,000 characters")
        try fixture.press(.character("x"))
        #expect(browser.status == "cut to 1,000 characters")
        try fixture.press(.backspace)
        #expect(browser.status == nil)
        // What is shown stays within the width and keeps the cursor in view.
        #expect(editor.apply(.end) == .editing)
        let (text, column) = editor.visible(width: 30)
        #expect(DisplayWidth.of(text) <= 30 && column == 29)
        try fixture.press(.enter)
        #expect(fixture.selectedTitle?.count == 999)
    }

    @Test("a title's controls are placeholders in the editor; Enter without an edit keeps it byte for byte")
    func hostileTitle() throws {
        let store = try Store.open(path: ":memory:")
        let hostile = "Evil\u{202E}RTL\rOVER\u{08}\u{08}BS\u{0}NUL\u{1B}]52;c;aGk=\u{07}\u{200B} end"
        _ = try store.addConversation(title: hostile, createdAt: BrowserFixture.now.milliseconds)
        let fixture = try BrowserFixture(store: store)
        let browser = fixture.browser
        try fixture.press(.character("r"))
        guard case .rename(_, let editor) = browser.prompt else {
            Issue.record("r should open the editor")
            return
        }
        #expect(editor.text == hostile)
        for width in [5, 20, 200] {
            let (text, _) = editor.visible(width: width)
            #expect(UntrustedText.sanitized(text) == text, "\(text.debugDescription)")
            #expect(DisplayWidth.of(text) <= width)
        }
        #expect(editor.visible(width: 200).text == "Evil⍰RTL␍OVER␈␈BS␀NUL␛]52;c;aGk=␇⍰ end")
        // Moving the cursor is not an edit.
        try fixture.press(.home, .right, .end)
        try fixture.press(.enter)
        #expect(browser.prompt == nil && browser.status == "Title unchanged")
        #expect(fixture.selectedTitle == hostile)
        // An edit keeps the rest as it was but for what no title may hold (the storage
        // layer's rule, as `rename` keeps it): those go, and the footer says so.
        try fixture.press(.character("r"), .home, .character("\u{1B}"), .character("!"), .enter)
        let cleaned = ConversationTitle.withoutRefused("!" + hostile)
        #expect(fixture.selectedTitle == (try ConversationTitle.normalized(cleaned.text)))
        #expect(browser.status?.hasPrefix("Renamed, without the \(cleaned.removed) characters no title may hold") == true, "\(browser.status ?? "")")
    }

    @Test("the title editor keeps to the title rule as it is typed and says what it left out; a flag typed key by key stays a flag; a pasted CRLF is one space")
    func titleRuleWhileTyping() throws {
        let fixture = try BrowserFixture(store: BrowserFixture.store(count: 3))
        let browser = fixture.browser
        let id = try #require(browser.list.selected?.id)
        try fixture.press(.character("r"), .control("u"))
        try fixture.press(.paste("a\u{1B}]0;T\u{07}b \u{202E}c\u{200B}d\u{0600}e"))
        #expect(browser.status == "Left out 5 characters a title cannot hold (controls, bidi marks, invisible or format marks)")
        guard case .rename(_, let editor) = browser.prompt else {
            Issue.record("the editor should stay open")
            return
        }
        #expect(editor.text == "a]0;Tb cde")
        try fixture.press(.character("\u{0600}"))
        #expect(browser.status == "Left out 1 character a title cannot hold (controls, bidi marks, invisible or format marks)")
        // Typing on keeps it said (keys typed in a burst arrive one by one).
        try fixture.press(.character("f"), .character("g"))
        #expect(browser.status == "Left out 1 character a title cannot hold (controls, bidi marks, invisible or format marks)")
        // Scotland's flag, one scalar per key, as a terminal sends it.
        try fixture.press(.control("u"), .character("x"))
        for scalar in "\u{1F3F4}\u{E0067}\u{E0062}\u{E0073}\u{E0063}\u{E0074}\u{E007F}".unicodeScalars {
            try fixture.press(.character(Character(scalar)))
        }
        try fixture.press(.paste("line one\r\n\r\nline two"), .enter)
        #expect(try fixture.store.conversations.conversation(id: id)?.title == "x\u{1F3F4}\u{E0067}\u{E0062}\u{E0073}\u{E0063}\u{E0074}\u{E007F}line one line two")
        #expect(browser.status == "Renamed — u undoes")
    }

    @Test("Alt keys are not commands; Alt+b and Alt+f move by words in an editor")
    func altKeys() throws {
        let fixture = try BrowserFixture(store: BrowserFixture.store(count: 5))
        let browser = fixture.browser
        try fixture.press(.alt("q"), .alt("d"), .alt("D"))
        #expect(browser.prompt == nil && browser.screen == .list)
        try fixture.press(.character("r"), .alt("b"), .character("#"), .alt("b"), .alt("b"), .alt("f"), .character("!"))
        guard case .rename(_, let editor) = browser.prompt else {
            Issue.record("the editor should still be open")
            return
        }
        #expect(editor.text == "conversation! #0")
    }
}
