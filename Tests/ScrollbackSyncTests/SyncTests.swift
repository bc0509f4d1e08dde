import Foundation
@testable import ScrollbackExport
import ScrollbackDemo
import ScrollbackImport
import ScrollbackModel
import ScrollbackStorage
@testable import ScrollbackSync
import Testing
import TestSupport

/// A machine for a sync test: its own database file, syncing with the key given.
final class SyncMachine {
    let store: Store
    let path: String
    let key: SyncKey
    let url: String
    let machine: String

    init(_ folder: TemporaryDirectory, _ name: String, url: String, key: SyncKey, prepare: Bool = true, machine: String? = nil) throws {
        path = folder.file("\(name).sqlite")
        store = try Store.open(path: path)
        self.key = key
        self.url = url
        self.machine = machine ?? SyncEngine.newMachineID()
        if prepare { try SyncEngine.prepareServer(conninfo: url, key: key) }
    }

    /// Sync on, as `sync init` turns it on: joining when the server holds a history (by
    /// default as `sync init` finds out).
    func turnOn(joining: Bool? = nil) throws {
        _ = try store.turnSyncOn(machine: machine, joining: try joining ?? SyncEngine.probe(conninfo: url, key: key).hasHistory)
    }

    @discardableResult
    func sync(batch: Int = 500, transactionTime: Duration = .seconds(1), progress: ((SyncProgress) -> Void)? = nil) throws -> SyncReport {
        let engine = try SyncEngine(store: store, conninfo: url, key: key)
        engine.batch = batch
        engine.transactionTime = transactionTime
        return try engine.sync(progress: progress)
    }

    /// The whole history as scrollback's JSON Lines export writes it.
    func export() throws -> String {
        let exporter = Exporter(store: store)
        var lines: [String] = []
        try exporter.forEachConversation { conversation in
            lines.append(try exporter.render(conversation, as: .jsonl))
        }
        return lines.joined(separator: "\n")
    }

    func id(_ title: String) throws -> Int64 {
        let page = try store.conversations.page(sort: .title, filter: .none, at: .first, limit: 10_000).items
        return try #require(page.first { $0.title == title }).id
    }

    func titles() throws -> [String] {
        try store.conversations.page(sort: .title, filter: .none, at: .first, limit: 100_000).items.map(\.title)
    }
}

/// What every sync test starts from: a throwaway server, a database on it, a folder for the
/// machines' files and a key.
struct SyncScene {
    let server: PostgresServer
    let url: String
    let folder: TemporaryDirectory
    let key: SyncKey

    init() throws {
        server = try PostgresServer()
        url = try server.newDatabase()
        folder = try TemporaryDirectory()
        key = try SyncKey.generate()
    }

    /// A machine with its own database in the folder (the server prepared for the key first,
    /// unless `prepare` is false).
    func machine(_ name: String, prepare: Bool = true, id: String? = nil) throws -> SyncMachine {
        try SyncMachine(folder, name, url: url, key: key, prepare: prepare, machine: id)
    }
}

/// Conversations with messages, for imports on several machines.
func syncFixture(_ index: Int, source: String = "chatgpt", messages: Int = 3, title: String? = nil) -> ImportedConversation {
    ImportedConversation(
        source: source, sourceID: "conv-\(index)", title: title ?? "Conversation \(index)", model: "gpt-\(index % 3)",
        createdAt: Timestamp(milliseconds: 1_700_000_000_000 + Int64(index) * 60_000),
        updatedAt: Timestamp(milliseconds: 1_700_000_000_000 + Int64(index) * 60_000),
        messages: (0..<messages).map { number in
            ImportedMessage(
                role: number % 2 == 0 ? .user : .assistant, content: "message \(number) of conversation \(index)",
                createdAt: Timestamp(milliseconds: 1_700_000_000_000 + Int64(index) * 60_000 + Int64(number) * 1_000),
                nodeID: "node-\(number)")
        })
}

@Suite("Sync through a real PostgreSQL server", .serialized)
struct SyncTests {
    @Test("two machines converge after interleaved imports, renames, pins, deletes and undos: the same JSON Lines export")
    func converge() throws {
        let scene = try SyncScene()
        let a = try scene.machine("a")
        let b = try scene.machine("b")
        // A had a history before sync; so had B, partly the same export.
        for index in 0..<6 { _ = try a.store.upsert(syncFixture(index)) }
        for index in 4..<9 { _ = try b.store.upsert(syncFixture(index)) }
        try a.turnOn()
        try b.turnOn()
        try a.sync()
        try b.sync()
        try a.sync()
        #expect(try a.export() == b.export())
        #expect(try a.store.conversations.count() == 9)

        // Interleaved work, each side syncing now and then.
        _ = try a.store.conversations.rename(id: try a.id("Conversation 1"), to: "Renamed on A")
        _ = try b.store.conversations.setPinned(id: try b.id("Conversation 5"), true)
        try a.sync()
        _ = try b.store.conversations.delete(id: try b.id("Conversation 7"))
        for index in 9..<12 { _ = try b.store.upsert(syncFixture(index)) }
        try b.sync()
        let snapshots = try a.store.conversations.deleteKeepingSnapshots(ids: [try a.id("Conversation 2"), try a.id("Conversation 3")])
        try a.sync()
        try b.sync()
        // Undo on A: a newer op than its delete; B, which deleted them too, gets them back.
        try a.store.conversations.restore(snapshots)
        _ = try a.store.upsert(syncFixture(4, messages: 5))  // a newer export: two new messages
        try a.sync()
        try b.sync()
        try a.sync()
        let exported = try a.export()
        #expect(exported == (try b.export()))
        let titles = try b.titles()
        #expect(titles.contains("Conversation 2") && titles.contains("Conversation 3"))
        #expect(!titles.contains("Conversation 7"))
        #expect(titles.contains("Renamed on A") && titles.contains("Conversation 11"))
        #expect(try b.store.conversations.conversation(id: try b.id("Conversation 4"))?.messageCount == 5)
        #expect(try a.store.conversations.conversation(id: try a.id("Conversation 5"))?.pinned == true)
        #expect(try a.store.check().problems.isEmpty && b.store.check().problems.isEmpty)
        // Nothing is left to send or wait for.
        #expect(try a.store.localSyncState().pending == 0 && b.store.localSyncState().pending == 0)
        #expect(try a.store.localSyncState().parked == 0 && b.store.localSyncState().parked == 0)
    }

