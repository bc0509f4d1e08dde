import Foundation
import Testing

import ScrollbackModel
import TerminalText
@testable import ScrollbackStorage
import TestSupport

/// The browser as a person uses it: the real binary in tmux.
@Suite("The browser in a terminal")
struct BrowserEndToEndTests {
    static func footer(_ screen: [String]) -> String { screen.last { !$0.isEmpty } ?? "" }

    @Test("open, scroll to the end and back, read, rename, delete and undo, search, resize, quit")
    func session() throws {
        let runner = try BinaryRunner()
        #expect(try runner.run(["demo", "--count", "2000", "--seed", "4"]).status == 0)
        let tmux = try TmuxSession(width: 100, height: 24, arguments: ["--db", runner.databasePath])
        var screen = try tmux.waitFor(text: "1 of 2,000")
        #expect(screen[0].contains("scrollback — \(runner.databasePath) · by updated"))
        #expect(screen.count == 24)

        // To the end at once, and back up.
        try tmux.send("G")
        screen = try tmux.waitFor(text: "2,000 of 2,000")
        try tmux.send("k", "k", "PageUp")
        screen = try tmux.waitFor(text: "1,976 of 2,000")
        try tmux.send("g")
        screen = try tmux.waitFor(text: "1 of 2,000")

        // Open the second conversation and read it.
        try tmux.send("j")
        screen = try tmux.waitFor(text: "2 of 2,000")
        try tmux.send("Enter")
        screen = try tmux.waitFor(text: "message 1 of")
        #expect(screen[1].hasPrefix("user · ") || screen[1].hasPrefix("system · "))
        try tmux.send("Escape")
        screen = try tmux.waitFor(text: "2 of 2,000")

        // Rename it.
        try tmux.send("r")
        screen = try tmux.waitFor(text: "Rename:")
        try tmux.send("C-u")
        try tmux.type("Renamed in tmux 東京")
        try tmux.send("Enter")
        screen = try tmux.waitFor(text: "Renamed — u undoes")
        #expect(screen[2].contains("Renamed in tmux 東京"))
        let store = try Store.open(path: runner.databasePath, readOnly: true)
        #expect(try store.search.search("Renamed in tmux", after: nil, limit: 5).items.count == 1)

        // Delete it, then undo.
        try tmux.send("d")
        screen = try tmux.waitFor(text: "(y/n)")
        #expect(Self.footer(screen).contains("Delete “Renamed in tmux 東京”"))
        try tmux.send("y")
        screen = try tmux.waitFor(text: "Deleted 1 conversation — u undoes")
        #expect(!screen.contains { $0.contains("Renamed in tmux") })
        #expect(try Store.open(path: runner.databasePath, readOnly: true).conversations.count() == 1_999)
        try tmux.send("u")
        screen = try tmux.waitFor(text: "Restored 1 conversation (1 more to undo) — Ctrl-R redoes")
        #expect(screen[2].contains("Renamed in tmux 東京"))
        #expect(try Store.open(path: runner.databasePath, readOnly: true).conversations.count() == 2_000)
        // The rename before it undoes too, and Ctrl-R (a raw control byte) does it again.
        try tmux.send("u")
        screen = try tmux.waitFor(text: "Rename undone — Ctrl-R redoes")
        #expect(!screen[2].contains("Renamed in tmux"))
        try tmux.send("C-r")
        screen = try tmux.waitFor(text: "Renamed again (1 more to redo) — u undoes")
        #expect(screen[2].contains("Renamed in tmux 東京"))

        // Search.
        try tmux.send("/")
        screen = try tmux.waitFor("the search prompt") { Self.footer($0).hasPrefix(" /") }
        try tmux.type("sourdough")
        try tmux.send("Enter")
        // The whole frame, not only its header: a capture can land in the middle of a redraw.
        screen = try tmux.waitFor("search results") { screen in
            screen[0].contains("search “sourdough”") && screen[1...2].contains { $0.lowercased().contains("sourdough") }
                && Self.footer(screen).contains("Enter open")
        }
        try tmux.send("n", "Enter")
        screen = try tmux.waitFor(text: "message ")
        #expect(screen.dropFirst().contains { $0.lowercased().contains("sourdough") })
        try tmux.send("Escape", "Escape")
        screen = try tmux.waitFor(text: "2 of 2,000")

        // Tiny and back.
        for (width, height) in [(10, 3), (1, 1), (25, 6), (100, 24)] {
            try tmux.resize(width: width, height: height)
            screen = try tmux.waitFor("a frame at \(width)×\(height)") { screen in
                screen.count == height && screen.allSatisfy { $0.count <= width * 2 }
                    && (width < 20 || height < 5 ? screen[0].hasPrefix(String("Terminal too small".prefix(width))) : screen[0].hasPrefix(" scrollback"))
            }
        }
        screen = try tmux.waitFor(text: "2 of 2,000")

        try tmux.send("q")
        #expect(try tmux.waitForExit() == 0)
        // The terminal is restored: the browser's screen is gone.
        #expect(!(try tmux.screen()).contains { $0.contains("scrollback —") })
    }

