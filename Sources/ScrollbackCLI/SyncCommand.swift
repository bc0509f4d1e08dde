import Foundation
import ScrollbackModel
import ScrollbackStorage
import ScrollbackSync
import ScrollbackViewModels
import TerminalText

/// `scrollback sync` and its subcommands: `init`, `status`, `key show`, `key import`, `off`;
/// alone, a sync now (push, then pull). Secrets come from the environment, the configured
/// command or the secrets file, in that order; they never appear in arguments, messages or
/// JSON (`key show` prints the key, which is what it is for).
struct SyncCommand {
    let context: CommandContext
    var console: Console { context.console }
    /// Read once per run: a secret_command runs once per secret, and what went wrong with
    /// one is said once.
    let secrets: SecretChain
    /// The config file's problems with `secret_command` (one left out), read with the rest.
    let secretCommandProblems: [String]
    /// `[sync] fetch_attachments = "always"`: every sync fetches the files other machines sent.
    let fetchAttachmentsAlways: Bool
    /// The config file's problems with `fetch_attachments` (the default kept).
    let fetchProblems: [String]
    /// `[sync] snapshot_after`, `keep_months`, `compact_after_days`.
    let snapshotSettings: SnapshotSettings

    init(context: CommandContext) {
        self.context = context
        let config = ConfigLocation.load(environment: context.environment)
        fetchAttachmentsAlways = config.fetchAttachmentsAlways
        secretCommandProblems = config.problems.filter { $0.contains(": secret_command ") }
        fetchProblems = config.problems.filter { $0.contains(": fetch_attachments ") }
        snapshotSettings = SnapshotSettings(after: config.snapshotAfter, keepMonths: config.keepMonths, awayDays: config.compactAfterDays)
        secrets = SecretChain(
            environment: context.environment, secretCommand: config.secretCommand, secretTimeout: config.secretTimeout,
            file: PathText.parent(of: ConfigLocation.path(environment: context.environment)) + "/secrets")
    }

    /// What a sync command does, as the command table names it.
    enum Action {
        case now, initialize, status, snapshot, off, showKey, importKey
    }

    /// The subcommands' words after `sync` (`key show`), as the command table has them.
    static var subcommands: [String] {
        (CommandTable.command(named: "sync")?.family ?? []).filter { $0.run != nil && $0.name != "sync" }.map { String($0.name.dropFirst("sync ".count)) }
    }

    /// What is wrong with where the secrets come from, though a secret may be read all the
    /// same: a secret_command the config cannot use (it was left out), one that failed while
    /// a later place had the secret. Said once by every subcommand (`sync status` among its
    /// lines, the others on standard error), whatever its outcome.
    private var secretNotes: [String] {
        secretCommandProblems.map { "the config's secret_command is not used: \($0)" }
            + fetchProblems.map { "the config's fetch_attachments is not used: \($0)" } + secrets.passedOver
    }

    func run(_ action: Action) throws -> Int32 {
        defer {
            if action != .status { for note in secretNotes { console.errorLine("scrollback: \(OutputFormat.line(note))") } }
        }
        if context.readOnly && [.now, .initialize, .snapshot, .off, .importKey].contains(action) {
            throw CommandFailure(message: "--readonly: `scrollback \(context.parsed.command ?? "sync")` writes; run it without --readonly (`sync status` and `sync key show` only read)")
        }
        switch action {
        case .now: return try syncNow()
        case .initialize: return try initialize()
        case .status: return try status()
        case .snapshot: return try snapshot()
        case .off: return try off()
        case .showKey: return try showKey()
        case .importKey: return try importKey()
        }
    }

