import Foundation
import ScrollbackModel
import TerminalText

/// The secrets sync needs: the server's connection string and the key.
public enum SecretName: String, Sendable, CaseIterable {
    case url, key

    var environmentName: String { self == .url ? "SCROLLBACK_SYNC_URL" : "SCROLLBACK_SYNC_KEY" }
}

/// Where secrets are kept: the terminal's keychain. Each backend reads; some write.
public protocol SecretStore {
    /// Where this backend keeps secrets, for `sync status` (never a secret).
    var location: String { get }
    /// Where it keeps the secret `name`.
    func location(of name: SecretName) -> String
    func read(_ name: SecretName) throws -> String?
    func write(_ value: String, for name: SecretName) throws
    func remove(_ name: SecretName) throws
}

/// `$SCROLLBACK_SYNC_URL` and `$SCROLLBACK_SYNC_KEY`: for CI and headless machines. Read-only.
public struct EnvironmentSecrets: SecretStore {
    let environment: [String: String]

    public init(environment: [String: String]) { self.environment = environment }

    public var location: String { "the environment ($SCROLLBACK_SYNC_URL, $SCROLLBACK_SYNC_KEY)" }
    public func location(of name: SecretName) -> String { "$" + name.environmentName }

    public func read(_ name: SecretName) throws -> String? {
        environment[name.environmentName].flatMap { $0.isEmpty ? nil : $0 }
    }

    public func write(_ value: String, for name: SecretName) throws {
        throw SyncError.secretStore("the environment is read-only")
    }

    public func remove(_ name: SecretName) throws {}
}

/// A configured command (`[sync] secret_command = "pass show scrollback/%s"`): its standard
/// output, first line, is the secret; `%s` is the secret's name. Read-only: a password
/// manager is written with its own tools. A command that prints nothing has no such secret;
/// one that fails, or does not finish within `timeout` (a pinentry waiting for input that
/// never comes), is an error that names it, with what it said on standard error (captured,
/// made safe, its first line). It runs in a process group of its own, with standard input
/// from /dev/null, and at its time limit the whole group is killed.
public final class CommandSecrets: SecretStore {
    let command: String
    /// Seconds before a command that does not finish is stopped (`[sync] secret_timeout`).
    let timeout: Int
    /// What each name's run gave, so that a command runs once per secret per process.
    private var answers: [SecretName: Result<String?, SyncError>] = [:]
    /// Its time limit passed once: it is not waited for again, for the other secret.
    private var stuck: SyncError?

    public static let standardTimeout = 15

    public init(command: String, timeout: Int = CommandSecrets.standardTimeout) {
        self.command = command
        self.timeout = timeout
    }

    public var location: String { "the command \(UntrustedText.sanitized(command)) (secret_command)" }
    public func location(of name: SecretName) -> String { location }

    public func read(_ name: SecretName) throws -> String? {
        if let answer = answers[name] { return try answer.get() }
        if let stuck { throw stuck }
        let answer: Result<String?, SyncError>
        do {
            answer = .success(try run(name))
        } catch {
            answer = .failure(error)
        }
        answers[name] = answer
        return try answer.get()
    }

    private var shownCommand: String { "`\(DisplayWidth.truncated(UntrustedText.sanitized(command), to: 60))`" }

