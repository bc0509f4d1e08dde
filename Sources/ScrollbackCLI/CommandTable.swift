import ScrollbackImport
import Foundation

/// An option a command takes.
struct OptionSpec: Sendable {
    /// Long name with dashes: `--limit`.
    let name: String
    /// The value's placeholder (`N`, `PATH`), or nil for a flag.
    let value: String?
    let help: String
    /// The one-letter form: `-n` for `--limit`.
    var short: Character? = nil
    /// Left out of `--help` (still in the man page): options for benchmarks and tests.
    var hidden = false

    /// `-n, --limit N` as help shows it.
    var label: String {
        (short.map { "-\($0), " } ?? "") + name + (value.map { " \($0)" } ?? "")
    }
}

/// A subcommand: its name, what it does, its arguments and options. `--help` text and the
/// parser both come from this table.
struct CommandSpec: Sendable {
    let name: String
    let summary: String
    /// The positional arguments as shown in usage, e.g. `ID...`.
    let arguments: String
    let minimumArguments: Int
    let maximumArguments: Int?
    let options: [OptionSpec]
    let example: String

    var usage: String {
        var parts = ["scrollback", name]
        for option in options {
            parts.append(option.value.map { "[\(option.name) \($0)]" } ?? "[\(option.name)]")
        }
        if !arguments.isEmpty { parts.append(arguments) }
        return parts.joined(separator: " ")
    }
}

enum CommandTable {
    static let json = OptionSpec(name: "--json", value: nil, help: "print JSON instead of text", short: "j")
    static let limit = OptionSpec(name: "--limit", value: "N", help: "at most N rows (default 50, at most 10000)", short: "n")

    /// Which conversations: the same words as the browser's filter line (`f`).
    static let filters: [OptionSpec] = [
        OptionSpec(name: "--source", value: "NAME", help: "only those imported from NAME: chatgpt, claude, llm, jsonl, demo…"),
        OptionSpec(name: "--model", value: "NAME", help: "only those whose model contains NAME (any case)"),
        OptionSpec(
            name: "--project", value: "FOLDER", help: "only coding-agent sessions whose working folder contains FOLDER (any case)"),
        OptionSpec(
            name: "--since", value: "DATE",
            help: "only those updated since DATE: 2025-01-31, 2025-01, 2025, or 7d, 2w, 3m, 1y ago (UTC)"),
        OptionSpec(name: "--until", value: "DATE", help: "only those updated before the end of DATE (same forms)"),
        OptionSpec(name: "--pinned", value: nil, help: "only pinned conversations"),
        OptionSpec(name: "--title", value: "WORDS", help: "only those whose title holds every word of WORDS, as search finds words"),
    ]

    static let global: [OptionSpec] = [
        OptionSpec(name: "--db", value: "PATH", help: "the database (default: $SCROLLBACK_DB, else $XDG_DATA_HOME/scrollback/history.sqlite)"),
        OptionSpec(name: "--readonly", value: nil, help: "never write: commands that change data fail, nothing is created"),
        OptionSpec(name: "--demo", value: nil, help: "use the demo database, made on first use (see `scrollback demo`)"),
        OptionSpec(name: "--verbose", value: nil, help: "say more when something fails (SQLite's own words and the SQL)"),
        OptionSpec(name: "--help", value: nil, help: "show help", short: "h"),
    ]

    /// Options of the browser alone (no command).
    static let browser: [OptionSpec] = [
        OptionSpec(name: "--exit-after-first-frame", value: nil, help: "draw the browser once and exit (for benchmarks)", hidden: true)
    ]