    /// An unknown subcommand, said without its arguments: they may be a connection string
    /// with its password, or a key, given where neither is taken. Only a short word close to
    /// a command (a typo) is shown, with the command meant.
    @Sendable static func unknown(_ words: [String]) -> UsageError {
        let secretsNote = "the connection string and the key are read from standard input or the prompt, never taken as arguments"
        let commands = subcommands.map { $0.split(separator: " ").map(String.init) }
        // `sync init URL`, `sync key import KEY`: a known command with something after it.
        if let known = commands.first(where: { words.count > $0.count && Array(words.prefix($0.count)) == $0 }) {
            let extra = words.count - known.count
            return UsageError(
                message: "`sync \(known.joined(separator: " "))` takes no argument (\(extra) given, not shown); \(secretsNote)",
                command: (["sync"] + known).joined(separator: " "))
        }
        if words == ["key"] {
            return UsageError(message: "`sync key` needs show or import: `sync key show` prints the key, `sync key import` reads one", command: "sync")
        }
        let typed = words.joined(separator: " ").lowercased()
        if words.count <= 2, typed.count <= 16,
            let nearest = subcommands.min(by: { ArgumentParser.editDistance($0, typed) < ArgumentParser.editDistance($1, typed) }),
            ArgumentParser.editDistance(nearest, typed) <= 2
        {
            let given = words.joined(separator: " ")
            let caseNote = given != typed ? " (the commands are lower-case)" : ""
            return UsageError(
                message: "unknown sync command '\(OutputFormat.line(given))'\(caseNote); did you mean `sync \(nearest)`?", command: "sync")
        }
        let list = subcommands.map { "sync \($0)" }.joined(separator: ", ")
        return UsageError(
            message: "unknown sync command (\(words.count) word\(words.count == 1 ? "" : "s"), not shown); the commands are \(list), and sync alone; \(secretsNote)",
            command: "sync")
    }

    /// A problem of the config's `secret_command`, said beside "no secret here": the command
    /// meant to give it was left out.
    private var secretCommandProblem: String {
        secretCommandProblems.first.map { " (the config's secret_command is not used: \(OutputFormat.line($0)))" } ?? ""
    }

    /// The stored key, or a clear error.
    func storedKey() throws -> SyncKey {
        guard let found = try secrets.found(.key) else {
            throw CommandFailure(
                message: "no sync key here\(secretCommandProblem); run `scrollback sync key import` with the key from `scrollback sync key show` on a machine that syncs")
        }
        guard let key = SyncKey(text: found.value) else { throw Self.badKey(at: found.location) }
        return key
    }

    static func badKey(at location: String) -> CommandFailure {
        if location.hasPrefix("$") {
            return CommandFailure(
                message: "\(location) is not a scrollback key (44 characters of base64); unset it, or set it to what `scrollback sync key show` prints on a machine that syncs")
        }
        return CommandFailure(
            message: "the sync key in \(location) is not a scrollback key (44 characters of base64); run `scrollback sync key import`")
    }

    func storedURL() throws -> String {
        guard let url = try secrets.read(.url) else {
            throw CommandFailure(message: "no sync server here\(secretCommandProblem); run `scrollback sync init`")
        }
        return url
    }

    // MARK: sync

    private func syncNow() throws -> Int32 {
        let store = try context.openStore()
        try context.requireWritable(store)
        guard try store.localSyncState().isOn else { throw SyncError.off }
        let url: String, key: SyncKey
        do {
            (url, key) = (try storedURL(), try storedKey())
        } catch {
            // A sync that cannot start is a failed sync too, for status and the browser.
            let message = (error as? CommandFailure)?.message ?? "\(error)"
            try? store.recordSyncFailure(OutputFormat.line(message), at: .now())
            throw error
        }
        let lock = try SyncLock(databasePath: store.path)
        let report = try withExtendedLifetime(lock) {
            try syncing(store, url: url, key: key)
        }
        console.line(summary(report))
        return 0
    }

    struct SnapshotOutput: Encodable {
        let id: String
        let chunks: Int
        let bytes: Int64
        let resumedChunks: Int
        let sent: Int
        let received: Int
    }

