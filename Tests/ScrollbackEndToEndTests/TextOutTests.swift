import Foundation
import Testing

import ScrollbackModel
import ScrollbackStorage
import TestSupport

/// Getting text out of the browser, as a person does it in a real terminal: the clipboard
/// through OSC 52 (the bytes the program writes, captured with pipe-pane), a clipboard
/// program, a pipe to a shell command, the pager and the editor.
@Suite("Getting text out of the browser")
struct TextOutTests {
    /// A database with one conversation whose messages hold a code block and hostile text.
    static func makeDatabase(_ runner: BinaryRunner) throws -> (id: String, message: String, code: String) {
        let message = "Here is the fix:\n```swift\nlet x = 1 // naïve 東京\nprint(x)\n```\nand evil \u{1B}]0;owned\u{7} text"
        let record: [String: Any] = [
            "format": "scrollback", "version": 1, "id": "5d9f1c2e-0000-4000-8000-000000000001", "title": "Fix \u{1B}[31mit",
            "source": "local", "createdAt": "2026-01-01T00:00:00.000Z", "updatedAt": "2026-01-01T00:00:00.000Z", "pinned": false,
            "messages": [
                ["id": "a", "role": "user", "content": "How do I fix it?", "createdAt": "2026-01-01T00:00:00.000Z"],
                ["id": "b", "role": "assistant", "content": message, "createdAt": "2026-01-01T00:01:00.000Z"],
            ],
        ]
        let file = runner.folder.file("one.jsonl")
        try JSONSerialization.data(withJSONObject: record).write(to: URL(fileURLWithPath: file))
        #expect(try runner.run(["import", file]).status == 0)
        return ("5d9f1c2e", message, "let x = 1 // naïve 東京\nprint(x)")
    }

    /// The texts of every OSC 52 sequence in `raw`, decoded.
    static func clipboardWrites(_ raw: Data) -> [String] {
        let text = String(decoding: raw, as: UTF8.self)
        return text.components(separatedBy: "\u{1B}]52;c;").dropFirst().compactMap { part in
            guard let end = part.firstIndex(of: "\u{07}") else { return nil }
            return Data(base64Encoded: String(part[..<end])).map { String(decoding: $0, as: UTF8.self) }
        }
    }

    @Test("y copies the focused message and Y its code block through OSC 52 (and a clipboard program), exactly; the footer says what and how much")
    func copy() throws {
        let runner = try BinaryRunner()
        let (_, message, code) = try Self.makeDatabase(runner)
        let raw = runner.folder.file("raw")
        let program = runner.folder.file("clipboard")
        let tmux = try TmuxSession(
            width: 100, height: 20, arguments: ["--db", runner.databasePath],
            environment: ["SCROLLBACK_CLIPBOARD": "cat > '\(program)'"])
        _ = try tmux.tmux(["pipe-pane", "-O", "-t", "main", "cat >> '\(raw)'"])
        _ = try tmux.waitFor(text: "1 of 1")
        try tmux.send("Enter")
        _ = try tmux.waitFor(text: "message 1 of 2")
        try tmux.send("}", "y")
        var screen = try tmux.waitFor(text: "Copied message 2")
        #expect(screen.last?.contains("Copied message 2 (\(message.count) characters) through OSC 52 and $SCROLLBACK_CLIPBOARD") == true, "\(screen)")
        try tmux.send("Y")
        screen = try tmux.waitFor(text: "Copied the code block of message 2")
        try tmux.send("q", "q")
        #expect(try tmux.waitForExit() == 0)
        let writes = Self.clipboardWrites(try Data(contentsOf: URL(fileURLWithPath: raw)))
        #expect(writes == [message, code])
        #expect(try String(contentsOfFile: program, encoding: .utf8) == code)
        // The escape in the message went out only inside base64, never raw.
        #expect(!String(decoding: try Data(contentsOf: URL(fileURLWithPath: raw)), as: UTF8.self).contains("\u{1B}]0;owned"))
    }

    @Test("inside tmux with set-clipboard external (its default) or off, a copy goes into tmux's buffer and the footer says how to let OSC 52 through; with it on, OSC 52 passes")
    func copyInsideTmux() throws {
        let runner = try BinaryRunner()
        let (_, message, _) = try Self.makeDatabase(runner)
        let raw = runner.folder.file("raw")
        let tmux = try TmuxSession(width: 220, height: 20, arguments: ["--db", runner.databasePath], insideTmux: true)
        _ = try tmux.tmux(["pipe-pane", "-O", "-t", "main", "cat >> '\(raw)'"])
        _ = try tmux.waitFor(text: "1 of 1")
        try tmux.send("Enter")
        _ = try tmux.waitFor(text: "message 1 of 2")
        for setting in ["external", "off"] {
            _ = try tmux.tmux(["set-option", "-g", "set-clipboard", setting])
            _ = try? tmux.tmux(["delete-buffer"])  // none yet the first time
            try tmux.send("}", "y")
            let screen = try tmux.waitFor(text: "through tmux's buffer")
            #expect(screen.last?.contains("`set -g set-clipboard on`") == true && screen.last?.contains("(it is \(setting))") == true, "\(screen)")
            #expect(try tmux.tmux(["show-buffer"]) == message)
            try tmux.send("{")
        }
        // Nothing went to the terminal as OSC 52 while tmux would have dropped it.
        #expect(Self.clipboardWrites(try Data(contentsOf: URL(fileURLWithPath: raw))).isEmpty)
        _ = try tmux.tmux(["set-option", "-g", "set-clipboard", "on"])
        try tmux.send("}", "y")
        let screen = try tmux.waitFor(text: "through OSC 52 (through tmux)")
        #expect(screen.last?.contains("set-clipboard") == false, "\(screen)")
        try tmux.send("q", "q")
        #expect(try tmux.waitForExit() == 0)
    }

