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
        var peakKilobytes: Int
        var status: Int32
    }

    /// Runs a program to the end with output discarded; its wall time and peak RSS.
    static func run(_ executable: String, _ arguments: [String], environment: [String: String] = [:]) throws -> ChildResult {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
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
        var usage = rusage()
        while wait4(pid, &status, 0, &usage) < 0 && errno == EINTR {}
        let elapsed = Double(now() - start) / 1_000_000
        return ChildResult(milliseconds: elapsed, peakKilobytes: usage.ru_maxrss, status: (status >> 8) & 0xFF)
    }
}

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