    /// `sync snapshot`: a sync, then a snapshot of what is here sent under the lease.
    private func snapshot() throws -> Int32 {
        let store = try context.openStore()
        try context.requireWritable(store)
        guard try store.localSyncState().isOn else { throw SyncError.off }
        let (url, key) = (try storedURL(), try storedKey())
        let lock = try SyncLock(databasePath: store.path)
        let (synced, made) = try withExtendedLifetime(lock) { () throws -> (SyncReport, SnapshotReport) in
            let synced = try syncing(store, url: url, key: key)
            defer { clearProgress() }
            do {
                let engine = try SyncEngine(store: store, conninfo: url, key: key)
                engine.keepMonths = snapshotSettings.keepMonths
                engine.awayDays = snapshotSettings.awayDays
                let made = try engine.makeSnapshot(progress: { done, total in
                    guard showsProgress else { return }
                    console.writeError("\r\u{1B}[Ksending the snapshot: chunk \(NumberText.grouped(min(done + 1, total))) of \(NumberText.grouped(total))…")
                })
                return (synced, made)
            } catch let error as SnapshotError {
                throw CommandFailure(message: error.description)
            } catch StorageError.diskFull(let path) {
                throw CommandFailure(message: "the disk holding \(path) is full: the snapshot's image does not fit beside the database; nothing was sent; free some space and try again")
            }
        }
        if context.wantsJSON {
            console.line(
                try OutputFormat.json(
                    SnapshotOutput(id: made.id, chunks: made.chunks, bytes: made.bytes, resumedChunks: made.resumed, sent: synced.sent, received: synced.received),
                    for: console))
            return 0
        }
        console.line(summary(synced))
        var line = "Snapshot \(made.id.prefix(8)) sent: \(OutputFormat.bytes(made.bytes)) in \(NumberText.grouped(made.chunks)) sealed chunk\(made.chunks == 1 ? "" : "s")"
        if made.resumed > 0 { line += " (\(NumberText.grouped(made.resumed)) of them were there from a cut upload)" }
        console.line(line + "; a new machine's `scrollback sync init` starts from it.")
        return 0
    }

    private func summary(_ report: SyncReport) -> String {
        var line = "Synced: sent \(NumberText.grouped(report.sent)), received \(NumberText.grouped(report.received))"
        if report.parked > 0 { line += " (\(NumberText.grouped(report.parked)) wait for changes not here yet)" }
        var files: [String] = []
        if report.filesSent > 0 { files.append("sent \(NumberText.grouped(report.filesSent))") }
        if report.filesFetched > 0 { files.append("fetched \(NumberText.grouped(report.filesFetched))") }
        if !files.isEmpty { line += "; attachments' files: " + files.joined(separator: ", ") }
        if report.mergedSnapshot { line += "; caught up from the server's newest snapshot first (changes this machine had not received were compacted)" }
        if let made = report.snapshot { line += "; sent snapshot \(made.id.prefix(8)) (\(OutputFormat.bytes(made.bytes)))" }
        for problem in report.fileProblems { console.errorLine("scrollback: \(OutputFormat.line(problem))") }
        return line + "."
    }

    /// Fetches the bytes of an awaited file from the sync server (`attachment get`, `show`):
    /// with this machine's secrets, beside any sync that runs.
    func fetch(_ store: Store, sha256: String, size: Int64?, name: String, check: () throws -> Void) throws {
        let (url, key) = (try storedURL(), try storedKey())
        do {
            try SyncEngine(store: store, conninfo: url, key: key).fetch(sha256: sha256, size: size, shownName: name, check: check)
        } catch SyncError.connectionLost(let message) {
            throw CommandFailure(message: "the connection to the sync server broke while fetching \(name) (\(message)); nothing of it was kept; try again")
        } catch StorageError.diskFull(let path) {
            throw CommandFailure(message: "the disk holding \(path) is full; nothing of the file was kept; free some space and try again")
        }
    }

