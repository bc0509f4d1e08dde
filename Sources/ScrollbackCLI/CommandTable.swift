import Foundation
import ScrollbackExport
import ScrollbackImport
import ScrollbackModel

/// An option's name, the key by which a command reads it (`parsed.value(.limit)`): every
/// option of the table has one here, so that a misspelt option does not compile, where a
/// string would have been an option never given.
struct OptionKey: Hashable, Sendable, CustomStringConvertible {
    /// With dashes: `--limit`.
    let name: String
    private init(_ name: String) { self.name = name }
    var description: String { name }

    // Global, and the browser's.
    static let db = OptionKey("--db")
    static let readonly = OptionKey("--readonly")
    static let demo = OptionKey("--demo")
    static let verbose = OptionKey("--verbose")
    static let help = OptionKey("--help")
    static let version = OptionKey("--version")
    static let exitAfterFirstFrame = OptionKey("--exit-after-first-frame")
    // The filters.
    static let source = OptionKey("--source")
    static let model = OptionKey("--model")
    static let project = OptionKey("--project")
    static let since = OptionKey("--since")
    static let until = OptionKey("--until")
    static let pinned = OptionKey("--pinned")
    static let title = OptionKey("--title")
    // The commands'.
    static let json = OptionKey("--json")
    static let limit = OptionKey("--limit")
    static let sort = OptionKey("--sort")
    static let after = OptionKey("--after")
    static let before = OptionKey("--before")
    static let last = OptionKey("--last")
    static let allBranches = OptionKey("--all-branches")
    static let hidden = OptionKey("--hidden")
    static let yes = OptionKey("--yes")
    static let format = OptionKey("--format")
    static let quiet = OptionKey("--quiet")
    static let restore = OptionKey("--restore")
    static let unzipLimit = OptionKey("--unzip-limit")
    static let out = OptionKey("--out")
    static let outDir = OptionKey("--out-dir")
    static let attachmentsDir = OptionKey("--attachments-dir")
    static let force = OptionKey("--force")
    static let chart = OptionKey("--chart")
    static let repair = OptionKey("--repair")
    static let count = OptionKey("--count")
    static let seed = OptionKey("--seed")
    static let printDefault = OptionKey("--print-default")
    static let allowWrites = OptionKey("--allow-writes")
    static let printConfig = OptionKey("--print-config")
    static let check = OptionKey("--check")
    static let at = OptionKey("--at")
    static let from = OptionKey("--from")
    static let words = OptionKey("--words")
}

/// An option a command takes.
struct OptionSpec: Sendable {
    let key: OptionKey
    /// The value's placeholder (`N`, `PATH`, `md|json|jsonl`), or nil for a flag.
    let value: String?
    var help: String
    /// The one-letter form: `-n` for `--limit`.
    var short: Character? = nil
    /// Left out of `--help` (still in the man page): options for benchmarks and tests.
    var hidden = false
    /// The words the value may be, when they are a fixed set (an enum's cases): its
    /// placeholder, what the completions offer, what `CommandContext.choice` accepts.
    var choices: [String]? = nil

    /// Long name with dashes: `--limit`.
    var name: String { key.name }

    init(_ key: OptionKey, value: String? = nil, help: String, short: Character? = nil, hidden: Bool = false) {
        self.key = key
        self.value = value
        self.help = help
        self.short = short
        self.hidden = hidden
    }

    /// An option whose value is one of `choices`, shown as `a|b|c`.
    init(_ key: OptionKey, choices: [String], help: String, hidden: Bool = false) {
        self.init(key, value: choices.joined(separator: "|"), help: help, hidden: hidden)
        self.choices = choices
    }

    /// `-n, --limit N` as help shows it.
    var label: String {
        (short.map { "-\($0), " } ?? "") + name + (value.map { " \($0)" } ?? "")
    }
}

/// A command: its name, what it does, its arguments, options and subcommands, and what runs
/// it. `--help`, the man page, the completions and the parser all read this table.
struct CommandSpec: Sendable {
    typealias Runner = @MainActor @Sendable (CommandContext) throws -> Int32

