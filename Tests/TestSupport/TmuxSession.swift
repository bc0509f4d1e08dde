import Foundation

/// The real binary in a real terminal: a tmux server of its own, a fixed size, TZ=UTC and
/// LANG=C.UTF-8; keys go in with send-keys and the screen comes back with capture-pane.
public final class TmuxSession {
    public let socket = "scrollback-test-\(UUID().uuidString.prefix(8))"
    /// The program's exit status is written here when it ends.
    private let statusPath = (NSTemporaryDirectory() as NSString).appendingPathComponent("scrollback-tmux-\(UUID().uuidString).status")
    /// The terminal's settings (`stty -a`) and modes (alternate screen, cursor, mouse) as
    /// the program left them, and its standard error when asked for.
    private let sttyPath = (NSTemporaryDirectory() as NSString).appendingPathComponent("scrollback-tmux-\(UUID().uuidString).stty")
    private let modesPath = (NSTemporaryDirectory() as NSString).appendingPathComponent("scrollback-tmux-\(UUID().uuidString).modes")
    private let errorPath = (NSTemporaryDirectory() as NSString).appendingPathComponent("scrollback-tmux-\(UUID().uuidString).stderr")
    public private(set) var width: Int
    public private(set) var height: Int

    /// With `jobControl`, the program runs from an interactive shell (bash), as a job that
    /// Ctrl-Z can stop and `fg` continue; otherwise it is the pane's command.
    ///
    /// With `insideTmux`, the program is told it runs inside this tmux (`$TMUX`), as it
    /// would be in a person's tmux; otherwise it is not (`env -i`).
    public init(
        width: Int, height: Int, arguments: [String], environment: [String: String] = [:], jobControl: Bool = false,
        captureErrors: Bool = false, insideTmux: Bool = false
    ) throws {
        self.width = width
        self.height = height
        var environment = environment
        if insideTmux { environment["TMUX"] = Self.socketFolder + "/" + socket + ",0,0" }
        // A clean environment (env -i): nothing from the test process, such as a NO_COLOR
        // set by the test runner, leaks into the program.
        let variables = TestEnvironment.variables(home: NSTemporaryDirectory(), terminal: true, adding: environment)
        let command = (["env", "-i"] + variables.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
            + [BinaryRunner.binary.path] + arguments).map(Self.shellQuoted).joined(separator: " ")
        // The shell records the exit status in a file: tmux's own pane_dead_status is not
        // reliably set for a program that closes its terminal before it exits.
        // After the program: its status, then what it left of the terminal (before the pane
        // is marked dead, which resets its modes).
        let modes = ["/usr/bin/tmux", "-L", socket, "display-message", "-p", "-t", "main", "#{alternate_on} #{cursor_flag} #{mouse_any_flag}"]
            .map(Self.shellQuoted).joined(separator: " ")
        let errors = captureErrors ? " 2> \(Self.shellQuoted(errorPath))" : ""
        let wrapped = "\(command)\(errors); echo $? > \(Self.shellQuoted(statusPath)); stty -a > \(Self.shellQuoted(sttyPath)) 2>&1; \(modes) > \(Self.shellQuoted(modesPath))"
        // remain-on-exit in the same command as the session: a program that exits at once
        // (a terminal it refuses) ended the session before a second command could set it.
        guard jobControl else {
            try tmux(["-f", "/dev/null", "new-session", "-d", "-s", "main", "-x", "\(width)", "-y", "\(height)", wrapped, ";", "set-option", "-t", "main", "remain-on-exit", "on"])
            return
        }
        let shell = ["env", "-i", "TERM=xterm-256color", "LANG=C.UTF-8", "PS1=$ ", "PATH=/usr/bin:/bin", "bash", "--norc", "--noprofile", "-i"]
        try tmux(["-f", "/dev/null", "new-session", "-d", "-s", "main", "-x", "\(width)", "-y", "\(height)"] + [shell.map(Self.shellQuoted).joined(separator: " ")])
        try tmux(["set-option", "-t", "main", "remain-on-exit", "on"])
        try waitFor("the shell's prompt") { $0.contains { $0.hasPrefix("$") } }
        // A subshell, so that the status is written when the program ends, not when it stops.
        try send("(\(wrapped))", literal: true)
        try send("Enter")
    }

    deinit {
        // The server leaves its socket behind when it is killed: removed too, so that a test
        // run leaves nothing in tmux's socket folder.
        _ = try? tmux(["kill-server"])
        unlink(Self.socketFolder + "/" + socket)
        try? FileManager.default.removeItem(atPath: statusPath)
        for path in [sttyPath, modesPath, errorPath] { try? FileManager.default.removeItem(atPath: path) }
    }