    /// Syncs with progress on a terminal, the line cleared before anything else is said (a
    /// failure's line included); a failure is noted for `sync status` and the browser.
    private func syncing(_ store: Store, url: String, key: SyncKey) throws -> SyncReport {
        defer { clearProgress() }
        do {
            return try SyncEngine.run(
                store: store, conninfo: url, key: key, fetchAttachments: fetchAttachmentsAlways, snapshots: snapshotSettings,
                progress: progressLine)
        } catch StorageError.diskFull(let path) {
            // Each page is applied with its place: what came before the last transaction stays.
            throw CommandFailure(
                message: "the disk holding \(path) is full; what this sync applied before is kept, the rest was not changed; free some space and run `scrollback sync` again")
        }
    }

    /// Progress goes on a terminal that can clear a line: not a pipe, not TERM=dumb.
    private var showsProgress: Bool { console.errorIsTerminal && context.environment["TERM"] != "dumb" }

    private func progressLine(_ progress: SyncProgress) {
        guard showsProgress else { return }
        let verb = progress.phase == .sending ? "sending" : "receiving"
        let count = progress.total.map { "\(NumberText.grouped(progress.done)) of \(NumberText.grouped($0))" } ?? NumberText.grouped(progress.done)
        console.writeError("\r\u{1B}[K\(verb) \(count) changes…")
    }

    private func clearProgress() {
        if showsProgress { console.writeError("\r\u{1B}[K") }
    }

    // MARK: init

    private func initialize() throws -> Int32 {
        do {
            return try initializing()
        } catch let error as SyncError {
            // Said with init as what to run again while sync is off here (plain `sync` would
            // answer that it is off); once init turned it on, plain `sync` goes on.
            let on = (try? context.openStore().localSyncState().isOn) ?? false
            throw CommandFailure(message: error.described(retrying: on ? "scrollback sync" : "scrollback sync init"))
        }
    }

    private func initializing() throws -> Int32 {
        let chain = secrets
        // This scope's store is closed before a snapshot may take the file's place.
        let local: LocalSyncState
        let empty: Bool
        do {
            let store = try context.openStore()
            try context.requireWritable(store)
            local = try store.localSyncState()
            if local.isOn { return try replaceServer(store: store, chain: chain) }
            empty = try store.holdsNothing()
        }
        // The connection string: the environment's, else read now (Enter keeps a stored one).
        let url: String
        var urlToStore: String?
        if let fromEnvironment = try EnvironmentSecrets(environment: context.environment).read(.url) {
            url = fromEnvironment
        } else {
            let stored = try chain.read(.url)
            let answer = try readSecret(
                prompt: "Connection string of the PostgreSQL server (postgresql://user:password@host:5432/db?sslmode=require)"
                    + (stored == nil ? ": " : "; Enter keeps the stored one: "))
            if let answer, !answer.isEmpty {
                url = answer
                urlToStore = answer
            } else if let stored {
                url = stored
            } else {
                throw CommandFailure(message: "no connection string given; give one on standard input or at the prompt (it is never taken as an argument)")
            }
        }
        // The key: the stored one, else the server's history needs one imported, else a new one.
        let existingKey = try chain.found(.key)
        var key = try existingKey.map { found -> SyncKey in
            guard let key = SyncKey(text: found.value) else { throw Self.badKey(at: found.location) }
            return key
        }
        let probe = try SyncEngine.probe(conninfo: url, key: key)
        if let kept = local.machine, !probe.hasHistory {
            // Resuming: the machine's changes so far are on another server.
            throw CommandFailure(
                message: "this server holds no scrollback history, and this machine (\(kept)) synced with one that does; nothing was kept or changed; give that server's connection string, or run `scrollback sync off --force` first to join this one as a new machine")
        }
        var keyToStore: SyncKey?
        if probe.hasHistory {
            if key == nil {
                throw CommandFailure(
                    message: "the server holds a history already; run `scrollback sync key import` with the key from `scrollback sync key show` on a machine that syncs, then `scrollback sync init` again")
            }
            if probe.keyOpens == false { throw SyncError.wrongKey }
        } else if key == nil {
            let made = try SyncKey.generate()
            key = made
            keyToStore = made
        }
        guard let key else { throw SyncError.wrongKey }
        // Secrets are kept before the key check goes up: a kill between leaves the key here.
        try keep(url: urlToStore, key: keyToStore, in: chain)
        do {
            try SyncEngine.prepareServer(conninfo: url, key: key)
        } catch SyncError.wrongKey where keyToStore != nil {
            // Another machine's init put its key check up first: the key made here is of no use.
            try? chain.file.remove(.key)
            throw CommandFailure(
                message: "another machine started the history on this server a moment ago; run `scrollback sync key import` with its key (`scrollback sync key show` there), then `scrollback sync init` again")
        }
        // A new machine on a server with a history: from its newest snapshot, when it has one.
        let fromSnapshot = local.machine == nil && probe.hasHistory && empty ? catchUpFromSnapshot(url: url, key: key) : nil
        let store = try context.openStore()
        if let (machine, listing) = fromSnapshot {
            console.line(
                "Sync is on: this machine is \(machine); it starts from the server's snapshot \(listing.id.prefix(8)) (\(OutputFormat.bytes(listing.bytes)), \(NumberText.grouped(try store.conversations.count())) conversations); the changes made after it come next.")
        } else if let kept = local.machine {
            // Off, with the machine kept: on again as itself, its changes since noted.
            try store.resumeSync()
            let pending = try store.localSyncState().pending
            console.line(
                "Sync is on again: this machine is \(kept); \(NumberText.grouped(pending)) change\(pending == 1 ? "" : "s") made here to send.")
        } else {
            let machine = SyncEngine.newMachineID()
            let queued = try store.turnSyncOn(machine: machine, joining: probe.hasHistory)
            console.line(
                "Sync is on: this machine is \(machine); \(NumberText.grouped(queued)) change\(queued == 1 ? "" : "s") of what is here to send.")
        }
        if keyToStore != nil {
            console.line("A new key seals the history; carry it to your other machines with `scrollback sync key show`.")
        }
        let lock = try SyncLock(databasePath: store.path)
        let report = try withExtendedLifetime(lock) {
            try syncing(store, url: url, key: key)
        }
        console.line(summary(report))
        return 0
    }

