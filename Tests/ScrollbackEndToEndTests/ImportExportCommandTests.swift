import Foundation
import Testing

import TestSupport

@Suite("import and export commands")
struct ImportExportCommandTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("ScrollbackImportTests/Fixtures").path

    @Test("import reports what it did; a bad file fails alone with one line; exit 1")
    func importCommand() throws {
        let runner = try BinaryRunner()
        let result = try runner.run(["import", Self.fixtures + "/chatgpt/conversations.json", Self.fixtures + "/claude/conversations.json"])
        #expect(result.status == 0, "\(result.error)")
        #expect(result.output.hasPrefix("Imported 4 new, 0 updated, 0 unchanged; skipped 3\n"))
        #expect(result.output.contains("record 4: no id"))
        #expect(result.error == "")  // no progress when standard error is not a terminal
        let again = try runner.run(["import", Self.fixtures + "/chatgpt/conversations.json", "--quiet"])
        #expect(again.output.hasPrefix("Imported 0 new, 0 updated, 2 unchanged"))

        let bad = runner.folder.file("bad.json")
        try "[{\"id\": ".write(toFile: bad, atomically: false, encoding: .utf8)
        let before = try runner.json(["stats"])["conversations"] as? Int
        let failed = try runner.run(["import", bad, Self.fixtures + "/llm/llm-0.36.db"])
        #expect(failed.status == 1)
        #expect(failed.output.hasPrefix("Imported 2 new, 0 updated, 0 unchanged; 1 file failed"))
        #expect(failed.error == "scrollback: \(bad): truncated JSON: the file ends inside the array (byte 8)\n")
        #expect(try runner.json(["stats"])["conversations"] as? Int == (before ?? 0) + 2)
        let usage = try runner.run(["import", bad, "--format", "word"])
        #expect(usage.status == 2)
        let readOnly = try runner.run(["--readonly", "import", Self.fixtures + "/claude/conversations.json"])
        #expect(readOnly.status == 1 && readOnly.error.contains("read-only"))
    }

    @Test("export to standard output, a file, or a folder; JSON Lines import back")
    func exportCommand() throws {
        let runner = try BinaryRunner()
        _ = try runner.run(["import", Self.fixtures + "/chatgpt/conversations.json"])
        let markdown = try runner.run(["export"])
        #expect(markdown.status == 0)
        #expect(markdown.output.hasPrefix("# Postgres indexing\n"))
        #expect(markdown.output.contains("\n---\n\n# Trip ideas\n"))
        let json = try runner.run(["export", "--format", "json"])
        let parsed = try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any]
        let records = parsed?["conversations"] as? [[String: Any]] ?? []
        #expect(records.map { $0["title"] as? String } == ["Postgres indexing", "Trip ideas"])
        // The whole tree: the regenerated answer too, under the question it answers, and the
        // reasoning the person did not see, with its kind.
        let messages = records.first?["messages"] as? [[String: Any]] ?? []
        #expect(messages.count == 8)
        #expect(messages.map { $0["kind"] as? String ?? "?" }.filter { $0 != "text" } == ["reasoning"])
        #expect(messages[0]["parentID"] == nil && messages[1]["parentID"] as? String == messages[0]["id"] as? String)
        #expect(messages[2]["parentID"] as? String == messages[0]["id"] as? String)
        #expect(records.first?["currentLeafID"] as? String == messages.last?["id"] as? String)
        // Markdown: the current branch, and a note of the other one.
        #expect(!markdown.output.contains("\n\nFirst answer that was regenerated."))
        #expect(markdown.output.contains("\n---\n\n1 other branch (`scrollback show ") && markdown.output.contains(" --all-branches`):\n"))
        #expect(markdown.output.contains("- at message 2, assistant: First answer that was regenerated.\n"))

        let file = runner.folder.file("backup.jsonl")
        #expect(try runner.run(["export", "--format", "jsonl", "--out", file]).status == 0)
        let lines = try String(contentsOfFile: file, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 2)

        let folder = runner.folder.file("out")
        let many = try runner.run(["export", "--out-dir", folder])
        #expect(many.error == "Exported 2 conversations as Markdown, one file each, to \(folder).\n")
        let names = try FileManager.default.contentsOfDirectory(atPath: folder).sorted()
        #expect(names.count == 2 && names[0].hasPrefix("2026-01-01-") && names[0].hasSuffix("-postgres-indexing.md"))

        let other = try BinaryRunner()
        let back = try other.run(["import", file])
        #expect(back.output.hasPrefix("Imported 2 new"))
        #expect(try other.run(["export", "--format", "jsonl"]).output == String(contentsOfFile: file, encoding: .utf8))
        let missing = try runner.run(["export", "nope"])
        #expect(missing.status == 1)
    }
}
