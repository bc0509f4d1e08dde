import CNcursesw
import TerminalSignalState
import Foundation
import ScrollbackModel
import ScrollbackViewModels
import TerminalText

/// The programs the browser hands text to: the clipboard (OSC 52 and a clipboard program),
/// a shell command for `|`, the pager and the editor. Text goes on standard input or into a
/// file whose name is passed as an argument: it is never part of a command line.
@MainActor
struct ExternalPrograms {
    let environment: [String: String]
    /// The config file's `[programs]`, ahead of the environment.
    var pager: String?
    var editor: String?
    var clipboard: String?

    /// The most OSC 52 carries: terminals cap what they accept (xterm about 100 kB of
    /// base64), and more would only be dropped silently.
    static let osc52Limit = 74_994

    // MARK: Clipboard

    /// Copies `text`: OSC 52 to the terminal (which forwards it over ssh and, with tmux's
    /// `set-clipboard on`, through tmux), and the first clipboard program found for this
    /// session. Returns how it went, for the footer.
    func copy(_ text: String, what: String) -> String {
        var ways: [String] = []
        let bytes = Array(text.utf8)
        var failure = ""
        // Inside tmux, OSC 52 from a program reaches the clipboard only with `set-clipboard
        // on` (its default, external, drops it): else the text goes into tmux's buffer,
        // which tmux hands on to the terminal's clipboard where it can.
        let tmux = tmuxClipboard()
        if let tmux, tmux.setting != "on" {
            switch Result(catching: { try run([tmux.program, "load-buffer", "-w", "-"], input: bytes, quiet: true, timeout: 3_000) }) {
            case .success(0): ways.append("tmux's buffer")
            default: failure = "; tmux's load-buffer failed"
            }
            failure += "; inside tmux, OSC 52 needs `set -g set-clipboard on` in ~/.tmux.conf (it is \(tmux.setting.isEmpty ? "not set" : tmux.setting))"
        } else if bytes.count <= Self.osc52Limit {
            // Base64 holds no control character: the data cannot act on the terminal.
            scrollback_write_control("\u{1B}]52;c;" + Data(bytes).base64EncodedString() + "\u{07}")
            ways.append(tmux == nil ? "OSC 52" : "OSC 52 (through tmux)")
        }
        if let program = clipboardProgram() {
            let chosen = !(environment["SCROLLBACK_CLIPBOARD"] ?? "").trimmingCharacters(in: .whitespaces).isEmpty
            let name = clipboard != nil ? "the config's clipboard command" : chosen ? "$SCROLLBACK_CLIPBOARD" : PathText.lastComponent(of: program[0])
            // A clipboard program answers at once; one that hangs is stopped after 3 s.
            switch Result(catching: { try run(program, input: bytes, quiet: true, timeout: 3_000) }) {
            case .success(0): ways.append(name)
            case .success(Self.timedOut): failure = "; \(name) took more than 3 s and was stopped"
            case .success(let status): failure = "; \(name) failed (exit status \(status))"
            case .failure(let error): failure = "; \(name) did not start (\(UntrustedText.sanitized(String(describing: error))))"
            }
        }
        let size = "\(NumberText.grouped(text.count)) character\(text.count == 1 ? "" : "s")"
        guard !ways.isEmpty else {
            if !failure.isEmpty { return "Not copied: \(size) is too long for OSC 52" + failure }
            return "Not copied: \(size) is too long for the terminal's clipboard (OSC 52), and no clipboard program (wl-copy, xclip, xsel, pbcopy) was found"
        }
        return "Copied \(what) (\(size)) through \(ways.joined(separator: " and "))" + failure
    }

