import Foundation
import Testing

import ScrollbackModel
@testable import ScrollbackStorage
import TestSupport

/// The lasting attacks: damaged databases against every command, kill -9 in the middle of
/// every kind of write. `swift test` runs a sample; `Tests/attacks/run-long.sh` sets
/// `SCROLLBACK_ATTACK_FILES` and `SCROLLBACK_ATTACK_KILLS` to run hundreds of each.
@Suite("Attacks", .serialized)
struct AttackSuiteTests {
    /// How many cases of each attack: a sample by default, many in the long mode.
    static func count(_ variable: String, sample: Int) -> Int {
        Int(ProcessInfo.processInfo.environment[variable] ?? "") ?? sample
    }

    typealias Random = SeededRandom

    /// The ways a file gets damaged, each applied to a copy of a healthy database.
    static func damage(_ data: Data, kind: Int, random: inout Random, foreignWAL: Data) -> (Data, wal: Data?, label: String) {
        var bytes = [UInt8](data)
        let pageSize = 4096
        let pages = max(bytes.count / pageSize, 1)
        switch kind % 8 {
        case 0:
            let flips = 1 + random.below(16)
            for _ in 0..<flips {
                let offset = random.below(bytes.count)
                bytes[offset] ^= UInt8(truncatingIfNeeded: 1 << random.below(8))
            }
            return (Data(bytes), nil, "\(flips) bit flips")
        case 1:
            let (a, b) = (1 + random.below(pages - 1), 1 + random.below(pages - 1))
            let first = Array(bytes[(a * pageSize)..<((a + 1) * pageSize)])
            bytes.replaceSubrange((a * pageSize)..<((a + 1) * pageSize), with: bytes[(b * pageSize)..<((b + 1) * pageSize)])
            bytes.replaceSubrange((b * pageSize)..<((b + 1) * pageSize), with: first)
            return (Data(bytes), nil, "pages \(a) and \(b) swapped")
        case 2:
            let length = random.below(bytes.count)
            return (Data(bytes.prefix(length)), nil, "cut at \(length) bytes")
        case 3:
            // Header fields: page size, write/read versions, reserved space, schema cookie,
            // page count, freelist, text encoding, user version, application id.
            let fields = [16, 18, 19, 20, 21, 28, 32, 36, 40, 44, 56, 60, 68]
            let offset = fields[random.below(fields.count)] + random.below(2)
            bytes[offset] = UInt8(truncatingIfNeeded: random.next())
            return (Data(bytes), nil, "header byte \(offset) changed")
        case 4:
            let page = 1 + random.below(pages - 1)
            let garbage = (0..<pageSize).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            bytes.replaceSubrange((page * pageSize)..<((page + 1) * pageSize), with: garbage)
            return (Data(bytes), nil, "page \(page) overwritten")
        case 5:
            return (Data(bytes), foreignWAL, "a foreign -wal beside it")
        case 6:
            var wal = foreignWAL
            if wal.count > 64 { wal[32 + random.below(wal.count - 32)] ^= 0xFF }
            return (Data(bytes), wal, "a damaged foreign -wal")
        default:
            let page = random.below(pages)
            bytes.replaceSubrange((page * pageSize)..<((page + 1) * pageSize), with: [UInt8](repeating: 0, count: pageSize))
            return (Data(bytes), nil, "page \(page) zeroed")
        }
    }

    struct Outcome {
        let status: Int32
        let error: String
        let hung: Bool
    }

    /// Runs the binary with a generous hang detector (never a speed bound).
    static func run(_ arguments: [String], in folder: TemporaryDirectory, limit: TimeInterval = 60) throws -> Outcome {
        let outcome = try ChildProcess.run(
            BinaryRunner.binary.path, arguments, environment: TestEnvironment.variables(home: folder.path), timeout: limit)
        return Outcome(status: outcome.status, error: outcome.errorText, hung: outcome.timedOut)
    }

