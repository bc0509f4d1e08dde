import Foundation
import ScrollbackModel
@testable import ScrollbackStorage
@testable import ScrollbackSync
import Testing
import TestSupport

/// Edits made before `sync init` keep their time on every machine, whichever joins first and
/// whichever machine id sorts first; a history merely imported on two machines never
/// overrides one; a database from before edits had clocks is stamped as the issue's rule says.
@Suite("Edits made before sync init, on two machines that hold the same export", .serialized)
struct SyncEditClockTests {
    enum Edit: String, CaseIterable {
        case rename, pin, unpin, delete, branch
    }

    static let low = String(repeating: "1", count: 32)
    static let high = String(repeating: "e", count: 32)

    /// The export both machines import: a conversation with two answers to its question (the
    /// second one current), pinned in the export for the unpin case, and one beside it.
    static func export(pinned: Bool, title: String = "Trip to Kyoto") -> [ImportedConversation] {
        let start: Int64 = 1_750_000_000_000
        func at(_ offset: Int64) -> Timestamp { Timestamp(milliseconds: start + offset) }
        let tree = ImportedConversation(
            source: "chatgpt", sourceID: "kyoto", title: title, model: "gpt-4o", createdAt: at(0), updatedAt: at(3_000),
            messages: [
                ImportedMessage(role: .user, content: "Where should I stay?", createdAt: at(0), nodeID: "q"),
                ImportedMessage(role: .assistant, content: "answer one", createdAt: at(1_000), nodeID: "a1", parent: .node("q")),
                ImportedMessage(role: .assistant, content: "answer two", createdAt: at(2_000), nodeID: "a2", parent: .node("q")),
            ], pinned: pinned, currentNodeID: "a2")
        let beside = syncFixture(1)
        return [tree, beside]
    }

    /// `sync init` as the command does it: the server's history probed first, then prepared,
    /// then sync turned on (joining when there was a history), then a sync.
    static func initialize(_ machine: SyncMachine) throws {
        let probe = try SyncEngine.probe(conninfo: machine.url, key: machine.key)
        try SyncEngine.prepareServer(conninfo: machine.url, key: machine.key)
        try machine.turnOn(joining: probe.hasHistory)
        try machine.sync()
    }

    static func conversation(_ machine: SyncMachine) throws -> ConversationDTO? {
        try machine.store.conversations.page(sort: .title, filter: .none, at: .first, limit: 100).items
            .first { $0.sourceID == "kyoto" }
    }

    static func leafText(_ machine: SyncMachine) throws -> String? {
        guard let conversation = try conversation(machine), let leaf = conversation.currentLeafID else { return nil }
        return try machine.store.messages.all(conversationID: conversation.id).first { $0.id == leaf }?.content
    }

    static func make(_ edit: Edit, on machine: SyncMachine) throws {
        let id = try #require(try conversation(machine)).id
        switch edit {
        case .rename: _ = try machine.store.conversations.rename(id: id, to: "Edited before init")
        case .pin: _ = try machine.store.conversations.setPinned(id: id, true)
        case .unpin: _ = try machine.store.conversations.setPinned(id: id, false)
        case .delete: #expect(try machine.store.conversations.delete(id: id))
        case .branch:
            let first = try #require(try machine.store.messages.all(conversationID: id).first { $0.content == "answer one" })
            try machine.store.messages.choose(conversationID: id, leaf: first.id, length: 2, leaving: nil)
        }
    }

    /// Whether `machine` shows `edit` made.
    static func shows(_ edit: Edit, on machine: SyncMachine) throws -> Bool {
        switch edit {
        case .rename: return try conversation(machine)?.title == "Edited before init"
        case .pin: return try conversation(machine)?.pinned == true
        case .unpin: return try conversation(machine)?.pinned == false
        case .delete: return try conversation(machine) == nil
        case .branch: return try leafText(machine) == "answer one"
        }
    }

