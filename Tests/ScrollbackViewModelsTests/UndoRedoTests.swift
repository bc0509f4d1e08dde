import Foundation
import Testing

import ScrollbackModel
@testable import ScrollbackStorage
import ScrollbackViewModels
import TestSupport

/// More than one level of undo, and redo on Ctrl-R: each change comes back in turn, a
/// change made since by another process is never undone over, and a new change ends redo.
@Suite("Undo more than once, and redo")
@MainActor
struct UndoRedoTests {
    static func title(_ fixture: BrowserFixture, _ id: Int64) throws -> String? {
        try fixture.store.conversations.conversation(id: id)?.title
    }

    @Test("rename, pin and delete undone in the reverse order, then redone in order; the footer counts what is left")
    func undoThreeRedoThree() throws {
        let fixture = try BrowserFixture(store: BrowserFixture.store(count: 10))
        let browser = fixture.browser
        let first = try #require(browser.list.selected)
        try fixture.press(.character("r"), .control("u"))
        try fixture.type("First renamed")
        try fixture.press(.enter, .character("j"), .character("p"))
        let second = try #require(try fixture.store.conversations.conversations(ids: [first.id + 0]).first)
        #expect(second.title == "First renamed")
        let pinnedID = try #require(try fixture.store.conversations.page(sort: .updated, filter: ConversationFilter(pinnedOnly: true), at: .first, limit: 5).items.first?.id)
        try fixture.press(.character("g"), .character("j"), .character("d"), .character("y"))
        #expect(try fixture.store.conversations.count() == 9)
        let deleted = try fixture.store.conversations.page(sort: .updated, at: .first, limit: 20).items.map(\.id)

        try fixture.press(.character("u"))
        #expect(browser.status == "Restored 1 conversation (2 more to undo) — Ctrl-R redoes")
        #expect(try fixture.store.conversations.count() == 10)
        try fixture.press(.character("u"))
        #expect(browser.status == "Pin undone (1 more to undo) — Ctrl-R redoes")
        #expect(try fixture.store.conversations.conversation(id: pinnedID)?.pinned == false)
        try fixture.press(.character("u"))
        #expect(browser.status == "Rename undone — Ctrl-R redoes")
        #expect(try Self.title(fixture, first.id) == "conversation 0")
        try fixture.press(.character("u"))
        #expect(browser.status == "Nothing more to undo — Ctrl-R redoes")

        try fixture.press(.control("r"))
        #expect(browser.status == "Renamed again (2 more to redo) — u undoes")
        #expect(try Self.title(fixture, first.id) == "First renamed")
        try fixture.press(.control("r"))
        #expect(browser.status == "Pinned the conversation again (1 more to redo) — u undoes")
        #expect(try fixture.store.conversations.conversation(id: pinnedID)?.pinned == true)
        try fixture.press(.control("r"))
        #expect(browser.status == "Deleted 1 conversation again — u undoes")
        #expect(try fixture.store.conversations.page(sort: .updated, at: .first, limit: 20).items.map(\.id) == deleted)
        try fixture.press(.control("r"))
        #expect(browser.status == "Nothing to redo")
        // And all three undo again, the delete with every message back.
        try fixture.press(.character("u"), .character("u"), .character("u"))
        #expect(try fixture.store.conversations.count() == 10)
        #expect(try fixture.store.conversations.count(filter: ConversationFilter(pinnedOnly: true)) == 0)
        #expect(try Self.title(fixture, first.id) == "conversation 0")
        #expect(try fixture.store.check().isHealthy)
    }

