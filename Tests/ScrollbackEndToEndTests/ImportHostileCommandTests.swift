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

    /// Ctrl-C is held by the storing thread and acted on between records; the thread that
    /// parses the export holds it too (it used to take the signal and end the process at
    /// once, saying nothing), and one that comes after the last record is dropped (it used
    /// to end the process after everything was kept, with the status of an interrupted one).
    /// Whether the process `pid` blocks SIGINT now (its `SigBlk` in /proc).
    static func holdsInterrupts(_ pid: pid_t) -> Bool {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("SigBlk:") }),
            let mask = UInt64(line.dropFirst("SigBlk:".count).trimmingCharacters(in: .whitespaces), radix: 16)
        else { return false }
        return mask & (1 << UInt64(SIGINT - 1)) != 0
    }

    @Test("Ctrl-C during an import: exit 130, one line, nothing stored; or exit 0 and all of it; never killed silently")
    func interrupted() throws {
        let runner = try BinaryRunner()
        let folder = runner.folder
        let path = folder.file("conversations.json")
        let text = String(repeating: "words to store and index ", count: 80)
        let records = (0..<3_000).map { index in
            """
            {"id":"c\(index)","title":"t\(index)","create_time":1700000000,"current_node":"b","mapping":{
             "a":{"id":"a","parent":null,"children":["b"],"message":{"id":"a","author":{"role":"user"},"create_time":1700000000,"content":{"content_type":"text","parts":["\(text)"]}}},
             "b":{"id":"b","parent":"a","children":[],"message":{"id":"b","author":{"role":"assistant"},"create_time":1700000001,"content":{"content_type":"text","parts":["\(text)"]}}}}}
            """
        }
        try ("[" + records.joined(separator: ",") + "]").write(toFile: path, atomically: false, encoding: .utf8)
        for delay: useconds_t in [150_000, 600_000, 1_500_000] {
            let database = folder.file("i\(delay).sqlite")
            let outputPath = folder.file("out-\(delay)")
            let errorPath = folder.file("err-\(delay)")
            let process = try ChildProcess(
                BinaryRunner.binary.path, ["--db", database, "import", path],
                environment: TestEnvironment.variables(home: folder.path), output: outputPath,
                error: errorPath)
            // From the moment the import holds Ctrl-C: before it (the process starting, which
            // takes more than 150 ms on a busy machine) the signal is the default's.
            var polls = 0
            while polls < 5_000 && !Self.holdsInterrupts(process.pid) {
                usleep(1_000)
                polls += 1
            }
            usleep(delay)
            kill(process.pid, SIGINT)
            let ending = process.wait()
            let said = (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? ""
            let printed = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
            #expect(ending == .exited(130) || ending == .exited(0), "\(ending) after \(delay) µs, saying \(said)")
            let stats = try runner.run(["--db", database, "stats", "--json"], withDatabase: false)
            let stored = (try JSONSerialization.jsonObject(with: Data(stats.output.utf8)) as? [String: Any])?["conversations"] as? Int
            if ending == .exited(130) {
                #expect(said.contains("interrupted; the file being read was not imported"))
                #expect(stored == 0)
            } else {
                #expect(printed.hasPrefix("Imported 3,000 new"))
                #expect(stored == 3_000)
            }
        }
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
        #expect(imported.output.hasPrefix("Imported 2 new"))
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
        #expect(good.output.hasPrefix("Imported 2 new"))
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