    /// The words that name it: `list`, `sync key show`.
    let name: String
    let summary: String
    /// The positional arguments as shown in usage, e.g. `ID...`; of a command with
    /// subcommands, their names (`[init|status|…]`).
    let arguments: String
    let minimumArguments: Int
    let maximumArguments: Int?
    let options: [OptionSpec]
    let example: String
    /// Each named by its own name after this one's (`sync` holds `sync init`).
    let subcommands: [CommandSpec]
    /// Says what is wrong with words the command does not take (every word after the
    /// command's first), without showing them: for a command where a word given may be a
    /// secret (`sync init URL`). Without it, the word is quoted in the message.
    let refuseWords: (@Sendable (_ words: [String]) -> UsageError)?
    /// What it does; nil for a group that only holds subcommands (`sync key`).
    let run: Runner?

    init(
        name: String, summary: String, arguments: String = "", minimumArguments: Int = 0, maximumArguments: Int? = 0,
        options: [OptionSpec] = [], example: String, subcommands: [CommandSpec] = [],
        refuseWords: (@Sendable (_ words: [String]) -> UsageError)? = nil, run: Runner?
    ) {
        self.name = name
        self.summary = summary
        self.minimumArguments = minimumArguments
        self.maximumArguments = maximumArguments
        self.options = options
        self.example = example
        // What a group refuses without showing, its subcommands refuse so too.
        self.subcommands = subcommands.map { $0.refuseWords == nil && refuseWords != nil ? $0.refusing(with: refuseWords) : $0 }
        self.refuseWords = refuseWords
        self.run = run
        guard arguments.isEmpty, !subcommands.isEmpty else {
            self.arguments = arguments
            return
        }
        let names = subcommands.flatMap(\.family).filter { $0.run != nil }.map { String($0.name.dropFirst(name.count + 1)) }
        let list = names.joined(separator: "|")
        self.arguments = run == nil ? list : "[\(list)]"
    }

    /// The same command, and those under it, refusing words with `refuse`.
    private func refusing(with refuse: (@Sendable (_ words: [String]) -> UsageError)?) -> CommandSpec {
        CommandSpec(
            name: name, summary: summary, arguments: arguments, minimumArguments: minimumArguments, maximumArguments: maximumArguments,
            options: options, example: example, subcommands: subcommands, refuseWords: refuse, run: run)
    }

    /// The last word of its name: `show` of `sync key show`.
    var word: String { name.split(separator: " ").last.map(String.init) ?? name }

    /// It and every command under it, depth first.
    var family: [CommandSpec] { [self] + subcommands.flatMap(\.family) }

    /// The subcommand named `word` after this one.
    func subcommand(_ word: String) -> CommandSpec? { subcommands.first { $0.word == word } }

    var usage: String {
        var parts = ["scrollback", name]
        // A hidden option (for the scripts, for benchmarks) is in the man page's list, not here.
        for option in options where !option.hidden {
            parts.append(option.value.map { "[\(option.name) \($0)]" } ?? "[\(option.name)]")
        }
        if !arguments.isEmpty { parts.append(arguments) }
        return parts.joined(separator: " ")
    }
}

/// The shells `scrollback completions` writes a script for.
enum Shell: String, CaseIterable, Sendable {
    case bash, zsh, fish
}

/// What `completions --words` lists from the database.
enum CompletionWords: String, CaseIterable, Sendable {
    case source, model
}

enum CommandTable {
    static let json = OptionSpec(.json, help: "print JSON instead of text", short: "j")
    static let limit = OptionSpec(.limit, value: "N", help: "at most N rows (default 50, at most 10000)", short: "n")

