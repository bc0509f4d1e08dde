import Foundation
import Testing

import ScrollbackModel
import ScrollbackStorage
import ScrollbackViewModels
import TestSupport

/// The filter line and pinning in the real binary, in a real terminal.
@Suite("Filter and pin in the browser")
struct BrowserDailyUseTests {
    @Test("f filters the list (header and count say so), Esc clears it; p pins the selected row to the top of every order")
    func filterAndPin() throws {
        let runner = try BinaryRunner()
        #expect(try runner.run(["demo", "--count", "300", "--seed", "6"]).status == 0)
        let store = try Store.open(path: runner.databasePath, readOnly: true)
        let expected = try store.conversations.count(filter: ConversationFilter(model: "claude"))
        let tmux = try TmuxSession(width: 100, height: 20, arguments: ["--db", runner.databasePath])
        _ = try tmux.waitFor(text: "1 of 300")
        try tmux.send("f")
        _ = try tmux.waitFor(text: "Filter:")
        try tmux.type("model:claude")
        try tmux.send("Enter")
        var screen = try tmux.waitFor("the filtered list") { $0[0].contains("· model:claude") }
        try tmux.send("G")
        screen = try tmux.waitFor("the filtered count") { BrowserEndToEndTests.footer($0).hasPrefix(" \(expected) of \(expected) (filtered)") }
        #expect(screen.dropFirst().dropLast().filter { !$0.isEmpty }.allSatisfy { $0.contains("claude") }, "\(screen)")
        try tmux.send("Escape")
        _ = try tmux.waitFor(text: "Filter cleared: every conversation")
        try tmux.send("g")
        _ = try tmux.waitFor(text: "1 of 300")

        // Pin the row at the bottom: it goes up among the pinned ones, first in every order.
        let pinnedBefore = try Store.open(path: runner.databasePath, readOnly: true).conversations.count(filter: ConversationFilter(pinnedOnly: true))
        try tmux.send("G", "p")
        screen = try tmux.waitFor(text: "Pinned the conversation")
        #expect(BrowserEndToEndTests.footer(screen).contains("Pinned the conversation"))
        try tmux.send("g")
        screen = try tmux.waitFor(text: "1 of 300")
        #expect(screen[1...(pinnedBefore + 1)].allSatisfy { $0.contains("⚑") }, "\(screen)")
        try tmux.send("q")
        #expect(try tmux.waitForExit() == 0)
        let pinned = try Store.open(path: runner.databasePath, readOnly: true).conversations.page(
            sort: .title, filter: ConversationFilter(pinnedOnly: true), at: .first, limit: 400)
        #expect(!pinned.items.isEmpty)
    }

    /// Raw SGR mouse reports (xterm 1006), as a terminal sends them: `send-keys -H`.
    static func sendMouse(_ tmux: TmuxSession, _ reports: [(button: Int, column: Int, row: Int, press: Bool)]) throws {
        let bytes = reports.map { "\u{1B}[<\($0.button);\($0.column + 1);\($0.row + 1)\($0.press ? "M" : "m")" }.joined()
        _ = try tmux.tmux(["send-keys", "-t", "main", "-H"] + bytes.utf8.map { String($0, radix: 16) })
    }

    @Test("a click selects a row, a double click opens it, the wheel scrolls three rows; the header takes no click")
    func mouse() throws {
        let runner = try BinaryRunner()
        #expect(try runner.run(["demo", "--count", "40", "--seed", "8"]).status == 0)
        let tmux = try TmuxSession(width: 90, height: 16, arguments: ["--db", runner.databasePath])
        _ = try tmux.waitFor(text: "1 of 40")
        try Self.sendMouse(tmux, [(0, 10, 6, true), (0, 10, 6, false)])
        _ = try tmux.waitFor(text: "6 of 40")
        try Self.sendMouse(tmux, [(0, 10, 0, true), (0, 10, 0, false)])
        try Self.sendMouse(tmux, [(65, 10, 6, true)])
        _ = try tmux.waitFor(text: "9 of 40")
        try Self.sendMouse(tmux, [(64, 10, 6, true)])
        _ = try tmux.waitFor(text: "6 of 40")
        let title = try tmux.screen()[3].dropFirst(2).replacingOccurrences(of: "⚑ ", with: "").prefix(20).trimmingCharacters(in: .whitespaces)
        try Self.sendMouse(tmux, [(0, 10, 3, true), (0, 10, 3, false), (0, 10, 3, true), (0, 10, 3, false)])
        let screen = try tmux.waitFor(text: "message 1 of")
        #expect(screen[0].contains(title), "\(title) \(screen)")
        try tmux.send("q", "q")
        #expect(try tmux.waitForExit() == 0)
    }