    @Test("\\ narrows the list by title as it is typed, in a real terminal; Enter keeps it, Esc in the list clears it; unnamed keys say they do nothing")
    func narrowing() throws {
        let runner = try BinaryRunner()
        #expect(try runner.run(["demo", "--count", "2000", "--seed", "4"]).status == 0)
        let store = try Store.open(path: runner.databasePath, readOnly: true)
        let expected = try store.conversations.count(filter: ConversationFilter(title: "haiku"))
        #expect(expected > 20 && expected < 2_000)
        let tmux = try TmuxSession(width: 100, height: 24, arguments: ["--db", runner.databasePath])
        var screen = try tmux.waitFor(text: "1 of 2,000")
        // Keys with no name here say they do nothing, rather than keeping the last key's words.
        try tmux.send("Z")
        screen = try tmux.waitFor(text: "Z does nothing here")
        for key in ["F5", "BTab", "C-]"] {
            try tmux.send(key)
            screen = try tmux.waitFor(text: "That key does nothing here (? lists the keys of this screen)")
            try tmux.send("j", "k")
            screen = try tmux.waitFor(text: "1 of 2,000")
        }
        try tmux.send("Tab")
        screen = try tmux.waitFor(text: "Tab does nothing here")
        try tmux.type("\\")
        screen = try tmux.waitFor(text: "Narrow:")
        try tmux.type("haiku")
        // The list follows the typing: every row shown holds the word, the count is the filter's.
        // (A long title is cut around the word, so that it shows.)
        screen = try tmux.waitFor(text: "title:haiku")
        #expect(screen[1..<23].filter { !$0.isEmpty }.allSatisfy { $0.lowercased().contains("haiku") }, "\(screen.joined(separator: "\n"))")
        try tmux.send("Enter")
        screen = try tmux.waitFor(text: "Titles with “haiku” — Esc clears the filter")
        try tmux.send("G")
        screen = try tmux.waitFor(text: "\(NumberText.grouped(expected)) of \(NumberText.grouped(expected)) (filtered)")
        // Cleared, on the same conversation: among all 2,000 now.
        try tmux.send("Escape")
        screen = try tmux.waitFor(text: "Filter cleared: every conversation")
        #expect(!screen[0].contains("title:"))
        try tmux.send("q")
        #expect(try tmux.waitForExit() == 0)
    }

    @Test("--readonly: editing keys say read-only; the database stays byte-identical, only SQLite's -shm may appear")
    func readOnly() throws {
        let runner = try BinaryRunner()
        #expect(try runner.run(["demo", "--count", "300"]).status == 0)
        let before = try sha256(ofFile: runner.databasePath)
        let files = runner.dataFiles()
        let tmux = try TmuxSession(width: 90, height: 20, arguments: ["--db", runner.databasePath, "--readonly"])
        var screen = try tmux.waitFor(text: "1 of 300")
        #expect(screen[0].contains("[read-only]"))
        #expect(Self.footer(screen).contains("read-only"))
        for (key, action) in [("d", "delete"), ("r", "rename"), ("u", "undo")] {
            try tmux.send(key)
            screen = try tmux.waitFor(text: "read-only: cannot \(action)")
        }
        try tmux.send("Space", "D")
        screen = try tmux.waitFor(text: "read-only: cannot delete")
        try tmux.send("s")
        screen = try tmux.waitFor(text: "by created")
        // Esc and the next key sent together would be one key, Alt+/: a person's Esc comes
        // alone, so the test waits for it to take effect.
        try tmux.send("Enter", "j")
        screen = try tmux.waitFor(text: "message ")
        try tmux.send("Escape")
        screen = try tmux.waitFor(text: "of 300")
        try tmux.send("/")
        try tmux.type("the")
        try tmux.send("Enter")
        screen = try tmux.waitFor(text: "search “the”")
        try tmux.send("Escape")
        screen = try tmux.waitFor(text: "of 300")
        try tmux.send("q")
        #expect(try tmux.waitForExit() == 0)
        #expect(try sha256(ofFile: runner.databasePath) == before)
        #expect(runner.dataFiles().filter { !$0.hasSuffix("-shm") && !$0.hasSuffix("-wal") } == files)
        #expect((try? Data(contentsOf: URL(fileURLWithPath: runner.databasePath + "-wal")))?.count ?? 0 == 0)
    }

