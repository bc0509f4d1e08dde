import Foundation
import ScrollbackModel
import TestSupport
import Testing

@Suite("attachment list and get, delete freeing files, through the binary")
struct AttachmentCommandTests {
    /// Two conversations: "Plots" with a PNG (its name hostile: an OSC title sequence and a
    /// bell), a recording and a file the export lacks; "Again" with the same PNG.
    static let conversations = """
        [{"id": "p1", "title": "Plots", "create_time": 1767261600, "update_time": 1767261700, "current_node": "a1",
          "mapping": {
            "u1": {"id": "u1", "parent": null, "children": ["a1"], "message": {"id": "u1", "author": {"role": "user"}, "create_time": 1767261600,
              "content": {"content_type": "multimodal_text", "parts": [
                {"content_type": "image_asset_pointer", "asset_pointer": "file-service://file-Plot1"},
                {"content_type": "image_asset_pointer", "asset_pointer": "file-service://file-Gone2"},
                "Explain this plot"]},
              "metadata": {"attachments": [{"id": "file-Plot1", "name": "\\u001b]0;pwned\\u0007plot.png", "mime_type": "image/png"}]}}},
            "a1": {"id": "a1", "parent": "u1", "children": [], "message": {"id": "a1", "author": {"role": "assistant"}, "create_time": 1767261650,
              "content": {"content_type": "multimodal_text", "parts": [{"content_type": "audio_asset_pointer", "asset_pointer": "sediment://file_00bb22", "format": "wav"}, "It rises."]},
              "metadata": {"model_slug": "gpt-4o"}}}}},
         {"id": "p2", "title": "Again", "create_time": 1767261800, "update_time": 1767261900, "current_node": "u2",
          "mapping": {
            "u2": {"id": "u2", "parent": null, "children": [], "message": {"id": "u2", "author": {"role": "user"}, "create_time": 1767261800,
              "content": {"content_type": "multimodal_text", "parts": [{"content_type": "image_asset_pointer", "asset_pointer": "file-service://file-Copy3"}, "same one"]},
              "metadata": {}}}}}]
        """

    struct Scene {
        let runner: BinaryRunner
        let png: [UInt8]
        let wav: [UInt8]
        let plots: String
        let again: String
    }

    static func scene() throws -> Scene {
        let runner = try BinaryRunner()
        let png = try TestFiles.image("png", width: 320, height: 200, in: runner.folder)
        let wav = TestFiles.bytes(1_500_000, seed: 5)
        let zip = try TestFiles.zip(
            [
                "conversations.json": Array(conversations.utf8), "file-Plot1-plot.png": png,
                "user-x/file_00bb22-1c2d3e4f-aaaa-bbbb-cccc-ddddeeeeffff.wav": wav, "file-Copy3-plot.png": png,
            ], in: runner.folder)
        let imported = try runner.run(["import", zip, "--quiet"])
        #expect(imported.status == 0, "\(imported.error)")
        let listed = try runner.json(["list"])
        let rows = (listed["conversations"] as? [[String: Any]]) ?? []
        let id = { (title: String) in (rows.first { $0["title"] as? String == title }?["id"] as? String) ?? "" }
        return Scene(runner: runner, png: png, wav: wav, plots: id("Plots"), again: id("Again"))
    }

