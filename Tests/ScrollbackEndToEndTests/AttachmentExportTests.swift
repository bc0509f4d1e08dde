import Foundation
import ScrollbackModel
import TestSupport
import Testing

@Suite("attachments through export and import, through the binary")
struct AttachmentExportTests {
    /// Every stored file of a database: SHA-256 → bytes, read with `attachment get`.
    static func files(_ runner: BinaryRunner, database: String? = nil) throws -> [String: [UInt8]] {
        var found: [String: [UInt8]] = [:]
        let db = database ?? runner.databasePath
        let hashes = try ChildProcess.run("/usr/bin/sqlite3", [db, "SELECT sha256 FROM attachment_content ORDER BY sha256"]).outputText
        for hash in hashes.split(separator: "\n").map(String.init) {
            let out = runner.folder.file("got-\(hash)")
            let got = try runner.run(["--db", db, "attachment", "get", hash, "--out", out, "--force"], withDatabase: false)
            #expect(got.status == 0, "\(got.error)")
            found[hash] = FileManager.default.contents(atPath: out).map(Array.init)
        }
        return found
    }

    /// What a database holds of its attachments, each row as a line.
    static func rows(_ database: String) throws -> [String] {
        let sql = """
            SELECT c.source_id, m.position, a.position, a.name, coalesce(a.mime, ''), coalesce(a.size, ''), coalesce(a.width, ''),
                   coalesce(a.height, ''), coalesce(a.reference, ''), coalesce(s.sha256, '-'), coalesce(a.absence, '')
              FROM attachment a JOIN message m ON m.id = a.message_id JOIN conversation c ON c.id = m.conversation_id
              LEFT JOIN attachment_content s ON s.id = a.content_id ORDER BY 1, 2, 3
            """
        return try ChildProcess.run("/usr/bin/sqlite3", [database, sql]).outputText.split(separator: "\n").map(String.init)
    }

    @Test("JSON Lines, pieces inline and files in a folder: a round trip gives the same attachments and byte-identical files; each file written once")
    func roundTrip() throws {
        let scene = try AttachmentCommandTests.scene()
        let runner = scene.runner
        let before = try Self.files(runner)
        #expect(before.count == 2)
        let rows = try Self.rows(runner.databasePath)
        #expect(rows.count == 4)

        let backup = runner.folder.file("backup.jsonl")
        #expect(try runner.run(["export", "--format", "jsonl", "--out", backup]).status == 0)
        let lines = try String(contentsOfFile: backup, encoding: .utf8).split(separator: "\n")
        // Two files (the PNG shared by both conversations goes once; the WAV of 1.5 MB in two
        // pieces), then the conversations.
        #expect(lines.filter { $0.hasPrefix(#"{"format":"scrollback-file","#) }.count == 3)
        #expect(lines.count == 5)
        let copy = runner.folder.file("copy.sqlite")
        let imported = try runner.run(["--db", copy, "import", backup, "--quiet"], withDatabase: false)
        #expect(imported.status == 0 && !imported.output.contains("skipped"), "\(imported.output)")
        #expect(try Self.rows(copy) == rows)
        #expect(try Self.files(runner, database: copy) == before)
        #expect(try runner.run(["--db", copy, "check"], withDatabase: false).status == 0)
        // Again: nothing changes, no file stored twice.
        let again = try runner.run(["--db", copy, "import", backup], withDatabase: false)
        #expect(again.status == 0 && again.output.contains("2 unchanged"), "\(again.output)")
        #expect(try Self.files(runner, database: copy) == before)

        // Files of their own, named by hash, linked from the export's folder.
        let folder = runner.folder.file("out")
        let split = PathText.appending(to: folder, "split.jsonl")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let written = try runner.run(["export", "--format", "jsonl", "--out", split, "--attachments-dir", runner.folder.file("blobs")])
        #expect(written.status == 0, "\(written.error)")
        let text = try String(contentsOfFile: split, encoding: .utf8)
        #expect(!text.contains("scrollback-file") && text.contains(#""file":"../blobs/"#), "\(text.prefix(300))")
        for (hash, bytes) in before {
            #expect(FileManager.default.contents(atPath: runner.folder.file("blobs/\(hash)")).map(Array.init) == bytes)
        }
        let second = runner.folder.file("second.sqlite")
        #expect(try runner.run(["--db", second, "import", split, "--quiet"], withDatabase: false).status == 0)
        #expect(try Self.rows(second) == rows)
        #expect(try Self.files(runner, database: second) == before)
        // Without the folder: the attachments are there, their bytes missing, saying so.
        try FileManager.default.removeItem(atPath: runner.folder.file("blobs"))
        let third = runner.folder.file("third.sqlite")
        #expect(try runner.run(["--db", third, "import", split, "--quiet"], withDatabase: false).status == 0)
        let missing = try Self.rows(third)
        #expect(missing.count == 4 && missing.filter { $0.contains("|-|its bytes were not in the export") }.count == 3, "\(missing)")
        let usage = try runner.run(["export", "--format", "md", "--attachments-dir", runner.folder.file("x")])
        #expect(usage.status == 2 && usage.error.contains("--attachments-dir goes with --format jsonl"))
    }

