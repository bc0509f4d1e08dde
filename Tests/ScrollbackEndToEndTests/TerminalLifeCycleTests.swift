import Foundation
import Testing

import ScrollbackModel
@testable import ScrollbackStorage
import TestSupport

/// What the browser leaves behind, however it ends (a signal in any screen, Ctrl-Z, a
/// closed window), and what pastes can do (nothing but type text). The real binary in tmux.
@Suite("The terminal's life cycle: signals, suspending, pastes")
struct TerminalLifeCycleTests {
    /// A browser on `count` demo conversations, showing its list.
    static func browser(count: Int = 5, width: Int = 90, height: Int = 16, jobControl: Bool = false) throws -> (BinaryRunner, TmuxSession) {
        let runner = try BinaryRunner()
        #expect(try runner.run(["demo", "--count", "\(count)"]).status == 0)
        let tmux = try TmuxSession(width: width, height: height, arguments: ["--db", runner.databasePath], jobControl: jobControl)
        try tmux.waitFor(text: "1 of \(count)")
        return (runner, tmux)
    }

    static func count(_ runner: BinaryRunner) throws -> Int {
        try Store.open(path: runner.databasePath, readOnly: true).conversations.count()
    }

    /// Opens the given screen: the list, the reader, the rename editor, the delete question,
    /// the search prompt.
    static func open(_ place: String, in tmux: TmuxSession) throws {
        switch place {
        case "reader":
            try tmux.send("Enter")
            try tmux.waitFor(text: "message 1 of")
        case "editor":
            try tmux.send("r")
            try tmux.waitFor(text: "Rename:")
        case "question":
            try tmux.send("d")
            try tmux.waitFor(text: "(y/n)")
        case "search":
            try tmux.send("/")
            try tmux.waitFor("the search prompt") { BrowserEndToEndTests.footer($0).hasPrefix(" /") }
        default:
            break
        }
    }

    /// The terminal is as a shell wants it: the normal screen, the cursor shown, no mouse
    /// tracking, and (once the program has ended) sane line settings.
    static func expectRestored(_ tmux: TmuxSession, afterExit: Bool = true, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let state: String
        if afterExit {
            try tmux.waitUntil("the terminal's state after the program") { !(tmux.terminalModesAfterExit() ?? "").isEmpty }
            state = tmux.terminalModesAfterExit() ?? ""
        } else {
            state = try tmux.tmux(["display-message", "-p", "-t", "main", "#{alternate_on} #{cursor_flag} #{mouse_any_flag}"])
        }
        #expect(state.trimmingCharacters(in: .whitespacesAndNewlines) == "0 1 0", "alternate screen, cursor, mouse", sourceLocation: sourceLocation)
        guard afterExit else { return }
        let settings = tmux.terminalSettingsAfterExit() ?? ""
        let words = Set(settings.split(whereSeparator: \.isWhitespace).map(String.init))
        for flag in ["icanon", "echo", "isig", "icrnl", "opost", "onlcr"] {
            #expect(words.contains(flag), "stty \(flag): \(settings)", sourceLocation: sourceLocation)
        }
    }

    @Test("every terminating signal, in every screen, restores the terminal and exits 128 + n", arguments: [
        (SIGTERM, "list"), (SIGINT, "list"), (SIGHUP, "list"), (SIGQUIT, "list"), (SIGPIPE, "list"), (SIGUSR1, "list"),
        (SIGALRM, "list"), (SIGTERM, "editor"), (SIGHUP, "question"), (SIGQUIT, "reader"), (SIGUSR1, "search"),
    ])
    func signal(_ signal: Int32, place: String) throws {
        let (runner, tmux) = try Self.browser()
        try Self.open(place, in: tmux)
        let pid = try #require(try tmux.programPID())
        #expect(kill(pid, signal) == 0)
        #expect(try tmux.waitForExit() == 128 + signal)
        try Self.expectRestored(tmux)
        // No crash report, no "Press space to interact" (SIGQUIT), nothing deleted.
        #expect(!(try tmux.screen()).contains { $0.contains("Crash") || $0.contains("Press space") })
        #expect(try Self.count(runner) == 5)
    }

    @Test("closing the window ends the program")
    func closedWindow() throws {
        let (_, tmux) = try Self.browser()
        try Self.open("editor", in: tmux)
        let pid = try #require(try tmux.programPID())
        try tmux.tmux(["kill-pane", "-t", "main"])
        try tmux.waitUntil("the program ends") { !TmuxSession.isRunning(pid) }
    }