    @Test("list: each attachment's message, hash, name, pixels, type and size, the missing one said with what to do; --json the same facts")
    func list() throws {
        let scene = try Self.scene()
        let text = try scene.runner.run(["attachment", "list", String(scene.plots.prefix(8))])
        #expect(text.status == 0, "\(text.error)")
        let lines = text.output.split(separator: "\n").map(String.init)
        #expect(lines.first == "MSG  SHA-256       ATTACHMENT", "\(lines)")
        #expect(lines.count == 4, "\(lines)")
        #expect(lines[1].hasPrefix("#1   ") && lines[1].hasSuffix("plot.png  320×200 PNG  \(Self.pngSize(scene.png))"), "\(lines[1])")
        #expect(!lines[1].contains("\u{1B}") && !lines[1].contains("\u{07}"))
        #expect(lines[2].hasPrefix("#1   –") && lines[2].contains("▣ file-Gone2  file  not here: the export did not hold it"), "\(lines[2])")
        #expect(lines[3].hasPrefix("#2   ") && lines[3].contains("WAV audio  1.5 MB"), "\(lines[3])")
        #expect(text.error.contains("1 of 3 are not here"), "\(text.error)")

        let json = try scene.runner.json(["attachment", "list", scene.plots])
        let rows = try #require(json["attachments"] as? [[String: Any]])
        #expect(json["conversation"] as? String == scene.plots)
        #expect(rows.map { $0["type"] as? String } == ["PNG", "file", "WAV audio"])
        #expect(rows[0]["width"] as? Int == 320 && rows[0]["size"] as? Int == scene.png.count && (rows[0]["sha256"] as? String)?.count == 64)
        #expect(rows[0]["name"] as? String == "\u{1B}]0;pwned\u{07}plot.png", "JSON keeps the name exactly")
        #expect(rows[1]["sha256"] == nil && rows[1]["missing"] as? String == "the export did not hold it")
        #expect(rows[2]["messageNumber"] as? Int == 2 && rows[2]["mime"] as? String == "audio/wav")

        // On a terminal, nothing of the name acts on it, in text or JSON.
        let database = scene.runner.databasePath
        for command in ["attachment list \(scene.plots)", "attachment list \(scene.plots) --json"] {
            let shown = try BinaryRunner.shell("script -q -e -c \"\\\"$0\\\" --db \(database) \(command)\" /dev/null")
            #expect(shown.status == 0)
            let bytes = Array(shown.output)
            #expect(!bytes.contains(0x07) && !String(decoding: bytes, as: UTF8.self).contains("\u{1B}]0;"), "\(command)")
            #expect(String(decoding: bytes, as: UTF8.self).contains("plot.png"))
        }
        // show says them where they are, in text and JSON.
        let shown = try scene.runner.run(["show", scene.plots])
        #expect(shown.output.contains("Explain this plot\n▣ ") && shown.output.contains("plot.png  320×200 PNG"), "\(shown.output)")
        let showJSON = try scene.runner.json(["show", scene.plots])
        let messages = try #require(showJSON["messages"] as? [[String: Any]])
        #expect((messages[0]["attachments"] as? [[String: Any]])?.map { $0["type"] as? String } == ["PNG", "file"])
        #expect((messages[0]["attachments"] as? [[String: Any]])?.first?["message"] == nil)
        let none = try scene.runner.run(["attachment", "list", "ffffffff"])
        #expect(none.status != 0 && none.error.contains("no conversation with id"), "\(none.error)")
    }

    static func pngSize(_ bytes: [UInt8]) -> String {
        bytes.count < 1000 ? "\(bytes.count) B" : String(format: bytes.count < 9950 ? "%.1f kB" : "%.0f kB", Double(bytes.count) / 1000)
    }