    @Test("a count before u or Ctrl-R undoes or redoes that many, as vim's 3u")
    func counts() throws {
        let fixture = try BrowserFixture(store: BrowserFixture.store(count: 6))
        let browser = fixture.browser
        for _ in 0..<4 { try fixture.press(.character("p"), .character("j")) }
        #expect(try fixture.store.conversations.count(filter: ConversationFilter(pinnedOnly: true)) == 4)
        try fixture.press(.character("3"), .character("u"))
        #expect(try fixture.store.conversations.count(filter: ConversationFilter(pinnedOnly: true)) == 1)
        #expect(browser.status == "3 changes undone: the last — Pin undone (1 more to undo) — Ctrl-R redoes")
        try fixture.press(.character("2"), .control("r"))
        #expect(try fixture.store.conversations.count(filter: ConversationFilter(pinnedOnly: true)) == 3)
        #expect(browser.status == "2 changes redone: the last — Pinned the conversation again (1 more to redo) — u undoes")
        // More than there are: it says how many it did, and why it stopped.
        try fixture.press(.character("9"), .character("9"), .character("u"))
        #expect(try fixture.store.conversations.count(filter: ConversationFilter(pinnedOnly: true)) == 0)
        #expect(browser.status == "3 of 99 changes undone, then: Nothing more to undo — Ctrl-R redoes")
        try fixture.press(.character("7"), .control("r"))
        #expect(browser.status == "4 of 7 changes redone, then: Nothing to redo")
        // None to do: as a single u says it.
        try fixture.press(.character("5"), .control("r"))
        #expect(browser.status == "Nothing to redo")
    }

    @Test("a count stops at the first change that cannot be undone (changed elsewhere), says so, and leaves the ones before it")
    func countStopsAtRefusal() throws {
        let fixture = try BrowserFixture(store: BrowserFixture.store(count: 6))
        let browser = fixture.browser
        let first = try #require(browser.list.selected?.id)
        try fixture.press(.character("p"), .character("j"))
        let second = try #require(browser.list.selected?.id)
        try fixture.press(.character("p"), .character("j"), .character("p"), .character("j"), .character("p"))
        // Another process unpins the second: the count undoes two, then stops there.
        _ = try fixture.store.conversations.setPinned(ids: [second], false)
        try fixture.press(.character("5"), .character("u"))
        #expect(browser.status == "2 of 5 changes undone, then: Cannot undo the unpin: changed meanwhile, by another process or a sync; u undoes the change before it".replacingOccurrences(of: "unpin", with: "pin"))
        #expect(try fixture.store.conversations.conversation(id: first)?.pinned == true)
        // The next u goes on before it.
        try fixture.press(.character("u"))
        #expect(browser.status == "Pin undone — Ctrl-R redoes")
        #expect(try fixture.store.conversations.conversation(id: first)?.pinned == false)
        // The first of a count refused: it says none were.
        try fixture.press(.character("g"), .character("p"))
        let pinned = try #require(browser.list.selected?.id)
        _ = try fixture.store.conversations.setPinned(ids: [pinned], false)
        try fixture.press(.character("3"), .character("u"))
        #expect(browser.status == "0 of 3 changes undone: Cannot undo the pin: changed meanwhile, by another process or a sync")
    }