    static let commands: [CommandSpec] = [
        CommandSpec(
            name: "list", summary: "List conversations, one page at a time", arguments: "", minimumArguments: 0,
            maximumArguments: 0,
            options: [
                OptionSpec(name: "--sort", value: "updated|created|title", help: "the order (default: the browser's last choice, else updated)"),
                limit,
                OptionSpec(name: "--after", value: "TOKEN", help: "the page after TOKEN (printed with each page)"),
                OptionSpec(name: "--before", value: "TOKEN", help: "the page before TOKEN"),
                OptionSpec(name: "--last", value: nil, help: "the last page"),
            ] + filters + [json], example: "scrollback list --model gpt-4o --since 2w"),
        CommandSpec(
            name: "show", summary: "Print one conversation with its messages (its current branch)", arguments: "ID",
            minimumArguments: 1, maximumArguments: 1,
            options: [
                OptionSpec(
                    name: "--all-branches", value: nil,
                    help:
                        "every branch: each message under the one it follows, indented two spaces a level (deeper than \(ShowCommand.indentCap) levels, it says 'depth N'); '*' marks the current branch, '‹2/3›' a message's place among its siblings; with --json, each message's parentID"
                ),
                OptionSpec(
                    name: "--hidden", value: nil,
                    help: "the hidden messages too (tool traffic, reasoning, context), each marked with its kind"),
                json,
            ], example: "scrollback show 3f2a9c1e --all-branches"),
        CommandSpec(
            name: "search", summary: "Search titles and messages; every word must occur", arguments: "QUERY...",
            minimumArguments: 1, maximumArguments: nil,
            options: [
                limit, OptionSpec(name: "--after", value: "TOKEN", help: "the page after TOKEN"),
                OptionSpec(name: "--hidden", value: nil, help: "find in the hidden messages too (tool traffic, reasoning, context)"),
            ] + filters + [json],
            example: "scrollback search --source claude 'sourdough starter'"),
        CommandSpec(
            name: "rename", summary: "Give a conversation a new title", arguments: "ID TITLE...", minimumArguments: 2,
            maximumArguments: nil, options: [], example: "scrollback rename 3f2a9c1e 'Trip to Kyoto'"),
        CommandSpec(
            name: "pin", summary: "Pin conversations: they come first in every order", arguments: "ID...", minimumArguments: 1,
            maximumArguments: nil, options: [], example: "scrollback pin 3f2a9c1e 77b0d2aa"),
        CommandSpec(
            name: "unpin", summary: "Unpin conversations", arguments: "ID...", minimumArguments: 1, maximumArguments: nil,
            options: [], example: "scrollback unpin 3f2a9c1e"),
        CommandSpec(
            name: "delete", summary: "Delete conversations with their messages: those named, or every one from a source",
            arguments: "[ID...]", minimumArguments: 0, maximumArguments: nil,
            options: [
                OptionSpec(name: "--yes", value: nil, help: "do not ask (required when input is not a terminal)", short: "y"),
                OptionSpec(
                    name: "--source", value: "NAME",
                    help: "every conversation imported from NAME (delete --source demo --yes removes the demo's)"),
            ],
            example: "scrollback delete 3f2a9c1e 77b0d2aa --yes"),
        CommandSpec(
            name: "import",
            summary: "Import ChatGPT or Claude exports (the ZIP, its folder or its conversations.json), Claude Code sessions, llm's logs.db, or scrollback's JSON or JSON Lines; with no PATH, the places scrollback knows",
            arguments: "[PATH...]",
            minimumArguments: 0, maximumArguments: nil,
            options: [
                OptionSpec(
                    name: "--format", value: ImportFormat.allCases.map(\.rawValue).joined(separator: "|"),
                    help: "the format (default: found from the content): chatgpt and claude read a ZIP, a folder or a JSON file; llm an llm logs.db (SQLite); jsonl scrollback's own JSON or JSON Lines export; claude-code a session file (.jsonl) or a folder of them"),
                OptionSpec(name: "--yes", value: nil, help: "with no PATH: import the places found without asking (required when input is not a terminal)", short: "y"),
                OptionSpec(name: "--quiet", value: nil, help: "no progress on standard error", short: "q"),
                OptionSpec(
                    name: "--restore", value: nil,
                    help: "bring back conversations of these files that were deleted (else they stay deleted, here and on synced machines)"),
                OptionSpec(
                    name: "--unzip-limit", value: "SIZE",
                    help: "let a ZIP entry inflate to SIZE (e.g. 8G) whatever its ratio (default: 200× its packed size, 4 GiB at most)"),
            ], example: "scrollback import ~/Downloads/chatgpt-export/"),
        CommandSpec(
            name: "export", summary: "Write conversations as Markdown, JSON or JSON Lines", arguments: "[ID...]",
            minimumArguments: 0, maximumArguments: nil,
            options: [
                OptionSpec(name: "--format", value: "md|json|jsonl", help: "the format (default md)"),
                OptionSpec(name: "--out", value: "FILE", help: "write one file (a regular file; never through a symlink); default standard output"),
                OptionSpec(name: "--out-dir", value: "DIR", help: "write one file per conversation into DIR (created if missing)"),
                OptionSpec(name: "--force", value: nil, help: "replace files that exist"),
                OptionSpec(
                    name: "--hidden", value: nil,
                    help: "Markdown: the hidden messages too (tool traffic, reasoning, context), each marked with its kind (JSON and JSON Lines always hold every message, with its kind)"),
            ] + filters, example: "scrollback export --format jsonl --out backup.jsonl"),
        CommandSpec(
            name: "stats", summary: "Counts, size, schema version, oldest and newest; per model, conversations, messages and tokens; --chart draws the activity",
            arguments: "", minimumArguments: 0,
            maximumArguments: 0,
            options: [
                OptionSpec(
                    name: "--chart", value: nil,
                    help: "bar charts instead: conversations and tokens per month (the last 24, or the filter's), per model, per source, the busiest days"),
                json,
            ] + filters, example: "scrollback stats --chart --since 2025"),
        CommandSpec(
            name: "check", summary: "Check integrity, foreign keys and search indexes; non-zero exit on problems",
            arguments: "", minimumArguments: 0, maximumArguments: 0,
            options: [OptionSpec(name: "--repair", value: nil, help: "rebuild the search indexes and message counts first")],
            example: "scrollback check"),
        CommandSpec(
            name: "demo", summary: "Fill the database with generated conversations (source 'demo')", arguments: "", minimumArguments: 0,
            maximumArguments: 0,
            options: [
                OptionSpec(name: "--count", value: "N", help: "how many conversations (default 1000)"),
                OptionSpec(name: "--seed", value: "S", help: "the seed: the same seed gives the same data, its dates ending today (default 1)"),
                OptionSpec(name: "--yes", value: nil, help: "add to your own history without asking (without --db or --demo)", short: "y"),
            ], example: "scrollback --demo demo --count 100000 --seed 7"),
        CommandSpec(
            name: "sync",
            summary: "Sync with your other machines through a PostgreSQL server, end-to-end encrypted: init, status, key show, key import, off; alone, sync now",
            // Any number: `sync` itself says what is wrong, without echoing an argument (a
            // connection string or a key given where neither is taken).
            arguments: "[init|status|off|key show|key import]", minimumArguments: 0, maximumArguments: nil,
            options: [
                OptionSpec(
                    name: "--force", value: nil,
                    help: "sync key show: write the key to a pipe or file too; sync off: forget this machine too (changes not sent are dropped; sync init then joins as a new one)"),
                json,
            ], example: "scrollback sync init < connection-string.txt"),
        CommandSpec(
            name: "config", summary: "The browser's config file: its path, its problems, or the whole default file", arguments: "",
            minimumArguments: 0, maximumArguments: 0,
            options: [
                OptionSpec(name: "--print-default", value: nil, help: "print the default config.toml, every setting with a comment"),
                OptionSpec(name: "--check", value: nil, help: "read the config file and list its problems (exit 1 when there are any)"),
            ], example: "mkdir -p ~/.config/scrollback && scrollback config --print-default > ~/.config/scrollback/config.toml"),
        CommandSpec(
            name: "completions", summary: "Print the shell completion script for bash, zsh or fish", arguments: "bash|zsh|fish",
            minimumArguments: 0, maximumArguments: 1,
            options: [
                // What the scripts run for `--source` and `--model`: the words this database holds.
                OptionSpec(
                    name: "--words", value: "source|model", help: "print the sources or models of the database, one a line (for the scripts)",
                    hidden: true)
            ], example: "mkdir -p ~/.local/share/bash-completion/completions && scrollback completions bash > ~/.local/share/bash-completion/completions/scrollback"),
    ]

    static func command(named name: String) -> CommandSpec? {
        commands.first { $0.name == name }
    }
}
