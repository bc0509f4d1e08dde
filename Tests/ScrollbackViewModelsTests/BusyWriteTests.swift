import Foundation
import Testing

import ScrollbackModel
@testable import ScrollbackStorage
@testable import ScrollbackViewModels
import TestSupport

@MainActor
@Suite("Writes that meet another process's lock")
struct BusyWriteTests {
    @Test("a rename that meets a busy database keeps the editor open with the typed text; Enter later saves it")
    func renameKeepsText() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("h.sqlite")
        let store = try Store.open(path: path)
        try store.addConversation(title: "old title", createdAt: 1)
        store.database.setBusyTimeout(milliseconds: 30)
        let fixture = try BrowserFixture(store: store)
        let importer = try Store.open(path: path)
        try importer.database.execute("BEGIN IMMEDIATE")
        try fixture.press(.character("r"), .control("u"))
        try fixture.type("a title typed with care")
        try fixture.press(.enter)
        guard case .rename(_, let editor) = fixture.browser.prompt else {
            Issue.record("the editor closed: \(String(describing: fixture.browser.prompt))")
            return
        }
        #expect(editor.text == "a title typed with care")
        #expect(fixture.browser.status?.contains("busy") == true)
        try importer.database.execute("COMMIT")
        try fixture.press(.enter)
        #expect(fixture.browser.prompt == nil)
        #expect(fixture.selectedTitle == "a title typed with care")
    }

    @Test("a rename of a conversation another process deleted meanwhile says so")
    func renameDeletedMeanwhile() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("h.sqlite")
        let store = try Store.open(path: path)
        try store.addConversation(title: "doomed", createdAt: 2)
        try store.addConversation(title: "stays", createdAt: 1)
        let fixture = try BrowserFixture(store: store)
        try fixture.press(.character("r"))
        let other = try Store.open(path: path)
        let doomed = try other.conversations.page(sort: .updated, at: .first, limit: 1).items[0]
        #expect(doomed.title == "doomed")
        #expect(try other.conversations.delete(ids: [doomed.id]) == 1)
        try fixture.press(.control("u"))
        try fixture.type("new title")
        try fixture.press(.enter)
        #expect(fixture.browser.status?.contains("deleted meanwhile") == true, "\(String(describing: fixture.browser.status))")
        #expect(try other.conversations.count() == 1)
    }

    @Test("a version switch that meets a busy database still shows the version; the choice is kept until quit and said")
    func switchWhileBusy() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("h.sqlite")
        let store = try Store.open(path: path)
        let conversation = try store.addTree(title: "Sorting", start: BrowserFixture.now.milliseconds - 60_000)
        store.database.setBusyTimeout(milliseconds: 30)
        let fixture = try BrowserFixture(store: store)
        let importer = try Store.open(path: path)
        try importer.database.execute("BEGIN IMMEDIATE")
        try fixture.press(.enter, .character("}"), .character("["))
        #expect(fixture.browser.status?.hasPrefix("Version 1 of 3 · kept until you quit: the database is busy") == true, "\(String(describing: fixture.browser.status))")
        let reader = try #require(fixture.browser.reader)
        #expect(reader.focusedMessage?.content == "Use sorted()." && reader.branchCount == 2)
        // Back to the second answer: its follow-up, remembered in memory.
        try fixture.press(.character("]"))
        #expect(reader.branchCount == 4)
        try importer.database.execute("COMMIT")
        #expect(try store.conversations.conversation(id: conversation.id)?.currentLeafID == conversation.currentLeafID)
    }
}
