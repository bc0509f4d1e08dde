import Foundation
import ScrollbackModel
import ScrollbackStorage
import Testing
import TestSupport

/// `scrollback backup PATH` as a user runs it: beside a writer, killed at random moments, on
/// a terminal and through `--json`.
@Suite("backup, through the binary", .serialized)
struct BackupCommandTests {
    @Test("kill -9 of backup at 50 random moments, and of a writer beside it at others, with a rename loop beside both: a file under the final name is always whole and passes check, and so does the database; then a backup that finishes, on a terminal, says what it did")
    func killedAndBeside() throws {
        let runner = try BinaryRunner()
        #expect(try runner.run(["demo", "--count", "3000"]).status == 0)
        // A writer beside it: renames in a loop, in a process of its own.
        let ids = (try runner.json(["list", "--limit", "50"])["conversations"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
        let loop = ids.prefix(20).enumerated().map { "\"$0\" --db \"$1\" rename \($0.element.prefix(8)) 'renamed \($0.offset)' >/dev/null 2>&1" }
            .joined(separator: "; ")
        let writer = try ChildProcess(
            "/bin/sh", ["-c", "while true; do \(loop); done", BinaryRunner.binary.path, runner.databasePath],
            environment: TestEnvironment.variables(home: runner.folder.path), output: "/dev/null", error: "/dev/null")
        defer {
            kill(writer.pid, SIGKILL)
            _ = writer.wait()
        }
        var random = SeededRandom(seed: 24)
        var whole = 0
        for round in 0..<50 {
            let target = runner.folder.file("backup-\(round).sqlite")
            let process = try ChildProcess(
                BinaryRunner.binary.path, ["--db", runner.databasePath, "backup", target],
                environment: TestEnvironment.variables(home: runner.folder.path), output: "/dev/null", error: "/dev/null")
            // The other side killed too: a writer of its own, cut mid-write.
            let cut = try ChildProcess(
                BinaryRunner.binary.path, ["--db", runner.databasePath, "demo", "--count", "200", "--seed", "\(round + 7)"],
                environment: TestEnvironment.variables(home: runner.folder.path), output: "/dev/null", error: "/dev/null")
            let delay = random.below(150_000)
            let writerDelay = random.below(150_000)
            usleep(UInt32(min(delay, writerDelay)))
            kill(delay <= writerDelay ? process.pid : cut.pid, SIGKILL)
            usleep(UInt32(max(delay, writerDelay) - min(delay, writerDelay)))
            kill(delay <= writerDelay ? cut.pid : process.pid, SIGKILL)
            _ = process.wait()
            _ = cut.wait()
            guard FileManager.default.fileExists(atPath: target) else { continue }
            whole += 1
            let check = try runner.run(["--db", target, "--readonly", "check"], withDatabase: false)
            #expect(check.status == 0, "round \(round): \(check.output) \(check.error)")
            #expect(!FileManager.default.fileExists(atPath: target + "-wal"))
        }
        let database = try runner.run(["check"])
        #expect(database.status == 0, "\(database.output) \(database.error)")
        // A cut one never took the final name; its hidden partial copy stays (kill -9) until
        // the next backup to that name, which removes it (its lock went with the killed one).
        let listing = try FileManager.default.contentsOfDirectory(atPath: runner.folder.path)
        #expect(listing.filter { $0.hasPrefix("backup-") }.count == whole)
        let cut = listing.filter { $0.contains(".partial-") && !$0.hasSuffix("-journal") }
        // As a minute later (one younger may be another backup's, not yet locked).
        for name in cut {
            try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-120)], ofItemAtPath: runner.folder.file(name))
        }
        for name in Set(cut.compactMap { $0.dropFirst().components(separatedBy: ".partial-").first }) {
            #expect(try runner.run(["backup", runner.folder.file(name), "--force"]).status == 0)
        }
        let after = try FileManager.default.contentsOfDirectory(atPath: runner.folder.path)
        #expect(after.filter { $0.contains(".partial-") }.isEmpty, "\(after.filter { $0.contains(".partial-") }) (of \(cut.count) cut)")
        // One that finishes, on a terminal: progress, then the line; --json says the same.
        let target = runner.folder.file("done.sqlite")
        let shown = try BinaryRunner.shell("script -q -e -c \"\\\"$0\\\" --db \(runner.databasePath) backup \(target)\" /dev/null")
        let text = String(decoding: shown.output, as: UTF8.self)
        #expect(shown.status == 0, "\(text) \(shown.error)")
        #expect(text.contains("Backed up 3,000 conversations") && text.contains("checked."), "\(text)")
        let again = try runner.run(["backup", target])
        #expect(again.status == 1 && again.error.contains("exists; give another name, or --force"), "\(again.error)")
        let json = try runner.json(["backup", target, "--force"])
        #expect(json["conversations"] as? Int == 3000 && json["checked"] as? Bool == true && json["path"] as? String == target)
        let copy = try runner.run(["--db", target, "check"], withDatabase: false)
        #expect(copy.status == 0, "\(copy.output)")
    }
}

