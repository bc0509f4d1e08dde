import Foundation
import ScrollbackDemo
import ScrollbackModel
import ScrollbackStorage
import ScrollbackSync
import ScrollbackTerminal
import TerminalText

/// A command that failed for a reason the user can act on: exit status 1.
struct CommandFailure: UserFacingError {
    let message: String
    var userLine: String { message }
}

/// Stopped by Ctrl-C (or SIGTERM) with nothing lost: exit status 130.
struct CommandInterrupted: UserFacingError {
    let message: String
    var userLine: String { message }
    var exitStatus: Int32 { 130 }
}

/// The command line: parses arguments, opens the store, runs one command.
public enum Scrollback {
    public static let version = "0.1.0"

    /// Runs the program with the process's own arguments. An argument that is not UTF-8 is
    /// refused: Swift would repair it with U+FFFD, and `--db $'\\xff.db'` would then quietly
    /// name another file.
    @MainActor
    public static func runProcess(environment: [String: String], console: Console) -> Int32 {
        var arguments: [String] = []
        for index in 1..<Int(max(CommandLine.argc, 1)) {
            guard let raw = CommandLine.unsafeArgv[index] else { continue }
            guard let argument = String(validatingCString: raw) else {
                let error = UsageError(
                    message: "argument \(index) is not valid UTF-8; scrollback takes UTF-8 paths and text only (a title or query: type it in UTF-8; a file: rename it, or use a link with a UTF-8 name)",
                    command: nil)
                return report(error, verbose: false, on: console)
            }
            arguments.append(argument)
        }
        return run(arguments: arguments, environment: environment, console: console)
    }

    /// Runs the program and returns its exit status: 0 success, 1 failure, 2 usage.
    @MainActor
    public static func run(arguments: [String], environment: [String: String], console: Console) -> Int32 {
        let status = runCommand(arguments: arguments, environment: environment, console: console)
        // Everything written must have arrived: a cut export that exits 0 is the worst kind
        // of loss. (A command that failed has said why already.)
        guard status == 0 else {
            console.flush()
            return status
        }
        do {
            try console.checkOutput()
        } catch {
            return report(error, verbose: false, on: console)
        }
        return status
    }

    @MainActor
    private static func runCommand(arguments: [String], environment: [String: String], console: Console) -> Int32 {
        let verbose = arguments.contains(OptionKey.verbose.name)
        do {
            let parsed = try ArgumentParser.parse(arguments)
            if parsed.has(.version) {
                console.line("scrollback \(version)")
                return 0
            }
            if parsed.has(.help) {
                console.write(HelpText.text(for: parsed.command.flatMap(CommandTable.command(named:))))
                return 0
            }
            let context = try CommandContext(parsed: parsed, environment: environment, console: console)
            return try context.run()
        } catch {
            return report(error, verbose: verbose, on: console)
        }
    }

    /// Says why a command failed, in one line on standard error (sanitized: it quotes paths,
    /// ids and titles), and gives its exit status. Every error a person can meet says what
    /// to do (`UserFacingError`); one that does not is a bug, shown as Swift describes it.
    static func report(_ error: any Error, verbose: Bool, on console: Console) -> Int32 {
        guard let error = error as? any UserFacingError else {
            console.errorLine("scrollback: \(error)")
            return 1
        }
        console.errorLine("scrollback: \(verbose ? error.verboseLine : error.userLine)")
        return error.exitStatus
    }
}

/// What every command gets: its arguments, the console and a way to open the store.
struct CommandContext {
    let parsed: ParsedArguments
    let environment: [String: String]
    let console: Console
    let readOnly: Bool
    let databasePath: String
    /// Only the built-in locations get their folders made: a mistyped `--db` or
    /// `$SCROLLBACK_DB` must not quietly start a new, empty database somewhere else.
    let createsFolder: Bool
    /// The store every `openStore` gives: the MCP server runs commands on its own.
    var sharedStore: Store?

    init(parsed: ParsedArguments, environment: [String: String], console: Console) throws {
        self.parsed = parsed
        self.environment = environment
        self.console = console
        readOnly = parsed.has(.readonly)
        if parsed.has(.demo) && parsed.value(.db) != nil {
            throw UsageError(message: "--demo and --db cannot be used together", command: parsed.command)
        }
        if let path = parsed.value(.db) {
            guard !path.isEmpty else { throw UsageError(message: "--db needs a path", command: parsed.command) }
            // A connection string given as the database: not repeated (it may hold a password).
            if path.range(of: #"^[A-Za-z][A-Za-z0-9+.-]*://"#, options: .regularExpression) != nil {
                throw UsageError(
                    message:
                        "--db takes the path of a database file; the value given (\(path.count) characters, not shown) looks like a URL (a sync server's connection string is read by `scrollback sync init` from standard input)",
                    command: parsed.command)
            }
            databasePath = path
            createsFolder = false
        } else if parsed.has(.demo) {
            databasePath = DatabaseLocation.demoPath(environment: environment)
            createsFolder = true
        } else {
            databasePath = DatabaseLocation.defaultPath(environment: environment)
            createsFolder = (environment["SCROLLBACK_DB"] ?? "").isEmpty
        }
    }