    private func run(_ name: SecretName) throws(SyncError) -> String? {
        let script = command.replacingOccurrences(of: "%s", with: name.rawValue)
        var output: [Int32] = [-1, -1], errors: [Int32] = [-1, -1]
        guard pipe(&output) == 0 else { throw .secretStore("cannot run secret_command: \(Self.reason(errno))") }
        guard pipe(&errors) == 0 else {
            close(output[0]); close(output[1])
            throw .secretStore("cannot run secret_command: \(Self.reason(errno))")
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, output[1], STDOUT_FILENO)
        posix_spawn_file_actions_adddup2(&actions, errors[1], STDERR_FILENO)
        for end in output + errors { posix_spawn_file_actions_addclose(&actions, end) }
        // Nothing else of scrollback's is handed on (what the command leaves running in a
        // session of its own would hold it open: a database, or the pipe a caller waits on).
        Self.closeOnExec(keeping: output + errors)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var all = sigset_t(), none = sigset_t()
        sigfillset(&all)
        sigemptyset(&none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setsigmask(&attributes, &none)
        // A group of its own: what it starts is stopped with it, and a Ctrl-C meant for
        // scrollback is scrollback's to handle.
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETPGROUP))
        var child: pid_t = 0
        let words: [String] = ["/bin/sh", "-c", script]
        var arguments: [UnsafeMutablePointer<CChar>?] = words.map { strdup($0) } + [nil]
        defer { for argument in arguments { free(argument) } }
        let spawned = posix_spawn(&child, "/bin/sh", &actions, &attributes, &arguments, environ)
        close(output[1])
        close(errors[1])
        defer { close(output[0]); close(errors[0]) }
        guard spawned == 0 else { throw .secretStore("cannot run secret_command: \(Self.reason(spawned))") }
        // Both pipes read until they close, or until the time limit.
        var outputBytes: [UInt8] = [], errorBytes: [UInt8] = []
        var open = [output[0], errors[0]]
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(max(timeout, 1)) * 1_000_000_000
        var timedOut = false
        var buffer = [UInt8](repeating: 0, count: 4096)
        // Until the pipes close, or the command itself has ended and a moment more has
        // passed (something it left running in a session of its own, `setsid`, may keep them
        // open: what the command printed is its answer all the same), or the time limit.
        var ended: UInt64?
        while !open.isEmpty {
            let now = DispatchTime.now().uptimeNanoseconds
            if ended == nil && Self.hasEnded(child) { ended = now }
            if let ended, now >= ended + 100_000_000 { break }
            guard now < deadline else {
                timedOut = true
                break
            }
            var descriptors = open.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            let waitMilliseconds = Int32(clamping: min((deadline - now) / 1_000_000 + 1, 50))
            let ready = poll(&descriptors, nfds_t(descriptors.count), waitMilliseconds)
            if ready < 0 {
                if errno == EINTR { continue }
                break
            }
            for entry in descriptors where entry.revents != 0 {
                let count = buffer.withUnsafeMutableBytes { Foundation.read(entry.fd, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                if count <= 0 {
                    open.removeAll { $0 == entry.fd }
                    continue
                }
                // Kept to 64 KiB each: a secret is a line, a complaint a few.
                if entry.fd == output[0] {
                    if outputBytes.count < 65_536 { outputBytes += buffer.prefix(count) }
                } else if errorBytes.count < 65_536 {
                    errorBytes += buffer.prefix(count)
                }
            }
        }
        // Whatever of its group still runs goes with it (the shell is not reaped yet, so the
        // group's id is still its own).
        kill(-child, SIGKILL)
        var status: Int32 = 0
        while waitpid(child, &status, 0) < 0 && errno == EINTR {}
        if timedOut {
            let error = SyncError.secretStore(
                "secret_command \(shownCommand) did not finish in \(timeout) s (for '\(name.rawValue)') and was stopped; check [sync] secret_command in config.toml, or raise [sync] secret_timeout")
            stuck = error
            throw error
        }
        let said = Self.firstLine(errorBytes)
        let exited = status & 0x7F == 0
        let code = (status >> 8) & 0xFF
        guard exited && code == 0 else {
            let how = exited ? (code == 127 ? "its program was not found" : "exit status \(code)") : "killed by signal \(status & 0x7F)"
            throw .secretStore(
                "secret_command failed for '\(name.rawValue)' (\(how)\(said.map { ": \($0)" } ?? "")); the command: \(shownCommand); check [sync] secret_command in config.toml")
        }
        let text = String(decoding: outputBytes, as: UTF8.self)
        let line = text.split(whereSeparator: \.isNewline).first.map(String.init)?.trimmingCharacters(in: .whitespaces) ?? ""
        return line.isEmpty ? nil : line
    }

    /// Marks every descriptor of this process above standard error close-on-exec, but
    /// `keeping` (which the spawn hands on itself): what a spawned program inherits is its
    /// three standard ones only.
    static func closeOnExec(keeping: [Int32]) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") else { return }
        for descriptor in names.compactMap({ Int32($0) }) where descriptor > 2 && !keeping.contains(descriptor) {
            let flags = fcntl(descriptor, F_GETFD)
            if flags >= 0 && flags & FD_CLOEXEC == 0 { _ = fcntl(descriptor, F_SETFD, flags | FD_CLOEXEC) }
        }
    }

    /// Whether the process `child` has ended, without reaping it (`WNOWAIT`).
    static func hasEnded(_ child: pid_t) -> Bool {
        var information = siginfo_t()
        // With WNOHANG and nothing ended, it answers 0 and leaves the record empty (no signal).
        return waitid(P_PID, id_t(child), &information, WEXITED | WNOHANG | WNOWAIT) == 0 && information.si_signo == SIGCHLD
    }

    /// The first line that says something, made safe to show and short.
    static func firstLine(_ bytes: [UInt8]) -> String? {
        let text = String(decoding: bytes, as: UTF8.self)
        guard let line = text.split(whereSeparator: \.isNewline).map({ $0.trimmingCharacters(in: .whitespaces) }).first(where: { !$0.isEmpty })
        else { return nil }
        return DisplayWidth.truncated(UntrustedText.sanitized(line), to: 120)
    }