    /// Which conversations: the same words as the browser's filter line (`f`).
    static let filters: [OptionSpec] = [
        OptionSpec(.source, value: "NAME", help: "only those imported from NAME: chatgpt, claude, llm, jsonl, demo…"),
        OptionSpec(.model, value: "NAME", help: "only those whose model contains NAME (any case)"),
        OptionSpec(.project, value: "FOLDER", help: "only coding-agent sessions whose working folder contains FOLDER (any case)"),
        OptionSpec(.since, value: "DATE",
            help: "only those updated since DATE: 2025-01-31, 2025-01, 2025, or 7d, 2w, 3m, 1y ago (UTC)"),
        OptionSpec(.until, value: "DATE", help: "only those updated before the end of DATE (same forms)"),
        OptionSpec(.pinned, help: "only pinned conversations"),
        OptionSpec(.title, value: "WORDS", help: "only those whose title holds every word of WORDS, as search finds words"),
    ]

    static let global: [OptionSpec] = [
        OptionSpec(.db, value: "PATH", help: "the database (default: $SCROLLBACK_DB, else $XDG_DATA_HOME/scrollback/history.sqlite)"),
        OptionSpec(.readonly, help: "never write: commands that change data fail, nothing is created"),
        OptionSpec(.demo, help: "use the demo database, made on first use (see `scrollback demo`)"),
        OptionSpec(.verbose, help: "say more when something fails (SQLite's own words and the SQL)"),
        OptionSpec(.help, help: "show help", short: "h"),
    ]

    /// Options of the browser alone (no command).
    static let browser: [OptionSpec] = [
        OptionSpec(.exitAfterFirstFrame, help: "draw the browser once and exit (for benchmarks)", hidden: true)
    ]