    static func digest(_ path: String) -> String {
        (try? sha256(ofFile: path)) ?? "none"
    }

    @Test("damaged databases × every command: no crash, no hang, one clear line, the file and its -wal unchanged")
    func damagedDatabases() throws {
        let folder = try TemporaryDirectory()
        let healthy = folder.file("healthy.sqlite")
        #expect(try Self.run(["--db", healthy, "demo", "--count", "150"], in: folder).status == 0)
        let id = try Store.open(path: healthy, readOnly: true).conversations.page(sort: .created, at: .first, limit: 1).items[0].publicID
        let original = try Data(contentsOf: URL(fileURLWithPath: healthy))
        let wal = try foreignWAL(scratch: folder.file("other.db"))
        let reads: [[String]] = [
            ["list"], ["list", "--json"], ["show", id], ["search", "the"], ["stats"], ["check"], ["export", "--format", "jsonl"],
            ["--readonly", "list"], ["--readonly", "check"],
        ]
        let writes: [[String]] = [["rename", id, "renamed"], ["delete", id, "--yes"]]
        var random = Random(seed: 20_261_130)
        var runs = 0
        var failures = 0
        let cases = Self.count("SCROLLBACK_ATTACK_FILES", sample: 48)
        for index in 0..<cases {
            let (damaged, walData, label) = Self.damage(original, kind: index, random: &random, foreignWAL: wal)
            for arguments in reads + writes {
                let path = folder.file("case.sqlite")
                for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
                try damaged.write(to: URL(fileURLWithPath: path))
                if let walData { try walData.write(to: URL(fileURLWithPath: path + "-wal")) }
                let before = (Self.digest(path), Self.digest(path + "-wal"))
                let outcome = try Self.run(["--db", path] + arguments, in: folder)
                runs += 1
                let context = "case \(index) (\(label)), \(arguments.joined(separator: " ")): \(outcome.status) \(outcome.error)"
                #expect(!outcome.hung, "hang: \(context)")
                #expect(outcome.status < 128, "crash: \(context)")
                if outcome.status != 0 {
                    failures += 1
                    #expect(outcome.error.hasPrefix("scrollback: "), "\(context)")
                    #expect(!outcome.error.contains("while executing") && !outcome.error.contains("SELECT "), "SQL shown: \(context)")
                    #expect(outcome.error.filter { $0 == "\n" }.count == 1 || arguments.first == "check", "\(context)")
                }
                let isWrite = writes.contains(arguments)
                if !isWrite || outcome.status != 0 {
                    #expect(Self.digest(path) == before.0, "file changed: \(context)")
                    #expect(Self.digest(path + "-wal") == before.1 || (before.1 == "none" && Self.walIsEmpty(path)), "-wal changed: \(context)")
                }
            }
        }
        print("attacks: damaged databases: \(cases) files, \(runs) runs, \(failures) clear refusals, 0 crashes, 0 hangs expected")
    }

    static func walIsEmpty(_ path: String) -> Bool {
        ((try? Data(contentsOf: URL(fileURLWithPath: path + "-wal")))?.count ?? 0) == 0
    }

