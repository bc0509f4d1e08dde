import Testing

import ScrollbackExport
import ScrollbackModel
@testable import ScrollbackStorage
import ScrollbackViewModels
import TestSupport

/// What the browser asks its front end to copy, pipe, page or edit: the right text, exact
/// where it goes to a program, safe where it is drawn on a terminal.
@Suite("Getting text out: effects")
@MainActor
struct TextOutViewModelTests {
    static let twoBlocks = "First:\n```\nblock one\n```\nthen\n```python\nprint('two')\n```\nend"

    @Test("y: the focused message; Y: the code block on screen (else the first); c: the conversation as export writes it")
    func readerCopies() throws {
        let store = try Store.open(path: ":memory:")
        try store.addConversation(title: "code", createdAt: 1_000, messages: ["question", Self.twoBlocks])
        let fixture = try BrowserFixture(store: store, height: 8)
        let browser = fixture.browser
        try fixture.press(.enter, .character("y"))
        #expect(browser.takeEffect() == .copy(text: "question", what: "message 1"))
        try fixture.press(.character("Y"))
        #expect(browser.takeEffect() == nil)
        #expect(browser.status == "No code block in this message (y copies the message; { } move between messages)")
        try fixture.press(.character("}"), .character("Y"))
        #expect(browser.takeEffect() == .copy(text: "block one", what: "code block 1 of 2 of message 2"))
        // Scrolled so that only the second block is on screen: that one.
        let reader = try #require(browser.reader)
        for _ in 0..<20 where reader.visibleLines.contains(where: { $0.text.contains("block one") || $0.text == "First:" }) {
            try reader.scroll(by: 1)
        }
        #expect(!reader.visibleLines.contains { $0.text.contains("block one") })
        #expect(reader.visibleLines.contains { $0.text.contains("print('two')") })
        try fixture.press(.character("Y"))
        #expect(browser.takeEffect() == .copy(text: "print('two')", what: "code block 2 of 2 of message 2"))
        try fixture.press(.character("c"))
        let conversation = try #require(try store.conversations.page(sort: .updated, at: .first, limit: 1).items.first)
        #expect(browser.takeEffect() == .copy(text: try Exporter(store: store).render(conversation, as: .md), what: "the conversation as Markdown"))
    }

    @Test("in the list, c copies the marked conversations (else the selected one) in list order; | asks for a command")
    func listCopiesAndPipe() throws {
        let fixture = try BrowserFixture(store: BrowserFixture.store(count: 5))
        let browser = fixture.browser
        let exporter = Exporter(store: fixture.store)
        func markdown(_ index: Int) throws -> String {
            let row = try #require(browser.list.row(at: index))
            return try exporter.render(row, as: .md)
        }
        try fixture.press(.character("c"))
        #expect(browser.takeEffect() == .copy(text: try markdown(0), what: "the conversation as Markdown"))
        try fixture.press(.character(" "), .character(" "))
        // `c` (in the list, `Y` no longer repeats it: it copies a code block in the reader).
        try fixture.press(.character("c"))
        #expect(browser.takeEffect() == .copy(text: try markdown(0) + "\n---\n\n" + markdown(1), what: "2 conversations as Markdown"))

        try fixture.press(.character("|"))
        guard case .pipe = browser.prompt else {
            Issue.record("| should ask for a command")
            return
        }
        try fixture.press(.enter)
        #expect(browser.prompt == nil && browser.takeEffect() == nil)
        #expect(browser.status == "Nothing piped: type a command (wc -c, pbcopy, grep -n TODO…)")
        try fixture.press(.character("|"))
        try fixture.type("wc -c")
        try fixture.press(.enter)
        #expect(browser.takeEffect() == .pipe(command: "wc -c", input: try markdown(browser.list.selection)))
        // The last command comes back selected: typing replaces it.
        try fixture.press(.character("|"))
        guard case .pipe(let editor) = browser.prompt else { return }
        #expect(editor.text == "wc -c" && editor.isAllSelected)
        try fixture.press(.escape)
        #expect(browser.status == "Nothing piped")
    }

    @Test("the pager and the editor get the text made safe; read-only browsing may copy and pipe")
    func pagerAndEditorSafe() throws {
        let store = try Store.open(path: ":memory:")
        try store.addConversation(title: "evil \u{1B}[2J", createdAt: 1_000, messages: ["bell \u{7} and \u{1B}]52;c;AAAA\u{7}"])
        let fixture = try BrowserFixture(store: store, readOnly: true)
        let browser = fixture.browser
        try fixture.press(.character("o"))
        guard case .page(let text) = browser.takeEffect() else {
            Issue.record("o should page")
            return
        }
        #expect(!text.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x07 })
        #expect(text.contains("# evil ␛[2J") && text.contains("bell ␇ and ␛]52;c;AAAA␇"))
        try fixture.press(.character("e"))
        guard case .edit(let edited, let name) = browser.takeEffect() else {
            Issue.record("e should edit")
            return
        }
        #expect(edited == text && name.hasSuffix(".md"))
        try fixture.press(.character("c"))
        guard case .copy(let copied, _) = browser.takeEffect() else { return }
        // What is copied is the data itself (it travels in base64).
        #expect(copied.contains("\u{1B}]52;c;AAAA\u{7}"))
    }
}