    @Test("Ctrl-Z and SIGTSTP give the terminal back and stop; fg redraws the open editor")
    func suspend() throws {
        let (runner, tmux) = try Self.browser(jobControl: true)
        try Self.open("editor", in: tmux)
        try tmux.send("C-u")
        try tmux.type("half typed")
        try tmux.waitFor(text: "Rename: half typed")
        let pid = try #require(try tmux.programPID())
        for stop in ["Ctrl-Z", "SIGTSTP"] {
            if stop == "Ctrl-Z" { try tmux.send("C-z") } else { #expect(kill(pid, SIGTSTP) == 0) }
            try tmux.waitFor(text: "Stopped")
            try Self.expectRestored(tmux, afterExit: false)
            try tmux.send("C-l")
            try tmux.type("fg")
            try tmux.send("Enter")
            try tmux.waitFor(text: "Rename: half typed")
        }
        // Bracketed paste is on again: a paste with a line break stays text in the editor.
        try tmux.paste(" and\npasted")
        try tmux.waitFor(text: "Rename: half typed and pasted")
        try tmux.send("Escape")
        try tmux.waitFor(text: "Rename cancelled")
        try tmux.send("q")
        #expect(try tmux.waitForExit() == 0)
        try Self.expectRestored(tmux)
        #expect(try Self.count(runner) == 5)
    }

    @Test("a paste is text for the editor, never commands; outside an editor it is ignored")
    func pastesAreText() throws {
        let (runner, tmux) = try Self.browser()
        let store = try Store.open(path: runner.databasePath, readOnly: true)
        let first = try #require(try store.conversations.page(sort: .updated, at: .first, limit: 1).items.first)

        // The attack: a title, a line break, then d and y.
        try Self.open("editor", in: tmux)
        try tmux.send("C-u")
        try tmux.paste("Pasted title\ndy\u{1B}q")
        try tmux.waitFor(text: "Rename: Pasted title dyq")
        try tmux.send("Enter")
        try tmux.waitFor(text: "Renamed — u undoes")
        #expect(try store.conversations.conversation(id: first.id)?.title == "Pasted title dyq")
        #expect(try Self.count(runner) == 5)

        // In the list, the same paste does nothing but say so.
        try tmux.paste("dy\nq")
        try tmux.waitFor(text: "Paste ignored")
        #expect(try Self.count(runner) == 5)

        // Without bracketed paste (the keys arrive as typed, in one burst), d opens the
        // question but the y that came with it does not answer it.
        try tmux.paste("dy", bracketed: false)
        try tmux.waitFor(text: "(y/n)")
        #expect(try Self.count(runner) == 5)
        try tmux.send("n")
        try tmux.waitFor(text: "Nothing deleted")
        try tmux.send("q")
        #expect(try tmux.waitForExit() == 0)
        #expect(try Self.count(runner) == 5)
    }

    @Test("a 100 KB paste, bracketed or not, is cut to 1,000 characters with a note, and Esc still works after it")
    func largePastes() throws {
        let (runner, tmux) = try Self.browser()
        let text = String(repeating: "abcdefghi ", count: 10_000)
        for bracketed in [true, false] {
            try Self.open("editor", in: tmux)
            try tmux.send("C-u")
            try tmux.paste(text, bracketed: bracketed)
            // A liveness guard, not a speed bar: editing was quadratic and a 100 KB paste
            // took minutes.
            try tmux.waitFor(text: "cut to 1,000 characters")
            try tmux.send("C-u")
            try tmux.type("short")
            try tmux.waitFor(text: "Rename: short")
            try tmux.send("Escape")
            try tmux.waitFor(text: "Rename cancelled")
        }
        try tmux.send("q")
        #expect(try tmux.waitForExit() == 0)
        #expect(try Self.count(runner) == 5)
    }

    @Test("Alt+letter is one key, never Esc and the letter; Home and End as ESC[1~ and ESC[4~ keep the editor")
    func altAndUnknownSequences() throws {
        let runner = try BinaryRunner()
        #expect(try runner.run(["demo", "--count", "5"]).status == 0)
        // TERM=xterm: its description has Home as ESC O H, while tmux sends ESC [ 1 ~.
        let tmux = try TmuxSession(width: 90, height: 16, arguments: ["--db", runner.databasePath], environment: ["TERM": "xterm"])
        try tmux.waitFor(text: "1 of 5")
        try tmux.send("M-d", "M-q", "j")
        try tmux.waitFor(text: "2 of 5")
        #expect(!BrowserEndToEndTests.footer(try tmux.screen()).contains("(y/n)"))
        try Self.open("reader", in: tmux)
        try tmux.send("M-q", "?")
        try tmux.waitFor(text: "key closes")
        #expect(BrowserEndToEndTests.footer(try tmux.screen()).contains("message 1 of"))
        try tmux.send("q")
        try tmux.waitFor("the help closed") { !$0.contains { $0.contains("key closes") } }
        try tmux.send("q")
        try tmux.waitFor(text: "2 of 5")

        try Self.open("editor", in: tmux)
        try tmux.send("C-u")
        try tmux.type("middle")
        try tmux.send("Home")
        try tmux.type("[")
        try tmux.send("End")
        try tmux.type("]")
        try tmux.tmux(["send-keys", "-t", "main", "-l", "\u{1B}[1~<\u{1B}[4~>\u{1B}[7~"])
        try tmux.waitFor(text: "Rename: <[middle]>")
        try tmux.send("Escape")
        try tmux.waitFor(text: "Rename cancelled")
        try tmux.send("q")
        #expect(try tmux.waitForExit() == 0)
        #expect(try Self.count(runner) == 5)
    }

    @Test("a terminal the browser cannot use is said plainly, before any file is made", arguments: [
        (["TERM": "dumb"], "TERM=xterm-256color"), (["TERM": "no-such-terminal"], "TERM=xterm-256color"),
        (["COLUMNS": "99999"], "unset COLUMNS and LINES"), (["LINES": "99999"], "unset COLUMNS and LINES"),
    ])
    func unusableTerminal(environment: [String: String], advice: String) throws {
        let runner = try BinaryRunner()
        let tmux = try TmuxSession(
            width: 100, height: 10, arguments: ["--db", runner.databasePath], environment: environment, captureErrors: true)
        #expect(try tmux.waitForExit() == 1)
        let errors = tmux.errorsAfterExit()
        #expect(errors.hasPrefix("scrollback: ") && errors.contains(advice) && errors.contains("scrollback list"), "\(errors)")
        #expect(errors.split(separator: "\n").count == 1)
        #expect(runner.dataFiles() == [])
    }
}

extension TmuxSession {
    /// The browser's process id: the `scrollback` process under the pane.
    func programPID() throws -> pid_t? {
        let text = try tmux(["display-message", "-p", "-t", "main", "#{pane_pid}"])
        guard let root = pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines)) else { return nil }
        var queue = [root]
        while !queue.isEmpty {
            let pid = queue.removeFirst()
            let command = (try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8)) ?? ""
            if command.trimmingCharacters(in: .whitespacesAndNewlines) == "scrollback" { return pid }
            let children = (try? String(contentsOfFile: "/proc/\(pid)/task/\(pid)/children", encoding: .utf8)) ?? ""
            queue += children.split(separator: " ").compactMap { pid_t($0) }
        }
        return nil
    }

    /// True while the process exists and is not a zombie.
    static func isRunning(_ pid: pid_t) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return false }
        return !(stat.split(separator: ")").last?.trimmingCharacters(in: .whitespaces).hasPrefix("Z") ?? true)
    }

    /// Pastes `text` as a terminal would: bracketed (`ESC[200~ … ESC[201~`) when the
    /// program asked for it and `bracketed` is set, otherwise as if typed.
    func paste(_ text: String, bracketed: Bool = true) throws {
        // Through a file: a long text does not fit in a command's arguments.
        let path = (NSTemporaryDirectory() as NSString).appendingPathComponent("scrollback-paste-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        try tmux(["load-buffer", "-b", "test", path])
        try tmux(["paste-buffer", "-d", "-b", "test", "-t", "main"] + (bracketed ? ["-p"] : []))
    }

    /// Waits for something other than the screen (a liveness guard with a generous limit).
    func waitUntil(_ what: String, timeout: TimeInterval = 20, _ condition: () -> Bool) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if condition() { return }
            usleep(50_000)
        }
        throw TmuxError(description: "waited for \(what)")
    }
}
