import Foundation
import ScrollbackModel
import TestSupport
import Testing

/// `O` opens the focused message's attachment through a private copy that goes when the
/// browser exits; `S` saves it where the prompt says (`~/` the home folder), never over a
/// file. In tmux, with `$SCROLLBACK_OPEN` a script that records what it was given.
@Suite("Opening and saving attachments from the reader, through tmux")
struct AttachmentOpenSaveTests {
    @Test("O hands a private copy to $SCROLLBACK_OPEN and it is gone after quitting; S saves to ~/, and refuses a file that is there")
    func openAndSave() throws {
        let runner = try BinaryRunner()
        try ImageDrawingTests.database(in: runner)
        let home = runner.folder.file("home")
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        let record = runner.folder.file("opened.txt")
        let kept = runner.folder.file("kept.png")
        let opener = runner.folder.file("opener.sh")
        try "#!/bin/sh\nprintf '%s\\n' \"$1\" >> '\(record)'\ncp \"$1\" '\(kept)'\n".write(toFile: opener, atomically: false, encoding: .utf8)
        chmod(opener, 0o755)
        let tmux = try TmuxSession(
            width: 100, height: 40, arguments: ["--db", runner.databasePath],
            environment: ["SCROLLBACK_IMAGES": "none", "SCROLLBACK_OPEN": opener, "HOME": home])
        _ = try tmux.waitFor(text: "Plot")
        try tmux.send("Enter")
        _ = try tmux.waitFor(text: "▣ plot.png")
        try tmux.send("O")
        _ = try tmux.waitFor(text: "Opened plot.png with $SCROLLBACK_OPEN")
        let opened = try String(contentsOfFile: record, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(opened.hasSuffix("/plot.png"), "\(opened)")
        // The file the export held (ImageMagick's, as the database made it).
        let png = try #require(FileManager.default.contents(atPath: runner.folder.file("image-320x200.png")).map(Array.init))
        #expect(FileManager.default.contents(atPath: kept).map(Array.init) == png)
        // Its folder is this user's alone.
        var status = stat()
        #expect(stat(PathText.parent(of: PathText.parent(of: opened)), &status) == 0 && status.st_mode & 0o077 == 0)

        // S: the prompt offers ~/plot.png; Enter saves it there.
        try tmux.send("S")
        _ = try tmux.waitFor(text: "Save to: ~/plot.png")
        try tmux.send("Enter")
        _ = try tmux.waitFor(text: "Saved plot.png")
        #expect(FileManager.default.contents(atPath: home + "/plot.png").map(Array.init) == png)
        // Again: the file is there and stays.
        try Data("mine".utf8).write(to: URL(fileURLWithPath: home + "/plot.png"))
        try tmux.send("S")
        _ = try tmux.waitFor(text: "Save to: ~/plot.png")
        try tmux.send("Enter")
        _ = try tmux.waitFor(text: "exists; give another name")
        #expect(FileManager.default.contents(atPath: home + "/plot.png") == Data("mine".utf8))
        try tmux.send("q")
        try tmux.send("q")
        #expect(try tmux.waitForExit() == 0)
        #expect(!FileManager.default.fileExists(atPath: opened), "the private copy is gone")
        #expect(!FileManager.default.fileExists(atPath: PathText.parent(of: PathText.parent(of: opened))))
    }
}
