import Foundation
import ScrollbackModel
import ScrollbackStorage
import TestSupport
import Testing

@testable import ScrollbackImport

@Suite("Attachment import")
struct AttachmentImportTests {
    /// A ChatGPT export of two conversations: an uploaded photo (pointer and metadata), a
    /// DALL·E image, a voice recording in the conversation's audio folder, a plot of Code
    /// Interpreter, the same photo in the second conversation, and a pointer to a file the
    /// export does not hold.
    static let conversations = """
        [{"id": "c1", "title": "Photos", "create_time": 1767261600, "update_time": 1767261700, "current_node": "a1",
          "mapping": {
            "u1": {"id": "u1", "parent": null, "children": ["a1"], "message": {"id": "u1", "author": {"role": "user"}, "create_time": 1767261600,
              "content": {"content_type": "multimodal_text", "parts": [
                {"content_type": "image_asset_pointer", "asset_pointer": "file-service://file-Photo1", "size_bytes": 4000, "width": 64, "height": 48},
                {"content_type": "audio_asset_pointer", "asset_pointer": "sediment://file_00aa11", "format": "wav"},
                {"content_type": "image_asset_pointer", "asset_pointer": "file-service://file-Gone9"},
                "What is this?"]},
              "metadata": {"attachments": [{"id": "file-Photo1", "name": "holiday.jpg", "mime_type": "image/jpeg", "size": 4000}]}}},
            "a1": {"id": "a1", "parent": "u1", "children": [], "message": {"id": "a1", "author": {"role": "assistant"}, "create_time": 1767261650,
              "content": {"content_type": "multimodal_text", "parts": [{"content_type": "image_asset_pointer", "asset_pointer": "file-service://file-Dalle2", "width": 32, "height": 32}]},
              "metadata": {"model_slug": "gpt-4o"}}}}},
         {"id": "c2", "title": "Again", "create_time": 1767261800, "update_time": 1767261900, "current_node": "u2",
          "mapping": {
            "u2": {"id": "u2", "parent": null, "children": [], "message": {"id": "u2", "author": {"role": "user"}, "create_time": 1767261800,
              "content": {"content_type": "multimodal_text", "parts": [{"content_type": "image_asset_pointer", "asset_pointer": "file-service://file-Copy3"}, ""]},
              "metadata": {}}}}}]
        """

    @Test("a ChatGPT ZIP: every pointed-to file kept exactly with its message and name, one copy for the same bytes, a missing one as a reference; check clean; a re-import changes nothing")
    func chatGPTZip() throws {
        let folder = try TemporaryDirectory()
        let photo = TestFiles.bytes(4000, seed: 1)
        let wav = TestFiles.bytes(3 * 1_048_576 + 17, seed: 2)
        let files: [String: [UInt8]] = [
            "conversations.json": Array(Self.conversations.utf8),
            "file-Photo1-holiday.jpg": photo,
            "user-abc/file_00aa11-3f2e8c1a-1111-2222-3333-444455556666.wav": wav,
            "dalle-generations/file-Dalle2-1c2d3e4f-aaaa-bbbb-cccc-ddddeeeeffff.webp": TestFiles.bytes(900, seed: 3),
            "file-Copy3-holiday copy.jpg": photo,
        ]
        let zip = try TestFiles.zip(files, in: folder)
        let store = try Store.open(path: folder.file("s.sqlite"))
        let summary = Importer(store: store).run(paths: [zip], format: nil)
        #expect(summary.failed.isEmpty && summary.inserted == 2, "\(summary.failed)")
        let ids = try store.conversations.page(sort: .title, filter: .none, at: .first, limit: 10).items
        let photos = try #require(ids.first { $0.title == "Photos" })
        let listed = try store.attachments(conversation: photos.id)
        #expect(listed.map(\.name) == ["holiday.jpg", "file_00aa11-3f2e8c1a-1111-2222-3333-444455556666.wav", "file-Gone9", "file-Dalle2-1c2d3e4f-aaaa-bbbb-cccc-ddddeeeeffff.webp"])
        #expect(listed.map(\.isStored) == [true, true, false, true])
        // Its bytes (random, as a test's) are no image this knows: the declared type stays, the
        // declared pixels go (no rows are kept for an image that cannot be drawn).
        #expect(listed[0].mime == "image/jpeg" && listed[0].width == nil && listed[0].size == 4000)
        #expect(listed[1].mime == "audio/wav" && listed[1].size == Int64(wav.count))
        #expect(listed.map(\.messagePosition) == [0, 0, 0, 1])
        var read: [UInt8] = []
        try store.readAttachment(sha256: try #require(listed[1].sha256)) { read += $0 }
        #expect(read == wav)
        let again = try #require(ids.first { $0.title == "Again" })
        let copy = try store.attachments(conversation: again.id)
        #expect(copy.map(\.name) == ["holiday copy.jpg"] && copy[0].sha256 == listed[0].sha256)
        #expect(try store.attachmentTotals() == AttachmentTotals(attachments: 5, missing: 1, files: 3, bytes: Int64(4000 + wav.count + 900)))
        #expect(try store.check().problems.isEmpty)
        let second = Importer(store: store).run(paths: [zip], format: nil)
        #expect(second.unchanged == 2 && second.failed.isEmpty)
        #expect(try store.attachmentTotals().files == 3)
    }
}