    /// A new machine's database made from the server's newest snapshot: received beside the
    /// database, every chunk checked, adopted as this machine's (a new machine id), then put
    /// in place of the empty database. Nil when the server has none, or when it cannot be
    /// used (said in one line): the caller then catches up from the changes, and nothing of
    /// the snapshot is kept.
    private func catchUpFromSnapshot(url: String, key: SyncKey) -> (String, SnapshotListing)? {
        defer { clearProgress() }
        do {
            return try SyncEngine.catchUp(conninfo: url, key: key, databasePath: context.databasePath) { done, total in
                guard showsProgress else { return }
                console.writeError("\r\u{1B}[Kreceiving the snapshot: chunk \(NumberText.grouped(min(done + 1, total))) of \(NumberText.grouped(total))…")
            }
        } catch {
            clearProgress()
            let reason = (error as? any UserFacingError)?.userLine ?? "\(error)"
            console.errorLine("scrollback: the server's snapshot could not be used (\(reason)); catching up from the changes instead")
            return nil
        }
    }

    /// `sync init` where sync is on: a new connection string for the same history (a moved
    /// server, a new password). It must open with the key here; then it is kept and used.
    private func replaceServer(store: Store, chain: SecretChain) throws -> Int32 {
        let key = try storedKey()
        let url: String
        var urlToStore: String?
        if let fromEnvironment = try EnvironmentSecrets(environment: context.environment).read(.url) {
            url = fromEnvironment
        } else {
            guard let answer = try readSecret(prompt: "New connection string for this history's server: "), !answer.isEmpty else {
                throw CommandFailure(message: "sync is on already here; `scrollback sync` syncs now; to change the server, give `sync init` its connection string on standard input")
            }
            url = answer
            urlToStore = answer
        }
        let probe = try SyncEngine.probe(conninfo: url, key: key)
        guard probe.hasHistory else {
            throw CommandFailure(
                message: "that server holds no scrollback history; to move to it, run `scrollback sync off`, then `scrollback sync init` with it")
        }
        guard probe.keyOpens == true else { throw SyncError.wrongKey }
        try keep(url: urlToStore, key: nil, in: chain)
        console.line("Sync is on already; the new connection string is kept.")
        let lock = try SyncLock(databasePath: store.path)
        let report = try withExtendedLifetime(lock) {
            try syncing(store, url: url, key: key)
        }
        console.line(summary(report))
        return 0
    }