    @Test("rename against rename, and delete against rename, end the same on both machines")
    func conflicts() throws {
        let scene = try SyncScene()
        let a = try scene.machine("a")
        let b = try scene.machine("b")
        for index in 0..<3 { _ = try a.store.upsert(syncFixture(index)) }
        try a.turnOn()
        try b.turnOn()
        try a.sync()
        try b.sync()
        // Both rename conversation 0 without seeing the other: the later rename wins on both.
        _ = try a.store.conversations.rename(id: try a.id("Conversation 0"), to: "A's title")
        usleep(5_000)
        _ = try b.store.conversations.rename(id: try b.id("Conversation 0"), to: "B's title")
        // A deletes conversation 1 while B renames it (later): the delete wins on both.
        _ = try a.store.conversations.delete(id: try a.id("Conversation 1"))
        usleep(5_000)
        _ = try b.store.conversations.rename(id: try b.id("Conversation 1"), to: "Renamed after the delete")
        try b.sync()
        try a.sync()
        try b.sync()
        #expect(try a.titles() == ["B's title", "Conversation 2"])
        #expect(try b.titles() == ["B's title", "Conversation 2"])
        #expect(try a.export() == b.export())
        // The same the other way round: the earlier rename loses whichever syncs first.
        _ = try b.store.conversations.rename(id: try b.id("Conversation 2"), to: "B first")
        usleep(5_000)
        _ = try a.store.conversations.rename(id: try a.id("Conversation 2"), to: "A second")
        try b.sync()
        try a.sync()
        try b.sync()
        #expect(try a.titles() == ["A second", "B's title"] && b.titles() == ["A second", "B's title"])
        // B deletes and restores; A, not having seen either, renames and pins later: the later
        // edits win on both, whichever syncs first (found by a hostile tester).
        for aFirst in [true, false] {
            let id = try b.id("A second")
            let snapshots = try b.store.conversations.deleteKeepingSnapshots(ids: [id])
            try b.store.conversations.restore(snapshots)
            usleep(5_000)
            _ = try a.store.conversations.rename(id: try a.id("A second"), to: "A later \(aFirst)")
            _ = try a.store.conversations.setPinned(id: try a.id("A later \(aFirst)"), aFirst)
            if aFirst { try a.sync() }
            try b.sync()
            try a.sync()
            try b.sync()
            #expect(try a.export() == b.export(), "\(aFirst)")
            #expect(try b.titles().contains("A later \(aFirst)") && a.titles().contains("A later \(aFirst)"))
            #expect(try b.store.conversations.conversation(id: try b.id("A later \(aFirst)"))?.pinned == aFirst)
            _ = try a.store.conversations.rename(id: try a.id("A later \(aFirst)"), to: "A second")
            try a.sync()
            try b.sync()
        }
    }

    @Test("an import of the same export after a synced delete leaves it deleted; import --restore brings it back everywhere")
    func reimportAfterDelete() throws {
        let scene = try SyncScene()
        let a = try scene.machine("a")
        let b = try scene.machine("b")
        try a.turnOn()
        try b.turnOn()
        for index in 0..<3 { _ = try a.store.upsert(syncFixture(index)) }
        try a.sync()
        try b.sync()
        _ = try b.store.conversations.delete(id: try b.id("Conversation 1"))
        try b.sync()
        try a.sync()
        #expect(try a.titles() == ["Conversation 0", "Conversation 2"])
        // Both import the same export again: it stays deleted, and no op brings it back.
        #expect(try a.store.upsert(syncFixture(1)) == .deleted)
        #expect(try b.store.upsert(syncFixture(1)) == .deleted)
        #expect(try a.store.upsert(syncFixture(0)) == .unchanged)
        #expect(try a.store.localSyncState().pending == 0)
        try a.sync()
        try b.sync()
        #expect(try b.titles() == ["Conversation 0", "Conversation 2"])
        // An explicit restore is a newer op: back on both, with its messages.
        #expect(try a.store.upsert(syncFixture(1), restoring: true) == .inserted)
        try a.sync()
        try b.sync()
        #expect(try b.titles() == ["Conversation 0", "Conversation 1", "Conversation 2"])
        #expect(try b.store.conversations.conversation(id: try b.id("Conversation 1"))?.messageCount == 3)
        #expect(try a.export() == b.export())
    }

    @Test("batch boundaries: 0, 1, a batch and a batch + 1 ops each arrive once")
    func batchBoundaries() throws {
        let scene = try SyncScene()
        let server = scene.server
        let url = scene.url
        let a = try scene.machine("a")
        let b = try scene.machine("b")
        try a.turnOn()
        try b.turnOn()
        let batch = 4
        var index = 0
        // One conversation without messages is 1 op (and a leaf op when it has messages).
        for count in [0, 1, batch, batch + 1] {
            for _ in 0..<count {
                _ = try a.store.conversations.create(
                    NewConversation(title: "Batch \(index)", createdAt: Timestamp(milliseconds: 1_700_000_000_000 + Int64(index))))
                index += 1
            }
            #expect(try a.store.localSyncState().pending == count)
            let sent = try a.sync(batch: batch)
            #expect(sent.sent == count)
            let received = try b.sync(batch: batch)
            #expect(received.received == count, "\(count)")
            #expect(try b.store.conversations.count() == index)
        }
        let ops = try server.psql(url, "SELECT count(*), count(DISTINCT op_id), max(seq) FROM scrollback.op")
        #expect(ops.trimmingCharacters(in: .whitespacesAndNewlines) == "10|10|10")
    }