extension BackupCommandTests {
    @Test("a rollback journal left by a writer killed mid-commit: --readonly says what to do; backup and check roll it back and go on, and the copy holds the database as it was before that commit")
    func hotJournal() throws {
        let runner = try BinaryRunner()
        #expect(try runner.run(["demo", "--count", "200"]).status == 0)
        // A backup is one file in rollback-journal mode; it is the database here.
        let single = runner.folder.file("single.sqlite")
        #expect(try runner.run(["backup", single]).status == 0)
        let before = try runner.run(["--db", single, "--readonly", "list", "--json", "--limit", "200"], withDatabase: false)
        #expect(before.status == 0)
        // Pages spill into the file (a cache of one page), then the writer dies mid-transaction.
        let crash = try ChildProcess.run(
            "/usr/bin/sqlite3", [single],
            input: Data("PRAGMA cache_size = 1;\nBEGIN;\nUPDATE conversation SET project = hex(randomblob(3000));\n.shell kill -9 $PPID\nCOMMIT;\n".utf8))
        #expect(crash.ending == .signaled(SIGKILL))
        var journal = stat()
        #expect(lstat(single + "-journal", &journal) == 0 && journal.st_size > 0, "no journal left")
        let readOnly = try runner.run(["--db", single, "--readonly", "list"], withDatabase: false)
        #expect(readOnly.status == 1 && readOnly.error.contains("crashed left its -journal") && readOnly.error.contains("without --readonly"), "\(readOnly.error)")
        let copy = runner.folder.file("copy.sqlite")
        let backup = try runner.run(["--db", single, "backup", copy], withDatabase: false)
        #expect(backup.status == 0, "\(backup.error)")
        #expect(lstat(single + "-journal", &journal) != 0 || journal.st_size == 0, "the journal was not rolled back")
        let after = try runner.run(["--db", copy, "--readonly", "list", "--json", "--limit", "200"], withDatabase: false)
        #expect(after.output == before.output)
        #expect(try runner.run(["--db", single, "check"], withDatabase: false).status == 0)
    }

    @Test("--force onto a folder, a symlink or a device says it replaces only a file; onto a file that may not be changed (chattr +i), that the file refuses, not the folder")
    func forceRefusals() throws {
        let runner = try BinaryRunner()
        #expect(try runner.run(["import", try runner.recordExport(titles: ["One"])]).status == 0)
        let folder = runner.folder.file("a-folder")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let link = runner.folder.file("dangling.sqlite")
        #expect(symlink(runner.folder.file("nowhere"), link) == 0)
        for target in [folder, link, "/dev/null"] {
            let result = try runner.run(["backup", "--force", target])
            #expect(result.status == 1 && result.error.contains("is not a regular file") && result.error.contains("--force replaces only a file"), "\(result.error)")
        }
        let fixed = runner.folder.file("fixed.sqlite")
        #expect(try runner.run(["backup", fixed]).status == 0)
        guard ChildProcess.status("/usr/bin/chattr", ["+i", fixed]) == 0 else {
            Issue.record("chattr +i is not possible here")
            return
        }
        defer { _ = ChildProcess.status("/usr/bin/chattr", ["-i", fixed]) }
        let refused = try runner.run(["backup", "--force", fixed])
        #expect(refused.status == 1 && refused.error.contains("cannot replace") && refused.error.contains("chattr +i"), "\(refused.error)")
        #expect(try runner.folder.listing().filter { $0.contains(".partial-") }.isEmpty)
    }
}