    /// Inside tmux (`$TMUX`): its program and its `set-clipboard` setting ("" when it
    /// cannot say); nil outside tmux.
    func tmuxClipboard() -> (program: String, setting: String)? {
        guard !(environment["TMUX"] ?? "").isEmpty, let program = find("tmux") else { return nil }
        let file = PathText.appending(to: NSTemporaryDirectory(), "scrollback-tmux-\(UUID().uuidString)")
        let descriptor = open(file, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return (program, "") }
        close(descriptor)
        defer { unlink(file) }
        // Its answer goes to a file of ours: the command line holds nothing from outside.
        let status = try? run(
            ["/bin/sh", "-c", "exec \"$0\" show-options -gv set-clipboard > \"$1\"", program, file], input: nil, quiet: true, timeout: 1_000)
        guard status == 0, let answer = try? String(contentsOfFile: file, encoding: .utf8) else { return (program, "") }
        return (program, answer.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// The clipboard program for this session, with its arguments: `$SCROLLBACK_CLIPBOARD`
    /// when set, else wl-copy under Wayland, xclip or xsel under X, pbcopy on a Mac.
    func clipboardProgram() -> [String]? {
        if let chosen = clipboard ?? environment["SCROLLBACK_CLIPBOARD"], !chosen.trimmingCharacters(in: .whitespaces).isEmpty {
            return ["/bin/sh", "-c", chosen]
        }
        var candidates: [[String]] = []
        if !(environment["WAYLAND_DISPLAY"] ?? "").isEmpty { candidates.append(["wl-copy"]) }
        if !(environment["DISPLAY"] ?? "").isEmpty {
            candidates += [["xclip", "-selection", "clipboard"], ["xsel", "--clipboard", "--input"]]
        }
        candidates.append(["pbcopy"])
        for candidate in candidates {
            if let path = find(candidate[0]) { return [path] + candidate.dropFirst() }
        }
        return nil
    }

    /// The program's path on `$PATH`, if it is there and runs.
    func find(_ name: String) -> String? {
        for folder in (environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") where !folder.isEmpty {
            let path = String(folder) + "/" + name
            if access(path, X_OK) == 0 { return path }
        }
        return nil
    }

    // MARK: Programs that take the terminal

    /// `sh -c COMMAND` with `input` on its standard input, on the terminal. Returns the exit
    /// status (or 128 + a signal's number).
    func shell(_ command: String, input: String) throws -> Int32 {
        try run(["/bin/sh", "-c", command], input: Array(input.utf8), quiet: false)
    }

    /// The pager: the config's, else `$PAGER`, else `less -R`.
    var pagerCommand: String {
        [pager, environment["PAGER"]].compactMap { $0 }.first { !$0.trimmingCharacters(in: .whitespaces).isEmpty } ?? "less -R"
    }

    /// `$PAGER` (else `less -R`) with `text` on its standard input.
    func page(_ text: String) throws -> Int32 {
        let pager = pagerCommand
        return try run(["/bin/sh", "-c", pager], input: Array(text.utf8), quiet: false)
    }

    /// `$VISUAL` or `$EDITOR` (else `vi`) on a read-only temporary file holding `text`, in a
    /// folder only this user can enter; both are removed afterwards.
    func edit(_ text: String, name: String) throws -> Int32 {
        let editor =
            [self.editor, environment["VISUAL"], environment["EDITOR"]].compactMap { $0 }.first { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
            ?? "vi"
        var template = Array(((environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp") + "/scrollback-XXXXXX").utf8CString)
        // The name is read inside the closure: the pointer is only valid there.
        let made = template.withUnsafeMutableBufferPointer { buffer in
            buffer.baseAddress.flatMap { mkdtemp($0) }.map { String(cString: $0) }
        }
        guard let folder = made else {
            throw TerminalError(description: "cannot make a temporary folder for the editor: \(String(cString: strerror(errno)).lowercased())")
        }
        let safeName = String(name.filter { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "-") }.prefix(40))
        let path = folder + "/" + (safeName.isEmpty ? "conversation.md" : safeName)
        defer {
            unlink(path)
            rmdir(folder)
        }
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o400)
        guard descriptor >= 0 else {
            throw TerminalError(description: "cannot write the temporary file for the editor: \(String(cString: strerror(errno)).lowercased())")
        }
        let failed = DescriptorWrite.all(Array(text.utf8), to: descriptor)
        close(descriptor)
        if let failed {
            throw TerminalError(description: "cannot write the temporary file for the editor: \(String(cString: strerror(failed)).lowercased())")
        }
        // The path is an argument of the shell ("$1"), never part of the command text.
        return try run(["/bin/sh", "-c", editor + " \"$1\"", "sh", path], input: nil, quiet: false)
    }

    // MARK: Running

    /// Runs `arguments` (a path first) with `input` on standard input (nil: the terminal's),
    /// and waits. With `quiet`, its output goes nowhere (a clipboard program). While it
    /// runs, Ctrl-C and Ctrl-\ are its, not the browser's; Ctrl-Z stops both, and `fg`
    /// continues both.
    /// What `run` returns for a program stopped at its time limit.
    static let timedOut: Int32 = -1

    func run(_ arguments: [String], input: [UInt8]?, quiet: Bool, timeout: Int? = nil) throws -> Int32 {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var pipeEnds: [Int32] = [-1, -1]
        if input != nil {
            guard pipe(&pipeEnds) == 0 else {
                throw TerminalError(description: "cannot start \(arguments[0]): \(String(cString: strerror(errno)).lowercased())")
            }
            posix_spawn_file_actions_adddup2(&actions, pipeEnds[0], STDIN_FILENO)
            posix_spawn_file_actions_addclose(&actions, pipeEnds[0])
            posix_spawn_file_actions_addclose(&actions, pipeEnds[1])
        }
        if quiet {
            posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0)
            posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0)
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // Every signal as a new program expects it: default actions, nothing blocked.
        var all = sigset_t()
        sigfillset(&all)
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setsigmask(&attributes, &none)
        // A program that does not take the terminal runs in a process group of its own, so
        // that one stopped at its time limit is stopped with everything it started.
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK | (quiet ? POSIX_SPAWN_SETPGROUP : 0)))

        let previousInterrupt = signal(SIGINT, SIG_IGN)
        let previousQuit = signal(SIGQUIT, SIG_IGN)
        // A program that stops reading (a pager quit early, `head`) closes the pipe: the
        // write fails with EPIPE, and SIGPIPE must not end the browser.
        let previousPipe = signal(SIGPIPE, SIG_IGN)
        let writerDone = DispatchSemaphore(value: 0)
        let stopWriting = StopFlag()
        var writing = false
        defer {
            // The writer is finished before SIGPIPE is the browser's again: once the program
            // has ended, what it left unread is dropped (a program in the background that
            // holds the pipe open without reading would otherwise keep the writer waiting).
            if writing {
                stopWriting.stop()
                writerDone.wait()
            }
            signal(SIGINT, previousInterrupt)
            signal(SIGQUIT, previousQuit)
            signal(SIGPIPE, previousPipe)
        }
        var child: pid_t = 0
        var cArguments = arguments.map { strdup($0) } + [nil]
        defer { for argument in cArguments { free(argument) } }
        let spawned = posix_spawn(&child, arguments[0], &actions, &attributes, &cArguments, environ)
        if input != nil { close(pipeEnds[0]) }
        guard spawned == 0 else {
            if input != nil { close(pipeEnds[1]) }
            throw TerminalError(description: "cannot start \(arguments[0]): \(String(cString: strerror(spawned)).lowercased())")
        }
        if let input {
            // Written from another thread: a program that reads slowly (or not at all, as a
            // pager the user quits early) must not block the browser. A closed pipe is the
            // program's choice, not an error.
            let descriptor = pipeEnds[1]
            writing = true
            _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
            let writer = Thread {
                _ = DescriptorWrite.all(input, to: descriptor, until: stopWriting)
                close(descriptor)
                writerDone.signal()
            }
            writer.start()
        }
        var status: Int32 = 0
        if let timeout {
            // Looked at every 10 ms; killed at the limit.
            var waited = 0
            while waitpid(child, &status, WNOHANG) == 0 {
                if waited >= timeout {
                    kill(-child, SIGKILL)
                    _ = waitpid(child, &status, 0)
                    return Self.timedOut
                }
                usleep(10_000)
                waited += 10
            }
            if scrollback_wifexited(status) != 0 { return scrollback_wexitstatus(status) }
            return 128 + scrollback_wtermsig(status)
        }
        while true {
            let result = waitpid(child, &status, WUNTRACED)
            if result < 0 {
                if errno == EINTR { continue }
                break
            }
            if scrollback_wifstopped(status) != 0 {
                // Ctrl-Z in the program: the whole job stops, and continues together.
                TerminalSignals.stopProcess()
                kill(child, SIGCONT)
                continue
            }
            break
        }
        if scrollback_wifexited(status) != 0 { return scrollback_wexitstatus(status) }
        if scrollback_wifsignaled(status) != 0 { return 128 + scrollback_wtermsig(status) }
        return 1
    }
}