    @Test("a new machine catches up 10,000 conversations from the server")
    func catchUp() throws {
        let scene = try SyncScene()
        let a = try scene.machine("a")
        let outcome = try DemoGenerator(seed: 3).fill(a.store, count: 10_000)
        try a.turnOn()
        let sent = try a.sync()
        #expect(sent.sent == 10_000 + outcome.messages + 10_000)
        let b = try scene.machine("b")
        try b.turnOn()
        let received = try b.sync()
        #expect(received.received == sent.sent && received.parked == 0)
        #expect(try b.store.conversations.count() == 10_000)
        #expect(try b.store.messages.count() == outcome.messages)
        #expect(try a.export() == b.export())
        // Search finds what came down.
        let hit = try #require(try a.store.conversations.page(sort: .updated, filter: .none, at: .first, limit: 1).items.first)
        let word = String(hit.title.split(separator: " ").first ?? "")
        #expect(try !b.store.search.search(word, filter: .none, after: nil, limit: 5).items.isEmpty)
    }

    @Test("a large page indexes what it adds at its end, and what it renames, updates or deletes after adding it: the same as page by page")
    func largePages() throws {
        let scene = try SyncScene()
        let a = try scene.machine("a")
        try a.turnOn()
        for index in 0..<250 { _ = try a.store.upsert(syncFixture(index)) }
        // Sent as they are now, then changed: the server holds both.
        let first = try a.sync().sent
        for index in 0..<20 { _ = try a.store.conversations.rename(id: try a.id("Conversation \(index)"), to: "Retitled zebra \(index)") }
        for index in 20..<30 { _ = try a.store.conversations.delete(id: try a.id("Conversation \(index)")) }
        // A newer export: the first message's text changed in place, two messages added.
        for index in 30..<40 {
            var newer = syncFixture(index, messages: 5)
            newer.messages[0].content = "quokka \(index)"
            _ = try a.store.upsert(newer)
        }
        let sent = first + (try a.sync().sent)
        #expect(sent > Store.indexedPage && sent < 2_000)
        // B takes it in one page (up to 2,000: indexed at its end); C in pages of 100, row by row.
        let b = try scene.machine("b")
        let c = try scene.machine("c")
        try b.turnOn()
        try c.turnOn()
        #expect(try b.sync(batch: 200).received == sent)
        #expect(try c.sync(batch: 10).received == sent)
        let exported = try a.export()
        #expect(try b.export() == exported && c.export() == exported)
        for machine in [b, c] {
            #expect(try machine.store.check().problems.isEmpty)
            func hits(_ words: String) throws -> Int { try machine.store.search.search(words, filter: .none, after: nil, limit: 50).items.count }
            #expect(try hits("zebra") == 20)
            #expect(try hits("quokka") == 10)
            #expect(try hits("quokka 35") == 1)
            #expect(try hits("25") == 0)  // deleted after it was added
            #expect(try hits("249") >= 1)
        }
    }

    @Test("sync off, edits, sync on again: what was renamed, pinned or deleted meanwhile reaches the others and stays here")
    func offAndOnAgain() throws {
        let scene = try SyncScene()
        let a = try scene.machine("a")
        let b = try scene.machine("b")
        for index in 0..<4 { _ = try a.store.upsert(syncFixture(index)) }
        try a.turnOn()
        try b.turnOn()
        _ = try a.store.conversations.rename(id: try a.id("Conversation 0"), to: "Synced title")
        try a.sync()
        try b.sync()
        try b.store.turnSyncOff(forget: false)
        #expect(throws: SyncError.self) { try b.sync() }
        _ = try b.store.conversations.rename(id: try b.id("Synced title"), to: "Renamed while off")
        _ = try b.store.conversations.setPinned(id: try b.id("Conversation 1"), true)
        _ = try b.store.conversations.delete(id: try b.id("Conversation 2"))
        #expect(try b.store.localSyncState().pending == 3 && !b.store.localSyncState().isOn)
        try b.store.resumeSync()
        try b.sync()
        try a.sync()
        for machine in [a, b] {
            let titles = try machine.titles()
            #expect(titles.contains("Renamed while off") && !titles.contains("Synced title") && !titles.contains("Conversation 2"))
            #expect(try machine.store.conversations.conversation(id: try machine.id("Conversation 1"))?.pinned == true)
        }
        #expect(try a.export() == b.export())

        // Off and forgotten, a delete, then on as a new machine: the delete reaches the others.
        try b.store.turnSyncOff(forget: true)
        _ = try b.store.conversations.delete(id: try b.id("Conversation 3"))
        _ = try b.store.turnSyncOn(machine: SyncEngine.newMachineID(), joining: true)
        try b.sync()
        try a.sync()
        #expect(try !a.titles().contains("Conversation 3"))
        #expect(try a.export() == b.export())
    }

    @Test("one message id in two conversations of two machines: each keeps all its messages, on both, with nothing left waiting")
    func sharedMessageID() throws {
        let scene = try SyncScene()
        let a = try scene.machine("a")
        let b = try scene.machine("b")
        func conversation(_ name: String, _ word: String) -> ImportedConversation {
            ImportedConversation(
                source: "chatgpt", sourceID: name, title: name, model: nil, createdAt: Timestamp(milliseconds: 1_000),
                updatedAt: Timestamp(milliseconds: 1_000),
                messages: [
                    ImportedMessage(role: .user, content: "\(word) question", createdAt: Timestamp(milliseconds: 1_000), publicID: "shared-message-id"),
                    ImportedMessage(role: .assistant, content: "\(word) answer", createdAt: Timestamp(milliseconds: 2_000), publicID: "\(name)-answer"),
                ])
        }
        _ = try a.store.upsert(conversation("On A", "apricot"))
        _ = try b.store.upsert(conversation("On B", "blueberry"))
        try a.turnOn()
        try b.turnOn()
        try a.sync()
        try b.sync()
        try a.sync()
        for machine in [a, b] {
            for (title, word) in [("On A", "apricot"), ("On B", "blueberry")] {
                let found = try #require(try machine.store.conversations.conversation(id: try machine.id(title)))
                #expect(found.messageCount == 2, "\(title)")
                #expect(try machine.store.search.search("\(word) question", filter: .none, after: nil, limit: 5).items.count == 1)
            }
            #expect(try machine.store.localSyncState().parked == 0)
            #expect(try machine.store.check().problems.isEmpty)
        }
    }