    @Test(
        "an edit made before sync init survives a second machine with the same export joining, for every edit kind, joining order and id order",
        arguments: Edit.allCases)
    func editSurvives(_ edit: Edit) throws {
        let scene = try SyncScene()
        for editorFirst in [true, false] {
            for editorLow in [true, false] {
                let url = try scene.server.newDatabase()
                let tag = "\(edit)-\(editorFirst)-\(editorLow)"
                let editor = try SyncMachine(
                    scene.folder, "p-\(tag)", url: url, key: scene.key, prepare: false, machine: editorLow ? Self.low : Self.high)
                let other = try SyncMachine(
                    scene.folder, "q-\(tag)", url: url, key: scene.key, prepare: false, machine: editorLow ? Self.high : Self.low)
                for machine in [editor, other] {
                    for conversation in Self.export(pinned: edit == .unpin) { _ = try machine.store.upsert(conversation) }
                }
                try Self.make(edit, on: editor)
                #expect(try Self.shows(edit, on: editor))
                #expect(try !Self.shows(edit, on: other))
                let order = editorFirst ? [editor, other] : [other, editor]
                for machine in order { try Self.initialize(machine) }
                for machine in order { try machine.sync() }
                let context = "\(edit), editor joins \(editorFirst ? "first" : "second"), editor's id sorts \(editorLow ? "first" : "last")"
                #expect(try Self.shows(edit, on: editor), "\(context): lost on the editing machine")
                #expect(try Self.shows(edit, on: other), "\(context): not on the other machine")
                #expect(try editor.export() == other.export(), "\(context)")
                #expect(try editor.store.localSyncState().pending == 0 && other.store.localSyncState().pending == 0)
            }
        }
    }

    @Test("the same field edited on both machines before sync init: the later edit wins on both, whichever joins first and whichever id sorts first")
    func laterEditWins() throws {
        let scene = try SyncScene()
        for earlierFirst in [true, false] {
            for earlierLow in [true, false] {
                let url = try scene.server.newDatabase()
                let tag = "\(earlierFirst)-\(earlierLow)"
                let earlier = try SyncMachine(
                    scene.folder, "early-\(tag)", url: url, key: scene.key, prepare: false, machine: earlierLow ? Self.low : Self.high)
                let later = try SyncMachine(
                    scene.folder, "late-\(tag)", url: url, key: scene.key, prepare: false, machine: earlierLow ? Self.high : Self.low)
                for machine in [earlier, later] {
                    for conversation in Self.export(pinned: false) { _ = try machine.store.upsert(conversation) }
                }
                let id = try #require(try Self.conversation(earlier)).id
                _ = try earlier.store.conversations.rename(id: id, to: "The earlier title")
                _ = try earlier.store.conversations.setPinned(id: id, true)
                Thread.sleep(forTimeInterval: 0.005)
                let laterID = try #require(try Self.conversation(later)).id
                _ = try later.store.conversations.rename(id: laterID, to: "The later title")
                let order = earlierFirst ? [earlier, later] : [later, earlier]
                for machine in order { try Self.initialize(machine) }
                for machine in order { try machine.sync() }
                for machine in [earlier, later] {
                    let conversation = try #require(try Self.conversation(machine))
                    #expect(conversation.title == "The later title", "\(tag)")
                    // The pin was edited on one machine only: it stays, the later rename beside it.
                    #expect(conversation.pinned, "\(tag)")
                }
                #expect(try earlier.export() == later.export())
            }
        }
    }

    @Test("a history merely imported on two machines carries no edit: the first machine's copy is the server's; a newer export joining later does not replace a title edited on the first")
    func importsCarryNoEdit() throws {
        let scene = try SyncScene()
        for firstLow in [true, false] {
            let url = try scene.server.newDatabase()
            let first = try SyncMachine(
                scene.folder, "first-\(firstLow)", url: url, key: scene.key, prepare: false, machine: firstLow ? Self.low : Self.high)
            let joining = try SyncMachine(
                scene.folder, "joining-\(firstLow)", url: url, key: scene.key, prepare: false, machine: firstLow ? Self.high : Self.low)
            for conversation in Self.export(pinned: false) { _ = try first.store.upsert(conversation) }
            // A newer export on the joining machine: the service renamed the conversation.
            for conversation in Self.export(pinned: false, title: "Kyoto, as the service calls it now") {
                _ = try joining.store.upsert(conversation)
            }
            let beside = try first.id("Conversation 1")
            _ = try first.store.conversations.rename(id: beside, to: "Renamed on the first")
            try Self.initialize(first)
            try Self.initialize(joining)
            try first.sync()
            for machine in [first, joining] {
                let titles = try machine.titles()
                // The server's history wins where nothing was edited (the joining machine's
                // counts as older), and the edit wins over the joining machine's copy.
                #expect(titles.contains("Trip to Kyoto") && titles.contains("Renamed on the first"), "\(firstLow): \(titles)")
            }
            #expect(try first.export() == joining.export())
        }
    }

