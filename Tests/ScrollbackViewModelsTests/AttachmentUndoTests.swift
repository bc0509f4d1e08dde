import Foundation
import Testing

import ScrollbackModel
import ScrollbackStorage
import ScrollbackViewModels
import TestSupport

/// A delete in the browser keeps its conversations' files for undo; the browser lists them
/// for the free at exit; an undo after another process freed a shared file says so.
@Suite("Attachments and the browser's undo")
@MainActor
struct AttachmentUndoTests {
    static let time = Timestamp(milliseconds: BrowserFixture.now.milliseconds - 3_600_000)

    static func conversation(_ id: String, files: [[UInt8]], at offset: Int64) -> ImportedConversation {
        let when = Timestamp(milliseconds: time.milliseconds + offset)
        var message = ImportedMessage(role: .user, content: "look at \(id)", createdAt: when, nodeID: "u")
        message.attachments = files.enumerated().map { ImportedAttachment(name: "file\($0.offset).bin", data: $0.element) }
        return ImportedConversation(
            source: "chatgpt", sourceID: id, title: id, model: nil, createdAt: when, updatedAt: when,
            messages: [message, ImportedMessage(role: .assistant, content: "seen", createdAt: when, nodeID: "a", parent: .node("u"))])
    }

    @Test("undo of a delete keeps a file another machine holds awaited (not \"the export did not hold it\")")
    func undoKeepsAwaited() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("h.sqlite")
        let hash = String(repeating: "ab", count: 32)
        do {
            let store = try Store.open(path: path)
            _ = try store.upsert(Self.conversation("Far", files: [TestFiles.bytes(500, seed: 3)], at: 0))
        }
        // As a synced op leaves it: the line here, the bytes on another machine.
        let made = try ChildProcess.run("/usr/bin/sqlite3", [path, "UPDATE attachment SET content_id = NULL, awaited = '\(hash)'"])
        #expect(made.ending == .exited(0), "\(made.errorText)")
        let store = try Store.open(path: path)
        let fixture = try BrowserFixture(store: store)
        try fixture.press(.character("d"), .character("y"))
        try fixture.press(.character("u"))
        let back = try #require(try store.conversations.page(sort: .title, filter: .none, at: .first, limit: 5).items.first)
        let files = try store.attachments(conversation: back.id)
        #expect(files.map(\.awaited) == [hash] && files.map(\.missingReason) == [AttachmentDTO.notHereYet], "\(files)")
    }

    @Test("undo brings the files back with the conversation; one freed meanwhile by another process is said, and comes back missing")
    func undoAfterAnotherFreed() throws {
        let store = try Store.open(path: ":memory:")
        let shared = TestFiles.bytes(6000, seed: 1)
        let own = TestFiles.bytes(4000, seed: 2)
        _ = try store.upsert(Self.conversation("Shared 0", files: [shared, own], at: 0))
        _ = try store.upsert(Self.conversation("Shared 1", files: [shared], at: 1000))
        let fixture = try BrowserFixture(store: store)
        let browser = fixture.browser
        // The list is newest first: Shared 1, then Shared 0.
        try fixture.press(.character("j"))
        #expect(browser.list.selected?.title == "Shared 0")
        try fixture.press(.character("d"), .character("y"))
        #expect(browser.filesOfDeletes.count == 2)
        // Undo, then delete again: the bytes stayed for it.
        try fixture.press(.character("u"))
        #expect((browser.status ?? "").hasPrefix("Restored 1 conversation") && !(browser.status ?? "").contains("freed"), "\(browser.status ?? "")")
        let back = try #require(try store.conversations.page(sort: .title, filter: .none, at: .first, limit: 5).items.first { $0.title == "Shared 0" })
        #expect(try store.attachments(conversation: back.id).allSatisfy(\.isStored))
        try fixture.press(.character("g"), .character("j"), .character("d"), .character("y"))
        // Another process deletes the other user of the shared file, and frees what it left unused.
        let other = try #require(try store.conversations.page(sort: .title, filter: .none, at: .first, limit: 5).items.first { $0.title == "Shared 1" })
        let hashes = try store.attachmentHashes(conversations: [other.id])
        _ = try store.conversations.delete(ids: [other.id])
        #expect(try store.freeUnusedAttachments(hashes).files == 1)
        try fixture.press(.character("u"))
        #expect(
            (browser.status ?? "").contains("1 attachment file was freed meanwhile by another process's delete (import the export again to bring it back)"),
            "\(browser.status ?? "")")
        let restored = try #require(try store.conversations.page(sort: .title, filter: .none, at: .first, limit: 5).items.first { $0.title == "Shared 0" })
        let files = try store.attachments(conversation: restored.id)
        #expect(files.map(\.isStored) == [false, true])
        #expect(files[0].absence == "freed after its conversation was deleted")
        #expect(try store.check().problems.isEmpty)
    }

    @Test("O opens the focused message's stored files in turn, S asks where with ~/ and a safe name; a message without any, or with missing ones, says so")
    func openAndSaveKeys() throws {
        let store = try Store.open(path: ":memory:")
        var message = ImportedMessage(role: .user, content: "two files", createdAt: Self.time, nodeID: "u")
        message.attachments = [
            ImportedAttachment(name: "../evil\u{1B}name.png", data: TestFiles.bytes(100, seed: 1)), ImportedAttachment(name: "b.txt", data: [1, 2]),
            ImportedAttachment(name: "gone.pdf", reference: "sediment://file_1"),
        ]
        var missing = ImportedMessage(role: .assistant, content: "a missing one", createdAt: Self.time, nodeID: "a", parent: .node("u"))
        missing.attachments = [ImportedAttachment(name: "lost.png", reference: "sediment://file_2")]
        let plain = ImportedMessage(role: .user, content: "nothing", createdAt: Self.time, nodeID: "p", parent: .node("a"))
        _ = try store.upsert(
            ImportedConversation(
                source: "chatgpt", sourceID: "files", title: "Files", model: nil, createdAt: Self.time, updatedAt: Self.time,
                messages: [message, missing, plain]))
        let fixture = try BrowserFixture(store: store)
        let browser = fixture.browser
        try fixture.press(.enter)
        try fixture.press(.character("O"))
        guard case .openAttachment(let first) = browser.takeEffect() else { Issue.record("no open"); return }
        #expect(first.name == "../evil\u{1B}name.png")
        try fixture.press(.character("O"))
        guard case .openAttachment(let second) = browser.takeEffect() else { Issue.record("no second open"); return }
        #expect(second.name == "b.txt")
        try fixture.press(.character("O"))
        guard case .openAttachment(let again) = browser.takeEffect() else { Issue.record("no third open"); return }
        #expect(again.name == first.name, "round again, the missing one left out")
        try fixture.press(.character("S"))
        guard case .saveAttachment(_, let editor) = browser.prompt else { Issue.record("no prompt"); return }
        #expect(editor.text == "~/evil-name.png", "\(editor.text)")
        try fixture.press(.escape)
        try fixture.press(.character("}"))
        try fixture.press(.character("O"))
        #expect(browser.takeEffect() == nil && (browser.status ?? "").hasPrefix("Not here: this message's attachment is missing"), "\(browser.status ?? "")")
        try fixture.press(.character("}"))
        try fixture.press(.character("S"))
        #expect(browser.prompt == nil && (browser.status ?? "").hasPrefix("No attachment in this message"), "\(browser.status ?? "")")
    }
}
