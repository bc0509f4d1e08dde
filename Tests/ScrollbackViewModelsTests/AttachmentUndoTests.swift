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
}