    @Test("more machines than one pull query reads: a new machine catches up with every one of them")
    func manyMachines() throws {
        let scene = try SyncScene()
        let url = scene.url
        let key = scene.key
        let count = SyncEngine.pullMachines * 2 + 3
        for index in 0..<count {
            let machine = try scene.machine("m\(index)", prepare: index == 0)
            try machine.turnOn()
            _ = try machine.store.upsert(syncFixture(index))
            try machine.sync()
        }
        let late = try scene.machine("late", prepare: false)
        try late.turnOn()
        #expect(try late.sync().received == count * 5)
        #expect(try late.store.conversations.count() == count)
        #expect(try late.store.localSyncState().cursors.count == count)
        // It has sent nothing, and counts among the server's machines all the same.
        #expect(try SyncEngine(store: late.store, conninfo: url, key: key).serverState().machines == count + 1)
        // And again: nothing more.
        #expect(try late.sync().received == 0)
    }

    @Test("a wrong key changes nothing, here or on the server, and says what to do")
    func wrongKey() throws {
        let server = try PostgresServer()
        let url = try server.newDatabase()
        let folder = try TemporaryDirectory()
        let a = try SyncMachine(folder, "a", url: url, key: try SyncKey.generate())
        for index in 0..<3 { _ = try a.store.upsert(syncFixture(index)) }
        try a.turnOn()
        try a.sync()
        let before = try server.psql(url, "SELECT count(*), max(seq) FROM scrollback.op")
        let intruder = try SyncKey.generate()
        #expect(throws: SyncError.wrongKey) { try SyncEngine.prepareServer(conninfo: url, key: intruder) }
        let c = try SyncMachine(folder, "c", url: url, key: intruder, prepare: false)
        for index in 10..<12 { _ = try c.store.upsert(syncFixture(index)) }
        try c.turnOn()
        let pending = try c.store.localSyncState().pending
        #expect(throws: SyncError.wrongKey) { try c.sync() }
        #expect(try server.psql(url, "SELECT count(*), max(seq) FROM scrollback.op") == before)
        #expect(try c.store.localSyncState().pending == pending)
        #expect(try c.titles() == ["Conversation 10", "Conversation 11"])
        #expect(SyncError.wrongKey.description.contains("sync key import"))
    }

    @Test("the server's tables hold no title, message or model in the clear")
    func ciphertextOnly() throws {
        let server = try PostgresServer()
        let url = try server.newDatabase()
        let folder = try TemporaryDirectory()
        let a = try SyncMachine(folder, "a", url: url, key: try SyncKey.generate())
        var secret = syncFixture(1, title: "Zanzibar-Quokka title")
        secret.model = "model-Xylophone-77"
        secret.messages[0].content = "the marmalade-otter-991 message"
        _ = try a.store.upsert(secret)
        try a.turnOn()
        try a.sync()
        _ = try a.store.conversations.rename(id: try a.id("Zanzibar-Quokka title"), to: "Renamed-Narwhal")
        try a.sync()
        let dump = try server.psql(url, "SELECT * FROM scrollback.op; SELECT * FROM scrollback.key_check; SELECT * FROM scrollback.machine")
        #expect(dump.contains(a.machine))
        for known in ["Zanzibar", "Quokka", "Xylophone", "marmalade", "Narwhal"] {
            #expect(!dump.contains(known))
            // bytea shows as hex: the bytes of the word in hex are not there either.
            let hex = known.utf8.map { String(format: "%02x", $0) }.joined()
            #expect(!dump.contains(hex), "\(known)")
        }
    }

    @Test("a server that stalls during a catch-up keeps no other writer out: the network is never waited for inside a local transaction")
    func stalledServer() throws {
        let scene = try SyncScene()
        let server = scene.server
        let a = try scene.machine("a")
        let b = try scene.machine("b")
        _ = try DemoGenerator(seed: 6).fill(a.store, count: 4_000)
        let local = try b.store.conversations.create(NewConversation(title: "Made on B", createdAt: Timestamp(milliseconds: 5)))
        try a.turnOn()
        try b.turnOn()
        try a.sync()
        // B catches up in small reads on another thread; another connection to its file
        // writes meanwhile, as the browser or a command would.
        // The engine is the thread's alone.
        final class Outcome: @unchecked Sendable {
            let engine: SyncEngine
            var error: (any Error)?
            init(_ engine: SyncEngine) { self.engine = engine }
        }
        let outcome = Outcome(try SyncEngine(store: b.store, conninfo: scene.url, key: scene.key))
        outcome.engine.batch = 50
        // Stalled once its first page is applied: mid-way, with more to read, inside the
        // local transaction that goes on taking pages.
        let stalled = DispatchSemaphore(value: 0)
        let catchUp = Thread {
            var first = true
            do {
                _ = try outcome.engine.sync { progress in
                    guard first, progress.phase == .receiving else { return }
                    first = false
                    try? server.signalAll(SIGSTOP)
                    stalled.signal()
                }
            } catch {
                outcome.error = error
            }
        }
        let beside = try Store.open(path: b.path)
        catchUp.start()
        stalled.wait()
        for round in 0..<4 {
            usleep(400_000)
            // Busy for more than SQLite's 5 s wait would throw here.
            #expect(throws: Never.self) { _ = try beside.conversations.rename(id: local.id, to: "Renamed beside \(round)") }
        }
        #expect(!catchUp.isFinished, "the catch-up ended before the server stalled: the machine is too fast for this test")
        try server.signalAll(SIGCONT)
        while !catchUp.isFinished { usleep(10_000) }
        #expect(outcome.error == nil, "\(String(describing: outcome.error))")
        try b.sync()
        try a.sync()
        #expect(try a.export() == b.export())
        #expect(try a.titles().filter { $0.hasPrefix("Renamed beside") } == ["Renamed beside 3"])
        let problems = try b.store.check().problems
        #expect(problems.isEmpty, "\(problems)")
    }

