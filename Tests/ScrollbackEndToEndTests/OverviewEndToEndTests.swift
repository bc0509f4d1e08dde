import Foundation
import Testing

import ScrollbackModel
@testable import ScrollbackStorage
import TestSupport

/// The activity overview in a real terminal: `a` from the list, Enter on a bar, and what
/// the program writes (tmux `pipe-pane`) with hostile model and source names.
@Suite("The activity overview in a terminal")
struct OverviewEndToEndTests {
    @Test("a opens the overview of the filtered list; Enter on March's bar opens the list filtered to March; no control of the data reaches the terminal")
    func enterOnBar() throws {
        let runner = try BinaryRunner()
        do {
            let store = try Store.open(path: runner.databasePath)
            try store.addActivity()
            _ = try store.conversations.create(
                NewConversation(
                    title: "hostile source", model: "M" + BrowserEscapeInjectionTests.hostile, source: "S" + BrowserEscapeInjectionTests.hostile,
                    createdAt: Timestamp(milliseconds: 1_746_100_000_000)))  // 2025-05-01
        }
        let capture = runner.folder.file("raw-output")
        let tmux = try TmuxSession(width: 100, height: 50, arguments: ["--db", runner.databasePath, "--readonly"])
        try tmux.waitFor(text: "of 15")
        try tmux.send("f")
        try tmux.type("since:2025-01 until:2025-06")
        try tmux.send("Enter")
        try tmux.waitFor(text: "Filtered")
        try tmux.tmux(["pipe-pane", "-o", "-t", "main", "cat >> '\(capture)'"])
        try tmux.send("a")
        // Each chart shows as it is counted: wait for the last.
        var screen = try tmux.waitFor("every chart") { $0.contains { $0.contains("Busiest days") } && !$0.contains { $0.contains("counting…") } }
        #expect(screen[0].contains("Activity · since:2025-01-01 until:2025-06-30"))
        #expect(screen.contains { $0.contains("Conversations per month · 15") })
        #expect(screen.contains { $0.contains("Tokens per month · 5,660") })
        #expect(screen.contains { $0.hasPrefix(" 2025-03 ") && $0.contains("█") && $0.hasSuffix(" 4") })
        #expect(screen.contains { $0.contains("ME␛]52;c;") }, "\(screen)")
        try tmux.send("j")
        try tmux.send("j")
        try tmux.waitFor(text: "3 of ")
        try tmux.send("Enter")
        try tmux.waitFor(text: "Filtered — since:2025-03-01 until:2025-03-31")
        try tmux.send("j")
        screen = try tmux.waitFor(text: "2 of 4")
        #expect(screen[0].contains("since:2025-03-01 until:2025-03-31"))
        #expect(screen.filter { $0.contains("Activity ") }.count == 4, "\(screen)")
        // Esc clears the filter: every conversation again.
        try tmux.send("Escape")
        try tmux.waitFor(text: "Filter cleared: every conversation")
        try tmux.send("q")
        #expect(try tmux.waitForExit() == 0)
        _ = try? tmux.tmux(["pipe-pane", "-t", "main"])
        let text = String(decoding: try Data(contentsOf: URL(fileURLWithPath: capture)), as: UTF8.self)
        for sequence in ["\u{1B}]", "\u{1B}P", "\u{1B}_", "\u{1B}^", "\u{1B}X", "\u{1B}[38;5;196", "\u{1B}[6n", "\u{1B}\\"] {
            #expect(!text.contains(sequence), "\(sequence.debugDescription) reached the terminal")
        }
        let forbidden = text.unicodeScalars.filter { scalar in
            (0x80...0x9F).contains(scalar.value) || [0x00, 0x07, 0x0E, 0x7F, 0x202E, 0x202C, 0x2066, 0x2069, 0x200B, 0xFEFF].contains(scalar.value)
        }
        #expect(forbidden.isEmpty, "\(forbidden.map { String($0.value, radix: 16) })")
    }
}