    /// Sends keys as tmux names them: "j", "Enter", "Escape", "C-c", "PageDown", or literal text.
    public func send(_ keys: String..., literal: Bool = false) throws {
        try tmux(["send-keys", "-t", "main"] + (literal ? ["-l"] : []) + keys)
    }

    public func type(_ text: String) throws { try send(text, literal: true) }

    /// The screen, one string per row, trailing spaces removed.
    public func screen() throws -> [String] {
        let text = try tmux(["capture-pane", "-p", "-t", "main"])
        return text.components(separatedBy: "\n").dropLast().map { line in
            var line = line
            while line.last == " " { line.removeLast() }
            return line
        }
    }

    /// The screen with its colours and attributes as escape sequences (`capture-pane -e`).
    public func styledScreen() throws -> String {
        try tmux(["capture-pane", "-p", "-e", "-t", "main"])
    }

    /// Waits until the screen satisfies `condition`; the screen it ended with is returned
    /// and, if the condition never held, a failure describing it is thrown. (A liveness
    /// guard, not a speed assertion: the limit is generous.)
    @discardableResult
    public func waitFor(_ what: String, timeout: TimeInterval = 20, _ condition: ([String]) -> Bool) throws -> [String] {
        let deadline = Date().addingTimeInterval(timeout)
        var last: [String] = []
        while Date() < deadline {
            last = try screen()
            if condition(last) { return last }
            usleep(50_000)
        }
        throw TmuxError(description: "waited for \(what); the screen was:\n" + last.joined(separator: "\n"))
    }

    @discardableResult
    public func waitFor(text: String, timeout: TimeInterval = 20) throws -> [String] {
        try waitFor("'\(text)'", timeout: timeout) { $0.contains { $0.contains(text) } }
    }

    public func resize(width: Int, height: Int) throws {
        self.width = width
        self.height = height
        try tmux(["resize-window", "-t", "main", "-x", "\(width)", "-y", "\(height)"])
    }

    /// The exit status once the program has ended, or nil while it runs.
    public func exitStatus() -> Int32? {
        guard let text = try? String(contentsOfFile: statusPath, encoding: .utf8) else { return nil }
        return Int32(text.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    public func waitForExit(timeout: TimeInterval = 20) throws -> Int32 {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let status = exitStatus() { return status }
            usleep(50_000)
        }
        throw TmuxError(description: "the program did not exit; the screen was:\n" + (try screen()).joined(separator: "\n"))
    }

    /// The terminal's settings as `stty -a` printed them after the program ended.
    public func terminalSettingsAfterExit() -> String? {
        try? String(contentsOfFile: sttyPath, encoding: .utf8)
    }

    /// `#{alternate_on} #{cursor_flag} #{mouse_any_flag}` as the program left them.
    public func terminalModesAfterExit() -> String? {
        try? String(contentsOfFile: modesPath, encoding: .utf8)
    }

    /// The program's standard error (with `captureErrors`).
    public func errorsAfterExit() -> String {
        (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? ""
    }

    /// Where tmux keeps its sockets: `$TMUX_TMPDIR` (else /tmp), `tmux-UID`.
    public static var socketFolder: String {
        let base = ProcessInfo.processInfo.environment["TMUX_TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        return base + "/tmux-\(getuid())"
    }

    /// Runs a tmux command on this session's server and returns its output.
    @discardableResult
    public func tmux(_ arguments: [String]) throws -> String {
        // Spawned and waited for rather than run by Process: the tmux server that the first
        // command forks outlives its client, which Foundation's Process does not always
        // notice. Output goes through a file, since the server keeps inherited descriptors.
        let outputPath = (NSTemporaryDirectory() as NSString).appendingPathComponent("\(socket)-\(UUID().uuidString).out")
        defer { try? FileManager.default.removeItem(atPath: outputPath) }
        let process = try ChildProcess("/usr/bin/tmux", ["-L", socket] + arguments, output: outputPath, error: "/dev/null")
        guard process.wait() == .exited(0) else {
            throw TmuxError(description: "tmux \(arguments.joined(separator: " ")) failed")
        }
        return String(decoding: (try? Data(contentsOf: URL(fileURLWithPath: outputPath))) ?? Data(), as: UTF8.self)
    }

    private static func shellQuoted(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}

public struct TmuxError: Error, CustomStringConvertible {
    public let description: String
    public init(description: String) { self.description = description }
}