    /// A database written with schema 6's SQL: the export's conversation, renamed before
    /// this version (no clock says when), with its messages.
    static func schemaSix(at path: String, title: String) throws {
        let six = Migrator(migrations: Array(Migrator.scrollback.migrations.prefix(6)))
        let store = try Store.open(path: path, migrator: six)
        #expect(store.migration.toVersion == 6)
        let conversation = StableID.uuid("chatgpt", "kyoto")
        let question = StableID.uuid(conversation, "q"), one = StableID.uuid(conversation, "a1"), two = StableID.uuid(conversation, "a2")
        // Ids follow time, as the schema gives them: the time in milliseconds × 65,536.
        let start: Int64 = 1_750_000_000_000
        func id(_ offset: Int64) -> Int64 { (start + offset) * 65_536 }
        try store.database.execute(
            """
            INSERT INTO conversation (id, public_id, title, model, source, source_id, created_at, updated_at)
            VALUES (\(id(0)), '\(conversation)', '\(title)', 'gpt-4o', 'chatgpt', 'kyoto', \(start), \(start + 3_000));
            INSERT INTO message (id, public_id, conversation_id, position, role, content, created_at, model, parent_id, source_node_id)
            VALUES (\(id(0)), '\(question)', \(id(0)), 0, 'user', 'Where should I stay?', \(start), NULL, NULL, 'q'),
                   (\(id(1_000)), '\(one)', \(id(0)), 1, 'assistant', 'answer one', \(start + 1_000), NULL, \(id(0)), 'a1'),
                   (\(id(2_000)), '\(two)', \(id(0)), 2, 'assistant', 'answer two', \(start + 2_000), NULL, \(id(0)), 'a2');
            UPDATE conversation SET current_leaf_id = \(id(2_000)), branch_length = 2 WHERE id = \(id(0));
            """)
    }

    @Test("a database from before edits had clocks (schema 6, renamed then): upgraded with a backup, its state is stamped with sync init's time on the first machine, and counts as older than the server's on a joining one")
    func upgradedHistory() throws {
        let scene = try SyncScene()
        for legacyFirst in [true, false] {
            for legacyLow in [true, false] {
                let url = try scene.server.newDatabase()
                let tag = "\(legacyFirst)-\(legacyLow)"
                let path = scene.folder.file("legacy-\(tag).sqlite")
                try Self.schemaSix(at: path, title: "Renamed before the upgrade")
                let legacy = try SyncMachine(
                    scene.folder, "legacy-\(tag)", url: url, key: scene.key, prepare: false, machine: legacyLow ? Self.low : Self.high)
                #expect(legacy.store.migration.fromVersion == 6 && legacy.store.migration.backupPath != nil)
                #expect(try legacy.store.database.scalarInt("SELECT count(*) FROM sync_unclocked") == 1)
                let fresh = try SyncMachine(
                    scene.folder, "fresh-\(tag)", url: url, key: scene.key, prepare: false, machine: legacyLow ? Self.high : Self.low)
                for conversation in Self.export(pinned: false) { _ = try fresh.store.upsert(conversation) }
                let order = legacyFirst ? [legacy, fresh] : [fresh, legacy]
                for machine in order { try Self.initialize(machine) }
                for machine in order { try machine.sync() }
                let expected = legacyFirst ? "Renamed before the upgrade" : "Trip to Kyoto"
                for machine in [legacy, fresh] {
                    #expect(try Self.conversation(machine)?.title == expected, "\(tag)")
                }
                #expect(try legacy.export() == fresh.export(), "\(tag)")
                #expect(try legacy.store.database.scalarInt("SELECT count(*) FROM sync_unclocked") == 0)
                #expect(try legacy.store.check().problems.isEmpty)
            }
        }
    }

