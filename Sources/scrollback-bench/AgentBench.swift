import Foundation
import ScrollbackImport
import ScrollbackModel
import ScrollbackStorage

/// Coding agents' sessions: importing many (against the same reader into an unindexed
/// table), a follow tick over thousands of files with nothing new (against a plain `stat`
/// loop), and one line appended to a big session (the bytes read).
enum AgentBench {
    /// A Claude Code session of `lines` lines (a prompt, an answer, a tool call and its
    /// result of `output` bytes, in turn).
    static func session(_ id: String, lines: Int, output: Int) -> String {
        var text = ""
        text.reserveCapacity(lines * (output + 400))
        var parent = "null"
        let filler = String(repeating: "lorem ipsum dolor sit amet ", count: max(output / 27, 1))
        for index in 0..<lines {
            let uuid = "\(id)-\(index)"
            let time = String(format: "2026-11-30T%02d:%02d:%02d.000Z", (index / 3600) % 24, (index / 60) % 60, index % 60)
            let common = "\"uuid\":\"\(uuid)\",\"parentUuid\":\(parent),\"sessionId\":\"\(id)\",\"cwd\":\"/home/me/src/app\",\"gitBranch\":\"main\",\"timestamp\":\"\(time)\""
            switch index % 4 {
            case 0:
                text += "{\"type\":\"user\",\(common),\"message\":{\"role\":\"user\",\"content\":\"Question \(index) about the build\"}}\n"
            case 1:
                text += "{\"type\":\"assistant\",\(common),\"message\":{\"id\":\"msg-\(uuid)\",\"role\":\"assistant\",\"model\":\"claude-sonnet-4\",\"content\":[{\"type\":\"tool_use\",\"id\":\"t-\(uuid)\",\"name\":\"Bash\",\"input\":{\"command\":\"make test \(index)\"}}],\"usage\":{\"input_tokens\":10,\"output_tokens\":20}}}\n"
            case 2:
                text += "{\"type\":\"user\",\(common),\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"t-\(id)-\(index - 1)\",\"content\":\"\(filler)\"}]}}\n"
            default:
                text += "{\"type\":\"assistant\",\(common),\"message\":{\"id\":\"msg-\(uuid)\",\"role\":\"assistant\",\"model\":\"claude-sonnet-4\",\"content\":[{\"type\":\"text\",\"text\":\"Answer \(index): \(filler.prefix(200))\"}],\"usage\":{\"input_tokens\":10,\"output_tokens\":20}}}\n"
            }
            parent = "\"\(uuid)\""
        }
        return text
    }

    /// Bytes this process has read (`rchar` of /proc/self/io): every read(2), from any file.
    static func bytesRead() -> Int64 {
        guard let text = try? String(contentsOfFile: "/proc/self/io", encoding: .utf8) else { return -1 }
        let line = text.split(separator: "\n").first { $0.hasPrefix("rchar:") }
        return line.flatMap { Int64($0.dropFirst(6).trimmingCharacters(in: .whitespaces)) } ?? -1
    }

