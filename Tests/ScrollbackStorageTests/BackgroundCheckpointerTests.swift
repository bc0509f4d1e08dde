import Foundation
import Testing

import ScrollbackModel
@testable import ScrollbackStorage
import TestSupport

@Suite("Checkpoints away from the main actor")
struct BackgroundCheckpointerTests {
    static func size(_ path: String) -> Int64 {
        var status = stat()
        return stat(path, &status) == 0 ? Int64(status.st_size) : -1
    }

    @Test("a write never checkpoints on the browser's connection; the checkpointer's thread does, and stops cleanly")
    func checkpointsElsewhere() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("h.sqlite")
        let store = try Store.open(path: path)
        try store.addConversation(title: "first", createdAt: 0, messages: ["hello"])
        let checkpointer = try BackgroundCheckpointer(for: store, interval: 0.01)
        // The browser's connection no longer checkpoints at a commit.
        #expect(try store.database.queryFirst("PRAGMA wal_autocheckpoint") { $0.int(0) } == 0)
        let before = Self.size(path)
        // Well past SQLite's automatic checkpoint (1,000 pages).
        let text = String(repeating: "a line of text that fills pages ", count: 2_000)
        try store.addConversation(title: "big", createdAt: 1, messages: Array(repeating: text, count: 120))
        var copied = false
        for _ in 0..<2_000 where !copied {
            usleep(5_000)
            copied = Self.size(path) > before + BackgroundCheckpointer.walThreshold
        }
        #expect(copied, "the checkpointer never copied the log into the database")
        checkpointer.stop()
        // A read-only store is left alone.
        let readOnly = try Store.open(path: path, readOnly: true)
        try BackgroundCheckpointer(for: readOnly).stop()
        #expect(try store.conversations.count() == 2)
    }
}
