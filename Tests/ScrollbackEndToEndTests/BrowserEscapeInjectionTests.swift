import Foundation
import Testing

import ScrollbackModel
@testable import ScrollbackStorage
import TestSupport

/// Hostile titles and messages in the browser: the raw stream the program writes (tmux
/// `pipe-pane`) carries none of their control sequences, in any screen.
@Suite("Escape injection in the browser")
struct BrowserEscapeInjectionTests {
    /// Every kind of control the data can carry: C0, DEL, C1, CSI, OSC 0/8/52 (title,
    /// hyperlink, clipboard), DCS, APC, PM, SOS, bidi overrides and zero-width characters.
    static let hostile =
        "E\u{1B}]52;c;aGVsbG8=\u{07}v\u{1B}]0;pwned\u{07}i\u{1B}]8;;http://x.test\u{1B}\\l\u{1B}]8;;\u{1B}\\ "
        + "\u{1B}P1$qm\u{1B}\\\u{1B}_apc\u{1B}\\\u{1B}^pm\u{1B}\\\u{1B}Xsos\u{1B}\\\u{1B}[38;5;196mRED\u{1B}[6n\u{1B}[2J\u{1B}[?1049l"
        + "\u{9B}31m\u{9D}0;c1\u{9C}\u{85}\u{202E}rtl\u{202C}\u{2066}iso\u{2069}\u{200B}zw\u{FEFF}\r\u{08}\u{00}\u{7F}\u{07}\u{0E}end"

    @Test("list, reader, search results, rename editor and delete question send none of the data's controls")
    func noControlsReachTheTerminal() throws {
        let runner = try BinaryRunner()
        do {
            let store = try Store.open(path: runner.databasePath)
            _ = try store.addConversation(title: "plain one", createdAt: 1_000, messages: ["hello"])
            _ = try store.addConversation(
                title: "T" + Self.hostile, createdAt: 2_000,
                messages: ["needle " + Self.hostile, "line one\n" + Self.hostile + "\nneedle again"])
        }
        let capture = runner.folder.file("raw-output")
        let tmux = try TmuxSession(width: 100, height: 20, arguments: ["--db", runner.databasePath])
        try tmux.waitFor(text: "1 of 2")
        try tmux.tmux(["pipe-pane", "-o", "-t", "main", "cat >> '\(capture)'"])
        // Everything is drawn anew at a new size, now that the output is captured.
        try tmux.resize(width: 99, height: 20)
        try tmux.waitFor("the list at 99 columns") { $0.count == 20 && $0[1].contains("␛") && $0.last?.contains("1 of 2") == true }
        try tmux.send("Enter")
        try tmux.waitFor(text: "message 1 of")
        try tmux.send("q")
        try tmux.waitFor(text: "1 of 2")
        try tmux.send("/")
        try tmux.type("needle")
        try tmux.send("Enter")
        try tmux.waitFor("search results") { $0[0].contains("search “needle”") && $0.contains { $0.contains("␛") } }
        try tmux.send("q")
        try tmux.waitFor(text: "1 of 2")
        try tmux.send("r")
        try tmux.waitFor(text: "Rename: ")
        try tmux.send("Escape")
        try tmux.waitFor(text: "Rename cancelled")
        try tmux.send("d")
        try tmux.waitFor(text: "(y/n)")
        try tmux.send("n")
        try tmux.waitFor(text: "Nothing deleted")
        try tmux.send("q")
        #expect(try tmux.waitForExit() == 0)
        _ = try? tmux.tmux(["pipe-pane", "-t", "main"])

        let raw = try Data(contentsOf: URL(fileURLWithPath: capture))
        let text = String(decoding: raw, as: UTF8.self)
        #expect(raw.count > 1_000, "the capture holds the frames")
        // What only the data could have sent: string controls (OSC, DCS, APC, PM, SOS) and
        // the data's own CSI sequences. (ncurses itself sends cursor moves and colours; the
        // data's sequences show as text after a visible ␛.)
        for sequence in ["\u{1B}]", "\u{1B}P", "\u{1B}_", "\u{1B}^", "\u{1B}X", "\u{1B}[38;5;196", "\u{1B}[6n", "\u{1B}\\"] {
            #expect(!text.contains(sequence), "\(sequence.debugDescription) reached the terminal")
        }
        let forbidden = text.unicodeScalars.filter { scalar in
            (0x80...0x9F).contains(scalar.value) || [0x00, 0x07, 0x0E, 0x7F, 0x202E, 0x202C, 0x2066, 0x2069, 0x200B, 0xFEFF].contains(scalar.value)
        }
        #expect(forbidden.isEmpty, "\(forbidden.map { String($0.value, radix: 16) })")
        #expect(text.contains("␛]52;c;aGVsbG8=␇") && text.contains("⍰rtl"), "the controls are shown as placeholders")
        // The title is still exactly what it was.
        let store = try Store.open(path: runner.databasePath, readOnly: true)
        let titles = try store.conversations.page(sort: .updated, at: .first, limit: 5).items.map(\.title)
        #expect(titles.contains("T" + Self.hostile))
    }
}