    var wantsJSON: Bool { parsed.has(.json) }

    /// Runs the command the table names, or the browser when there is none.
    @MainActor
    func run() throws -> Int32 {
        guard let name = parsed.command, let command = CommandTable.command(named: name), let run = command.run else {
            return try BrowseCommand(context: self).run()
        }
        return try run(self)
    }

    /// Opens the store, making the demo database first when `--demo` asks for it.
    ///
    /// - Parameter forReading: the command only reads. An existing database of the current
    ///   schema is then opened read-only, so that a command that reads never writes the
    ///   file or its `-wal` (not even SQLite's checkpoint on close). A missing or older
    ///   database is still created or upgraded first.
    ///
    ///   A writable store whose search index an upgrade left to build is finished first
    ///   (with a progress line on a terminal; Ctrl-C stops it, kept for the next time),
    ///   unless `buildingIndex` is false (the browser builds it in the background).
    func openStore(forReading: Bool = false, buildingIndex: Bool = true) throws -> Store {
        if let sharedStore { return sharedStore }
        // Noted beside the database for as long as this process lives, so that a restore
        // does not swap the file under it (see `DatabaseUsers`).
        try DatabaseUsers.shared.register(databasePath, as: Self.role(of: parsed.command), readOnly: readOnly)
        do {
            return try openRegisteredStore(forReading: forReading, buildingIndex: buildingIndex)
        } catch {
            DatabaseUsers.shared.forget(databasePath)
            throw error
        }
    }

    private func openRegisteredStore(forReading: Bool, buildingIndex: Bool) throws -> Store {
        if parsed.has(.demo) && !readOnly {
            try DemoCommand.ensureDemoDatabase(at: databasePath, console: console)
        }
        if forReading && !readOnly && FileManager.default.fileExists(atPath: databasePath) {
            do {
                return try Store.open(path: databasePath, readOnly: true)
            } catch StorageError.needsUpgrade {
                // Upgraded below, with its backup, as any open would.
            } catch StorageError.notAScrollbackDatabase(_, let reason) where reason == StorageError.emptyReason {
                // An empty file becomes a new database below.
            } catch StorageError.cannotOpen(_, let reason) where reason == StorageError.hotJournalReason {
                // A crashed writer's journal: the open below, which may write, rolls it back.
            }
        }
        let store = try Store.open(
            path: databasePath, readOnly: readOnly, createFolder: createsFolder,
            willUpgrade: { from, to in
                // The upgrade is one transaction and says nothing while it runs: say so first.
                guard console.errorIsTerminal else { return }
                console.writeError(
                    "upgrading \(UntrustedText.sanitized(databasePath)) from schema \(from) to \(to), after a backup copy (about 10 seconds per 100,000 conversations)…\n")
                console.flush()
            })
        if let backup = store.migration.backupPath {
            console.errorLine(
                "scrollback: upgraded \(databasePath) from schema \(store.migration.fromVersion) to \(store.migration.toVersion); the previous version is kept at \(backup)"
            )
        }
        store.sweepAbandonedFiles()
        if try buildingIndex && !store.isReadOnly && store.hasSearchBacklog() {
            try finishSearchIndex(store)
        }
        return store
    }

    /// What a command does with the database, as `DatabaseUsers` notes it.
    static func role(of command: String?) -> DatabaseUsers.Role {
        guard let command else { return .browser }
        if command == "sync" || command.hasPrefix("sync ") { return .sync }
        if command == "import" { return .importer }
        if command == "mcp" { return .agentServer }
        return .command
    }

    /// Builds what is left of the search index, newest rows first, with a progress line on
    /// a terminal. Ctrl-C is held back and looked for between steps: what is built stays.
    func finishSearchIndex(_ store: Store) throws {
        let showProgress = console.errorIsTerminal
        var lastShown = Date.distantPast
        var shown = IndexingProgress(done: 0, remaining: 0)
        if showProgress { console.writeError("building the search index…") }
        let finished = try withInterruptsHeld { interrupted in
            try store.buildSearchIndex(
                shouldStop: interrupted,
                progress: { progress in
                    shown = progress
                    guard showProgress, Date().timeIntervalSince(lastShown) > 0.2 else { return }
                    lastShown = Date()
                    console.writeError(
                        "\r\u{1B}[Kbuilding the search index: \(Int(progress.fraction * 100))% (\(NumberText.grouped(progress.remaining)) rows left)")
                })
        }
        if showProgress { console.writeError("\r\u{1B}[K") }
        if !finished {
            throw CommandInterrupted(
                message: "interrupted while building the search index (\(Int(shown.fraction * 100))% of what was left is done, and kept); it goes on the next time scrollback writes, and searches are complete meanwhile")
        }
    }

    /// Fails up front, before any question is asked, when the store cannot be written.
    func requireWritable(_ store: Store) throws {
        if store.isReadOnly { throw StorageError.readOnly }
    }