    @Test("damaged, reordered, cut or lying pieces leave the file out, said line by line; the conversations stay, their files missing; check clean")
    func hostilePieces() throws {
        let scene = try AttachmentCommandTests.scene()
        let runner = scene.runner
        let backup = runner.folder.file("backup.jsonl")
        #expect(try runner.run(["export", "--format", "jsonl", "--out", backup]).status == 0)
        let lines = try String(contentsOfFile: backup, encoding: .utf8).split(separator: "\n").map(String.init)
        let pieces = lines.indices.filter { lines[$0].hasPrefix(#"{"format":"scrollback-file","#) }
        #expect(pieces.count == 3)
        func attempt(_ edited: [String], _ name: String) throws -> BinaryRunner.Result {
            let path = runner.folder.file("\(name).jsonl")
            try (edited.joined(separator: "\n") + "\n").write(toFile: path, atomically: false, encoding: .utf8)
            let db = runner.folder.file("\(name).sqlite")
            let result = try runner.run(["--db", db, "import", path], withDatabase: false)
            #expect(try runner.run(["--db", db, "check"], withDatabase: false).status == 0, "\(name): check")
            // What import says (its summary and skips are its output).
            return BinaryRunner.Result(status: result.status, output: result.output, error: result.output + result.error)
        }
        // The WAV's second piece with one byte changed: its hash fails.
        var damaged = lines
        let wavSecond = pieces[2]
        let data = try #require(damaged[wavSecond].range(of: #""data":""#))
        var characters = Array(damaged[wavSecond])
        let at = damaged[wavSecond].distance(from: damaged[wavSecond].startIndex, to: data.upperBound) + 10
        characters[at] = characters[at] == "A" ? "B" : "A"
        damaged[wavSecond] = String(characters)
        let hashed = try attempt(damaged, "damaged")
        #expect(hashed.error.contains("do not hash to the SHA-256"), "\(hashed.error)")
        #expect(hashed.error.contains("2 new"), "\(hashed.error)")
        // Its pieces swapped, one dropped, the file cut at the end, a stray base64, a lying size.
        var swapped = lines
        swapped.swapAt(pieces[1], pieces[2])
        #expect(try attempt(swapped, "swapped").error.contains("left out"))
        var dropped = lines
        dropped.remove(at: pieces[2])
        #expect(try attempt(dropped, "dropped").error.contains("ends after 1 of its 2 pieces"))
        var noBase64 = lines
        noBase64[pieces[0]] = noBase64[pieces[0]].replacingOccurrences(of: #""data":""#, with: #""data":"!!!!"#)
        #expect(try attempt(noBase64, "base64").error.contains("not base64"))
        var lying = lines
        lying[pieces[0]] = lying[pieces[0]].replacingOccurrences(of: #""size":"#, with: #""size":9"#)
        let lied = try attempt(lying, "lying")
        #expect(lied.error.contains("does not fit") || lied.error.contains("holds"), "\(lied.error)")
        var huge = lines
        huge[pieces[0]] = huge[pieces[0]].replacingOccurrences(of: #""size":"#, with: #""size":1e300,"x":"#)
        #expect(try attempt(huge, "huge").status == 0)
        // A record naming any file it likes, or a file not named by its hash: refused.
        for file in ["/etc/passwd", "../../etc/passwd", "blobs/0000"] {
            var pointing = lines
            let last = lines.count - 1
            pointing[last] = pointing[last].replacingOccurrences(of: #""name":"#, with: #""file":"\#(file)","name":"#)
            let result = try attempt(pointing, "pointing")
            #expect(result.error.contains("not a relative path ending in its sha256"), "\(file): \(result.error)")
        }
    }

    @Test("Markdown names each attachment; with --out (and --out-dir) it writes the files beside it and links them")
    func markdown() throws {
        let scene = try AttachmentCommandTests.scene()
        let runner = scene.runner
        let plain = try runner.run(["export", scene.plots])
        // A name's control characters are shown as pictures: printing the Markdown sets no title.
        #expect(!plain.output.contains("\u{1B}") && !plain.output.contains("\u{07}"), "\(plain.output)")
        #expect(plain.output.contains("▣ ␛\\]0;pwned␇plot.png (320×200 PNG,"), "\(plain.output)")
        #expect(plain.output.contains("plot.png (320×200 PNG, ") && plain.output.contains("▣ file-Gone2 (file, not here: the export did not hold it)"), "\(plain.output)")
        let out = runner.folder.file("plots.md")
        #expect(try runner.run(["export", scene.plots, "--out", out]).status == 0)
        let text = try String(contentsOfFile: out, encoding: .utf8)
        #expect(text.contains("](plots.files/"), "\(text)")
        let names = try FileManager.default.contentsOfDirectory(atPath: runner.folder.file("plots.files")).sorted()
        #expect(names.count == 2 && names.allSatisfy { !$0.hasPrefix(".") && !$0.contains("\u{1B}") }, "\(names)")
        let png = try #require(names.first { $0.hasSuffix("plot.png") })
        // The name is link text: its bracket escaped, its controls pictures.
        #expect(text.contains("![␛\\]0;pwned␇plot.png](plots.files/\(png))"), "\(text)")
        #expect(!text.contains("\u{1B}"))
        #expect(FileManager.default.contents(atPath: runner.folder.file("plots.files/\(png)")).map(Array.init) == scene.png)
        let dir = runner.folder.file("each")
        #expect(try runner.run(["export", "--out-dir", dir]).status == 0)
        let made = try FileManager.default.contentsOfDirectory(atPath: dir).sorted()
        #expect(made.filter { $0.hasSuffix(".md") }.count == 2 && made.filter { $0.hasSuffix(".files") }.count == 2, "\(made)")
    }

    @Test("kill -9 in the middle of an import with large attachments (a ZIP, then JSON Lines), and of a delete freeing them: check clean, no orphan bytes, all or nothing")
    func killNine() throws {
        let runner = try BinaryRunner()
        // Eight conversations, each with a recording of 6 MB: the import takes a while.
        var conversations: [String] = []
        var files: [String: [UInt8]] = [:]
        for index in 0..<8 {
            conversations.append(
                """
                {"id": "k\(index)", "title": "Take \(index)", "create_time": \(1767261600 + index * 100), "update_time": \(1767261650 + index * 100), "current_node": "u",
                 "mapping": {"u": {"id": "u", "parent": null, "children": [], "message": {"id": "u", "author": {"role": "user"}, "create_time": \(1767261600 + index * 100),
                   "content": {"content_type": "multimodal_text", "parts": [{"content_type": "audio_asset_pointer", "asset_pointer": "sediment://file_\(index)aa", "format": "wav"}, "take \(index)"]},
                   "metadata": {}}}}}
                """)
            files["user-x/file_\(index)aa-1c2d3e4f-aaaa-bbbb-cccc-ddddeeeeffff.wav"] = TestFiles.bytes(6 << 20, seed: UInt64(index + 1))
        }
        files["conversations.json"] = Array(("[" + conversations.joined(separator: ",") + "]").utf8)
        let zip = try TestFiles.zip(files, in: runner.folder)
        let full = runner.folder.file("full.sqlite")
        let started = Date()
        #expect(try runner.run(["--db", full, "import", zip, "--quiet"], withDatabase: false).status == 0)
        // Kills land within the time a whole import takes here.
        let whole = max(Date().timeIntervalSince(started), 0.05)
        let backup = runner.folder.file("backup.jsonl")
        #expect(try runner.run(["--db", full, "export", "--format", "jsonl", "--out", backup], withDatabase: false).status == 0)
        var random = SeededRandom(seed: 3)
        var cut = 0
        for (round, arguments) in [["import", zip], ["import", backup], ["import", zip], ["import", backup], ["delete", "--source", "chatgpt"], ["delete", "--source", "chatgpt"]].enumerated() {
            let path = runner.folder.file("k\(round).sqlite")
            if arguments[0] == "delete" { try FileManager.default.copyItem(atPath: full, toPath: path) }
            let process = try ChildProcess(
                BinaryRunner.binary.path, ["--db", path] + arguments + (arguments[0] == "delete" ? ["--yes"] : ["--quiet"]),
                environment: TestEnvironment.variables(home: runner.folder.path), output: "/dev/null", error: "/dev/null")
            usleep(UInt32(whole * 1_000_000 * (0.1 + 0.8 * Double(random.below(1_000)) / 1_000)))
            kill(process.pid, SIGKILL)
            _ = process.wait()
            guard FileManager.default.fileExists(atPath: path) else { continue }
            let check = try runner.run(["--db", path, "check"], withDatabase: false)
            #expect(check.status == 0, "round \(round): \(check.output) \(check.error)")
            let counts = try ChildProcess.run(
                "/usr/bin/sqlite3",
                [path, "SELECT (SELECT count(*) FROM conversation), (SELECT count(*) FROM attachment_content), (SELECT count(DISTINCT content_id) FROM attachment_chunk)"]
            ).outputText.trimmingCharacters(in: .whitespacesAndNewlines)
            // All or nothing: no conversation without its file, no chunk without its file (a
            // delete may stop between its two steps: its files then wait, marked unused).
            let allowed = arguments[0] == "delete" ? ["8|8|8", "0|8|8", "0|0|0"] : ["0|0|0", "8|8|8"]
            #expect(allowed.contains(counts), "round \(round) \(arguments[0]): \(counts)")
            if arguments[0] == "import" && counts == "0|0|0" { cut += 1 }
        }
        // The kills land inside the imports (else this proves nothing).
        #expect(cut > 0, "no import was cut short")
    }
}