    /// Keeps the secrets given in the file, saying first (on a terminal) where.
    private func keep(url: String?, key: SyncKey?, in chain: SecretChain) throws {
        guard url != nil || key != nil else { return }
        if !chain.file.exists && (console.inputIsTerminal || console.errorIsTerminal) {
            console.errorLine(
                "scrollback: keeping the sync secrets in \(chain.file.path) (mode 0600, in a folder of mode 0700); set [sync] secret_command in config.toml to keep them elsewhere")
        }
        if let url { try chain.write(url, for: .url) }
        if let key { try chain.write(key.text, for: .key) }
    }

    // MARK: status

    struct StatusJSON: Encodable {
        let on: Bool
        let machine: String?
        let pending: Int
        let waiting: Int
        let lastSync: String?
        let failure: FailureJSON?
        let server: ServerJSON?
        let secrets: SecretsJSON
    }

    /// The last sync failed: what it said, since when syncs fail, and when it was.
    struct FailureJSON: Encodable {
        let message: String
        let since: String
        let last: String
    }

    struct ServerJSON: Encodable {
        /// Whether status asked the server at all (not without a connection string and key).
        let contacted: Bool
        let reachable: Bool
        let machines: Int?
        let toReceive: Int64?
        let problem: String?
    }

    struct SecretsJSON: Encodable {
        let url: String?
        let key: String?
        let file: String
        let problems: [String]
    }