    @Test("get: the bytes exactly, by a prefix of the hash; never over a file without --force; to a pipe with --out -, refused on a terminal; bad hashes said")
    func get() throws {
        let scene = try Self.scene()
        let runner = scene.runner
        let json = try runner.json(["attachment", "list", scene.plots])
        let rows = try #require(json["attachments"] as? [[String: Any]])
        let pngHash = try #require(rows[0]["sha256"] as? String)
        let wavHash = try #require(rows[2]["sha256"] as? String)
        let out = runner.folder.file("out.png")
        let got = try runner.run(["attachment", "get", String(pngHash.prefix(8)), "--out", out])
        #expect(got.status == 0 && got.error.contains("Wrote"), "\(got.error)")
        #expect(FileManager.default.contents(atPath: out).map(Array.init) == scene.png)
        // Again: the file is there, and stays as it is.
        try Data("mine".utf8).write(to: URL(fileURLWithPath: out))
        let again = try runner.run(["attachment", "get", pngHash, "--out", out])
        #expect(again.status != 0 && again.error.contains("exists; add --force"), "\(again.error)")
        #expect(FileManager.default.contents(atPath: out) == Data("mine".utf8))
        let forced = try runner.run(["attachment", "get", pngHash.uppercased(), "--out", out, "--force"])
        #expect(forced.status == 0 && FileManager.default.contents(atPath: out).map(Array.init) == scene.png, "\(forced.error)")
        // A pipe, in pieces: 1.5 MB exactly.
        let piped = try BinaryRunner.shell("\"$0\" --db \(runner.databasePath) attachment get \(wavHash.prefix(10)) --out - | sha256sum")
        #expect(piped.status == 0 && String(decoding: piped.output, as: UTF8.self).hasPrefix(wavHash), "\(piped.error)")
        let terminal = try BinaryRunner.shell("script -q -e -c \"\\\"$0\\\" --db \(runner.databasePath) attachment get \(wavHash) --out -\" /dev/null")
        #expect(terminal.status == 2 && String(decoding: terminal.output, as: UTF8.self).contains("refusing to write a file's bytes to the terminal"))
        #expect(terminal.output.count < 1000)
        // Bad hashes and arguments, each one line and a status.
        let short = try runner.run(["attachment", "get", "abc", "--out", out])
        #expect(short.status == 2 && short.error.contains("at least 6"), "\(short.error)")
        let unknown = try runner.run(["attachment", "get", "000000", "--out", runner.folder.file("x")])
        #expect(unknown.status == 1 && unknown.error.contains("no stored attachment"), "\(unknown.error)")
        #expect(!FileManager.default.fileExists(atPath: runner.folder.file("x")))
        let noOut = try runner.run(["attachment", "get", pngHash])
        #expect(noOut.status == 2 && noOut.error.contains("needs --out"), "\(noOut.error)")
        let folder = try runner.run(["attachment", "get", pngHash, "--out", runner.folder.path])
        #expect(folder.status != 0 && folder.error.contains("is a folder"), "\(folder.error)")
        let full = try runner.run(["attachment", "get", wavHash, "--out", "/dev/full"])
        #expect(full.status != 0, "a device is refused")
        let database = try runner.run(["attachment", "get", wavHash, "--out", runner.databasePath, "--force"])
        #expect(database.status != 0 && database.error.contains("database"), "\(database.error)")
        #expect(try runner.run(["check"]).status == 0)
        // Damaged bytes: the file is not left behind, the line says what to do.
        let sql = "UPDATE attachment_chunk SET data = zeroblob(length(data)) WHERE content_id = (SELECT id FROM attachment_content WHERE sha256 = '\(wavHash)') AND idx = 1"
        #expect(try ChildProcess.run("/usr/bin/sqlite3", [runner.databasePath, sql]).ending.status == 0)
        let damaged = try runner.run(["attachment", "get", wavHash, "--out", runner.folder.file("bad.wav")])
        #expect(damaged.status != 0 && damaged.error.contains("damaged"), "\(damaged.error)")
        #expect(!FileManager.default.fileExists(atPath: runner.folder.file("bad.wav")))
        #expect(try runner.run(["check"]).status != 0)
    }

    @Test("delete frees the files only the deleted conversations used, and says so; a file another uses stays")
    func deleteFrees() throws {
        let scene = try Self.scene()
        let runner = scene.runner
        let before = try runner.json(["stats"])
        #expect(before["attachmentFiles"] as? Int == 2 && before["attachments"] as? Int == 4, "\(before)")
        let deleted = try runner.run(["delete", scene.plots, "--yes"])
        #expect(deleted.status == 0 && deleted.output.contains("Deleted 1 conversation and 1 attachment file no other conversation uses (1.5 MB)"), "\(deleted.output)")
        let after = try runner.json(["stats"])
        #expect(after["attachmentFiles"] as? Int == 1 && after["attachments"] as? Int == 1, "\(after)")
        #expect(try runner.run(["check"]).status == 0)
        let left = try runner.json(["attachment", "list", scene.again])
        let hash = try #require((left["attachments"] as? [[String: Any]])?.first?["sha256"] as? String)
        let out = runner.folder.file("still.png")
        #expect(try runner.run(["attachment", "get", hash, "--out", out]).status == 0)
        #expect(FileManager.default.contents(atPath: out).map(Array.init) == scene.png)
    }