    @Test("on a terminal, a catch-up cut short clears its progress line before the error, which says the connection broke; TERM=dumb gets no progress and no escape sequence")
    func progressOnATerminal() throws {
        let scene = try SyncScene()
        let server = scene.server
        let a = try scene.machine("a")
        let b = try scene.machine("b")
        _ = try DemoGenerator(seed: 7).fill(a.store, count: 10_000)
        try a.turnOn()
        try b.turnOn()
        try a.sync()
        let environment = "SCROLLBACK_SYNC_URL='\(scene.url)' SCROLLBACK_SYNC_KEY='\(scene.key.text)'"
        // The server stopped once the first progress line is out.
        let output = scene.folder.file("terminal")
        makeEmptyFile(output)
        let process = try ChildProcess(
            "/bin/sh", ["-c", "\(environment) script -q -e -c \"\\\"$0\\\" --db \(b.path) sync\" /dev/null", BinaryRunner.binary.path],
            environment: TestEnvironment.variables(home: scene.folder.path, terminal: true), output: output, error: "/dev/null")
        var ending: ChildProcess.Ending?
        while ending == nil, !(String(decoding: try Data(contentsOf: URL(fileURLWithPath: output)), as: UTF8.self).contains("receiving ")) {
            ending = process.wait(timeout: 0.005)
        }
        try server.stop()
        let ended = ending ?? process.wait()
        let bytes = String(decoding: try Data(contentsOf: URL(fileURLWithPath: output)), as: UTF8.self)
        #expect(ended == .exited(1), "the sync ended before the server stopped: the machine is too fast for this test")
        #expect(bytes.contains("receiving "), "\(bytes)")
        // The error starts a line of its own: the progress line is cleared first.
        #expect(bytes.contains("\r\u{1B}[Kscrollback: the connection to the sync server broke"), "\(bytes)")
        try server.restart()
        // TERM=dumb: the same sync, finished, with no progress line and no escape sequence.
        let dumb = try BinaryRunner.shell("\(environment) TERM=dumb script -q -e -c \"\\\"$0\\\" --db \(b.path) sync\" /dev/null")
        let plain = String(decoding: dumb.output, as: UTF8.self)
        #expect(dumb.status == 0 && plain.contains("Synced: sent 0, received "), "\(plain)")
        #expect(!plain.contains("\u{1B}") && !plain.contains("receiving"), "\(plain)")
        #expect(try a.export() == b.export())
    }

    @Test("a sync says how many changes still wait at its end, not how many waited on the way")
    func parkedAtTheEnd() throws {
        let scene = try SyncScene()
        let p = try scene.machine("p")
        let q = try scene.machine("q")
        // The one whose changes a new machine reads first renames what the other made.
        let (renamer, maker) = p.machine < q.machine ? (p, q) : (q, p)
        try maker.turnOn()
        try renamer.turnOn()
        _ = try maker.store.upsert(syncFixture(1))
        try maker.sync()
        try renamer.sync()
        _ = try renamer.store.conversations.rename(id: try renamer.id("Conversation 1"), to: "Renamed first")
        try renamer.sync()
        let newcomer = try scene.machine("newcomer")
        try newcomer.turnOn()
        let report = try newcomer.sync()
        #expect(try newcomer.titles() == ["Renamed first"])
        let waiting = try newcomer.store.localSyncState().parked
        #expect(report.parked == 0 && waiting == 0, "\(report)")
    }

    @Test("the server stopped in the middle of a sync, then started: nothing lost, both converge")
    func serverStops() throws {
        let scene = try SyncScene()
        let server = scene.server
        let a = try scene.machine("a")
        let b = try scene.machine("b")
        _ = try DemoGenerator(seed: 5).fill(a.store, count: 2_000)
        try a.turnOn()
        try b.turnOn()
        // Stopped while A sends in small batches: once the first of them is on the server.
        let before = try a.store.localSyncState().pending
        var stopped = false
        var failed = false
        do {
            try a.sync(batch: 50) { _ in
                guard !stopped else { return }
                stopped = true
                try? server.stop()
            }
        } catch let error as SyncError {
            failed = true
            switch error {
            case .connectionLost, .unreachable, .server: break
            default: Issue.record("unexpected \(error)")
            }
        }
        #expect(stopped && failed, "stopped: \(stopped), failed: \(failed)")
        let left = try a.store.localSyncState().pending
        #expect(left > 0 && left < before, "\(left) of \(before) left to send")
        #expect(throws: SyncError.self) { try a.sync() }
        try server.restart()
        try a.sync()
        #expect(try a.store.localSyncState().pending == 0)
        // B, stopped while receiving (once its first page is applied: a transaction a page,
        // else a fast machine applies every page in the first second), resumes too.
        var stoppedB = false
        #expect(throws: SyncError.self) {
            try b.sync(batch: 50, transactionTime: .zero) { progress in
                guard !stoppedB, progress.phase == .receiving else { return }
                stoppedB = true
                try? server.stop()
            }
        }
        #expect(stoppedB)
        try server.restart()
        try b.sync()
        #expect(try a.export() == b.export())
        let problems = try b.store.check().problems
        #expect(problems.isEmpty, "\(problems)")
    }
}