    private func status() throws -> Int32 {
        let store = try context.openStore(forReading: true)
        let local = try store.localSyncState()
        var problems: [String] = []
        /// The secret and where it is from; a problem reading it is noted once.
        func found(_ name: SecretName) -> (value: String, location: String)? {
            do {
                return try secrets.found(name)
            } catch {
                let line = OutputFormat.line("\(error)")
                if !problems.contains(line) { problems.append(line) }
                return nil
            }
        }
        let url = found(.url), key = found(.key)
        var server: ServerJSON?
        if local.isOn {
            if let url, let key, let syncKey = SyncKey(text: key.value) {
                do {
                    let state = try SyncEngine(store: store, conninfo: url.value, key: syncKey).serverState()
                    server = ServerJSON(contacted: true, reachable: true, machines: state.machines, toReceive: state.toReceive, problem: nil)
                } catch let error as SyncError {
                    let reachable: Bool
                    switch error {
                    case .unreachable, .badConnectionString, .connectionLost: reachable = false
                    default: reachable = true
                    }
                    server = ServerJSON(contacted: true, reachable: reachable, machines: nil, toReceive: nil, problem: error.description)
                }
            } else {
                // Never asked: what is missing is said, not guessed as the server's state.
                let why: String
                if url == nil && key == nil {
                    why = problems.isEmpty ? "no connection string or key here" : "the secrets cannot be read (see below)"
                } else if url == nil {
                    why = problems.isEmpty ? "no connection string here; run `scrollback sync init`" : "the connection string cannot be read (see below)"
                } else if key == nil {
                    why = problems.isEmpty ? "no key here; run `scrollback sync key import`" : "the key cannot be read (see below)"
                } else {
                    why = Self.badKey(at: key?.location ?? "").message
                }
                server = ServerJSON(contacted: false, reachable: false, machines: nil, toReceive: nil, problem: why)
            }
        }
        for note in secretNotes.map(OutputFormat.line) where !problems.contains(note) { problems.append(note) }
        let failure = local.failure.map { FailureJSON(message: $0.message, since: $0.since.iso8601, last: $0.last.iso8601) }
        let status = StatusJSON(
            on: local.isOn, machine: local.machine, pending: local.pending, waiting: local.parked,
            lastSync: local.lastSync?.iso8601, failure: failure, server: server,
            secrets: SecretsJSON(url: url?.location, key: key?.location, file: secrets.file.path, problems: problems))
        if context.wantsJSON {
            console.line(try OutputFormat.json(status, for: console))
            return 0
        }
        guard let machine = local.machine, local.isOn else {
            if let kept = local.machine {
                console.line(
                    "Sync is off for \(OutputFormat.line(store.path)); this machine (\(kept)) notes its changes, \(NumberText.grouped(local.pending)) so far, and `scrollback sync init` turns it on again and sends them.")
            } else {
                console.line("Sync is off for \(OutputFormat.line(store.path)); `scrollback sync init` turns it on.")
            }
            for problem in problems { console.line("secrets: \(problem)") }
            return 0
        }
        let now = Timestamp.now()
        func when(_ time: Timestamp) -> String { "\(TimeText.relative(time, now: now)) (\(time.iso8601))" }
        console.line("machine:    \(machine)")
        console.line("last sync:  \(local.lastSync.map(when) ?? "never")")
        if let failure = local.failure {
            // The last sync did not complete: what it said, and since when, before anything else.
            console.line("failing:    since \(when(failure.since)); the last try, \(TimeText.relative(failure.last, now: now)), said: \(OutputFormat.line(failure.message))")
        }
        console.line("to send:    \(NumberText.grouped(local.pending))")
        if local.parked > 0 { console.line("waiting:    \(NumberText.grouped(local.parked)) received, for changes not here yet") }
        if let server {
            if !server.contacted {
                console.line("server:     not contacted: \(OutputFormat.line(server.problem ?? ""))")
            } else if server.reachable, let machines = server.machines, let toReceive = server.toReceive {
                console.line("server:     reachable; \(NumberText.grouped(machines)) machine\(machines == 1 ? "" : "s"); \(NumberText.grouped(Int(clamping: toReceive))) to receive")
            } else if let problem = server.problem, problem == local.failure?.message {
                // What the last sync said, above: not twice.
                console.line("server:     \(server.reachable ? "answers, but refuses as the last sync said" : "offline, as the last sync found")")
            } else {
                console.line("server:     \(server.reachable ? "answers, but" : "offline:") \(OutputFormat.line(server.problem ?? ""))")
            }
        }
        console.line("url from:   \(OutputFormat.line(url?.location ?? "nowhere"))")
        console.line("key from:   \(OutputFormat.line(key?.location ?? "nowhere"))")
        for problem in problems { console.line("secrets:    \(problem)") }
        return 0
    }

    // MARK: off

    private func off() throws -> Int32 {
        let store = try context.openStore()
        try context.requireWritable(store)
        let local = try store.localSyncState()
        let forget = context.parsed.has(.force)
        guard let machine = local.machine, local.isOn || forget else {
            console.line("Sync is off already.")
            return 0
        }
        let lock = try SyncLock(databasePath: store.path)
        try withExtendedLifetime(lock) { try store.turnSyncOff(forget: forget) }
        if forget {
            var line = "Sync is off, and machine \(machine) is forgotten here; local data is kept"
            if local.pending > 0 {
                line += "; \(NumberText.grouped(local.pending)) change\(local.pending == 1 ? " was" : "s were") not sent and will not be"
            }
            console.line(line + ".")
            console.line("`scrollback sync init` joins as a new machine: what is here then counts as older than the changes on the server.")
        } else {
            console.line(
                "Sync is off for machine \(machine); local data is kept. Changes made here are noted (\(NumberText.grouped(local.pending)) so far), and `scrollback sync init` turns it on again and sends them.")
        }
        let chain = secrets
        let places = Set(SecretName.allCases.compactMap { try? chain.found($0)?.location })
        if places.contains(chain.file.location) {
            console.line("The key and connection string stay in \(OutputFormat.line(chain.file.path)) for `scrollback sync init`; delete that file to forget them.")
        } else if !places.isEmpty {
            console.line("The secrets stay where they are: \(places.sorted().map(OutputFormat.line).joined(separator: ", ")).")
        }
        return 0
    }