    static func sql(_ database: String, _ statement: String) throws -> String {
        let outcome = try ChildProcess.run("/usr/bin/sqlite3", [database, statement])
        #expect(outcome.ending.status == 0, "\(outcome.errorText)")
        return outcome.outputText
    }

    @Test("a damaged database: a hash holding escapes stays inert; sizes out of range are problems, not traps; check and get agree on a chunk's shape")
    func damage() throws {
        let scene = try Self.scene()
        let runner = scene.runner
        let database = runner.databasePath
        let copy = runner.folder.file("escape.sqlite")
        try FileManager.default.copyItem(atPath: database, toPath: copy)
        _ = try Self.sql(copy, "UPDATE attachment_content SET sha256 = char(27) || ']0;PWN' || char(7) || char(27) || '[2J' || substr(sha256, 1, 52)")
        let shown = try BinaryRunner.shell("script -q -e -c \"\\\"$0\\\" --db \(copy) attachment list \(scene.plots)\" /dev/null")
        #expect(!Array(shown.output).contains(0x07) && !Array(shown.output).contains(0x1B), "\(String(decoding: shown.output, as: UTF8.self))")

        for (column, value) in [("chunk_size", "9223372036854775807"), ("size", "9223372036854775807"), ("chunk_size", "1")] {
            let broken = runner.folder.file("broken-\(column)-\(value).sqlite")
            try FileManager.default.copyItem(atPath: database, toPath: broken)
            _ = try Self.sql(broken, "UPDATE attachment_content SET \(column) = \(value) WHERE size > 100000")
            let check = try runner.run(["--db", broken, "check"], withDatabase: false)
            #expect(check.status == 1 && check.output.contains("attachment "), "\(column)=\(value): \(check.status) \(check.output) \(check.error)")
            #expect(try runner.run(["--db", broken, "stats", "--json"], withDatabase: false).status == 0)
            let hash = try Self.sql(broken, "SELECT sha256 FROM attachment_content WHERE size NOT BETWEEN 1 AND 100000 OR chunk_size <> 1048576").trimmingCharacters(in: .whitespacesAndNewlines)
            let get = try runner.run(["--db", broken, "attachment", "get", hash, "--out", runner.folder.file("g-\(column)-\(value)")], withDatabase: false)
            #expect(get.status == 1 && get.error.contains("damaged"), "\(column)=\(value): \(get.error)")
        }
        // A chunk's index moved: both refuse it.
        let moved = runner.folder.file("moved.sqlite")
        try FileManager.default.copyItem(atPath: database, toPath: moved)
        _ = try Self.sql(moved, "UPDATE attachment_chunk SET idx = 7 WHERE idx = 1")
        #expect(try runner.run(["--db", moved, "check"], withDatabase: false).status == 1)
        let wav = try Self.sql(moved, "SELECT sha256 FROM attachment_content WHERE size > 100000").trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try runner.run(["--db", moved, "attachment", "get", wav, "--out", runner.folder.file("m")], withDatabase: false).status == 1)
        // Words of get: its own name, a full-width digit is no hex digit, an empty --out.
        let symlink = runner.folder.file("link")
        try FileManager.default.createSymbolicLink(atPath: symlink, withDestinationPath: runner.folder.file("nowhere"))
        let viaLink = try runner.run(["attachment", "get", wav, "--out", symlink])
        #expect(viaLink.error.contains("which attachment get does not follow"), "\(viaLink.error)")
        #expect(try runner.run(["attachment", "get", "ｅａ６９７ｄ", "--out", runner.folder.file("w")]).status == 2)
        #expect(try runner.run(["attachment", "get", wav, "--out", ""]).status == 2)
        let ontoDatabase = try BinaryRunner.shell("\"$0\" --db \(database) attachment get \(wav) --out - 1<> \(database)")
        #expect(ontoDatabase.status != 0 && ontoDatabase.error.contains("standard output is the database"), "\(ontoDatabase.error)")
        #expect(try runner.run(["check"]).status == 0)
    }

    @Test("damaged bytes: check --repair lets them go, their attachments missing and saying so; importing the export again brings them back exactly")
    func repairThenImport() throws {
        let scene = try Self.scene()
        let runner = scene.runner
        _ = try Self.sql(runner.databasePath, "UPDATE attachment_chunk SET data = zeroblob(length(data)) WHERE idx = 1")
        let check = try runner.run(["check"])
        #expect(check.status == 1 && check.output.contains("check --repair`, then import the export again"), "\(check.output)")
        let repair = try runner.run(["check", "--repair"])
        #expect(repair.status == 0, "\(repair.output) \(repair.error)")
        let listed = try runner.run(["attachment", "list", scene.plots])
        #expect(listed.output.contains("let go by check --repair"), "\(listed.output)")
        let zip = runner.folder.file("export.zip")
        let again = try runner.run(["import", zip])
        #expect(again.status == 0 && again.output.contains("1 updated"), "\(again.output)")
        let json = try runner.json(["attachment", "list", scene.plots])
        let hash = try #require((json["attachments"] as? [[String: Any]])?[2]["sha256"] as? String)
        let out = runner.folder.file("back.wav")
        #expect(try runner.run(["attachment", "get", hash, "--out", out]).status == 0)
        #expect(FileManager.default.contents(atPath: out).map(Array.init) == scene.wav)
        #expect(try runner.run(["check"]).status == 0)
    }

    @Test("an entry of the ZIP that cannot be read (a bad CRC) is said by the import, its conversation kept, the attachment missing with the reason")
    func unreadableEntry() throws {
        let runner = try BinaryRunner()
        let wav = TestFiles.bytes(200_000, seed: 9)
        let zip = try TestFiles.zip(
            ["conversations.json": Array(Self.conversations.utf8), "user-x/file_00bb22-1c2d3e4f-aaaa-bbbb-cccc-ddddeeeeffff.wav": wav],
            in: runner.folder)
        // One byte of the recording's compressed data changed: its CRC no longer matches.
        var bytes = try #require(FileManager.default.contents(atPath: zip))
        let name = Data("ddddeeeeffff.wav".utf8)
        let at = try #require(bytes.range(of: name)).upperBound + 5_000
        bytes[at] ^= 0xFF
        try bytes.write(to: URL(fileURLWithPath: zip))
        let imported = try runner.run(["import", zip])
        #expect(imported.status == 0 && imported.output.contains("1 attachment the export holds could not be read"), "\(imported.output)")
        #expect(imported.output.contains("not read: ") && imported.output.contains("could not be read from the export"), "\(imported.output)")
        let listed = try runner.run(["attachment", "list", String((try runner.json(["list"])["conversations"] as? [[String: Any]])?.first { $0["title"] as? String == "Plots" }?["id"] as? String ?? "")])
        #expect(listed.output.contains("not here: could not be read from the export"), "\(listed.output)")
        // The advice is for the files the import did not find (the plot, file-Gone2), not this one.
        #expect(listed.error.contains("2 of 3 are not here") || listed.error.contains("3 of 3 are not here"), "\(listed.error)")
        #expect(try runner.run(["check"]).status == 0)
    }

    @Test("search finds an attachment by its name, after titles and messages, page by page; its hit is the message it is in")
    func searchByName() throws {
        let scene = try Self.scene()
        let runner = scene.runner
        let found = try runner.json(["search", "holiday"])
        #expect((found["hits"] as? [[String: Any]] ?? []).isEmpty, "\(found)")
        let wav = try runner.json(["search", "file_00bb22"])
        let hits = (wav["hits"] as? [[String: Any]]) ?? []
        #expect(hits.count == 1, "\(wav)")
        let text = try runner.run(["search", "plot.png"])
        #expect(text.status == 0 && text.output.contains("▣ ") && text.output.contains("plot.png"), "\(text.output) \(text.error)")
        // Both conversations hold a plot: two hits, one a page, the second from the token.
        let first = try runner.run(["search", "plot", "--limit", "1"])
        #expect(first.status == 0, "\(first.error)")
        let more = try #require(first.error.split(separator: "\n").first { $0.hasPrefix("more: ") }, "\(first.error)")
        let words = more.split(separator: " ").map(String.init)
        let token = try #require(words.firstIndex(of: "--after").map { words[$0 + 1] }, "\(more)")
        let second = try runner.run(["search", "plot", "--limit", "1", "--after", token])
        #expect(second.status == 0 && second.output.contains("plot"), "\(second.output) \(second.error)")
    }
}