    @Test("a delete of 2,000 undone says “Restoring…” on the screen before it puts them back (the raw bytes the terminal got)")
    func slowUndoDrawnFirst() throws {
        let runner = try BinaryRunner()
        #expect(try runner.run(["demo", "--count", "2100", "--seed", "9"]).status == 0)
        let tmux = try TmuxSession(width: 100, height: 20, arguments: ["--db", runner.databasePath])
        _ = try tmux.waitFor(text: "1 of 2,100")
        for _ in 0..<20 { try tmux.type(String(repeating: " ", count: 100)) }
        _ = try tmux.waitFor(text: "2,000 marked")
        try tmux.send("D")
        _ = try tmux.waitFor(text: "(y/n)")
        try tmux.send("y")
        _ = try tmux.waitFor(text: "Deleted 2,000 conversations — u undoes")
        let capture = runner.folder.file("undo.bytes")
        try tmux.tmux(["pipe-pane", "-o", "-t", "main", "cat >> '\(capture)'"])
        try tmux.send("u")
        _ = try tmux.waitFor(text: "Restored 2,000 conversations — Ctrl-R redoes")
        _ = try? tmux.tmux(["pipe-pane", "-t", "main"])
        let bytes = String(decoding: try Data(contentsOf: URL(fileURLWithPath: capture)), as: UTF8.self)
        let said = try #require(bytes.range(of: "Restoring 2,000 conversations"), "the footer never said it")
        // (ncurses writes only the cells that change: "Restor" stays, "ed 2,000 …" follows.)
        let done = try #require(bytes.range(of: "conversations — Ctrl-R redoes"))
        #expect(said.lowerBound < done.lowerBound)
        #expect(try Store.open(path: runner.databasePath).conversations.count() == 2_100)
        try tmux.send("q")
        #expect(try tmux.waitForExit() == 0)
    }

    @Test("Ctrl-C quits cleanly; changes from another process show up while the browser is idle")
    func outsideChangesAndCtrlC() throws {
        let runner = try BinaryRunner()
        #expect(try runner.run(["demo", "--count", "50"]).status == 0)
        let tmux = try TmuxSession(width: 90, height: 20, arguments: ["--db", runner.databasePath])
        var screen = try tmux.waitFor(text: "1 of 50")
        try tmux.send("j", "j")
        screen = try tmux.waitFor(text: "3 of 50")
        let selectedTitle = screen[3]
        // Another process adds a conversation that sorts first and deletes the last one.
        do {
            let store = try Store.open(path: runner.databasePath)
            _ = try store.conversations.create(NewConversation(title: "Arrived from outside", pinned: true))
            let last = try #require(try store.conversations.page(sort: .updated, at: .last, limit: 1).items.first)
            _ = try store.conversations.delete(id: last.id)
        }
        // The list reloads by itself, keeping the selected conversation on its line.
        screen = try tmux.waitFor(text: "4 of 50")
        #expect(screen[3] == selectedTitle)
        try tmux.send("g")
        screen = try tmux.waitFor(text: "Arrived from outside")
        try tmux.send("C-c")
        #expect(try tmux.waitForExit() == 0)
        #expect(!(try tmux.screen()).contains { $0.contains("scrollback —") })
    }

    @Test("an empty database shows what to do; the README's --demo opens the browser")
    func emptyAndDemo() throws {
        let runner = try BinaryRunner()
        let empty = try TmuxSession(width: 80, height: 12, arguments: ["--db", runner.databasePath])
        try empty.waitFor(text: "No conversations yet.")
        // The hint's last line is drawn last; a loaded machine can show the frame half-drawn.
        let screen = try empty.waitFor(text: "scrollback --demo")
        #expect(screen.contains { $0.contains("scrollback import") })
        try empty.send("q")
        #expect(try empty.waitForExit() == 0)

        let demo = try TmuxSession(width: 80, height: 12, arguments: ["--demo"], environment: ["HOME": runner.folder.path])
        try demo.waitFor(text: "1 of 10,000")
        try demo.send("q")
        #expect(try demo.waitForExit() == 0)
    }

    @Test("colours by default; NO_COLOR and a monochrome terminal get attributes only", arguments: [
        ([String: String](), true), (["NO_COLOR": "1"], false), (["TERM": "vt100"], false),
    ])
    func colours(environment: [String: String], coloured: Bool) throws {
        let runner = try BinaryRunner()
        #expect(try runner.run(["demo", "--count", "20"]).status == 0)
        let tmux = try TmuxSession(width: 80, height: 16, arguments: ["--db", runner.databasePath], environment: environment)
        try tmux.waitFor(text: "1 of 20")
        try tmux.send("Enter")
        try tmux.waitFor(text: "message 1 of")
        let styled = try tmux.styledScreen()
        // SGR foreground colours are 30–37 (or 38;…); bold (1) and reverse (7) are not colours.
        let hasColour = styled.range(of: #"\x{1B}\[[0-9;]*(3[0-8])[;m]"#, options: .regularExpression) != nil
        #expect(hasColour == coloured, "\(styled)")
        #expect(styled.contains("\u{1B}[1m") || styled.contains(";1m") || styled.contains("[1;"), "bold headers")
        try tmux.send("q", "q")
        #expect(try tmux.waitForExit() == 0)
    }
}
