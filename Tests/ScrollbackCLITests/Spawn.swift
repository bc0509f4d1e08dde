import Foundation

/// A child process started with a clean signal mask and every signal at its default action:
/// test threads may block or ignore signals, and a child would inherit that (a Ctrl-C sent to
/// it would then never arrive). Standard input is /dev/null; output goes to files (a child
/// that leaves a server behind keeps inherited descriptors open).
struct SpawnedProcess {
    let pid: pid_t

    init(_ executable: String, _ arguments: [String], environment: [String: String]? = nil, output: String, error: String) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, error, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        let argv = [(executable as NSString).lastPathComponent] + arguments
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
        let spawned = environment == nil
            ? posix_spawn(&pid, executable, &actions, &attributes, &cArguments, environ)
            : posix_spawn(&pid, executable, &actions, &attributes, &cArguments, &cEnvironment)
        guard spawned == 0 else { throw SpawnError(description: "cannot run \(executable) (\(spawned))") }
        self.pid = pid
    }

    enum Ending: Equatable {
        case exited(Int32)
        case signaled(Int32)
    }

    /// Waits for the child to end.
    func wait() -> Ending {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return (status & 0x7F) == 0 ? .exited((status >> 8) & 0xFF) : .signaled(status & 0x7F)
    }
}

struct SpawnError: Error, CustomStringConvertible {
    let description: String
}
