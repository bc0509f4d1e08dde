import Foundation
import ScrollbackModel
import ScrollbackSync
import Testing
import TestSupport

/// An image added on one machine, seen on another through a real PostgreSQL server: the
/// browser under tmux fetches it when it shows it, says "not here yet" while offline, and
/// `attachment get` fetches what is not here.
@Suite("attachments through sync, as a person sees them", .serialized)
struct SyncAttachmentBrowserTests {
    @Test("machine B's reader shows A's image line, says offline while the server is down, fetches it on O once it is back (the same bytes opened), and attachment get fetches the recording")
    func fetchedWhenShown() throws {
        let server = try PostgresServer()
        let url = try server.newDatabase()
        let key = try SyncKey.generate()
        let secrets = ["SCROLLBACK_SYNC_URL": url, "SCROLLBACK_SYNC_KEY": key.text]
        let scene = try AttachmentCommandTests.scene()
        let a = scene.runner
        let first = try a.run(["sync", "init"], environment: secrets)
        #expect(first.status == 0, "\(first.error)")
        let listed = try a.json(["attachment", "list", String(scene.plots.prefix(8))])
        let files = (listed["attachments"] as? [[String: Any]]) ?? []
        let wavHash = try #require(files.first { $0["type"] as? String == "WAV audio" }?["sha256"] as? String)

        let b = try BinaryRunner()
        let joined = try b.run(["sync", "init"], environment: secrets)
        #expect(joined.status == 0, "\(joined.error)")
        // The lines are here, the bytes not yet: show says so, and the stats count them.
        let shown = try b.run(["show", String(scene.plots.prefix(8))])
        #expect(shown.output.contains("plot.png  320×200 PNG  1.5 kB  not here yet: another machine holds it"), "\(shown.output)")
        #expect(!shown.output.contains("\u{1B}"))
        // --json gives the hash `attachment get` takes, for a file not here yet too.
        let awaitedJSON = try b.json(["attachment", "list", String(scene.plots.prefix(8))])
        let awaitedRows = (awaitedJSON["attachments"] as? [[String: Any]]) ?? []
        #expect(awaitedRows.first { $0["type"] as? String == "WAV audio" }?["sha256"] as? String == wavHash, "\(awaitedRows)")

        // Offline: the reader's line says so.
        try server.stop()
        let record = b.folder.file("opened.txt")
        let kept = b.folder.file("kept.png")
        let opener = b.folder.file("opener.sh")
        try "#!/bin/sh\nprintf '%s\\n' \"$1\" >> '\(record)'\ncp \"$1\" '\(kept)'\n".write(toFile: opener, atomically: false, encoding: .utf8)
        chmod(opener, 0o755)
        var environment = secrets
        environment["SCROLLBACK_IMAGES"] = "none"
        environment["SCROLLBACK_OPEN"] = opener
        environment["HOME"] = b.folder.path
        let tmux = try TmuxSession(width: 120, height: 30, arguments: ["--db", b.databasePath], environment: environment)
        _ = try tmux.waitFor(text: "Plots")
        try tmux.send("/")
        try tmux.type("Plots")
        try tmux.send("Enter")
        _ = try tmux.waitFor(text: "1 match")
        try tmux.send("Enter")
        _ = try tmux.waitFor(text: "Explain this plot")
        let offline = try tmux.waitFor("the offline note") { $0.contains { $0.contains("plot.png  320×200 PNG") && $0.contains("not here yet: offline") } }
        // The hostile name is made safe: its escape and bell are shown as pictures.
        #expect(offline.joined().contains("␛]0;pwned␇plot.png"))
        #expect(try tmux.tmux(["display-message", "-p", "-t", "main", "#{pane_title}"]).contains("pwned") == false)

        // Back: O asks again, the line shows it here, and O opens the same bytes.
        try server.restart()
        try tmux.send("O")
        _ = try tmux.waitFor("the fetched line") { screen in
            screen.contains { $0.contains("plot.png  320×200 PNG  1.5 kB") && !$0.contains("not here") }
        }
        try tmux.send("O")
        _ = try tmux.waitFor(text: "plot.png with $SCROLLBACK_OPEN")
        #expect(FileManager.default.contents(atPath: kept).map(Array.init) == scene.png)
        // The reader, the search's results, the list.
        for _ in 0..<3 { try tmux.send("q") }
        #expect(try tmux.waitForExit() == 0)

        // --readonly does not fetch, and says what to do.
        let out = b.folder.file("voice.wav")
        let readOnly = try b.run(["--readonly", "attachment", "get", String(wavHash.prefix(10)), "--out", out], environment: secrets)
        #expect(readOnly.status == 1 && readOnly.error.contains("--readonly does not fetch them"), "\(readOnly.error)")
        #expect(!FileManager.default.fileExists(atPath: out))
        // The recording: fetched by attachment get, byte-identical.
        let got = try b.run(["attachment", "get", String(wavHash.prefix(10)), "--out", out], environment: secrets)
        #expect(got.status == 0, "\(got.error)")
        #expect(FileManager.default.contents(atPath: out).map(Array.init) == scene.wav)
        #expect(try b.run(["check"]).status == 0)
        let again = try b.run(["attachment", "list", String(scene.plots.prefix(8))])
        #expect(!again.output.contains("not here yet"), "\(again.output)")
    }
}