    @Test("kill -9 at random moments of import, batch delete, rename and demo: integrity clean, all or nothing")
    func killNine() throws {
        let folder = try TemporaryDirectory()
        let source = folder.file("source.sqlite")
        #expect(try Self.run(["--db", source, "demo", "--count", "1500"], in: folder).status == 0)
        let export = folder.file("export.jsonl")
        let exported = try Self.run(["--db", source, "export", "--format", "jsonl", "--out", export], in: folder)
        #expect(exported.status == 0)
        let sourceStore = try Store.open(path: source, readOnly: true)
        let ids = try sourceStore.conversations.page(sort: .created, at: .first, limit: 1_200).items.map(\.publicID)
        var random = Random(seed: 9)
        let rounds = Self.count("SCROLLBACK_ATTACK_KILLS", sample: 3)
        var kills = 0
        for round in 0..<rounds {
            for attack in ["import", "delete", "rename", "demo"] {
                let path = folder.file("k.sqlite")
                for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
                if attack != "import" && attack != "demo" {
                    try FileManager.default.copyItem(atPath: source, toPath: path)
                }
                let arguments: [String]
                switch attack {
                case "import": arguments = ["import", export, "--quiet"]
                case "delete": arguments = ["delete"] + ids + ["--yes"]
                case "rename": arguments = ["rename", ids[round % ids.count], "killed midway"]
                default: arguments = ["demo", "--count", "3000", "--seed", "\(round + 2)"]
                }
                let process = try ChildProcess(
                    BinaryRunner.binary.path, ["--db", path] + arguments, environment: TestEnvironment.variables(home: folder.path),
                    output: "/dev/null", error: "/dev/null")
                usleep(UInt32(random.below(attack == "rename" ? 60_000 : 1_500_000)))
                kill(process.pid, SIGKILL)
                _ = process.wait()
                kills += 1
                guard FileManager.default.fileExists(atPath: path) else { continue }
                let check = try Self.run(["--db", path, "check"], in: folder)
                #expect(check.status == 0, "round \(round) \(attack): \(check.error)")
                let store = try Store.open(path: path, readOnly: true)
                let count = try store.conversations.count()
                switch attack {
                case "import": #expect(count == 0 || count == 1_500, "import left \(count)")
                case "delete": #expect(count == 1_500 || count == 300, "delete left \(count)")
                case "rename":
                    let id = ids[round % ids.count]
                    let title = try store.conversations.conversation(matching: id).title
                    let original = try sourceStore.conversations.conversation(matching: id).title
                    #expect([original, "killed midway"].contains(title))
                    #expect(count == 1_500)
                default: break
                }
            }
        }
        print("attacks: kill -9: \(kills) kills, every database clean afterwards")
    }
}

@Suite("Concurrency", .serialized)
struct ConcurrencyAttackTests {
    @Test("reads and writes from the CLI while another process imports and deletes in a loop: no false errors")
    func commandsAgainstAWriter() throws {
        let runner = try BinaryRunner()
        #expect(try runner.run(["demo", "--count", "400"]).status == 0)
        let ids = try #require((try runner.json(["list", "--limit", "100"])["conversations"] as? [[String: Any]])?.compactMap { $0["id"] as? String })
        let writer = try WriterLoop(beside: runner, batch: 3000, seed: 5, pause: 0)
        #expect(Set(writer.batch).isDisjoint(with: ids))
        defer { writer.stop() }
        var reads = 0
        var busy = 0
        for round in 0..<12 {
            for arguments in [
                ["list"], ["list", "--json"], ["search", "the"], ["show", ids[round % ids.count]], ["stats"],
                ["--readonly", "list"], ["--readonly", "search", "postgres"], ["export", ids[round % ids.count]],
            ] {
                let result = try runner.run(arguments)
                reads += 1
                #expect(result.status == 0, "\(arguments): \(result.error)")
                #expect(!result.error.contains("malformed") && !result.error.contains("SQLite error"), "\(arguments): \(result.error)")
            }
            let rename = try runner.run(["rename", ids[round % ids.count], "renamed \(round)"])
            if rename.status != 0 {
                busy += 1
                #expect(rename.error.contains("the database is busy"), "\(rename.error)")
            }
        }
        // The writer really wrote meanwhile: whole import-and-delete rounds completed.
        let rounds = writer.stop()
        #expect(rounds >= 1)
        print("attacks: concurrency: \(reads) reads without an error while \(rounds) import+delete rounds ran, \(busy) renames told the database was busy")
    }
}

