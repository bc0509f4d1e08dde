import Foundation

/// Timing and processes for the benchmark.
enum Measure {
    static func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

    /// Milliseconds taken by `body`.
    static func time(_ body: () throws -> Void) rethrows -> Double {
        let start = now()
        try body()
        return Double(now() - start) / 1_000_000
    }

    /// Runs `body` `count` times and returns each time in milliseconds.
    static func samples(_ count: Int, _ body: () throws -> Void) rethrows -> [Double] {
        var result: [Double] = []
        result.reserveCapacity(count)
        for _ in 0..<count { result.append(try time(body)) }
        return result
    }

    static func median(_ values: [Double]) -> Double { percentile(values, 50) }

    static func percentile(_ values: [Double], _ p: Double) -> Double {
        guard !values.isEmpty else { return 0 }
        let sorted = values.sorted()
        let rank = min(sorted.count - 1, max(0, Int((p / 100 * Double(sorted.count - 1)).rounded())))
        return sorted[rank]
    }

    struct ChildResult {
        var milliseconds: Double
        var status: Int32
        var output: String

        /// The child's own report of its peak RSS (`peak-kb N`). Not wait4's ru_maxrss:
        /// on Linux a child started by posix_spawn (vfork) inherits the parent's high-water
        /// mark, which would make every child look as large as the benchmark itself.
        var peakKilobytes: Int? {
            output.split(separator: "\n").first { $0.hasPrefix("peak-kb ") }.flatMap { Int($0.dropFirst(8)) }
        }
    }

    /// This process's peak RSS in kB (VmHWM).
    static func ownPeakKilobytes() -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") })
        else { return 0 }
        return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") ?? 0
    }

    /// Runs a program to the end with output discarded; its wall time and peak RSS.
    static func run(_ executable: String, _ arguments: [String], environment: [String: String] = [:]) throws -> ChildResult {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        let outputPath = (NSTemporaryDirectory() as NSString).appendingPathComponent("scrollback-bench-\(UUID().uuidString).out")
        defer { try? FileManager.default.removeItem(atPath: outputPath) }
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let argv = [executable] + arguments
        var cArguments: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
        defer { cArguments.forEach { free($0) } }
        var merged = ProcessInfo.processInfo.environment
        merged.merge(environment) { $1 }
        var cEnvironment: [UnsafeMutablePointer<CChar>?] = merged.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { cEnvironment.forEach { free($0) } }
        var pid: pid_t = 0
        let start = now()
        let spawned = posix_spawn(&pid, executable, &actions, nil, &cArguments, &cEnvironment)
        guard spawned == 0 else { throw BenchError("cannot run \(executable) (\(spawned))") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let elapsed = Double(now() - start) / 1_000_000
        let output = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        return ChildResult(milliseconds: elapsed, status: (status >> 8) & 0xFF, output: output)
    }
}

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