    @Test("edits made after sync off --force keep their time when the machine joins again as a new one")
    func editsAfterForget() throws {
        let scene = try SyncScene()
        let url = try scene.server.newDatabase()
        let a = try SyncMachine(scene.folder, "a", url: url, key: scene.key, prepare: false, machine: Self.high)
        let b = try SyncMachine(scene.folder, "b", url: url, key: scene.key, prepare: false, machine: Self.low)
        for machine in [a, b] {
            for conversation in Self.export(pinned: false) { _ = try machine.store.upsert(conversation) }
        }
        try Self.initialize(a)
        try Self.initialize(b)
        try a.sync()
        try b.store.turnSyncOff(forget: true)
        let id = try #require(try Self.conversation(b)).id
        _ = try b.store.conversations.rename(id: id, to: "Renamed while forgotten")
        _ = try b.store.conversations.setPinned(id: id, true)
        // The edit's clock is kept in this machine's zero-id until sync is on again.
        #expect(try b.store.database.scalarInt("SELECT count(*) FROM sync_clock WHERE substr(clock, 21) = ?", [.text(String(repeating: "0", count: 32))]) == 2)
        let again = try SyncMachine(scene.folder, "b", url: url, key: scene.key, prepare: false, machine: SyncEngine.newMachineID())
        try Self.initialize(again)
        try a.sync()
        for machine in [a, again] {
            #expect(try Self.conversation(machine)?.title == "Renamed while forgotten")
            #expect(try Self.conversation(machine)?.pinned == true)
        }
        #expect(try a.export() == again.export())
    }

    @Test("as a person does it: import, rename, pin, sync init on one machine; import, key import, sync init on the other; both show the edits")
    func commandLine() throws {
        let server = try PostgresServer()
        // Machine ids are random: two rounds see both orders of them about half the time;
        // the test above fixes them.
        for round in 0..<2 {
            let url = try server.newDatabase()
            let p = try BinaryRunner()
            let q = try BinaryRunner()
            let export = try p.recordExport(titles: ["Alpha", "Beta", "Gamma"])
            for runner in [p, q] { #expect(try runner.run(["import", export]).status == 0) }
            let listed = try #require(try p.json(["list"])["conversations"] as? [[String: Any]])
            let alpha = try #require(listed.first { $0["title"] as? String == "Alpha" }?["id"] as? String)
            #expect(try p.run(["rename", alpha, "Alpha, renamed before init"]).status == 0)
            #expect(try p.run(["pin", alpha]).status == 0)
            let first = try p.run(["sync", "init"], input: url + "\n")
            #expect(first.status == 0, "\(first.error)")
            let key = try p.run(["sync", "key", "show", "--force"]).output
            #expect(try q.run(["sync", "key", "import"], input: key).status == 0)
            let second = try q.run(["sync", "init"], input: url + "\n")
            #expect(second.status == 0, "\(second.error)")
            #expect(try p.run(["sync"]).status == 0)
            for runner in [p, q] {
                let rows = try #require(try runner.json(["list"])["conversations"] as? [[String: Any]])
                let row = try #require(rows.first { ($0["title"] as? String)?.hasPrefix("Alpha") == true })
                #expect(row["title"] as? String == "Alpha, renamed before init", "round \(round)")
                #expect(row["pinned"] as? Bool == true, "round \(round)")
            }
        }
    }

    @Test("importing the export again never puts back a title a person changed, here or on another machine through sync; a title the service changed is taken where nobody edited it")
    func reimportKeepsRenames() throws {
        let scene = try SyncScene()
        let url = try scene.server.newDatabase()
        let p = try SyncMachine(scene.folder, "p", url: url, key: scene.key, prepare: false, machine: Self.low)
        let q = try SyncMachine(scene.folder, "q", url: url, key: scene.key, prepare: false, machine: Self.high)
        for machine in [p, q] {
            for conversation in Self.export(pinned: false) { _ = try machine.store.upsert(conversation) }
        }
        try Self.initialize(p)
        try Self.initialize(q)
        // Renamed on P after both synced; Q gets the rename, then imports the same export again.
        _ = try p.store.conversations.rename(id: try #require(try Self.conversation(p)).id, to: "Kyoto, my way")
        try p.sync()
        try q.sync()
        #expect(try Self.conversation(q)?.title == "Kyoto, my way")
        for machine in [q, p] {
            for conversation in Self.export(pinned: false) { #expect(try machine.store.upsert(conversation) == .unchanged) }
        }
        try q.sync()
        try p.sync()
        for machine in [p, q] { #expect(try Self.conversation(machine)?.title == "Kyoto, my way") }
        // A newer export in which the service renamed the conversation beside it: taken,
        // since nobody edited that one; the renamed one keeps its title.
        var newer = Self.export(pinned: false, title: "Kyoto, as the service calls it now")
        newer[1].title = "Conversation 1, renamed by the service"
        for conversation in newer { _ = try q.store.upsert(conversation) }
        try q.sync()
        try p.sync()
        for machine in [p, q] {
            let titles = try machine.titles()
            #expect(titles.contains("Kyoto, my way") && titles.contains("Conversation 1, renamed by the service"), "\(titles)")
        }
        #expect(try p.export() == q.export())
    }
}