    @Test("a conversation put back and deleted again elsewhere after this browser deleted it stays deleted on u; the rest come back")
    func deletedAgainElsewhere() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("h.sqlite")
        do {
            let store = try Store.open(path: path)
            for index in 0..<6 {
                try store.addConversation(title: "c\(index)", createdAt: 1_000_000 - Int64(index) * 1_000, messages: ["m \(index)"])
            }
        }
        let fixture = try BrowserFixture(store: Store.open(path: path))
        let browser = fixture.browser
        let doomed = try fixture.store.conversations.page(sort: .updated, at: .first, limit: 3).items
        try fixture.press(.character(" "), .character(" "), .character(" "), .character("D"), .character("y"))
        #expect(browser.status == "Deleted 3 conversations — u undoes")
        // Another process puts the second back (a re-import) and deletes it again.
        let other = try Store.open(path: path)
        let again = try other.conversations.create(
            NewConversation(title: "c1", createdAt: doomed[1].createdAt, publicID: doomed[1].publicID))
        _ = try other.conversations.delete(id: again.id)
        try browser.idle()
        try fixture.press(.character("u"))
        #expect(browser.status == "Restored 2 conversations; “c1” was deleted again meanwhile, by another process or a sync — Ctrl-R redoes")
        #expect(try other.conversations.count() == 5)
        #expect((try? other.conversations.conversation(matching: doomed[1].publicID))?.publicID != doomed[1].publicID)
        // Deleted again here (Ctrl-R), then both put back and deleted elsewhere: nothing
        // comes back, and it says why.
        try fixture.press(.control("r"))
        #expect(browser.status == "Deleted 2 conversations again — u undoes")
        for (index, snapshot) in [doomed[0], doomed[2]].enumerated() {
            let made = try other.conversations.create(
                NewConversation(title: "c\(index * 2)", createdAt: snapshot.createdAt, publicID: snapshot.publicID))
            _ = try other.conversations.delete(id: made.id)
        }
        try browser.idle()
        try fixture.press(.character("u"))
        #expect(browser.status == "Cannot undo the delete: “c2” and 1 more were deleted again meanwhile, by another process or a sync")
        #expect(try other.conversations.count() == 3)
        #expect(try other.check().isHealthy)
    }

    @Test("a new change after an undo ends what there was to redo")
    func newChangeEndsRedo() throws {
        let fixture = try BrowserFixture(store: BrowserFixture.store(count: 5))
        let browser = fixture.browser
        try fixture.press(.character("p"), .character("j"), .character("p"), .character("u"))
        #expect(browser.status == "Pin undone (1 more to undo) — Ctrl-R redoes")
        try fixture.press(.character("j"), .character("p"))
        try fixture.press(.control("r"))
        #expect(browser.status == "Nothing to redo")
        try fixture.press(.character("u"), .character("u"))
        #expect(try fixture.store.conversations.count(filter: ConversationFilter(pinnedOnly: true)) == 0)
        try fixture.press(.character("u"))
        #expect(browser.status == "Nothing more to undo — Ctrl-R redoes")
    }

    @Test("undo reaches back 100 changes, no further")
    func hundredLevels() throws {
        let fixture = try BrowserFixture(store: BrowserFixture.store(count: 3))
        let browser = fixture.browser
        let id = try #require(browser.list.selected?.id)
        for index in 1...105 {
            try fixture.press(.character("r"), .control("u"))
            try fixture.type("title \(index)")
            try fixture.press(.enter)
        }
        for _ in 0..<BrowserViewModel.undoLevels { try fixture.press(.character("u")) }
        #expect(try Self.title(fixture, id) == "title 5")
        try fixture.press(.character("u"))
        #expect(browser.status == "Nothing more to undo — Ctrl-R redoes")
        for _ in 0..<BrowserViewModel.undoLevels { try fixture.press(.control("r")) }
        #expect(try Self.title(fixture, id) == "title 105")
    }

    @Test("a title another process changed since is not undone over (nor redone over); the next u reaches the change before")
    func otherProcessChangedTitle() throws {
        let fixture = try BrowserFixture(store: BrowserFixture.store(count: 5))
        let browser = fixture.browser
        let id = try #require(browser.list.selected?.id)
        try fixture.press(.character("p"), .character("r"), .control("u"))
        try fixture.type("Mine")
        try fixture.press(.enter)
        _ = try fixture.store.conversations.rename(id: id, to: "Theirs")
        try fixture.press(.character("u"))
        #expect(browser.status == "Cannot undo the rename: the title was changed meanwhile, by another process or a sync; u undoes the change before it")
        #expect(try Self.title(fixture, id) == "Theirs")
        try fixture.press(.character("u"))
        #expect(browser.status == "Pin undone — Ctrl-R redoes")
        try fixture.press(.control("r"))
        #expect(try fixture.store.conversations.conversation(id: id)?.pinned == true)
        try fixture.press(.control("r"))
        #expect(browser.status == "Nothing to redo")

        // Redo: renamed, undone, then changed by another process: not redone over it.
        try fixture.press(.character("r"), .control("u"))
        try fixture.type("Again")
        try fixture.press(.enter, .character("u"))
        #expect(try Self.title(fixture, id) == "Theirs")
        _ = try fixture.store.conversations.rename(id: id, to: "Theirs later")
        try fixture.press(.control("r"))
        #expect(browser.status == "Cannot rename again: the conversation was changed or deleted meanwhile, by another process or a sync")
        #expect(try Self.title(fixture, id) == "Theirs later")
    }

    @Test("a pin another process undid is not undone again; a deleted conversation's rename says so; a restore over a re-import is refused and skipped")
    func otherProcessPinsAndDeletes() throws {
        let fixture = try BrowserFixture(store: BrowserFixture.store(count: 5))
        let browser = fixture.browser
        let id = try #require(browser.list.selected?.id)
        try fixture.press(.character("p"))
        _ = try fixture.store.conversations.setPinned(ids: [id], false)
        try fixture.press(.character("u"))
        #expect(browser.status == "Cannot undo the pin: changed meanwhile, by another process or a sync")

        try fixture.press(.character("r"), .control("u"))
        try fixture.type("Renamed")
        try fixture.press(.enter)
        _ = try fixture.store.conversations.delete(id: id)
        try fixture.press(.character("u"))
        #expect(browser.status == "Cannot undo the rename: another process deleted the conversation")

        // Deleted here, then the same conversation imported again elsewhere: the undo is
        // refused, nothing changes, and the change before is next.
        try fixture.press(.character("d"), .character("y"))
        #expect(browser.status == "Nothing deleted: another process deleted it meanwhile")
        let other = try #require(browser.list.selected)
        #expect(other.id != id)
        try fixture.press(.character("p"), .character("d"), .character("y"))
        let again = try fixture.store.conversations.create(
            NewConversation(title: "imported again", createdAt: other.createdAt, updatedAt: other.updatedAt, publicID: other.publicID))
        try fixture.press(.character("u"))
        #expect(browser.status == "Cannot undo the delete: “conversation 1” was back already (imported again by another process); u undoes the change before it")
        #expect(try fixture.store.conversations.conversation(id: again.id)?.title == "imported again")
        // Its pin went with it: the conversation there now is the re-imported one, unpinned.
        try fixture.press(.character("u"))
        #expect(browser.status == "Cannot undo the pin: changed meanwhile, by another process or a sync")
        #expect(try fixture.store.conversations.conversation(id: again.id)?.pinned == false)
    }

    @Test("another process's edit that set the same value again is not undone over either (the edit's clock, not only its value)")
    func sameValueAgain() throws {
        let fixture = try BrowserFixture(store: BrowserFixture.store(count: 4))
        let browser = fixture.browser
        let id = try #require(browser.list.selected?.id)
        try fixture.press(.character("p"))
        _ = try fixture.store.conversations.setPinned(ids: [id], false)
        _ = try fixture.store.conversations.setPinned(ids: [id], true)
        try fixture.press(.character("u"))
        #expect(browser.status == "Cannot undo the pin: changed meanwhile, by another process or a sync")
        #expect(try fixture.store.conversations.conversation(id: id)?.pinned == true)
        try fixture.press(.character("r"), .control("u"))
        try fixture.type("T1")
        try fixture.press(.enter)
        _ = try fixture.store.conversations.rename(id: id, to: "X")
        _ = try fixture.store.conversations.rename(id: id, to: "T1")
        try fixture.press(.character("u"))
        #expect(browser.status == "Cannot undo the rename: the title was changed meanwhile, by another process or a sync")
        #expect(try Self.title(fixture, id) == "T1")
        // Its own edits, undone and redone in turn, are recognised as its own.
        try fixture.press(.character("r"), .control("u"))
        try fixture.type("T2")
        try fixture.press(.enter, .character("u"), .control("r"), .character("u"))
        #expect(browser.status == "Rename undone — Ctrl-R redoes")
        #expect(try Self.title(fixture, id) == "T1")
    }

    @Test("a delete of several, one of them imported again elsewhere: undo brings back the rest and names the one")
    func partlyBack() throws {
        let fixture = try BrowserFixture(store: BrowserFixture.store(count: 6))
        let browser = fixture.browser
        let doomed = try fixture.store.conversations.page(sort: .updated, at: .first, limit: 3).items
        try fixture.press(.character(" "), .character(" "), .character(" "), .character("D"), .character("y"))
        #expect(browser.status == "Deleted 3 conversations — u undoes")
        let again = try fixture.store.conversations.create(
            NewConversation(title: "imported again", createdAt: doomed[1].createdAt, publicID: doomed[1].publicID))
        try fixture.press(.character("u"))
        #expect(browser.status == "Restored 2 conversations; “conversation 1” was back already (imported again by another process) — Ctrl-R redoes")
        #expect(try fixture.store.conversations.count() == 6)
        #expect(try fixture.store.conversations.conversation(id: again.id)?.title == "imported again")
        #expect(try Self.title(fixture, doomed[0].id) == "conversation 0" && Self.title(fixture, doomed[2].id) == "conversation 2")
        // Redo deletes the two it restored, never the one imported again.
        try fixture.press(.control("r"))
        #expect(browser.status == "Deleted 2 conversations again — u undoes")
        #expect(try fixture.store.conversations.conversation(id: again.id) != nil)
        #expect(try fixture.store.check().isHealthy)
    }

    @Test("past the message budget, the oldest deletes let go of their snapshots, said at once and when reached; renames and pins around them stay")
    func budget() throws {
        let fixture = try BrowserFixture(store: BrowserFixture.store(count: 12, messages: 4))
        let browser = fixture.browser
        browser.undoMessageBudget = 10
        let first = try #require(browser.list.selected?.id)
        try fixture.press(.character("r"), .control("u"))
        try fixture.type("Renamed first")
        try fixture.press(.enter, .character("j"), .character("d"), .character("y"))  // 4 messages held
        try fixture.press(.character("p"))
        try fixture.press(.character("j"), .character(" "), .character(" "), .character("D"), .character("y"))  // 8 more: 12 > 10
        #expect(browser.status == "Deleted 2 conversations — u undoes (an older delete can no longer be undone: undo keeps 10 messages at most)")
        try fixture.press(.character("u"))
        #expect(browser.status == "Restored 2 conversations (3 more to undo) — Ctrl-R redoes")
        try fixture.press(.character("u"))
        #expect(browser.status == "Pin undone (2 more to undo) — Ctrl-R redoes")
        try fixture.press(.character("u"))
        #expect(browser.status == "The delete of 1 conversation here can no longer be undone: undo keeps 10 messages at most; u undoes the change before it")
        try fixture.press(.character("u"))
        #expect(browser.status == "Rename undone — Ctrl-R redoes")
        #expect(try Self.title(fixture, first) == "conversation 0")
        #expect(try fixture.store.conversations.count() == 11)
    }

    @Test("a delete over the budget by itself is kept until the next delete, and both deletes say so; a rename or pin after it lets go of nothing")
    func oneDeleteOverBudget() throws {
        let fixture = try BrowserFixture(store: BrowserFixture.store(count: 6, messages: 4))
        let browser = fixture.browser
        browser.undoMessageBudget = 6
        try fixture.press(.character(" "), .character(" "), .character("D"), .character("y"))  // 8 messages: over by itself
        #expect(browser.status == "Deleted 2 conversations — u undoes (until the next delete: it holds more than the 6 messages undo keeps)")
        try fixture.press(.character("r"), .control("u"))
        try fixture.type("Renamed")
        try fixture.press(.enter, .character("p"))
        #expect(browser.status?.hasPrefix("Pinned the conversation") == true)
        try fixture.press(.character("u"), .character("u"), .character("u"))
        #expect(browser.status == "Restored 2 conversations — Ctrl-R redoes")
        #expect(try fixture.store.conversations.count() == 6)
        try fixture.press(.control("r"), .control("r"), .control("r"))
        #expect(try fixture.store.conversations.count() == 4)
        // The next delete lets it go, and says so.
        try fixture.press(.character("d"), .character("y"))
        #expect(browser.status == "Deleted 1 conversation — u undoes (an older delete can no longer be undone: undo keeps 6 messages at most)")
        try fixture.press(.character("4"), .character("u"))
        #expect(browser.status == "3 of 4 changes undone, then: The delete of 2 conversations here can no longer be undone: undo keeps 6 messages at most")
    }

    @Test("a pin or rename of a conversation whose delete here was let go: undo blames that delete, not another process")
    func letGoDeleteBlocksOlder() throws {
        let fixture = try BrowserFixture(store: BrowserFixture.store(count: 8, messages: 4))
        let browser = fixture.browser
        browser.undoMessageBudget = 6
        try fixture.press(.character("p"), .character("r"), .control("u"))
        try fixture.type("Renamed")
        try fixture.press(.enter, .character("d"), .character("y"))  // 4 messages held
        try fixture.press(.character(" "), .character(" "), .character("D"), .character("y"))  // 8 more: the first is let go
        try fixture.press(.character("u"), .character("u"))
        #expect(browser.status == "The delete of 1 conversation here can no longer be undone: undo keeps 6 messages at most; u undoes the change before it")
        try fixture.press(.character("u"))
        #expect(browser.status == "Cannot undo the rename: the conversation was deleted here, and that delete can no longer be undone; u undoes the change before it")
        try fixture.press(.character("u"))
        #expect(browser.status == "Cannot undo the pin: the conversation was deleted here, and that delete can no longer be undone")
    }

    @Test("undoing a rename puts back the title exactly, an export's controls too; a title that followed the export follows it again")
    func exactTitles() throws {
        let fixture = try BrowserFixture(store: BrowserFixture.store(count: 3))
        let browser = fixture.browser
        let id = try #require(browser.list.selected?.id)
        try fixture.store.database.run("UPDATE conversation SET title = ?, source_title = ? WHERE id = ?", [
            .text("evil \u{1B}[31mred\u{200E}"), .text("evil \u{1B}[31mred\u{200E}"), .integer(id),
        ])
        try fixture.press(.character("G"), .character("g"), .character("r"), .control("u"))
        try fixture.type("Mine")
        try fixture.press(.enter)
        #expect(try Self.title(fixture, id) == "Mine")
        // A later import changed the export's title (and kept the person's, as imports do).
        try fixture.store.database.run("UPDATE conversation SET source_title = 'Trip ideas v3' WHERE id = ?", [.integer(id)])
        try fixture.press(.character("u"))
        #expect(browser.status == "Rename undone (the export's title now: a later import changed it) — Ctrl-R redoes")
        #expect(try Self.title(fixture, id) == "Trip ideas v3")
        try fixture.press(.control("r"))
        #expect(try Self.title(fixture, id) == "Mine")
        // Not following the export (a person's title before): put back exactly, controls and all.
        let other = try #require(try fixture.store.conversations.page(sort: .updated, at: .first, limit: 3).items.last?.id)
        try fixture.store.database.run("UPDATE conversation SET title = ? WHERE id = ?", [.text("odd \u{7}title "), .integer(other)])
        try fixture.press(.character("G"), .character("r"), .control("u"))
        try fixture.type("Plain")
        try fixture.press(.enter, .character("u"))
        #expect(browser.status == "Rename undone (1 more to undo) — Ctrl-R redoes")
        #expect(try Self.title(fixture, other) == "odd \u{7}title ")
    }

    @Test("read-only: Ctrl-R says it cannot; while a search is on its way Ctrl-R waits for it; the help lists Ctrl-R")
    func readOnlyAndHelp() throws {
        let fixture = try BrowserFixture(store: BrowserFixture.store(count: 3))
        let readOnly = try BrowserFixture(store: fixture.store, readOnly: true)
        try readOnly.press(.control("r"))
        #expect(readOnly.browser.status == "read-only: cannot redo")
        #expect(KeyBindings.helpLines(for: .list).contains { $0.hasPrefix("Ctrl-R") && $0.contains("Redo what u undid") })
        #expect(KeyBindings.helpLines(for: .reader).contains { $0.hasPrefix("Ctrl-R") })
        #expect(BrowserCommand(configName: "redo") == .redo)
    }

    @Test("from the reader: u and Ctrl-R act on the conversation read, and the reader shows the title as it is")
    func fromTheReader() throws {
        let fixture = try BrowserFixture(store: BrowserFixture.store(count: 5))
        let browser = fixture.browser
        try fixture.press(.enter, .character("r"), .control("u"))
        try fixture.type("One")
        try fixture.press(.enter, .character("r"), .control("u"))
        try fixture.type("Two")
        try fixture.press(.enter)
        #expect(browser.reader?.conversation.title == "Two")
        try fixture.press(.character("u"))
        #expect(browser.reader?.conversation.title == "One")
        #expect(browser.status == "Rename undone (1 more to undo) — Ctrl-R redoes")
        try fixture.press(.character("u"))
        #expect(browser.reader?.conversation.title == "conversation 0")
        try fixture.press(.control("r"), .control("r"))
        #expect(browser.reader?.conversation.title == "Two")
        // Deleted from the reader, undone, redone: back on the list each time it is gone.
        try fixture.press(.character("d"), .character("y"))
        #expect(browser.screen == .list)
        try fixture.press(.character("u"), .control("r"))
        #expect(browser.status == "Deleted 1 conversation again — u undoes")
        #expect(try fixture.store.conversations.count() == 4)
    }

    @Test("a large delete, its undo and its redo say so in a frame of their own first, then are made")
    func slowUndoSaidFirst() throws {
        let fixture = try BrowserFixture(store: BrowserFixture.store(count: 8, messages: 3))
        let browser = fixture.browser
        browser.slowUndoAt = 3
        try fixture.press(.character(" "), .character(" "), .character(" "), .character("D"), .character("y"))
        // The delete too: said in a frame of its own, the question gone, then done.
        #expect(browser.status == "Deleting 3 conversations (9 messages)…" && browser.prompt == nil)
        #expect(try fixture.store.conversations.count() == 8)
        #expect(browser.poll())
        #expect(browser.status == "Deleted 3 conversations — u undoes")
        #expect(try fixture.store.conversations.count() == 5)
        // The key asks; nothing is restored until a frame said so (the fixture draws one
        // after each key, as the terminal does).
        _ = try browser.handle(.character("u"))
        #expect(browser.status == "Restoring 3 conversations (9 messages)…")
        #expect(try fixture.store.conversations.count() == 5)
        _ = browser.poll()  // before the frame: nothing yet
        #expect(try fixture.store.conversations.count() == 5)
        browser.promptShown()
        #expect(browser.poll())
        #expect(try fixture.store.conversations.count() == 8)
        #expect(browser.status == "Restored 3 conversations — Ctrl-R redoes")
        #expect(try fixture.store.check().isHealthy)
        _ = try browser.handle(.control("r"))
        #expect(browser.status == "Deleting 3 conversations (9 messages) again…")
        #expect(try fixture.store.conversations.count() == 8)
        browser.promptShown()
        #expect(browser.poll())
        #expect(browser.status == "Deleted 3 conversations again — u undoes")
        #expect(try fixture.store.conversations.count() == 5)
        try fixture.press(.character("u"))
        browser.promptShown()
        _ = browser.poll()
        #expect(try fixture.store.conversations.count() == 8)
    }

    @Test("keys typed ahead of a slow change's frame act after it: y then q deletes, then quits; u u undoes twice; Ctrl-C makes nothing")
    func typeAheadOfSlowChange() throws {
        let fixture = try BrowserFixture(store: BrowserFixture.store(count: 8, messages: 3))
        let browser = fixture.browser
        browser.slowUndoAt = 3
        try fixture.press(.character("p"), .character("j"))
        try fixture.press(.character(" "), .character(" "), .character(" "), .character("D"))
        // y and j arrive together: the delete is made before j moves.
        _ = try browser.handle(.character("y"))
        #expect(try fixture.store.conversations.count() == 8)
        _ = try browser.handle(.character("j"))
        #expect(try fixture.store.conversations.count() == 5)
        #expect(browser.list.marks.isEmpty)
        // u u: the restore, then the pin's undo.
        _ = try browser.handle(.character("u"))
        _ = try browser.handle(.character("u"))
        #expect(try fixture.store.conversations.count() == 8)
        #expect(try fixture.store.conversations.count(filter: ConversationFilter(pinnedOnly: true)) == 0)
        #expect(browser.status == "Pin undone — Ctrl-R redoes")
        // Ctrl-R twice: the pin again, then the delete (said first), then q: done, then quit.
        try fixture.press(.control("r"))
        _ = try browser.handle(.control("r"))
        #expect(browser.status == "Deleting 3 conversations (9 messages) again…")
        #expect(try browser.handle(.character("q")) == false)
        #expect(try fixture.store.conversations.count() == 5)
        // Ctrl-C right after a y: nothing is deleted.
        try fixture.press(.character("g"), .character(" "), .character(" "), .character(" "), .character("D"))
        _ = try browser.handle(.character("y"))
        #expect(try browser.handle(.control("c")) == false)
        #expect(try fixture.store.conversations.count() == 5)
    }
}