    static func run(work: String, quick: Bool, report: inout Report) throws {
        let folder = (work as NSString).appendingPathComponent("agents")
        try? FileManager.default.removeItem(atPath: folder)
        // SCROLLBACK_BENCH_AGENT_SESSIONS: fewer, for a quicker look.
        let asked = ProcessInfo.processInfo.environment["SCROLLBACK_BENCH_AGENT_SESSIONS"].flatMap { Int($0) }.flatMap { $0 > 0 ? $0 : nil }
        let sessions = asked ?? (quick ? 40 : 2_000)
        let lines = 200
        // About 1 GB for 2,000 sessions: a tool's output of 8 KB every fourth line.
        let output = quick ? 500 : 8_000
        var files: [String] = []
        for index in 0..<sessions {
            let project = (folder as NSString).appendingPathComponent("projects/p\(index % 20)")
            try FileManager.default.createDirectory(atPath: project, withIntermediateDirectories: true)
            let file = (project as NSString).appendingPathComponent("s\(index).jsonl")
            try session("s\(index)", lines: lines, output: output).write(toFile: file, atomically: false, encoding: .utf8)
            files.append(file)
        }
        let bytes = files.reduce(0.0) { $0 + ((((try? FileManager.default.attributesOfItem(atPath: $1))?[.size]) as? NSNumber)?.doubleValue ?? 0) }

        // Ours: `scrollback import FOLDER`'s code, in a process of its own.
        let target = (work as NSString).appendingPathComponent("agents.sqlite")
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: target + suffix) }
        let ours = try Measure.run(CommandLine.arguments[0], ["--child", "import", "--db", target, "--file", folder + "/projects"])
        guard ours.status == 0, let oursPeak = ours.peakKilobytes else { throw BenchError("agents import failed (\(ours.status))") }
        // The floor: the same reader, its messages into a table without an index, in a
        // process of its own too.
        let rawTarget = (work as NSString).appendingPathComponent("agents-raw.sqlite")
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: rawTarget + suffix) }
        let floor = try Measure.run(CommandLine.arguments[0], ["--child", "agentsfloor", "--db", rawTarget, "--file", folder + "/projects"])
        guard floor.status == 0, let floorPeak = floor.peakKilobytes else { throw BenchError("agents floor failed (\(floor.status))") }
        report.add(
            "agents", "\(sessions) sessions (\(Int(bytes / 1_048_576)) MiB of JSONL) imported vs read into an unindexed table",
            ours: ours.milliseconds, baseline: floor.milliseconds, unit: "ms", figure: ours.milliseconds / floor.milliseconds,
            figureName: "× floor", atMost: 1.5)
        report.add(
            "agents", "peak RSS of that import vs the floor's", ours: Double(oursPeak) / 1024, baseline: Double(floorPeak) / 1024,
            unit: "MiB", figure: Double(oursPeak) / Double(max(floorPeak, 1)), figureName: "× floor", atMost: 1.5)

        // A follow tick over 5,000 known files with nothing new, against a plain stat loop.
        let many = (folder as NSString).appendingPathComponent("many")
        try FileManager.default.createDirectory(atPath: many, withIntermediateDirectories: true)
        let manyCount = quick ? 500 : 5_000
        var manyFiles: [String] = []
        for index in 0..<manyCount {
            let file = (many as NSString).appendingPathComponent("m\(index).jsonl")
            try session("m\(index)", lines: 2, output: 10).write(toFile: file, atomically: false, encoding: .utf8)
            manyFiles.append(file)
        }
        let followTarget = (work as NSString).appendingPathComponent("follow.sqlite")
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: followTarget + suffix) }
        let store = try Store.open(path: followTarget)
        let first = Importer(store: store).run(paths: [many], format: nil)
        guard first.failed.isEmpty, first.inserted == manyCount else { throw BenchError("follow set-up imported \(first.inserted)") }
        var tracker = SourceFollower.Tracker(folders: [])
        _ = try tracker.look(store, folders: false)
        let canonical = manyFiles.map(Importer.canonical)
        var found = 0
        let readBefore = bytesRead()
        let ticks = try Measure.samples(30) {
            found += try tracker.look(store, folders: false).count
        }
        // Reading /proc/self/io is a read too: what one costs is taken off.
        let probe = bytesRead()
        let readByTicks = probe - readBefore - (bytesRead() - probe)
        guard found == 0 else { throw BenchError("a tick with nothing new found \(found) changed files") }
        let stats = Measure.samples(30) {
            var status = stat()
            for path in canonical { _ = stat(path, &status) }
        }
        report.add(
            "agents", "follow tick, \(manyCount) known files, nothing new, vs a stat loop", ours: Measure.median(ticks),
            baseline: Measure.median(stats), unit: "ms", figure: Measure.median(ticks) / max(Measure.median(stats), 0.001),
            figureName: "× stat loop", atMost: 2)
        report.add(
            "agents", "bytes read by 30 such ticks", ours: Double(readByTicks), baseline: 0, unit: "B", figure: Double(readByTicks),
            figureName: "bytes", atMost: 0)

        // One line appended to a 50 MB session: what the re-import reads.
        let big = (folder as NSString).appendingPathComponent("big/b.jsonl")
        try FileManager.default.createDirectory(atPath: (big as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        let bigLines = quick ? 2_000 : 60_000
        try session("b", lines: bigLines, output: 2_400).write(toFile: big, atomically: false, encoding: .utf8)
        let bigStore = try Store.open(path: (work as NSString).appendingPathComponent("big-session.sqlite"))
        _ = Importer(store: bigStore).run(paths: [big], format: nil)
        let line = "{\"type\":\"user\",\"uuid\":\"b-next\",\"parentUuid\":\"b-\(bigLines - 1)\",\"sessionId\":\"b\",\"timestamp\":\"2026-11-30T23:59:59.000Z\",\"message\":{\"role\":\"user\",\"content\":\"one more\"}}\n"
        let handle = FileHandle(forWritingAtPath: big)
        try handle?.seekToEnd()
        try handle?.write(contentsOf: Data(line.utf8))
        try handle?.close()
        let size = ((try FileManager.default.attributesOfItem(atPath: big))[.size] as? NSNumber)?.doubleValue ?? 0
        let before = bytesRead()
        let again = Importer(store: bigStore).run(paths: [big], format: nil)
        let after = bytesRead()
        let read = after - before - (bytesRead() - after)
        guard again.filesAppended == 1, again.updated == 1 else { throw BenchError("the append was not read as one: \(again)") }
        report.add(
            "agents", "one line appended to a \(Int(size / 1_048_576)) MiB session: bytes read (file and database) vs line + 4 KiB",
            ours: Double(read), baseline: Double(line.utf8.count + Importer.sessionWindow), unit: "B",
            figure: Double(read) / Double(line.utf8.count + 4_096), figureName: "× line + window", atMost: 64)
    }

    /// The floor of the import: the same reader, into one unindexed table, one transaction.
    static func floor(database: String, folder: String) throws {
        let raw = try RawSQLite(path: database, create: true)
        try raw.execute(
            "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; CREATE TABLE m (conversation TEXT, position INTEGER, role TEXT, content TEXT, created_at INTEGER);")
        let insert = try RawSQLite.Statement(raw, "INSERT INTO m VALUES (?3, ?1, ?4, ?5, ?2)")
        try raw.execute("BEGIN")
        try Importer.readClaudeCodeSessions(folder: folder) { conversation in
            for (position, message) in conversation.messages.enumerated() {
                insert.run(
                    [Int64(position), message.createdAt.milliseconds], text: [conversation.sourceID ?? "", message.role.rawValue, message.content])
            }
        }
        try raw.execute("COMMIT")
    }
}
