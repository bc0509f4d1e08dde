import Foundation

/// What every program a test starts sees, and nothing of the test process's own
/// environment (a NO_COLOR or a TZ set by the runner would leak into the program): UTC,
/// UTF-8, a home folder of the test's, the system's PATH; a terminal type when asked.
public enum TestEnvironment {
    public static func variables(home: String, terminal: Bool = false, adding extra: [String: String] = [:]) -> [String: String] {
        var variables = ["TZ": "UTC", "LANG": "C.UTF-8", "HOME": home, "PATH": "/usr/bin:/bin"]
        if terminal { variables["TERM"] = "xterm-256color" }
        variables.merge(extra) { $1 }
        return variables
    }
}

/// The one way tests start a program: posix_spawn with a clean signal mask and every signal
/// at its default action (test threads may block or ignore signals, and a child inherits
/// that: a Ctrl-C sent to it would never arrive), standard input from a file or /dev/null,
/// output to files. Files, not pipes: a large output never blocks the child, and a child
/// that leaves a server behind (tmux, pg_ctl) keeps inherited descriptors open, which a
/// pipe's reader would wait on. Foundation's Process was seen never to notice the end of
/// `pg_ctl start` (its child stayed a zombie).
public struct ChildProcess: Sendable {
    public let pid: pid_t

    public enum Ending: Equatable, Sendable {
        case exited(Int32)
        case signaled(Int32)

        /// As a shell says it: the exit status, or 128 and the signal.
        public var status: Int32 {
            switch self {
            case .exited(let code): code
            case .signaled(let signal): 128 + signal
            }
        }
    }

    /// Starts `executable` with `arguments`; `environment` nil inherits the test process's.
    /// `directory` runs it there (through `/bin/sh`, as glibc's spawn-with-chdir is not
    /// visible to Swift).
    public init(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil, input: String = "/dev/null", output: String,
        error: String, directory: String? = nil
    ) throws {
        var program = executable
        // argv[0] the path as given, as a shell passes it (the bench runs itself again by it).
        var argv = [executable] + arguments
        if let directory {
            program = "/bin/sh"
            argv = ["sh", "-c", "cd -- \"$0\" && exec \"$@\"", directory, executable] + arguments
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, input, O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, error, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        var cArguments: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
        defer { cArguments.forEach { free($0) } }
        var cEnvironment: [UnsafeMutablePointer<CChar>?] = (environment?.map { strdup("\($0.key)=\($0.value)") } ?? []) + [nil]
        defer { cEnvironment.forEach { free($0) } }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        sigemptyset(&empty)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var pid: pid_t = 0
        let spawned =
            environment == nil
            ? posix_spawn(&pid, program, &actions, &attributes, &cArguments, environ)
            : posix_spawn(&pid, program, &actions, &attributes, &cArguments, &cEnvironment)
        guard spawned == 0 else { throw ChildProcessError(description: "cannot run \(executable): \(String(cString: strerror(spawned)))") }
        self.pid = pid
    }

    /// Waits for the child to end.
    public func wait() -> Ending {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return Self.ending(status)
    }

    /// Waits at most `timeout` seconds; nil when it is still running then.
    public func wait(timeout: TimeInterval) -> Ending? {
        let deadline = Date().addingTimeInterval(timeout)
        var status: Int32 = 0
        while true {
            let result = waitpid(pid, &status, WNOHANG)
            if result == pid { return Self.ending(status) }
            if result < 0 && errno != EINTR { return .exited(-1) }
            if Date() > deadline { return nil }
            usleep(2_000)
        }
    }

    private static func ending(_ status: Int32) -> Ending {
        (status & 0x7F) == 0 ? .exited((status >> 8) & 0xFF) : .signaled(status & 0x7F)
    }

    /// What a program that ran to its end left.
    public struct Outcome: Sendable {
        public let ending: Ending
        public let output: Data
        public let error: Data
        /// Killed (SIGKILL, with its process group) at the time limit.
        public let timedOut: Bool

        public var status: Int32 { ending.status }
        public var outputText: String { String(decoding: output, as: UTF8.self) }
        public var errorText: String { String(decoding: error, as: UTF8.self) }
    }

    /// Runs a program to its end with `input` as its standard input; its output, error and
    /// ending. With `timeout`, a program still running then is killed. `output` names a file
    /// to write standard output to instead (/dev/full, a file on a full disk): then it is
    /// not read back.
    public static func run(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil, input: Data = Data(), directory: String? = nil,
        timeout: TimeInterval? = nil, output: String? = nil
    ) throws -> Outcome {
        let base = NSTemporaryDirectory() + "/scrollback-test-run-\(UUID().uuidString)"
        let (inputPath, outputPath, errorPath) = (base + ".in", output ?? base + ".out", base + ".err")
        defer {
            for path in [inputPath, base + ".out", errorPath] { unlink(path) }
        }
        guard FileManager.default.createFile(atPath: inputPath, contents: input) else {
            throw ChildProcessError(description: "cannot write \(inputPath)")
        }
        let child = try ChildProcess(
            executable, arguments, environment: environment, input: inputPath, output: outputPath, error: errorPath, directory: directory)
        var timedOut = false
        let ending: Ending
        if let timeout, let ended = child.wait(timeout: timeout) {
            ending = ended
        } else if timeout != nil {
            timedOut = true
            kill(child.pid, SIGKILL)
            ending = child.wait()
        } else {
            ending = child.wait()
        }
        let read = { (path: String) in (try? Data(contentsOf: URL(fileURLWithPath: path))) ?? Data() }
        return Outcome(ending: ending, output: output == nil ? read(outputPath) : Data(), error: read(errorPath), timedOut: timedOut)
    }

    /// Runs a tool quietly (output discarded); its exit status, -1 when it cannot start.
    public static func status(_ tool: String, _ arguments: [String]) -> Int32 {
        guard let child = try? ChildProcess(tool, arguments, output: "/dev/null", error: "/dev/null") else { return -1 }
        return child.wait().status
    }
}

public struct ChildProcessError: Error, CustomStringConvertible {
    public let description: String
    public init(description: String) { self.description = description }
}