    static func reason(_ code: Int32) -> String { String(cString: strerror(code)).lowercased() }

    public func write(_ value: String, for name: SecretName) throws {
        throw SyncError.secretStore("secret_command is read-only")
    }

    public func remove(_ name: SecretName) throws {}
}

/// The file `secrets` beside the config file (`$XDG_CONFIG_HOME/scrollback/secrets`, else
/// `~/.config/scrollback/secrets`):
/// `name=value` lines, mode 0600 in a folder of mode 0700 whatever the umask. It is read
/// only when it is a regular file of this user that nobody else can read; it is replaced
/// whole (a new file made with O_CREAT|O_EXCL|O_NOFOLLOW, fsynced, renamed over the old
/// one, the folder fsynced), so a crash leaves the old file or the new one, never a torn one.
public struct FileSecrets: SecretStore {
    public let path: String

    public init(path: String) { self.path = path }

    public var location: String { UntrustedText.sanitized(path) }
    public func location(of name: SecretName) -> String { location }
    public var exists: Bool {
        var status = stat()
        return lstat(path, &status) == 0
    }

    public func read(_ name: SecretName) throws -> String? {
        try entries()[name.rawValue]
    }

    /// Every entry of the file; none when there is no file.
    func entries() throws -> [String: String] {
        let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else {
            if errno == ENOENT { return [:] }
            if errno == ELOOP {
                throw SyncError.secretStore("\(location) is a symlink; scrollback reads secrets only from a regular file of its own (remove the link)")
            }
            throw SyncError.secretStore("cannot read \(location): \(String(cString: strerror(errno)).lowercased())")
        }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else {
            throw SyncError.secretStore("\(location) is not a regular file; move it away")
        }
        guard status.st_uid == geteuid() else {
            throw SyncError.secretStore("\(location) belongs to another user; scrollback reads only its own user's secrets")
        }
        guard status.st_mode & 0o077 == 0 else {
            let mode = String(status.st_mode & 0o777, radix: 8)
            throw SyncError.secretStore(
                "\(location) can be read by others (mode \(mode)); run `chmod 600 \(location)` (and consider the secrets in it seen: `scrollback sync init` with a new password)")
        }
        guard status.st_size <= 65_536 else { throw SyncError.secretStore("\(location) is larger than a secrets file can be (64 KiB)") }
        var data = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { Foundation.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw SyncError.secretStore("cannot read \(location): \(String(cString: strerror(errno)).lowercased())")
            }
            if count == 0 { break }
            data += buffer.prefix(count)
            guard data.count <= 65_536 else { throw SyncError.secretStore("\(location) is larger than a secrets file can be (64 KiB)") }
        }
        var found: [String: String] = [:]
        for line in String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline) {
            guard !line.hasPrefix("#"), let equals = line.firstIndex(of: "=") else { continue }
            let name = line[..<equals].trimmingCharacters(in: .whitespaces)
            found[name] = String(line[line.index(after: equals)...])
        }
        return found
    }

    public func write(_ value: String, for name: SecretName) throws {
        guard !value.contains(where: { $0.isNewline || $0 == "\0" }) else {
            throw SyncError.secretStore("a secret is one line; this one has a line break")
        }
        var all = try entries()
        all[name.rawValue] = value
        try replace(with: all)
    }

    public func remove(_ name: SecretName) throws {
        var all = try entries()
        guard all.removeValue(forKey: name.rawValue) != nil else { return }
        try replace(with: all)
    }

    /// Writes `entries` as the whole file, atomically.
    private func replace(with entries: [String: String]) throws {
        let folder = PathText.parent(of: path)
        try makePrivateFolder(folder)
        var text = "# scrollback's sync secrets: keep this file private (mode 0600)\n"
        for name in entries.keys.sorted() {
            text += "\(name)=\(entries[name] ?? "")\n"
        }
        let temporary = "\(folder)/.secrets-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw SyncError.secretStore("cannot write a new secrets file in \(UntrustedText.sanitized(folder)): \(String(cString: strerror(errno)).lowercased())")
        }
        var closed = false
        defer {
            if !closed { close(descriptor) }
        }
        do {
            // The mode is 0600 whatever the umask made it.
            guard fchmod(descriptor, 0o600) == 0 else { throw SyncError.secretStore("cannot make \(location) private") }
            let bytes = Array(text.utf8)
            var written = 0
            while written < bytes.count {
                let count = bytes[written...].withUnsafeBytes { Foundation.write(descriptor, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else {
                    throw SyncError.secretStore("cannot write \(location): \(String(cString: strerror(errno)).lowercased()); the old file is unchanged")
                }
                written += count
            }
            guard fsync(descriptor) == 0 else {
                throw SyncError.secretStore("cannot write \(location): \(String(cString: strerror(errno)).lowercased()); the old file is unchanged")
            }
            closed = true
            guard close(descriptor) == 0 else { throw SyncError.secretStore("cannot write \(location); the old file is unchanged") }
            // A symlink in the file's place is replaced, never followed.
            guard rename(temporary, path) == 0 else {
                throw SyncError.secretStore("cannot put the new \(location) in place: \(String(cString: strerror(errno)).lowercased())")
            }
        } catch {
            unlink(temporary)
            throw error
        }
        let folderDescriptor = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if folderDescriptor >= 0 {
            _ = fsync(folderDescriptor)
            close(folderDescriptor)
        }
    }

    /// The folder, made when missing (with its parents), and made 0700.
    private func makePrivateFolder(_ folder: String) throws {
        var current = folder.hasPrefix("/") ? "" : "."
        let parts = folder.split(separator: "/", omittingEmptySubsequences: true)
        for (index, part) in parts.enumerated() {
            current += "/" + part
            var status = stat()
            if lstat(current, &status) == 0 {
                if (status.st_mode & S_IFMT) == S_IFDIR { continue }
                if (status.st_mode & S_IFMT) == S_IFLNK && index < parts.count - 1 { continue }
                throw SyncError.secretStore("\(UntrustedText.sanitized(current)) is not a folder; the secrets file goes in \(UntrustedText.sanitized(folder))")
            }
            guard mkdir(current, index == parts.count - 1 ? 0o700 : 0o755) == 0 || errno == EEXIST else {
                throw SyncError.secretStore("cannot create \(UntrustedText.sanitized(current)): \(String(cString: strerror(errno)).lowercased())")
            }
        }
        var status = stat()
        guard lstat(folder, &status) == 0, (status.st_mode & S_IFMT) == S_IFDIR else {
            throw SyncError.secretStore("\(UntrustedText.sanitized(folder)) is not a folder (a symlink?); the secrets file needs a real one")
        }
        guard status.st_uid == geteuid() else {
            throw SyncError.secretStore("\(UntrustedText.sanitized(folder)) belongs to another user; secrets are kept only in a folder of your own")
        }
        if status.st_mode & 0o077 != 0 {
            guard chmod(folder, 0o700) == 0 else {
                throw SyncError.secretStore("cannot make \(UntrustedText.sanitized(folder)) private (mode 0700)")
            }
        }
    }
}