@Suite("Sync against a server that lies, loses or is shared by a copy", .serialized)
struct SyncDamageTests {
    @Test("the server's key check deleted: a new key is refused and nothing is written; the key that opens the ops puts it back")
    func lostKeyCheck() throws {
        let scene = try SyncScene()
        let server = scene.server
        let url = scene.url
        let key = scene.key
        let a = try scene.machine("a")
        for index in 0..<3 { _ = try a.store.upsert(syncFixture(index)) }
        try a.turnOn()
        try a.sync()
        _ = try server.psql(url, "DELETE FROM scrollback.key_check")
        let ops = try server.psql(url, "SELECT count(*) FROM scrollback.op")
        // A new machine with a key of its own: the server holds a history it does not open.
        let other = try SyncKey.generate()
        let probe = try SyncEngine.probe(conninfo: url, key: other)
        #expect(probe.hasHistory && probe.keyOpens == false)
        #expect(try SyncEngine.probe(conninfo: url, key: nil).hasHistory)
        #expect(throws: SyncError.self) { try SyncEngine.prepareServer(conninfo: url, key: other) }
        #expect(try server.psql(url, "SELECT count(*) FROM scrollback.key_check").hasPrefix("0"))
        #expect(try server.psql(url, "SELECT count(*) FROM scrollback.op") == ops)
        // The history's own key writes the check again (a sync of a machine that has it),
        // and sync goes on.
        #expect(try SyncEngine.probe(conninfo: url, key: key).keyOpens == true)
        _ = try a.store.conversations.rename(id: try a.id("Conversation 0"), to: "After the check was lost")
        #expect(try a.sync().sent == 1)
        #expect(try server.psql(url, "SELECT count(*) FROM scrollback.key_check").hasPrefix("1"))
        let b = try scene.machine("b", prepare: false)
        try b.turnOn()
        #expect(try b.sync().received > 0)
        #expect(try a.export() == b.export())
    }

    @Test("a copied database syncing as the same machine: nothing of the clashing batch is sent, both told what to do")
    func copiedDatabase() throws {
        let scene = try SyncScene()
        let server = scene.server
        let url = scene.url
        let folder = scene.folder
        let key = scene.key
        let a = try scene.machine("a")
        for index in 0..<2 { _ = try a.store.upsert(syncFixture(index)) }
        try a.turnOn()
        try a.sync()
        // The file copied, with its machine id.
        try FileManager.default.copyItem(atPath: a.path, toPath: folder.file("copy.sqlite"))
        if FileManager.default.fileExists(atPath: a.path + "-wal") {
            try FileManager.default.copyItem(atPath: a.path + "-wal", toPath: folder.file("copy.sqlite-wal"))
        }
        let copy = try Store.open(path: folder.file("copy.sqlite"))
        _ = try a.store.conversations.rename(id: try a.id("Conversation 0"), to: "from A")
        _ = try copy.conversations.rename(
            id: try #require(try copy.conversations.page(sort: .title, filter: .none, at: .first, limit: 5).items.last?.id), to: "from the copy")
        _ = try copy.conversations.setPinned(id: try #require(try copy.conversations.page(sort: .title, filter: .none, at: .first, limit: 5).items.first?.id), true)
        try a.sync()
        let before = try server.psql(url, "SELECT count(*) FROM scrollback.op")
        #expect { try SyncEngine(store: copy, conninfo: url, key: key).sync() } throws: { error in
            guard case SyncError.machineClash(let message) = error else { return false }
            return message.contains("sync off --force") && message.contains("nothing of this batch was sent")
        }
        #expect(try server.psql(url, "SELECT count(*) FROM scrollback.op") == before)
        #expect(try copy.localSyncState().pending == 2)
        // A large batch (sent by COPY) clashes the same way: nothing of it is sent.
        for index in 0..<300 {
            _ = try copy.conversations.create(NewConversation(title: "Copy \(index)", createdAt: Timestamp(milliseconds: Int64(index))))
        }
        #expect(try copy.localSyncState().pending >= SyncEngine.copyThreshold)
        #expect { try SyncEngine(store: copy, conninfo: url, key: key).sync() } throws: { error in
            guard case SyncError.machineClash = error else { return false }
            return true
        }
        #expect(try server.psql(url, "SELECT count(*) FROM scrollback.op") == before)
        // A large batch sent before (the server committed, the kill came before it was marked
        // sent) goes again without a clash: the same ops are there.
        let fresh = try scene.machine("fresh")
        for index in 0..<300 {
            _ = try fresh.store.conversations.create(NewConversation(title: "Fresh \(index)", createdAt: Timestamp(milliseconds: Int64(index))))
        }
        try fresh.turnOn()
        // The outbox as it was before the sync, put back after it: as if the sync had been
        // killed after the server's commit.
        func sqlite(_ sql: String) throws {
            let shell = try runSQLiteShell(fresh.path, sql)
            #expect(shell.status == 0, "\(shell.error)")
        }
        try sqlite("CREATE TABLE saved AS SELECT * FROM sync_outbox")
        #expect(try fresh.sync().sent == 300)
        try sqlite("INSERT INTO sync_outbox SELECT * FROM saved; DROP TABLE saved; DELETE FROM settings WHERE key = 'sync.sent_through'")
        #expect(try fresh.store.localSyncState().pending == 300)
        #expect(try fresh.sync().sent == 300)
        #expect(try fresh.store.localSyncState().pending == 0)
        #expect(try server.psql(url, "SELECT count(*) FROM scrollback.op WHERE machine_id = '\(fresh.machine)'").hasPrefix("300"))
    }

