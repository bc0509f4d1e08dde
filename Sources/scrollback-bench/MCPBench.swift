import Foundation

/// `scrollback mcp` on the big demo database: a `search` round trip over stdio against the
/// same search by `scrollback search --json` less `scrollback --version` (the process
/// start), in the same run; and the server's RSS from request 1,000 to request 10,000.
enum MCPBench {
    /// A server started with pipes to its standard input and output.
    final class Server {
        let pid: pid_t
        let input: Int32
        let output: Int32
        private var pending = [UInt8]()

        init(binary: String, database: String) throws {
            var toServer: [Int32] = [0, 0]
            var fromServer: [Int32] = [0, 0]
            guard pipe(&toServer) == 0, pipe(&fromServer) == 0 else { throw BenchError("no pipes") }
            var actions = posix_spawn_file_actions_t()
            posix_spawn_file_actions_init(&actions)
            defer { posix_spawn_file_actions_destroy(&actions) }
            posix_spawn_file_actions_adddup2(&actions, toServer[0], 0)
            posix_spawn_file_actions_adddup2(&actions, fromServer[1], 1)
            posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
            for descriptor in toServer + fromServer { posix_spawn_file_actions_addclose(&actions, descriptor) }
            let argv = [binary, "--db", database, "mcp"]
            var cArguments: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
            defer { cArguments.forEach { free($0) } }
            var child: pid_t = 0
            guard posix_spawn(&child, binary, &actions, nil, &cArguments, environ) == 0 else { throw BenchError("mcp did not start") }
            pid = child
            close(toServer[0])
            close(fromServer[1])
            input = toServer[1]
            output = fromServer[0]
        }

        /// Sends one line and reads the reply line.
        func roundTrip(_ line: String) throws -> String {
            var bytes = Array((line + "\n").utf8)
            var sent = 0
            while sent < bytes.count {
                let count = bytes[sent...].withUnsafeBytes { write(input, $0.baseAddress, $0.count) }
                guard count > 0 else { throw BenchError("the server closed its input") }
                sent += count
            }
            bytes.removeAll()
            while true {
                if let newline = pending.firstIndex(of: 0x0A) {
                    let reply = String(decoding: pending[..<newline], as: UTF8.self)
                    pending.removeFirst(newline + 1)
                    return reply
                }
                var chunk = [UInt8](repeating: 0, count: 1 << 16)
                let count = chunk.withUnsafeMutableBytes { read(output, $0.baseAddress, $0.count) }
                guard count > 0 else { throw BenchError("the server ended") }
                pending += chunk[0..<count]
            }
        }

        /// The server's resident memory now, in kB (VmRSS).
        var residentKilobytes: Int {
            guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
                let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") })
            else { return 0 }
            return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") ?? 0
        }

        func stop() {
            close(input)
            var status: Int32 = 0
            waitpid(pid, &status, 0)
            close(output)
        }
    }

    static func request(_ id: Int, _ tool: String, _ arguments: String) -> String {
        "{\"jsonrpc\":\"2.0\",\"id\":\(id),\"method\":\"tools/call\",\"params\":{\"name\":\"\(tool)\",\"arguments\":\(arguments)}}"
    }

    static func run(big: String, binary: String, quick: Bool, report: inout Report) throws {
        let query = DataSet.rareWord
        let server = try Server(binary: binary, database: big)
        defer { server.stop() }
        _ = try server.roundTrip(
            #"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}}"#)
        // Warm: the same pages cached for both sides.
        let search = request(1, "search", "{\"query\":\"\(query)\",\"limit\":50}")
        guard try server.roundTrip(search).contains("\"isError\":false") else { throw BenchError("the search over MCP failed") }
        _ = try Measure.run(binary, ["--db", big, "search", "--json", "--limit", "50", query])
        let rounds = quick ? 5 : 15
        let ours = Measure.median(try Measure.samples(rounds) { _ = try server.roundTrip(search) })
        let cli = Measure.median(try (0..<rounds).map { _ in try Measure.run(binary, ["--db", big, "search", "--json", "--limit", "50", query]).milliseconds })
        let start = Measure.median(try (0..<rounds).map { _ in try Measure.run(binary, ["--version"]).milliseconds })
        let baseline = max(cli - start, 0.001)
        report.add(
            "mcp", "a search round trip over stdio vs `search --json` less the process start (`--version`, \(String(format: "%.1f", start)) ms)",
            ours: ours, baseline: baseline, unit: "ms", figure: ours / baseline, figureName: "× CLI", atMost: 2)
        // Memory: search, list and read requests (stats reads every row: a few, not thousands), RSS at the 1,000th and the 10,000th.
        let total = quick ? 2_000 : 10_000
        let list = try server.roundTrip(request(2, "list_conversations", "{\"limit\":5}"))
        let id = list.range(of: #"\"id\":\"[0-9a-f-]{36}"#, options: .regularExpression).map { String(list[$0].suffix(36)) } ?? ""
        let kinds = [
            search, request(3, "list_conversations", "{\"limit\":20}"), request(4, "read_conversation", "{\"id\":\"\(id)\"}"),
            request(5, "search", "{\"query\":\"because\",\"limit\":10}"),
        ]
        var atThousand = 0
        for index in 1...total {
            _ = try server.roundTrip(kinds[index % kinds.count])
            if index == total / 10 { atThousand = server.residentKilobytes }
        }
        for _ in 0..<3 { _ = try server.roundTrip(request(7, "stats", "{}")) }
        let atEnd = server.residentKilobytes
        // Less at the end than at the 1,000th is no growth.
        let growth = Double(max(atEnd - atThousand, 0)) / 1024
        report.add(
            "mcp", "RSS growth from request \(total / 10) to request \(total) (search, list, read; stats) vs the 8 MiB allowed", ours: growth, baseline: 8,
            unit: "MiB", figure: growth / 8, figureName: "× 8 MiB", atMost: 1)
    }
}
