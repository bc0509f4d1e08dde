import Foundation
import ScrollbackImport
import ScrollbackModel
import ScrollbackStorage
import ScrollbackViewModels

/// The parts measured in a process of their own, for their peak memory.
@MainActor
enum Child {
    static func run(_ mode: String, database: String, file: String?) throws {
        defer { print("peak-kb \(Measure.ownPeakKilobytes())") }
        if mode == "import" {
            // The same code `scrollback import` runs, in a process of its own.
            guard let file else { throw BenchError("--child import needs --file") }
            let store = try Store.open(path: database)
            let summary = Importer(store: store).run(paths: [file], format: nil)
            guard summary.failed.isEmpty else { throw BenchError("import failed: \(summary.failed)") }
            return
        }
        if mode == "backup" {
            // The same code `scrollback backup` runs (its store opened as a reader's is).
            guard let file else { throw BenchError("--child backup needs --file (the copy's path)") }
            let store = try Store.open(path: database)
            let made = try store.backup(to: file, force: true)
            print("copy-ms \(made.copySeconds * 1000)")
            print("check-ms \(made.checkSeconds * 1000)")
            return
        }
        if mode == "agentsfloor" {
            guard let file else { throw BenchError("--child agentsfloor needs --file") }
            try AgentBench.floor(database: database, folder: file)
            return
        }
        if mode == "snapshotout" || mode == "snapshotin" {
            guard let file else { throw BenchError("--child \(mode) needs --file (the connection string)") }
            if mode == "snapshotout" { try SnapshotBench.upload(database: database, conninfo: file) } else {
                try SnapshotBench.catchUp(database: database, conninfo: file)
            }
            return
        }
        if mode == "catchup" {
            guard let file else { throw BenchError("--child catchup needs --file (the connection string)") }
            try SyncBench.catchUp(database: database, conninfo: file)
            return
        }
        let store = try Store.open(path: database, readOnly: true)
        let list = ConversationListViewModel(conversations: store.conversations, order: .updated)
        list.viewportHeight = 60
        try list.load()
        switch mode {
        case "open":
            _ = list.visibleRows
        case "walk":
            // From the first row to the last, a page at a time, and back.
            while list.selection < list.total - 1 { try list.pageDown() }
            while list.selection > 0 { try list.pageUp() }
        default:
            throw BenchError("unknown child mode \(mode)")
        }
    }
}