@Suite("Concurrency in the browser", .serialized)
struct BrowserConcurrencyTests {
    @Test("the browser, read-write and --readonly, beside a process importing and deleting in a loop: no false error, changes shown", arguments: [false, true])
    func browserAgainstAWriter(readOnly: Bool) throws {
        let runner = try BinaryRunner()
        #expect(try runner.run(["demo", "--count", "300"]).status == 0)
        // Each state held a second between the writes: a browser that looks after half a
        // second without keys sees both, however slow a busy machine makes the writes.
        let writer = try WriterLoop(beside: runner, batch: 1500, seed: 6, pause: 1.0)
        defer { writer.stop() }
        let tmux = try TmuxSession(width: 100, height: 20, arguments: ["--db", runner.databasePath] + (readOnly ? ["--readonly"] : []))
        _ = try tmux.waitFor(text: " of ")
        // Outside changes show up: both totals, with and without the batch, are seen.
        var totals: Set<String> = []
        var screens = 0
        let keys = ["j", "j", "G", "g", "k", "Enter", "Escape", "s", "s", "s"]
        while totals.count < 2 && screens < 1_200 {
            try tmux.send(keys[screens % keys.count])
            let screen = try tmux.screen()
            screens += 1
            // The footer is where the browser reports what went wrong.
            let footer = screen.last ?? ""
            for word in ["malformed", "SQLite error", "damaged", "busy", "cannot", "rror"] {
                #expect(!footer.contains(word), "\(screen.joined(separator: "\n"))")
            }
            if let header = screen.first(where: { $0.contains(" of 1,800") || $0.contains(" of 300") }) {
                totals.insert(header.contains("1,800") ? "with" : "without")
            }
            usleep(50_000)
            // The browser looks for other processes' changes when no key came for half a
            // second, as a person pauses: after each round of keys, it gets that pause.
            if screens % keys.count == 0 { usleep(700_000) }
        }
        #expect(totals.count == 2, "saw \(totals) in \(screens) screens")
        try tmux.send("q")
        #expect(try tmux.waitForExit() == 0)
    }
}

/// Another process writing in a loop beside a test: it imports a batch of conversations,
/// deletes them again, and so on until `stop()`, which returns how many rounds completed.
struct WriterLoop {
    let batch: [String]
    private let process: ChildProcess
    private let stopFile: String
    /// Holds the batch's export file (its folder goes when the runner does).
    private let source: BinaryRunner

    init(beside runner: BinaryRunner, batch count: Int, seed: Int, pause: Double) throws {
        source = try BinaryRunner()
        #expect(try source.run(["demo", "--count", "\(count)", "--seed", "\(seed)"]).status == 0)
        let export = source.folder.file("batch.jsonl")
        #expect(try source.run(["export", "--format", "jsonl", "--out", export]).status == 0)
        batch = ((try source.json(["list", "--limit", "\(count)"])["conversations"] as? [[String: Any]]) ?? []).compactMap { $0["id"] as? String }
        #expect(batch.count == count)
        let batchFile = runner.folder.file("batch-ids")
        try batch.joined(separator: "\n").write(toFile: batchFile, atomically: false, encoding: .utf8)
        stopFile = runner.folder.file("stop")
        process = try ChildProcess(
            "/bin/sh",
            [
                "-c",
                "while [ ! -e \"$2\" ]; do \"$0\" --db \"$1\" import \"$3\" --quiet --restore; sleep $5; \"$0\" --db \"$1\" delete $(cat \"$4\") --yes && echo round >> \"$2.rounds\"; sleep $5; done",
                BinaryRunner.binary.path, runner.databasePath, stopFile, export, batchFile, "\(pause)",
            ], output: "/dev/null", error: "/dev/null")
    }

    @discardableResult
    func stop() -> Int {
        makeEmptyFile(stopFile)
        _ = process.wait()
        return (try? String(contentsOfFile: stopFile + ".rounds", encoding: .utf8))?.split(separator: "\n").count ?? 0
    }
}