    @Test("| pipes the conversation, exact, to a typed command on standard input; the pager and the editor get the safe text, the editor's file read-only and removed")
    func pipePagerEditor() throws {
        let runner = try BinaryRunner()
        let (id, _, _) = try Self.makeDatabase(runner)
        let exported = try runner.run(["export", id]).output
        let piped = runner.folder.file("piped")
        let paged = runner.folder.file("paged")
        let edited = runner.folder.file("edited")
        let record = runner.folder.file("record.sh")
        // The editor records what it was given and the file's mode, then leaves.
        try "cp \"$1\" '\(edited)'; stat -c %a \"$1\" > '\(edited).mode'; echo \"$1\" > '\(edited).path'\n".write(
            toFile: record, atomically: false, encoding: .utf8)
        let tmux = try TmuxSession(
            width: 100, height: 20, arguments: ["--db", runner.databasePath],
            environment: ["PAGER": "cat > '\(paged)'", "EDITOR": "sh '\(record)'"])
        _ = try tmux.waitFor(text: "1 of 1")
        try tmux.send("|")
        _ = try tmux.waitFor(text: "Pipe to:")
        try tmux.type("wc -c > '\(piped)'; cat > /dev/null")
        try tmux.send("Enter")
        _ = try tmux.waitFor(text: "press Enter to return")
        try tmux.send("Enter")
        _ = try tmux.waitFor(text: "Piped the conversation to wc -c")
        #expect(try String(contentsOfFile: piped, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines) == "\(exported.utf8.count)")

        try tmux.send("Enter")
        _ = try tmux.waitFor(text: "message 1 of 2")
        try tmux.send("o")
        _ = try tmux.waitFor(text: "Back from the pager")
        let pagedText = try String(contentsOfFile: paged, encoding: .utf8)
        #expect(pagedText.contains("# Fix ␛[31mit") && pagedText.contains("evil ␛]0;owned␇ text"))
        #expect(!pagedText.contains("\u{1B}"))
        try tmux.send("e")
        _ = try tmux.waitFor(text: "Back from the editor; its copy was removed")
        #expect(try String(contentsOfFile: edited, encoding: .utf8) == pagedText)
        #expect(try String(contentsOfFile: edited + ".mode", encoding: .utf8) == "400\n")
        let path = try String(contentsOfFile: edited + ".path", encoding: .utf8).trimmingCharacters(in: .newlines)
        #expect(path.hasSuffix("/5d9f1c2e.md") && !FileManager.default.fileExists(atPath: path))
        #expect(!FileManager.default.fileExists(atPath: (path as NSString).deletingLastPathComponent))
        // The terminal is the browser's again: keys work, the screen is whole.
        try tmux.send("q", "q")
        #expect(try tmux.waitForExit() == 0)
    }

    @Test("a program that stops reading (a pager that quits, head, a failing clipboard command) never ends the browser; Ctrl-C at the return prompt only returns")
    func programsThatStopReading() throws {
        let runner = try BinaryRunner()
        let big = String(repeating: "a long line of text to page through, more than a pipe holds\n", count: 4_000)
        let record: [String: Any] = [
            "format": "scrollback", "version": 1, "id": "5d9f1c2e-0000-4000-8000-000000000002", "title": "Big",
            "source": "local", "createdAt": "2026-01-01T00:00:00.000Z", "updatedAt": "2026-01-01T00:00:00.000Z", "pinned": false,
            "messages": [["id": "a", "role": "user", "content": big, "createdAt": "2026-01-01T00:00:00.000Z"]],
        ]
        let file = runner.folder.file("big.jsonl")
        try JSONSerialization.data(withJSONObject: record).write(to: URL(fileURLWithPath: file))
        #expect(try runner.run(["import", file]).status == 0)
        let tmux = try TmuxSession(
            width: 100, height: 20, arguments: ["--db", runner.databasePath],
            environment: ["PAGER": "true", "SCROLLBACK_CLIPBOARD": "exit 3"])
        _ = try tmux.waitFor(text: "1 of 1")
        try tmux.send("o")
        _ = try tmux.waitFor(text: "Back from the pager")
        try tmux.send("|")
        _ = try tmux.waitFor(text: "Pipe to:")
        try tmux.type("head -c 5")
        try tmux.send("Enter")
        _ = try tmux.waitFor(text: "press Enter to return")
        try tmux.send("C-c")
        _ = try tmux.waitFor(text: "Piped the conversation to head -c 5")
        try tmux.send("c")
        let screen = try tmux.waitFor(text: "$SCROLLBACK_CLIPBOARD failed (exit status 3)")
        #expect(BrowserEndToEndTests.footer(screen).contains("Not copied: "), "\(screen)")
        #expect(tmux.exitStatus() == nil)
        try tmux.send("q")
        #expect(try tmux.waitForExit() == 0)
    }
}
