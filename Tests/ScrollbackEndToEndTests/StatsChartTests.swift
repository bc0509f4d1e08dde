import Foundation
import Testing

import ScrollbackModel
import ScrollbackStorage
import TestSupport

/// `scrollback stats --chart`: the overview's charts as text, against goldens (in
/// `ScrollbackTerminalTests/Golden/`): into a pipe (`#` bars), on a UTF-8 terminal (eighths,
/// in colour), on a terminal under LANG=C, with NO_COLOR.
@Suite("stats --chart")
struct StatsChartTests {
    static let half = ["--since", "2025-01", "--until", "2025-06"]

    static func runner() throws -> BinaryRunner {
        let runner = try BinaryRunner()
        try Store.open(path: runner.databasePath).addActivity()
        return runner
    }

    static func expectGolden(_ text: String, _ name: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("ScrollbackTerminalTests/Golden")
        let file = folder.appendingPathComponent(name + ".txt")
        if ProcessInfo.processInfo.environment["SCROLLBACK_RECORD_GOLDEN"] == "1" {
            try text.write(to: file, atomically: false, encoding: .utf8)
            return
        }
        let expected = try String(contentsOf: file, encoding: .utf8)
        #expect(text == expected, "\(name) differs from Golden/\(name).txt:\n\(text)", sourceLocation: sourceLocation)
    }

    /// Through a pty (`script`), `environment` set for the command; escapes shown as `⟨ESC⟩`.
    static func onTerminal(_ runner: BinaryRunner, _ arguments: [String], environment: String) throws -> String {
        let command = ([HostileText.quoted(runner.databasePath)] + arguments.map(HostileText.quoted)).joined(separator: " ")
        let result = try BinaryRunner.shell(
            "script -q -e -c \"env \(environment) \\\"$0\\\" --db \(command)\" /dev/null")
        #expect(result.status == 0, "\(result.error)")
        return String(decoding: result.output, as: UTF8.self).replacingOccurrences(of: "\r\n", with: "\n")
            .replacingOccurrences(of: "\u{1B}", with: "⟨ESC⟩")
    }

    @Test("into a pipe: # bars at 20, 80 and 200 columns (COLUMNS), every label made safe, the same numbers as the browser's", arguments: [20, 80, 200])
    func pipe(width: Int) throws {
        let runner = try Self.runner()
        let result = try runner.run(["stats", "--chart"] + Self.half, environment: ["COLUMNS": "\(width)"])
        #expect(result.status == 0 && result.error.isEmpty, "\(result.error)")
        try Self.expectGolden(result.output, "stats-chart-pipe-\(width)")
        #expect(HostileText.dangerousBytes(in: Data(result.output.utf8)) == [])
        #expect(!result.output.contains("█") && !result.output.contains("·"))
        for line in result.output.split(separator: "\n") { #expect(line.count <= width, "\(line)") }
    }

    @Test("on a terminal: eighths of a block, blue and magenta bars; under LANG=C # bars and ASCII words; NO_COLOR has none")
    func terminal() throws {
        let runner = try Self.runner()
        try Self.expectGolden(try Self.onTerminal(runner, ["stats", "--chart"] + Self.half, environment: "COLUMNS=46"), "stats-chart-tty-46")
        let ascii = try Self.onTerminal(runner, ["stats", "--chart"] + Self.half, environment: "COLUMNS=46 LANG=C")
        try Self.expectGolden(ascii, "stats-chart-langc-46")
        #expect(!ascii.contains("█") && !ascii.contains(" · ") && ascii.contains("⟨ESC⟩[34m#"))
        let plain = try Self.onTerminal(runner, ["stats", "--chart"] + Self.half, environment: "COLUMNS=46 NO_COLOR=1")
        #expect(!plain.contains("⟨ESC⟩") && plain.contains("█"))
    }

    @Test("--json: every chart, its total and bars, names exact into a pipe; filters need --chart; bad dates and arguments fail with one line")
    func jsonAndErrors() throws {
        let runner = try Self.runner()
        let json = try runner.json(["stats", "--chart"] + Self.half)
        let charts = try #require(json["charts"] as? [[String: Any]])
        #expect(charts.map { $0["chart"] as? String } == ["months", "tokens", "models", "sources", "days"])
        let models = try #require(charts[2]["bars"] as? [[String: Any]])
        #expect(models.contains { $0["label"] as? String == Store.hostileModel })
        #expect(charts[0]["total"] as? Int == 14 && charts[1]["total"] as? Int == 5_660)
        #expect(json["from"] as? String == "2025-01-01T00:00:00.000Z" && json["to"] as? String == "2025-07-01T00:00:00.000Z")

        let unfiltered = try runner.run(["stats", "--since", "2025"])
        #expect(unfiltered.status == 2 && unfiltered.error.contains("--since chooses what --chart counts: add --chart"), "\(unfiltered.status) \(unfiltered.error)")
        for arguments in [["--chart", "--since", "yesterday-ish"], ["--chart", "extra"], ["--chart", "--since", "2025-06", "--until", "2025-01"]] {
            let result = try runner.run(["stats"] + arguments)
            #expect(result.status != 0 && result.output.isEmpty, "\(arguments)")
            #expect(result.error.filter { $0 == "\n" }.count == 1 && result.error.hasPrefix("scrollback: "), "\(arguments): \(result.error)")
        }
    }

    @Test("an empty database: every chart says there is nothing, exit 0; the default window is the last 24 months up to this one")
    func empty() throws {
        let runner = try BinaryRunner()
        _ = try Store.open(path: runner.databasePath)
        let result = try runner.run(["stats", "--chart"])
        #expect(result.status == 0)
        #expect(result.output.contains("no conversation was updated in these months") && result.output.contains("no token counts"))
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = try #require(TimeZone(identifier: "UTC"))
        let now = calendar.dateComponents([.year, .month], from: Date())
        let month = try #require(calendar.date(from: now))
        let first = try #require(calendar.date(byAdding: .month, value: -23, to: month))
        let start = calendar.dateComponents([.year, .month], from: first)
        let expected = String(format: "%04d-%02d to %04d-%02d", start.year ?? 0, start.month ?? 0, now.year ?? 0, now.month ?? 0)
        #expect(result.output.contains("0 conversations - " + expected), "\(result.output)")
    }
}