    // MARK: key

    private func showKey() throws -> Int32 {
        guard console.outputIsTerminal || context.parsed.has(.force) else {
            throw CommandFailure(message: "the key goes only to a terminal; add --force to write it to a pipe or file (anyone who reads it can open your history)")
        }
        let key = try storedKey()
        console.line(key.text)
        return 0
    }

    private func importKey() throws -> Int32 {
        let chain = secrets
        guard let text = try readSecret(prompt: "Key (from `scrollback sync key show` on another machine): "), !text.isEmpty else {
            throw CommandFailure(message: "no key given; give it on standard input or at the prompt (it is never taken as an argument)")
        }
        guard let key = SyncKey(text: text) else {
            throw CommandFailure(message: "that is not a scrollback key: \(SyncKey.problem(with: text) ?? ""); nothing was changed")
        }
        if let stored = try chain.found(.key), stored.location != chain.file.location {
            throw CommandFailure(message: "the key comes from \(stored.location), which scrollback cannot change; put the new key there")
        }
        // Checked against the server when one is known: a wrong key is refused before it is kept.
        if let url = try chain.read(.url) {
            do {
                let probe = try SyncEngine.probe(conninfo: url, key: key)
                if probe.keyOpens == false { throw SyncError.wrongKey }
            } catch let error as SyncError where !Self.isAboutTheKey(error) {
                // Unchecked, it may not replace a key that works.
                if (try? chain.file.read(.key)) != nil {
                    throw CommandFailure(
                        message: "could not check the new key against the server (\(error)); the stored key is kept; try again when the server answers")
                }
                console.errorLine("scrollback: could not check the key against the server (\(error)); keeping it, as there was none")
            }
        }
        try keep(url: nil, key: key, in: chain)
        console.line("The key is kept in \(OutputFormat.line(chain.file.path)).")
        return 0
    }

    private static func isAboutTheKey(_ error: SyncError) -> Bool {
        if case .wrongKey = error { return true }
        return false
    }

    // MARK: Reading secrets

    /// One line: from a terminal without echo (Ctrl-C or Ctrl-D cancels), else the first
    /// line of standard input.
    private func readSecret(prompt: String) throws -> String? {
        guard console.inputIsTerminal else {
            return console.readLine()?.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        console.writeError(prompt)
        defer { console.writeError("\n") }
        guard let line = try SecretPrompt.readLine() else {
            throw CommandInterrupted(message: "cancelled; nothing was changed")
        }
        return line.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

/// A line typed without echo: the terminal in raw mode, bytes read one by one (Enter ends,
/// Backspace and Ctrl-U edit, Ctrl-C and Ctrl-D cancel), the terminal put back after.
enum SecretPrompt {
    static func readLine() throws -> String? {
        var saved = termios()
        guard tcgetattr(STDIN_FILENO, &saved) == 0 else { return Swift.readLine() }
        var raw = saved
        raw.c_lflag &= ~tcflag_t(ECHO | ICANON | ISIG | IEXTEN)
        guard tcsetattr(STDIN_FILENO, TCSAFLUSH, &raw) == 0 else { return Swift.readLine() }
        defer { tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved) }
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        while true {
            let count = read(STDIN_FILENO, &byte, 1)
            if count < 0 && errno == EINTR { continue }
            guard count == 1 else { return nil }
            switch byte {
            case 0x0D, 0x0A: return String(decoding: bytes, as: UTF8.self)
            case 0x03: return nil
            case 0x04: if bytes.isEmpty { return nil }
            case 0x7F, 0x08:
                // A whole character: its continuation bytes and its first.
                while let last = bytes.last, last & 0xC0 == 0x80 { bytes.removeLast() }
                if !bytes.isEmpty { bytes.removeLast() }
            case 0x15: bytes.removeAll()
            default:
                if bytes.count < 65_536 { bytes.append(byte) }
            }
        }
    }
}