    static let commands: [CommandSpec] = [
        CommandSpec(
            name: "list", summary: "List conversations, one page at a time",
            options: [
                OptionSpec(.sort, choices: ConversationOrder.allCases.map(\.rawValue), help: "the order (default: the browser's last choice, else updated)"),
                limit,
                OptionSpec(.after, value: "TOKEN", help: "the page after TOKEN (printed with each page)"),
                OptionSpec(.before, value: "TOKEN", help: "the page before TOKEN"),
                OptionSpec(.last, help: "the last page"),
            ] + filters + [json], example: "scrollback list --model gpt-4o --since 2w"
        ) {
            try ListCommand(context: $0).run()
            return 0
        },
        CommandSpec(
            name: "show", summary: "Print one conversation with its messages (its current branch)", arguments: "ID",
            minimumArguments: 1, maximumArguments: 1,
            options: [
                OptionSpec(
                    .allBranches,
                    help:
                        "every branch: each message under the one it follows, indented two spaces a level (deeper than \(ShowCommand.indentCap) levels, it says 'depth N'); '*' marks the current branch, '‹2/3›' a message's place among its siblings; with --json, each message's parentID"
                ),
                OptionSpec(.hidden,
                    help: "the hidden messages too (tool traffic, reasoning, context), each marked with its kind"),
                json,
            ], example: "scrollback show 3f2a9c1e --all-branches"
        ) {
            try ShowCommand(context: $0).run()
            return 0
        },
        CommandSpec(
            name: "search", summary: "Search titles and messages; every word must occur", arguments: "QUERY...",
            minimumArguments: 1, maximumArguments: nil,
            options: [
                limit, OptionSpec(.after, value: "TOKEN", help: "the page after TOKEN"),
                OptionSpec(.hidden, help: "find in the hidden messages too (tool traffic, reasoning, context)"),
            ] + filters + [json],
            example: "scrollback search --source claude 'sourdough starter'"
        ) {
            try SearchCommand(context: $0).run()
            return 0
        },
        CommandSpec(
            name: "rename", summary: "Give a conversation a new title", arguments: "ID TITLE...", minimumArguments: 2,
            maximumArguments: nil, example: "scrollback rename 3f2a9c1e 'Trip to Kyoto'"
        ) {
            try RenameCommand(context: $0).run()
            return 0
        },
        CommandSpec(
            name: "pin", summary: "Pin conversations: they come first in every order", arguments: "ID...", minimumArguments: 1,
            maximumArguments: nil, example: "scrollback pin 3f2a9c1e 77b0d2aa"
        ) {
            try PinCommand(context: $0, pinned: true).run()
            return 0
        },
        CommandSpec(
            name: "unpin", summary: "Unpin conversations", arguments: "ID...", minimumArguments: 1, maximumArguments: nil,
            example: "scrollback unpin 3f2a9c1e"
        ) {
            try PinCommand(context: $0, pinned: false).run()
            return 0
        },
        CommandSpec(
            name: "delete", summary: "Delete conversations with their messages: those named, or every one from a source",
            arguments: "[ID...]", minimumArguments: 0, maximumArguments: nil,
            options: [
                OptionSpec(.yes, help: "do not ask (required when input is not a terminal)", short: "y"),
                OptionSpec(.source, value: "NAME",
                    help: "every conversation imported from NAME (delete --source demo --yes removes the demo's)"),
            ],
            example: "scrollback delete 3f2a9c1e 77b0d2aa --yes"
        ) { try DeleteCommand(context: $0).run() },
        CommandSpec(
            name: "import",
            summary: "Import ChatGPT or Claude exports (the ZIP, its folder or its conversations.json), Claude Code sessions, llm's logs.db, or scrollback's JSON or JSON Lines; with no PATH, the places scrollback knows",
            arguments: "[PATH...]",
            minimumArguments: 0, maximumArguments: nil,
            options: [
                OptionSpec(
                    .format, choices: ImportFormat.allCases.map(\.rawValue),
                    help: "the format (default: found from the content): chatgpt and claude read a ZIP, a folder or a JSON file; llm an llm logs.db (SQLite); jsonl scrollback's own JSON or JSON Lines export; claude-code a session file (.jsonl) or a folder of them"),
                OptionSpec(.yes, help: "with no PATH: import the places found without asking (required when input is not a terminal)", short: "y"),
                OptionSpec(.quiet, help: "no progress on standard error", short: "q"),
                OptionSpec(.restore,
                    help: "bring back conversations of these files that were deleted (else they stay deleted, here and on synced machines)"),
                OptionSpec(.unzipLimit, value: "SIZE",
                    help: "let a ZIP entry inflate to SIZE (e.g. 8G) whatever its ratio (default: 200× its packed size, 4 GiB at most)"),
            ], example: "scrollback import ~/Downloads/chatgpt-export/"
        ) { try ImportCommand(context: $0).run() },
        CommandSpec(
            name: "export",
            summary: "Write conversations as Markdown, JSON or JSON Lines; JSON Lines carries the attachments' bytes (Markdown with --out writes them in FILE.files beside it)",
            arguments: "[ID...]",
            minimumArguments: 0, maximumArguments: nil,
            options: [
                OptionSpec(.format, choices: ExportFormat.allCases.map(\.rawValue), help: "the format (default md)"),
                OptionSpec(.out, value: "FILE", help: "write one file (a regular file; never through a symlink); default standard output"),
                OptionSpec(.outDir, value: "DIR", help: "write one file per conversation into DIR (created if missing); Markdown puts each one's attachments in NAME.files beside it"),
                OptionSpec(.attachmentsDir, value: "DIR",
                    help: "JSON Lines: write the attachments' bytes as files in DIR, named by their SHA-256, instead of as base64 lines in the export"),
                OptionSpec(.force, help: "replace files that exist"),
                OptionSpec(.hidden,
                    help: "Markdown: the hidden messages too (tool traffic, reasoning, context), each marked with its kind (JSON and JSON Lines always hold every message, with its kind)"),
            ] + filters, example: "scrollback export --format jsonl --out backup.jsonl"
        ) {
            try ExportCommand(context: $0).run()
            return 0
        },
        CommandSpec(
            name: "attachment", summary: "The files of conversations (photos, generated images, recordings, documents): list them, write one out",
            example: "scrollback attachment list 3f2a9c1e",
            subcommands: [
                CommandSpec(
                    name: "attachment list",
                    summary: "List a conversation's attachments: the message each is in, its SHA-256 (what get takes), name, pixels, type and size, or why its bytes are not here",
                    arguments: "ID", minimumArguments: 1, maximumArguments: 1, options: [json],
                    example: "scrollback attachment list 3f2a9c1e --json"
                ) {
                    try AttachmentCommand(context: $0).list()
                    return 0
                },
                CommandSpec(
                    name: "attachment get",
                    summary: "Write the stored bytes of the attachment whose SHA-256 starts with HASH (6 digits or more) to a file, checked against the hash as they are written",
                    arguments: "HASH", minimumArguments: 1, maximumArguments: 1,
                    options: [
                        OptionSpec(.out, value: "FILE",
                            help: "the file to write (required; a regular file, never through a symlink; - for standard output when it is not a terminal)"),
                        OptionSpec(.force, help: "replace FILE if it exists"),
                    ], example: "scrollback attachment get 3f2a9c1e0b7d --out plot.png"
                ) { try AttachmentCommand(context: $0).get() },
            ], run: nil),
        CommandSpec(
            name: "stats", summary: "Counts, size, schema version, oldest and newest; per model, conversations, messages and tokens; --chart draws the activity",
            options: [
                OptionSpec(.chart,
                    help: "bar charts instead: conversations and tokens per month (the last 24, or the filter's), per model, per source, the busiest days"),
                json,
            ] + filters, example: "scrollback stats --chart --since 2025"
        ) {
            try StatsCommand(context: $0).run()
            return 0
        },
        CommandSpec(
            name: "mcp",
            summary: "Serve the history to AI agents over the Model Context Protocol, on standard input and output: search, list, read, stats; read-only unless --allow-writes",
            options: [
                OptionSpec(.allowWrites, help: "add the rename and pin tools (nothing deletes); not with --readonly"),
                OptionSpec(.printConfig, help: "print what adds this server to Claude Code, Codex and clients configured in JSON, with this binary's path"),
            ], example: "claude mcp add scrollback -- scrollback mcp"
        ) { try MCPCommand(context: $0).run() },
        CommandSpec(
            name: "backup", summary: "Write a checked copy of the database to PATH while others may write it; never over a file without --force",
            arguments: "PATH", minimumArguments: 1, maximumArguments: 1,
            options: [OptionSpec(.force, help: "replace PATH if it exists"), json],
            example: "scrollback backup ~/backups/history-$(date +%F).sqlite"
        ) { try BackupCommand(context: $0).run() },
        CommandSpec(
            name: "restore",
            summary: "Replace the database with the backup at PATH, checked first (the current one is kept beside it under a dated name); or, with --at, rebuild the history as it was then into a new file",
            arguments: "PATH", minimumArguments: 0, maximumArguments: 1,
            options: [
                OptionSpec(.yes, help: "restore without asking (needed when standard input is not a terminal)", short: "y"),
                OptionSpec(.at, value: "TIME",
                    help: "rebuild the history as it was then (a date as --until reads it: the end of that day; or 2026-11-01T10:00Z, 7d…) from the sync server's snapshots and changes, into --out; the database is not touched"),
                OptionSpec(.out, value: "NEWFILE", help: "with --at: the new file to write (it must not exist)"),
                OptionSpec(.from, value: "BACKUP",
                    help: "with --at: start from this local backup (it must hold nothing after TIME), then take the sync server's changes after it up to TIME when this machine has sync's secrets"),
                json,
            ],
            example: "scrollback restore ~/backups/history-2026-11-30.sqlite"
        ) { try RestoreCommand(context: $0).run() },
        CommandSpec(
            name: "check", summary: "Check integrity, foreign keys and search indexes; non-zero exit on problems",
            options: [OptionSpec(.repair, help: "rebuild the search indexes and message counts first")],
            example: "scrollback check"
        ) { try CheckCommand(context: $0).run() },
        CommandSpec(
            name: "demo", summary: "Fill the database with generated conversations (source 'demo')",
            options: [
                OptionSpec(.count, value: "N", help: "how many conversations (default 1000)"),
                OptionSpec(.seed, value: "S", help: "the seed: the same seed gives the same data, its dates ending today (default 1)"),
                OptionSpec(.yes, help: "add to your own history without asking (without --db or --demo)", short: "y"),
            ], example: "scrollback --demo demo --count 100000 --seed 7"
        ) {
            try DemoCommand(context: $0).run()
            return 0
        },
        CommandSpec(
            name: "sync",
            summary: "Sync with your other machines through a PostgreSQL server, end-to-end encrypted: init, status, snapshot, key show, key import, off; alone, sync now",
            example: "scrollback sync",
            subcommands: [
                CommandSpec(
                    name: "sync init",
                    summary: "Turn sync on with the server of a connection string (read from standard input or the prompt, never an argument): its schema, a key unless one was imported, this machine registered, then a sync",
                    example: "scrollback sync init < connection-string.txt"
                ) { try SyncCommand(context: $0).run(.initialize) },
                CommandSpec(
                    name: "sync status",
                    summary: "Where sync stands: this machine, the last sync and what it said, the changes waiting to be sent, the server and its machines, where the secrets come from",
                    options: [json], example: "scrollback sync status --json"
                ) { try SyncCommand(context: $0).run(.status) },
                CommandSpec(
                    name: "sync snapshot",
                    summary: "Sync, then send a sealed snapshot of the history, from which a new machine catches up at download speed (a cut one goes on where it stopped)",
                    options: [json], example: "scrollback sync snapshot"
                ) { try SyncCommand(context: $0).run(.snapshot) },
                CommandSpec(
                    name: "sync off",
                    summary: "Turn sync off here; local data is kept, changes made meanwhile are sent when sync init turns it on again",
                    options: [
                        OptionSpec(
                            .force,
                            help: "forget this machine too: changes not sent are dropped, and sync init then joins as a new one")
                    ], example: "scrollback sync off"
                ) { try SyncCommand(context: $0).run(.off) },
                CommandSpec(
                    name: "sync key", summary: "The sync key: show it to carry it to another machine, import it there",
                    example: "scrollback sync key show",
                    subcommands: [
                        CommandSpec(
                            name: "sync key show", summary: "Print the sync key (to a terminal only, unless --force)",
                            options: [OptionSpec(.force, help: "write the key to a pipe or file too (anyone who reads it can open your history)")],
                            example: "scrollback sync key show"
                        ) { try SyncCommand(context: $0).run(.showKey) },
                        CommandSpec(
                            name: "sync key import",
                            summary: "Keep a key from `sync key show` on another machine, read from standard input or the prompt (checked against the server when one is known)",
                            example: "scrollback sync key import"
                        ) { try SyncCommand(context: $0).run(.importKey) },
                    ], run: nil),
            ],
            // Every word a sync command (any of them) does not take is refused without being
            // shown: it may be a connection string or a key, which are never arguments.
            refuseWords: SyncCommand.unknown
        ) { try SyncCommand(context: $0).run(.now) },
        CommandSpec(
            name: "config", summary: "The browser's config file: its path, its problems, or the whole default file",
            options: [
                OptionSpec(.printDefault, help: "print the default config.toml, every setting with a comment"),
                OptionSpec(.check, help: "read the config file and list its problems (exit 1 when there are any)"),
            ], example: "mkdir -p ~/.config/scrollback && scrollback config --print-default > ~/.config/scrollback/config.toml"
        ) { try ConfigCommand(context: $0).run() },
        CommandSpec(
            name: "completions", summary: "Print the shell completion script for bash, zsh or fish",
            arguments: Shell.allCases.map(\.rawValue).joined(separator: "|"),
            minimumArguments: 0, maximumArguments: 1,
            options: [
                // What the scripts run for `--source` and `--model`: the words this database holds.
                OptionSpec(
                    .words, choices: CompletionWords.allCases.map(\.rawValue),
                    help: "print the sources or models of the database, one a line (for the scripts)", hidden: true)
            ], example: "mkdir -p ~/.local/share/bash-completion/completions && scrollback completions bash > ~/.local/share/bash-completion/completions/scrollback"
        ) { try CompletionsCommand(context: $0).run() },
    ]

    /// The command of these words (`sync key show`), at any depth.
    static func command(named name: String) -> CommandSpec? {
        commands.lazy.flatMap(\.family).first { $0.name == name }
    }
}
