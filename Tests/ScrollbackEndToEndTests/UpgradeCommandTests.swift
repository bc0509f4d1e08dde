import Foundation
import Testing

import ScrollbackModel
@testable import ScrollbackStorage
import TestSupport

/// A database of the previous release, met by the command line.
@Suite("Upgrading from the command line")
struct UpgradeCommandTests {
    static func makeVersion1(at path: String) throws {
        do {
            let old = try Store.open(path: path, migrator: Migrator(migrations: [Migrator.scrollback.migrations[0]]))
            try old.database.write {
                for index in 0..<30 {
                    try old.database.run(
                        "INSERT INTO conversation (public_id, title, source, created_at, updated_at) VALUES (?, ?, 'local', ?, ?)",
                        [.text(StableID.uuid("old", String(index))), .text("walrus \(index)"), .integer(Int64(index) * 1000),
                         .integer(Int64(index) * 1000)])
                    try old.database.run(
                        "INSERT INTO message (public_id, conversation_id, position, role, content, created_at) VALUES (?, ?, 0, 'user', ?, ?)",
                        [.text(StableID.uuid("old-m", String(index))), .integer(old.database.lastInsertRowID),
                         .text("鰻丼 and go number \(index)"), .integer(Int64(index) * 1000)])
                }
            }
        }
    }

    @Test("a read command on a schema-1 database backs it up, upgrades it, builds the index and answers")
    func searchUpgrades() throws {
        let runner = try BinaryRunner()
        try Self.makeVersion1(at: runner.databasePath)
        let search = try runner.run(["search", "--json", "鰻"])
        #expect(search.status == 0)
        #expect(search.error.contains("upgraded \(runner.databasePath) from schema 1 to \(Migrator.scrollback.latestVersion)"))
        let hits = try JSONSerialization.jsonObject(with: Data(search.output.utf8)) as? [String: Any]
        #expect((hits?["hits"] as? [Any])?.count == 30)
        #expect(runner.dataFiles().contains { $0.hasPrefix("history.sqlite.schema-1-") && $0.hasSuffix(".backup") })
        let store = try Store.open(path: runner.databasePath, readOnly: true)
        #expect(try store.searchBacklog() == 0)
        let check = try runner.run(["check"])
        #expect(check.status == 0, "\(check.output)\(check.error)")
        // Newest first by time: conversation 29's message first.
        let go = try runner.run(["search", "go"])
        #expect(go.output.split(separator: "\n").first?.contains("walrus 29") == true, "\(go.output)")
    }

    @Test("on a terminal, the upgrade says it is coming before it runs, and the index build shows its progress")
    func saysSoOnATerminal() throws {
        let folder = try TemporaryDirectory()
        let database = folder.file("old.sqlite")
        try Self.makeVersion1(at: database)
        let result = try BinaryRunner.shell("script -q -e -c \"\\\"$0\\\" --db \(database) search go\" /dev/null")
        let text = String(decoding: result.output, as: UTF8.self)
        #expect(result.status == 0, "\(text)")
        #expect(text.contains("upgrading \(database) from schema 1 to \(Migrator.scrollback.latestVersion), after a backup copy"), "\(text)")
        #expect(text.contains("building the search index"), "\(text)")
        #expect(text.contains("walrus 29"), "\(text)")
    }
}