    @Test("a gap in a machine's ops on the server is said, with what came before it applied; a server that lost this machine's ops is said before anything is sent")
    func gapsAndResets() throws {
        let scene = try SyncScene()
        let server = scene.server
        let url = scene.url
        let a = try scene.machine("a")
        let b = try scene.machine("b")
        try a.turnOn()
        try b.turnOn()
        for index in 0..<3 { _ = try a.store.conversations.create(NewConversation(title: "Gap \(index)", createdAt: Timestamp(milliseconds: Int64(index)))) }
        try a.sync()
        _ = try server.psql(url, "DELETE FROM scrollback.op WHERE seq = 2")
        #expect { try b.sync() } throws: { "\($0)".contains("lacks changes of machine \(a.machine) after its change 1") }
        #expect(try b.titles() == ["Gap 0"])
        // The server reset: A notices it lacks A's own changes before sending more.
        _ = try server.psql(url, "DELETE FROM scrollback.op")
        _ = try a.store.conversations.create(NewConversation(title: "After the reset", createdAt: Timestamp(milliseconds: 9)))
        #expect { try a.sync() } throws: { error in
            guard case SyncError.serverLost(_, let held, let sent) = error else { return false }
            return held == 0 && sent == 3
        }
        #expect(try a.store.localSyncState().pending == 1)
    }

    @Test("a damaged op on the server: what its machine sent before it is applied, and the other machines' changes; the rest of its machine waits; the line says what to do")
    func damagedOp() throws {
        let scene = try SyncScene()
        let server = scene.server
        let url = scene.url
        let a = try scene.machine("a")
        let c = try scene.machine("c")
        let b = try scene.machine("b")
        for index in 0..<30 { _ = try a.store.upsert(syncFixture(index)) }
        _ = try c.store.upsert(syncFixture(100, source: "claude"))
        try a.turnOn()
        try c.turnOn()
        try b.turnOn()
        try a.sync()
        try c.sync()
        let sentByC = try #require(Int64(try server.psql(url, "SELECT count(*) FROM scrollback.op WHERE machine_id = '\(c.machine)'").prefix { $0.isNumber }))
        _ = try server.psql(url, "UPDATE scrollback.op SET payload = '\\x00' WHERE machine_id = '\(a.machine)' AND seq = 77")
        // Small reads, one ahead of what is applied: the bad op is read while the pages
        // before it wait to be applied, and they are applied all the same.
        for _ in 0..<2 {
            #expect { try b.sync(batch: 5) } throws: { error in
                guard case SyncError.damagedOp(let message) = error else { return false }
                return message == "op 77 of machine \(a.machine) does not open with this key"
                    && "\(error)".contains("restore the server's database from a backup")
            }
            let cursors = try b.store.syncCursors()
            #expect(cursors[a.machine] == 76 && cursors[c.machine] == sentByC, "\(cursors)")
        }
        #expect(try b.titles().contains("Conversation 100"))
        // Status counts what waits of registered machines only, as the pull reads them.
        let engine = try SyncEngine(store: b.store, conninfo: url, key: scene.key)
        let before = try engine.serverState().toReceive
        _ = try server.psql(url, "INSERT INTO scrollback.op VALUES ('\(String(repeating: "d", count: 32))', 1, 'stray-op', 'x', 1, 0, '\\x00')")
        #expect(try engine.serverState().toReceive == before)
        // libpq's words without the server's severity.
        #expect(PostgresConnection.firstLine("FATAL:  terminating connection due to administrator command\nmore") == "terminating connection due to administrator command")
        // Also where libpq puts it after its own words (a role that does not exist).
        #expect(
            PostgresConnection.firstLine("connection to server on socket \"/tmp/.s.PGSQL.5432\" failed: FATAL:  role \"root\" does not exist")
                == "connection to server on socket \"/tmp/.s.PGSQL.5432\" failed: role \"root\" does not exist")
    }

    @Test("check after a catch-up cut short: the branches still to come are said as such, with `scrollback sync` as the first advice")
    func checkAfterCutCatchUp() throws {
        let scene = try SyncScene()
        let a = try scene.machine("a")
        let b = try scene.machine("b")
        for index in 0..<2 { _ = try a.store.upsert(syncFixture(index)) }
        try a.turnOn()
        try b.turnOn()
        let outbox = try a.store.outgoing(limit: 100)
        try a.sync()
        // What a cut catch-up leaves: A's ops up to the first message of a conversation,
        // which has its first message and not yet its branch.
        let conversations = try a.store.conversations.page(sort: .title, filter: .none, at: .first, limit: 10).items
        let message = try #require(try a.store.messages.all(conversationID: conversations[0].id).first)
        let cut = try #require(outbox.firstIndex { $0.entity == message.publicID })
        let ops = outbox[...cut].map {
            IncomingOp(machine: a.machine, seq: $0.seq, entity: $0.entity, clock: $0.clock, plaintext: $0.plaintext)
        }
        _ = try b.store.apply(ops, from: a.machine, through: try #require(ops.last?.seq))
        let parked = try b.store.localSyncState().parked
        let runner = try BinaryRunner()
        let checked = try runner.run(["--db", b.path, "check"], withDatabase: false)
        #expect(checked.status == 1)
        let problems = checked.output.split(separator: "\n").filter { $0.hasPrefix("problem: ") }
        #expect(problems.count == 2 && problems.allSatisfy { $0.contains("branches: conversation \(conversations[0].publicID)") })
        #expect(problems.allSatisfy { $0.hasSuffix("(if a sync did not finish, run `scrollback sync` first)") })
        let waiting = parked > 0 ? "\(parked) change(s) from other machines wait for what they build on" : "the first one never completed"
        #expect(
            checked.error == "scrollback: 2 problem(s) in \(b.path), all in branches, and a sync here is not finished (\(waiting)): run `scrollback sync` first, then `scrollback check` again; if they remain, back it up (cp) and run `scrollback check --repair`\n")
        _ = try b.sync()
        let after = try runner.run(["--db", b.path, "check"], withDatabase: false)
        #expect(after.status == 0 && after.output.split(separator: "\n").contains { $0.hasPrefix("ok: ") } && !after.output.contains("problem"), "\(after.output)\(after.error)")
        #expect(try a.export() == b.export())
    }

    @Test("a column of the server's ops changed to another type: the pull names it and applies nothing; status counts what waits, whatever numbers a hostile row bears")
    func changedColumnAndHostileNumbers() throws {
        let scene = try SyncScene()
        let server = scene.server
        let url = scene.url
        let a = try scene.machine("a")
        let b = try scene.machine("b")
        for index in 0..<3 { _ = try a.store.upsert(syncFixture(index)) }
        try a.turnOn()
        try b.turnOn()
        try a.sync()
        let engine = try SyncEngine(store: b.store, conninfo: url, key: scene.key)
        // 3 conversations, 9 messages and 3 branches wait; B is not counted before it syncs.
        #expect(try engine.serverState() == ServerState(machines: 1, toReceive: 15))
        _ = try server.psql(url, "ALTER TABLE scrollback.op ALTER COLUMN clock_wall TYPE numeric")
        #expect(throws: SyncError.changedColumn(name: "clock_wall", type: "bigint")) { try b.sync() }
        #expect(try b.titles().isEmpty)
        #expect(try b.store.syncCursors().values.allSatisfy { $0 == 0 })
        _ = try server.psql(url, "ALTER TABLE scrollback.op ALTER COLUMN clock_wall TYPE bigint")
        // Two machines whose rows claim numbers near the 64-bit limit: their sum once trapped.
        for (machine, seq) in [("f" + String(repeating: "0", count: 31), Int64.max), ("e" + String(repeating: "0", count: 31), Int64.max - 1)] {
            _ = try server.psql(
                url,
                """
                INSERT INTO scrollback.machine (machine_id) VALUES ('\(machine)');
                INSERT INTO scrollback.op VALUES ('\(machine)', \(seq), '\(machine)-op', 'x', 1, 0, '\\x00');
                """)
        }
        #expect(try engine.serverState() == ServerState(machines: 4, toReceive: 17))
        // Their rows come after a gap: what A sent is applied, and the gap said.
        #expect { try b.sync() } throws: { error in
            guard case SyncError.gap = error else { return false }
            return true
        }
        #expect(try b.titles().count == 3)
        #expect(try engine.serverState() == ServerState(machines: 4, toReceive: 2))
    }
}

