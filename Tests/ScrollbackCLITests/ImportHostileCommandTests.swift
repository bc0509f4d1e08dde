import Foundation
import Testing

import TestSupport

/// Attacks on `import` through the real binary: what reaches the terminal and the disk.
@Suite("import: hostile files through the binary")
struct ImportHostileCommandTests {
    static func jsonLine(id: String, title: String) -> String {
        let record: [String: Any] = [
            "format": "scrollback", "version": 1, "id": id, "title": title, "source": "local",
            "createdAt": "2026-01-01T00:00:00.000Z", "updatedAt": "2026-01-01T00:00:00.000Z", "pinned": false,
            "messages": [["id": id, "role": "user", "content": "needle", "createdAt": "2026-01-01T00:00:00.000Z"]],
        ]
        let data = (try? JSONSerialization.data(withJSONObject: record, options: [.sortedKeys])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }

    @Test("JSON Lines ids of escapes or ../ never reach list, search or the export folder's paths")
    func hostileIDs() throws {
        let runner = try BinaryRunner()
        let path = runner.folder.file("evil.jsonl")
        let lines = [
            Self.jsonLine(id: "\u{1B}[2J" + String(repeating: "A", count: 32), title: "escape"),
            Self.jsonLine(id: "/../../a" + String(repeating: "a", count: 28), title: "slash"),
        ]
        try Data(lines.joined(separator: "\n").utf8).write(to: URL(fileURLWithPath: path))
        let imported = try runner.run(["import", path])
        #expect(imported.status == 0, "\(imported.error)")
        #expect(imported.output.hasPrefix("imported 2 new"))
        let list = try runner.run(["list"])
        let search = try runner.run(["search", "needle"])
        for output in [list.output, search.output] {
            #expect(!output.contains("\u{1B}") && !output.contains("/.."), "\(output)")
        }
        let out = runner.folder.file("deep/er/out")
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        let export = try runner.run(["export", "--out-dir", out])
        #expect(export.status == 0, "\(export.error)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: out).count == 2)
        #expect(try FileManager.default.contentsOfDirectory(atPath: runner.folder.file("deep/er")) == ["out"])
    }

    @Test("--unzip-limit takes a size; anything else is a usage error")
    func unzipLimitOption() throws {
        let runner = try BinaryRunner()
        let bad = try runner.run(["import", ImportExportCommandTests.fixtures + "/zip/claude-export.zip", "--unzip-limit", "lots"])
        #expect(bad.status == 2)
        #expect(bad.error.hasPrefix("scrollback: --unzip-limit must be a size such as 500M or 8G, not 'lots'"))
        let good = try runner.run(["import", ImportExportCommandTests.fixtures + "/zip/claude-export.zip", "--unzip-limit", "1G"])
        #expect(good.status == 0, "\(good.error)")
        #expect(good.output.hasPrefix("imported 2 new"))
    }

    @Test("a FIFO is refused at once; skip reasons with escapes are shown sanitized")
    func fifoAndSkipReasons() throws {
        let runner = try BinaryRunner()
        let pipe = runner.folder.file("pipe.json")
        #expect(mkfifo(pipe, 0o600) == 0)
        let claude = runner.folder.file("conversations.json")
        let record: [String: Any] = ["uuid": "k1", "created_at": "\u{1B}]0;owned\u{7}2026", "chat_messages": [["sender": "human", "text": "hi"]]]
        try JSONSerialization.data(withJSONObject: [record]).write(to: URL(fileURLWithPath: claude))
        let result = try runner.run(["import", pipe, claude])
        #expect(result.status == 1)
        #expect(result.error == "scrollback: \(pipe): a FIFO (named pipe), not a file; save the export to a file and import that\n")
        #expect(result.output.contains("skipped: \(claude) record 1: created_at '"), "\(result.output)")
        #expect(!result.output.contains("\u{1B}") && !result.output.contains("\u{7}"))
    }
}