/// The backends in order: the environment, the configured command, the file. A secret is
/// read from the first that has it; it is written to the file.
public final class SecretChain {
    public let backends: [any SecretStore]
    public let file: FileSecrets
    /// What went wrong with a backend that was passed over for a later one (a failing
    /// secret_command, the secrets file used instead), once each: for the caller to say.
    public private(set) var passedOver: [String] = []

    /// - Parameter file: the secrets file (beside the config file).
    public init(environment: [String: String], secretCommand: String?, secretTimeout: Int = CommandSecrets.standardTimeout, file path: String) {
        file = FileSecrets(path: path)
        var backends: [any SecretStore] = [EnvironmentSecrets(environment: environment)]
        if let secretCommand { backends.append(CommandSecrets(command: secretCommand, timeout: secretTimeout)) }
        backends.append(file)
        self.backends = backends
    }

    public func read(_ name: SecretName) throws -> String? {
        try found(name)?.value
    }

    /// The secret and where it was found: from the first backend that has it. A backend
    /// that fails (a command that exits non-zero or times out, a file others can read) is
    /// passed over when a later one has the secret, and noted in `passedOver`; else its
    /// error is the answer.
    public func found(_ name: SecretName) throws -> (value: String, location: String)? {
        var failure: (backend: String, error: any Error)?
        for backend in backends {
            do {
                if let value = try backend.read(name) {
                    // Once per backend passed over, whichever secrets it failed for.
                    if let failure, !noted.contains(failure.backend) {
                        noted.insert(failure.backend)
                        passedOver.append("\(failure.error); read from \(backend.location(of: name)) instead")
                    }
                    return (value, backend.location(of: name))
                }
            } catch {
                failure = failure ?? (backend.location, error)
            }
        }
        if let failure { throw failure.error }
        return nil
    }
    /// The backends said in `passedOver` already.
    private var noted = Set<String>()

    public func write(_ value: String, for name: SecretName) throws {
        try file.write(value, for: name)
    }
}