    @Test("config.toml: a bad line is reported in the footer by file and line, the rest applies (keys, colours); config --check lists them")
    func config() throws {
        let runner = try BinaryRunner()
        #expect(try runner.run(["demo", "--count", "10", "--seed", "9"]).status == 0)
        let folder = runner.folder.file("xdg")
        try FileManager.default.createDirectory(atPath: folder + "/scrollback", withIntermediateDirectories: true)
        try "[colors]\nheader = \"bold red\"\ncolour = \"blue\"\n[keys]\nquit = \"Q\"\n".write(
            toFile: folder + "/scrollback/config.toml", atomically: false, encoding: .utf8)
        let check = try runner.run(["config", "--check"], withDatabase: false, environment: ["XDG_CONFIG_HOME": folder])
        #expect(check.status == 1)
        #expect(check.error.hasPrefix("config.toml:3: unknown key 'colour' in [colors]"))
        let tmux = try TmuxSession(width: 120, height: 12, arguments: ["--db", runner.databasePath], environment: ["XDG_CONFIG_HOME": folder])
        let screen = try tmux.waitFor(text: "config.toml:3: unknown key 'colour'")
        #expect(BrowserEndToEndTests.footer(screen).hasPrefix(" config.toml:3: unknown key 'colour' in [colors]"))
        // The header in red (SGR 31), as the file says.
        let styled = try tmux.styledScreen()
        #expect(styled.split(separator: "\n").first?.contains("31m") == true, "\(styled.prefix(200))")
        // q no longer quits: it says it does nothing here (a key with no command does).
        try tmux.send("q")
        _ = try tmux.waitFor(text: "q does nothing here")
        #expect(tmux.exitStatus() == nil)
        try tmux.send("Q")
        #expect(try tmux.waitForExit() == 0)
        // The path, exact to a pipe.
        let path = try runner.run(["config"], withDatabase: false, environment: ["XDG_CONFIG_HOME": folder + "/\u{1B}x"])
        #expect(path.output == folder + "/\u{1B}x/scrollback/config.toml\n")
        // The default file, as printed, is the one in Resources/.
        let printed = try runner.run(["config", "--print-default"], withDatabase: false)
        #expect(printed.status == 0 && printed.output == BrowserConfig.defaultFile())
    }

    @Test("x exports the marked conversations (else the selected one, or the one being read) to a new file; an existing file is refused")
    func exportFromBrowser() throws {
        let runner = try BinaryRunner()
        #expect(try runner.run(["demo", "--count", "12", "--seed", "3"]).status == 0)
        let target = runner.folder.file("two.jsonl")
        let tmux = try TmuxSession(width: 120, height: 14, arguments: ["--db", runner.databasePath, "--readonly"])
        _ = try tmux.waitFor(text: "1 of 12")
        try tmux.send("Space", "Space", "x")
        _ = try tmux.waitFor(text: "Export 2 to:")
        try tmux.send("C-u")
        try tmux.type(target)
        try tmux.send("Enter")
        _ = try tmux.waitFor(text: "Exported 2 conversations as JSON Lines to")
        let lines = try String(contentsOfFile: target, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 2)
        // The same file again: refused, nothing replaced.
        try tmux.send("Enter", "x")
        _ = try tmux.waitFor(text: "Export to:")
        try tmux.send("C-u")
        try tmux.type(target)
        try tmux.send("Enter")
        _ = try tmux.waitFor(text: "Not exported: ")
        #expect(try String(contentsOfFile: target, encoding: .utf8).split(separator: "\n").count == 2)
        try tmux.send("q", "q")
        #expect(try tmux.waitForExit() == 0)
    }
}
