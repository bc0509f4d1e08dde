import Foundation
import ScrollbackModel
import ScrollbackStorage

/// `scrollback backup` of the big demo database, with a writer beside it (renames in a loop,
/// in processes of their own), against `cp` of the same file; the check after the copy is
/// timed apart. Peak RSS against the 64 MiB the issue allows beyond the page cache.
enum BackupBench {
    static func run(big: String, binary: String, work: String, report: inout Report) throws {
        let folder = (work as NSString).appendingPathComponent("backup")
        try? FileManager.default.removeItem(atPath: folder)
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // The big database's file whole, its -wal folded in first, for cp to copy the same.
        do {
            let store = try Store.open(path: big)
            _ = try store.conversations.count(filter: .none)
        }
        let copied = (folder as NSString).appendingPathComponent("cp.sqlite")
        let raw = try Measure.run("/bin/cp", [big, copied])
        guard raw.status == 0 else { throw BenchError("cp failed") }
        try? FileManager.default.removeItem(atPath: copied)
        let store = try Store.open(path: big, readOnly: true)
        let ids = try store.conversations.page(sort: .updated, filter: .none, at: .first, limit: 20).items.map(\.publicID)
        let loop = ids.enumerated().map { "\"$0\" --db \"$1\" rename \($0.element.prefix(8)) 'bench \($0.offset)' >/dev/null 2>&1" }
            .joined(separator: "; ")
        var writer: pid_t = 0
        let argv = ["/bin/sh", "-c", "while true; do \(loop); done", binary, big]
        var cArguments: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
        defer { cArguments.forEach { free($0) } }
        guard posix_spawn(&writer, "/bin/sh", nil, nil, &cArguments, environ) == 0 else { throw BenchError("the writer did not start") }
        defer {
            kill(writer, SIGKILL)
            var status: Int32 = 0
            waitpid(writer, &status, 0)
        }
        usleep(300_000)
        let target = (folder as NSString).appendingPathComponent("backup.sqlite")
        let ours = try Measure.run(CommandLine.arguments[0], ["--child", "backup", "--db", big, "--file", target])
        guard ours.status == 0 else { throw BenchError("backup failed: \(ours.output)") }
        func value(_ name: String) -> Double {
            ours.output.split(separator: "\n").first { $0.hasPrefix(name + " ") }.flatMap { Double($0.dropFirst(name.count + 1)) } ?? -1
        }
        let copy = value("copy-ms"), check = value("check-ms")
        let bytes = (((try? FileManager.default.attributesOfItem(atPath: big))?[.size]) as? NSNumber)?.doubleValue ?? 0
        report.add(
            "backup", "copy of the \(Int(bytes / 1_048_576)) MB database, a writer beside it, vs cp of the file", ours: copy,
            baseline: raw.milliseconds, unit: "ms", figure: copy / max(raw.milliseconds, 0.001), figureName: "× cp", atMost: 1.5)
        report.add(
            "backup", "the check of the copy after it (integrity, check, sync), timed apart", ours: check, baseline: copy, unit: "ms",
            figure: check / max(copy, 0.001), figureName: "× the copy")
        let peak = Double(ours.peakKilobytes ?? 0) / 1024
        report.add(
            "backup", "peak RSS of the backup vs the 64 MiB allowed beyond the page cache", ours: peak, baseline: 64, unit: "MiB",
            figure: peak / 64, figureName: "× 64 MiB", atMost: 1)
    }
}