    func integer(_ name: OptionKey, default defaultValue: Int, in range: ClosedRange<Int>) throws -> Int {
        guard let text = parsed.value(name) else { return defaultValue }
        guard let value = Int(text), range.contains(value) else {
            throw UsageError(
                message: "\(name) must be a whole number from \(range.lowerBound) to \(range.upperBound), not '\(text)'",
                command: parsed.command)
        }
        return value
    }

    /// The value of an option whose words are an enum's cases (`--sort`, `--format`), or a
    /// usage error that lists them.
    func choice<Choice: RawRepresentable & CaseIterable>(_ name: OptionKey, as _: Choice.Type = Choice.self) throws -> Choice?
    where Choice.RawValue == String {
        guard let text = parsed.value(name) else { return nil }
        if let chosen = Choice(rawValue: text) { return chosen }
        let list = OutputFormat.list(Choice.allCases.map(\.rawValue))
        throw UsageError(message: "\(name) must be \(list), not '\(OutputFormat.word(text))'", command: parsed.command)
    }

    /// The page cursor of `--after`/`--before`, when the token was made for this database
    /// and this query.
    func cursor(_ name: OptionKey, scope: PageToken.Scope) throws -> Cursor? {
        guard let token = parsed.value(name) else { return nil }
        do {
            return try PageToken.cursor(from: token, option: name.name, scope: scope)
        } catch let error as UsageError {
            throw UsageError(message: error.message, command: parsed.command)
        }
    }

    /// The conversations the positional ids name, each once, in the order given; every id
    /// is checked before anything is done (one that is wrong or ambiguous fails the command).
    func conversationsNamed(in store: Store) throws -> [ConversationDTO] {
        var seen = Set<Int64>()
        return try parsed.positional.map { try store.conversations.conversation(matching: $0) }.filter { seen.insert($0.id).inserted }
    }

    /// What page tokens of this command are bound to: the database's id and `query`.
    func pageScope(_ store: Store, query: String) throws -> PageToken.Scope {
        let id = try store.settings.value(.databaseID)
        return PageToken.Scope(databaseID: id.isEmpty ? store.path : id, query: query)
    }

    /// The filter of `--source`, `--model`, `--project`, `--since`, `--until` and `--pinned`.
    func filter(now: Timestamp = .now()) throws -> ConversationFilter {
        var filter = ConversationFilter(pinnedOnly: parsed.has(.pinned))
        do {
            if let source = parsed.value(.source) { filter.source = try ConversationFilter.source(source) }
            if let model = parsed.value(.model) {
                guard !model.trimmingCharacters(in: .whitespaces).isEmpty else {
                    throw FilterError("--model needs a name (or a part of one)")
                }
                filter.model = model
            }
            if let project = parsed.value(.project) {
                guard !project.trimmingCharacters(in: .whitespaces).isEmpty else {
                    throw FilterError("--project needs a folder (or a part of one)")
                }
                filter.project = project
            }
            if let since = parsed.value(.since) { filter.since = try ConversationFilter.time(since, now: now, end: false) }
            if let until = parsed.value(.until) { filter.until = try ConversationFilter.time(until, now: now, end: true) }
            if let title = parsed.value(.title) {
                guard let words = ConversationFilter.titleWords(title) else {
                    let blank = title.allSatisfy { $0.isWhitespace || $0.unicodeScalars.allSatisfy(\.properties.isDefaultIgnorableCodePoint) }
                    let why =
                        blank ? "it was blank"
                        : title.contains("\"") ? "quotes alone only mark a phrase: --title '\"like this\"'"
                        : "it holds only marks with no letter under them: type a word"
                    throw FilterError("--title needs the words to find in titles (\(why))")
                }
                filter.title = words
            }
            try filter.validate()
        } catch let error as FilterError {
            throw UsageError(message: OutputFormat.line(error.message), command: parsed.command)
        }
        return filter
    }

    /// The filter as options, with exact times (`--since 2026-11-24T10:00:00.000Z`), for a
    /// command that must see the same rows later (the `more:` line).
    static func filterOptions(_ filter: ConversationFilter) -> [String] {
        var words: [String] = []
        if let source = filter.source { words += [OptionKey.source.name, source] }
        if let model = filter.model { words += [OptionKey.model.name, model] }
        if let project = filter.project { words += [OptionKey.project.name, project] }
        if let since = filter.since { words += [OptionKey.since.name, since.iso8601] }
        // `--until` a time takes in that instant: the last one in.
        if let until = filter.until { words += [OptionKey.until.name, Timestamp(milliseconds: until.milliseconds &- 1).iso8601] }
        if filter.pinnedOnly { words.append(OptionKey.pinned.name) }
        if let title = filter.title { words += [OptionKey.title.name, title] }
        return words
    }

    /// The start of a command line that reaches the same database: `scrollback --db PATH`,
    /// `scrollback --demo`, with `--readonly` when given.
    var commandPrefix: [String] {
        var words = ["scrollback"]
        if let path = parsed.value(.db) { words += [OptionKey.db.name, path] }
        if parsed.has(.demo) { words.append(OptionKey.demo.name) }
        if readOnly { words.append(OptionKey.readonly.name) }
        return words
    }
}