extension AttachmentCommandTests {
    @Test("the disk fills while a ZIP with large images is imported: exit 1 saying so, no bytes kept that nothing uses, check clean; with room, every file")
    func diskFullDuringImport() throws {
        guard geteuid() == 0 else { return }
        let runner = try BinaryRunner()
        let mountPoint = try TemporaryDirectory()
        guard ChildProcess.status("/bin/mount", ["-t", "tmpfs", "-o", "size=6m", "tmpfs", mountPoint.path]) == 0 else { return }
        defer { _ = ChildProcess.status("/bin/umount", [mountPoint.path]) }
        let database = mountPoint.file("h.sqlite")
        var files: [String: [UInt8]] = [:]
        var conversations: [String] = []
        for index in 0..<10 {
            files["file-Big\(index)-photo\(index).png"] = TestFiles.bytes(1_000_000, seed: UInt64(100 + index))
            conversations.append(
                """
                {"id": "b\(index)", "title": "Big \(index)", "create_time": \(1767261600 + index * 60), "update_time": \(1767261600 + index * 60), "current_node": "u",
                 "mapping": {"u": {"id": "u", "parent": null, "children": [], "message": {"id": "u", "author": {"role": "user"}, "create_time": \(1767261600 + index * 60),
                   "content": {"content_type": "multimodal_text", "parts": [{"content_type": "image_asset_pointer", "asset_pointer": "file-service://file-Big\(index)"}, "look"]},
                   "metadata": {"attachments": [{"id": "file-Big\(index)", "name": "photo\(index).png", "mime_type": "image/png"}]}}}}}
                """)
        }
        files["conversations.json"] = Array(("[" + conversations.joined(separator: ",") + "]").utf8)
        let zip = try TestFiles.zip(files, in: runner.folder)
        let full = try runner.run(["--db", database, "import", "--quiet", zip], withDatabase: false)
        #expect(full.status == 1, "\(full.output) \(full.error)")
        #expect(full.error.contains("full"), "\(full.error)")
        let check = try runner.run(["--db", database, "check"], withDatabase: false)
        #expect(check.status == 0, "\(check.output) \(check.error)")
        let stats = try JSONSerialization.jsonObject(with: Data(try runner.run(["--db", database, "stats", "--json"], withDatabase: false).output.utf8)) as? [String: Any]
        #expect(stats?["unusedAttachmentFiles"] as? Int == 0, "\(String(describing: stats))")
        // Every conversation kept has its file whole.
        #expect(stats?["missingAttachments"] as? Int == 0, "\(String(describing: stats))")
        #expect(ChildProcess.status("/bin/mount", ["-o", "remount,size=64m", mountPoint.path]) == 0)
        let again = try runner.run(["--db", database, "import", "--quiet", zip], withDatabase: false)
        #expect(again.status == 0, "\(again.error)")
        let after = try JSONSerialization.jsonObject(with: Data(try runner.run(["--db", database, "stats", "--json"], withDatabase: false).output.utf8)) as? [String: Any]
        #expect(after?["attachmentFiles"] as? Int == 10 && after?["missingAttachments"] as? Int == 0, "\(String(describing: after))")
        #expect(try runner.run(["--db", database, "check"], withDatabase: false).status == 0)
    }
}
