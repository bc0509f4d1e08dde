import Testing

import ScrollbackModel
@testable import ScrollbackStorage
import ScrollbackViewModels
import TestSupport

/// The browser's filter line (`f`): the same words as the CLI's options, paged by key, the
/// count found away from the main actor, Esc clearing marks first and then the filter.
@Suite("The list's filter")
@MainActor
struct ListFilterTests {
    static func store() throws -> Store {
        let store = try BrowserFixture.store(count: 60)
        try store.database.run("UPDATE conversation SET model = CASE CAST(substr(title, 14) AS INTEGER) % 3 WHEN 0 THEN 'claude-3-5-sonnet' WHEN 1 THEN 'gpt-4o' ELSE NULL END")
        return store
    }

    @Test("f takes filter words; the list shows only what passes, by key; bad words keep the line open with the reason")
    func filterLine() throws {
        let store = try Self.store()
        let fixture = try BrowserFixture(store: store, height: 12)
        let browser = fixture.browser
        try fixture.press(.character("f"))
        guard case .filter = browser.prompt else {
            Issue.record("f should open the filter line")
            return
        }
        try fixture.type("colour:red")
        try fixture.press(.enter)
        #expect(browser.status == "unknown filter 'colour:'; use source:, model:, project:, since:, until:, title: or pinned (title:colour:red finds it in titles)")
        guard case .filter(let editor) = browser.prompt else {
            Issue.record("the line stays open")
            return
        }
        #expect(editor.text == "colour:red")
        try fixture.press(.control("u"))
        try fixture.type("model:SONNET")
        try fixture.press(.enter)
        #expect(browser.prompt == nil && browser.status == "Filtered — Esc clears the filter")
        let expected = try store.conversations.count(filter: ConversationFilter(model: "SONNET"))
        #expect(expected > 5 && expected < 60 && browser.list.total == expected && browser.list.isTotalExact)
        try fixture.press(.character("G"))
        #expect(browser.list.selection == expected - 1 && browser.list.selected?.model == "claude-3-5-sonnet")
        for index in 0..<expected { #expect(browser.list.row(at: index).map { $0.model == "claude-3-5-sonnet" } ?? true) }

        // Esc: marks first, then the filter; the line opens with the filter as it is.
        try fixture.press(.character(" "), .escape)
        #expect(browser.status == "Marks cleared" && browser.list.filter.model == "SONNET")
        try fixture.press(.character("f"))
        guard case .filter(let current) = browser.prompt else { return }
        #expect(current.text == "model:SONNET" && current.isAllSelected)
        try fixture.press(.escape, .escape)
        #expect(browser.status == "Filter cleared: every conversation" && browser.list.total == 60)

        try fixture.press(.character("f"))
        try fixture.type("source:nobody")
        try fixture.press(.enter)
        #expect(browser.list.total == 0)

        // Marks the filter hides are dropped (they would be acted on unseen); clearing the
        // filter keeps the selected conversation.
        try fixture.press(.escape, .character("G"), .character("k"), .character(" "), .character("g"), .character(" "))
        #expect(browser.list.marks.count == 2)
        let kept = try #require(browser.list.row(at: 0))
        try fixture.press(.character("f"))
        try fixture.type("model:sonnet")
        try fixture.press(.enter)
        let visible = Set(try store.conversations.conversations(ids: browser.list.marks.sorted()).filter { $0.model == "claude-3-5-sonnet" }.map(\.id))
        #expect(browser.list.marks == visible)
        try fixture.press(.character("j"), .character("j"))
        let selected = try #require(browser.list.selected)
        try fixture.press(.escape, .escape)
        #expect(browser.list.filter.isEmpty && browser.list.selected?.id == selected.id, "\(kept.title)")
    }

    @Test("over a file, the filtered count arrives from another connection; no key waits for it")
    func countInBackground() throws {
        let folder = try TemporaryDirectory()
        let (store, browser) = try KeyPathTests.browser(folder)
        try store.database.run("UPDATE conversation SET pinned = 1 WHERE CAST(substr(title, 14) AS INTEGER) % 4 = 0")
        let expected = try store.conversations.count(filter: ConversationFilter(pinnedOnly: true))
        store.database.recordedSQL = []
        _ = try browser.handle(.character("f"))
        for character in "pinned" { _ = try browser.handle(.character(character)) }
        _ = try browser.handle(.enter)
        // Nothing on this connection counted: the count is another connection's.
        #expect(KeyPathTests.counts(store).isEmpty, "\(KeyPathTests.counts(store))")
        store.database.recordedSQL = nil
        #expect(!browser.list.isTotalExact && browser.list.filter.pinnedOnly)
        #expect(KeyPathTests.settle(browser))
        #expect(browser.list.isTotalExact && browser.list.total == expected)
    }
}

/// `:` goes to a date in one keyset query.
@Suite("Going to a date")
@MainActor
struct JumpToDateTests {
    @Test(": takes a date or a time ago and selects the newest conversation at or before it; the title order says why not")
    func jump() throws {
        let fixture = try BrowserFixture(store: BrowserFixture.store(count: 3_000), height: 12)
        let browser = fixture.browser
        // Conversation i was updated i minutes before now (2027-01-15T08:00Z).
        fixture.store.database.recordedSQL = []
        try fixture.press(.character(":"))
        try fixture.type("2027-01-15T07:10Z")
        try fixture.press(.enter)
        #expect(fixture.selectedTitle == "conversation 50")
        #expect(browser.status == "The newest conversation updated at or before 2027-01-15T07:10Z")
        // The selected row is in view, and the rows around it are loaded.
        #expect(browser.list.visibleRows.contains { $0.conversation.title == "conversation 50" })
        let pages = (fixture.store.database.recordedSQL ?? []).filter { $0.hasPrefix("SELECT conversation.id") && !$0.hasSuffix("WHERE id = ?") }
        #expect(pages.count <= 4, "\(pages)")
        fixture.store.database.recordedSQL = nil
        try fixture.press(.character(":"))
        try fixture.type("2027-01-14")
        try fixture.press(.enter)
        // Jan 14 ends 480 minutes before now; conversation 480 is on Jan 15 at midnight.
        #expect(fixture.selectedTitle == "conversation 481")
        try fixture.press(.character(":"))
        try fixture.type("1d")
        try fixture.press(.enter)
        #expect(fixture.selectedTitle == "conversation 1440")
        try fixture.press(.character(":"))
        try fixture.type("1999")
        try fixture.press(.enter)
        #expect(browser.status == "Nothing that old: the last conversation is newer than 1999")
        try fixture.press(.character(":"))
        try fixture.type("yesterday")
        try fixture.press(.enter)
        #expect(browser.status?.hasPrefix("'yesterday' is not a date") == true)
        try fixture.press(.escape, .character("s"), .character("s"), .character(":"))
        #expect(browser.status == "Going to a date needs the updated or created order (s changes it)")
    }
}