@Suite("Sync when the server is newer or the disk fills", .serialized)
struct SyncLimitsTests {
    @Test("a server schema whose version row was deleted: sync and init both say so and what to do, and change nothing")
    func lostSchemaVersion() throws {
        let scene = try SyncScene()
        let server = scene.server
        let url = scene.url
        let key = scene.key
        let a = try scene.machine("a")
        for index in 0..<2 { _ = try a.store.upsert(syncFixture(index)) }
        try a.turnOn()
        try a.sync()
        _ = try server.psql(url, "DELETE FROM scrollback.schema_version")
        let ops = try server.psql(url, "SELECT count(*) FROM scrollback.op")
        _ = try a.store.conversations.rename(id: try a.id("Conversation 0"), to: "Waiting")
        #expect(throws: SyncError.damagedServer) { try a.sync() }
        #expect(throws: SyncError.damagedServer) { try SyncEngine.prepareServer(conninfo: url, key: key) }
        #expect(SyncError.damagedServer.description.contains("INSERT INTO scrollback.schema_version VALUES (1)"))
        #expect(try server.psql(url, "SELECT count(*) FROM scrollback.op") == ops)
        #expect(try a.store.localSyncState().pending == 1)
        _ = try server.psql(url, "INSERT INTO scrollback.schema_version VALUES (1)")
        #expect(try a.sync().sent == 1)
    }

    @Test("a server schema newer than this program: refused before anything is written, with what to do")
    func newerServerSchema() throws {
        let scene = try SyncScene()
        let server = scene.server
        let url = scene.url
        let key = scene.key
        let a = try scene.machine("a")
        try a.turnOn()
        _ = try a.store.conversations.create(NewConversation(title: "Waits", createdAt: Timestamp(milliseconds: 1)))
        _ = try server.psql(url, "UPDATE scrollback.schema_version SET version = 99")
        #expect(throws: SyncError.newerServerSchema(found: 99, known: SyncEngine.serverSchemaVersion)) { try a.sync() }
        #expect(throws: SyncError.newerServerSchema(found: 99, known: SyncEngine.serverSchemaVersion)) {
            try SyncEngine.prepareServer(conninfo: url, key: key)
        }
        #expect(try server.psql(url, "SELECT count(*) FROM scrollback.op").hasPrefix("0"))
        #expect(try a.store.localSyncState().pending == 1)
        #expect(SyncError.newerServerSchema(found: 99, known: 1).description.contains("upgrade scrollback"))
    }

    @Test("the disk fills during a catch-up: what was applied is whole, check is clean, the next sync resumes and converges")
    func diskFull() throws {
        guard geteuid() == 0 else { return }
        let scene = try SyncScene()
        let url = scene.url
        let key = scene.key
        let a = try scene.machine("a")
        _ = try DemoGenerator(seed: 8).fill(a.store, count: 1_500)
        try a.turnOn()
        try a.sync()
        let mountPoint = try TemporaryDirectory()
        guard ChildProcess.status("/bin/mount", ["-t", "tmpfs", "-o", "size=1m", "tmpfs", mountPoint.path]) == 0 else { return }
        defer { _ = ChildProcess.status("/bin/umount", [mountPoint.path]) }
        let store = try Store.open(path: mountPoint.file("b.sqlite"))
        _ = try store.turnSyncOn(machine: SyncEngine.newMachineID(), joining: true)
        #expect { try SyncEngine(store: store, conninfo: url, key: key).sync() } throws: { error in
            guard case StorageError.diskFull = error else { return false }
            return true
        }
        #expect(try store.check().problems.isEmpty)
        let partial = try store.conversations.count()
        #expect(partial < 1_500)
        #expect(ChildProcess.status("/bin/mount", ["-o", "remount,size=64m", mountPoint.path]) == 0)
        _ = try SyncEngine(store: store, conninfo: url, key: key).sync()
        #expect(try store.conversations.count() == 1_500)
        #expect(try store.check().problems.isEmpty)
        let exporter = Exporter(store: store)
        var lines: [String] = []
        try exporter.forEachConversation { lines.append(try exporter.render($0, as: .jsonl)) }
        #expect(lines.joined(separator: "\n") == (try a.export()))
    }
}
