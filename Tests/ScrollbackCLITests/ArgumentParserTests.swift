import Foundation
import Testing

@testable import ScrollbackCLI
import ScrollbackModel
import ScrollbackSync
import ScrollbackImport
@testable import ScrollbackStorage
import TestSupport

@Suite("Argument parsing")
struct ArgumentParserTests {
    @Test("global options go before or after the command; --name=value; -- ends options")
    func forms() throws {
        let parsed = try ArgumentParser.parse(["--db=/x.sqlite", "rename", "--readonly", "abc", "--", "--not-an-option", "title"])
        #expect(parsed.command == "rename")
        #expect(parsed.value(.db) == "/x.sqlite")
        #expect(parsed.has(.readonly))
        #expect(parsed.positional == ["abc", "--not-an-option", "title"])
        let list = try ArgumentParser.parse(["list", "--limit", "5", "--db", "/y"])
        #expect(list.value(.limit) == "5" && list.value(.db) == "/y")
        #expect(try ArgumentParser.parse(["-h"]).has(.help))
        #expect(throws: UsageError(message: "unknown option '--version' for 'list'", command: "list")) {
            try ArgumentParser.parse(["list", "--version"])
        }
    }

    @Test("one-letter options as getopt has them: -n 5, -n5, -jn5, -jv; an unknown letter in a group is named")
    func shortForms() throws {
        for arguments in [["list", "-n", "5"], ["list", "-n5"], ["list", "-jn5"], ["list", "-jn", "5"]] {
            let parsed = try ArgumentParser.parse(arguments)
            #expect(parsed.value(.limit) == "5", "\(arguments)")
            #expect(parsed.has(.json) == arguments.contains { $0.hasPrefix("-j") }, "\(arguments)")
        }
        let grouped = try ArgumentParser.parse(["delete", "-yh", "abc"])
        #expect(grouped.has(.yes) && grouped.has(.help) && grouped.positional == ["abc"])
        // The value keeps what follows the letter, dashes and equals signs included.
        #expect(try ArgumentParser.parse(["list", "-n=5"]).value(.limit) == "=5")
        #expect(throws: UsageError(message: "unknown option '-x' in '-jx' for 'list'", command: "list")) {
            try ArgumentParser.parse(["list", "-jx"])
        }
        #expect(throws: UsageError(message: "unknown option '-x' for 'list'", command: "list")) {
            try ArgumentParser.parse(["list", "-x"])
        }
        #expect(throws: UsageError(message: "--limit needs a value (N)", command: "list")) {
            try ArgumentParser.parse(["list", "-jn"])
        }
    }

    @Test("subcommands are commands of the table: their words, their own options (before or after the word), their help; nothing given to sync is echoed")
    func subcommands() throws {
        let status = try ArgumentParser.parse(["sync", "status", "--json"])
        #expect(status.command == "sync status" && status.has(.json) && status.positional.isEmpty)
        // An option of a subcommand before its word is its own all the same.
        #expect(try ArgumentParser.parse(["--db", "/x", "sync", "-j", "status"]).command == "sync status")
        #expect(try ArgumentParser.parse(["sync", "key", "show", "--force"]).command == "sync key show")
        #expect(try ArgumentParser.parse(["sync"]).command == "sync")
        // Each option where it means something, rather than taken and ignored.
        #expect(throws: UsageError(message: "--json goes with `sync status` and `sync snapshot` only", command: "sync key show")) {
            try ArgumentParser.parse(["sync", "key", "show", "--json"])
        }
        #expect(throws: UsageError(message: "--force goes with `sync off` and `sync key show` only", command: "sync init")) {
            try ArgumentParser.parse(["sync", "--force", "init"])
        }
        // A word no sync command takes may be a connection string or a key: never shown.
        for words in [["init", "postgres://me:Secr3t@host/db"], ["key", "import", "QmFzZTY0S2V5"], ["Secr3tWord"], ["key", "Secr3t"], ["status", "-jSecr3t"], ["off", "-xSecr3t"]] {
            do {
                _ = try ArgumentParser.parse(["sync"] + words)
                Issue.record("\(words) parsed")
            } catch let error as UsageError {
                #expect(!error.userLine.contains("Secr3t") && !error.userLine.contains("QmFzZTY0"), "\(error.userLine)")
            }
        }
        // Not even its first letter: an option group is one word, maybe a secret.
        for arguments in [["sync", "status", "-jSecr3t"], ["-SSecr3t", "sync"], ["--db", "x", "-zSecr3t", "sync", "init"]] {
            #expect(throws: UsageError.self) { try ArgumentParser.parse(arguments) }
            do { _ = try ArgumentParser.parse(arguments) } catch let error as UsageError {
                #expect(!error.userLine.contains("Secr3t") && !error.userLine.contains("'-S") && !error.userLine.contains("'-z"), "\(error.userLine)")
            }
        }
        #expect(throws: UsageError(message: "`sync key` needs show or import: `sync key show` prints the key, `sync key import` reads one", command: "sync")) {
            try ArgumentParser.parse(["sync", "key"])
        }
        // `help` and `--help` reach a subcommand's own page.
        let help = try ArgumentParser.parse(["help", "sync", "key", "show"])
        #expect(help.command == "sync key show" && help.has(.help))
        let page = HelpText.text(for: CommandTable.command(named: "sync key show"))
        #expect(page.contains("usage: scrollback sync key show [--force]") && page.contains("--force") && !page.contains("--json"))
        let group = HelpText.text(for: CommandTable.command(named: "sync"))
        for name in ["sync init", "sync status", "sync snapshot", "sync off", "sync key show", "sync key import"] {
            #expect(group.contains("\n  \(name) "), "\(name)")
        }
        #expect(SyncCommand.subcommands == ["init", "status", "snapshot", "off", "key show", "key import"])
    }

    @Test("help takes the words of one command: more are refused (not shown for sync), help help is the help, an option may come first; long values are cut in messages")
    func helpWords() throws {
        #expect(throws: UsageError(message: "`help list` takes no more words; 'extra' was given", command: "list")) {
            try ArgumentParser.parse(["help", "list", "extra"])
        }
        do {
            _ = try ArgumentParser.parse(["help", "sync", "key", "Secr3t"])
            Issue.record("help sync key Secr3t parsed")
        } catch let error as UsageError {
            #expect(!error.userLine.contains("Secr3t") && error.userLine.contains("`sync key show` and `sync key import`"), "\(error.userLine)")
        }
        let helpHelp = try ArgumentParser.parse(["help", "help"])
        #expect(helpHelp.has(.help) && helpHelp.command == nil)
        let first = try ArgumentParser.parse(["help", "--db", "/x", "sync", "status"])
        #expect(first.has(.help) && first.command == "sync status")
        // A 100,000-character value is not repeated whole.
        let long = String(repeating: "x", count: 100_000)
        do {
            _ = try ArgumentParser.parse(["list", "--limit", "5", "--limit", long])
            Issue.record("--limit twice parsed")
        } catch let error as UsageError {
            #expect(error.userLine.count < 300 && error.userLine.contains("100,000 characters"), "\(error.userLine.count)")
        }
        // A sync command given a word says so, and points at its own page.
        #expect(throws: UsageError.self) { try ArgumentParser.parse(["sync", "status", "Secr3t"]) }
        do { _ = try ArgumentParser.parse(["sync", "status", "Secr3t"]) } catch let error as UsageError {
            #expect(error.command == "sync status" && !error.userLine.contains("Secr3t"), "\(error.userLine)")
        }
        // A connection string given as the database is not repeated.
        let quiet = Console(write: { _ in }, writeError: { _ in }, readLine: { nil }, inputIsTerminal: false, outputIsTerminal: false, errorIsTerminal: false)
        do {
            _ = try CommandContext(parsed: ArgumentParser.parse(["--db", "postgres://u:Secr3t@h/db", "list"]), environment: [:], console: quiet)
            Issue.record("a URL taken as the database")
        } catch let error as UsageError {
            #expect(!error.userLine.contains("Secr3t") && error.userLine.contains("looks like a URL"), "\(error.userLine)")
        }
        // A word that is no command, before the command's word: about the word, not the option.
        do { _ = try ArgumentParser.parse(["sync", "--json", "Secr3t", "status"]) } catch let error as UsageError {
            #expect(error.userLine.contains("unknown sync command") && !error.userLine.contains("goes with"), "\(error.userLine)")
        }
    }

    @Test("a choice's words come from its enum: the usage shows them, a wrong one is refused with all of them")
    func choices() throws {
        let list = try #require(CommandTable.command(named: "list"))
        #expect(list.options.first { $0.key == .sort }?.choices == ConversationOrder.allCases.map(\.rawValue))
        let importing = try #require(CommandTable.command(named: "import"))
        #expect(importing.options.first { $0.key == .format }?.choices == ImportFormat.allCases.map(\.rawValue))
        let export = try #require(CommandTable.command(named: "export"))
        #expect(export.usage.contains("[--format md|json|jsonl]"))
        let context = try CommandContext(
            parsed: ArgumentParser.parse(["import", "--format", "chatgtp", "x.zip"]), environment: [:],
            console: Console(write: { _ in }, writeError: { _ in }, readLine: { nil }, inputIsTerminal: false, outputIsTerminal: false, errorIsTerminal: false))
        let names = ImportFormat.allCases.map(\.rawValue)
        #expect(throws: UsageError(message: "--format must be \(names.dropLast().joined(separator: ", ")) or \(names.last ?? ""), not 'chatgtp'", command: "import")) {
            try context.choice(.format, as: ImportFormat.self)
        }
    }

    /// One report for every error a person can meet: its line (sanitized), its `--verbose`
    /// line and its exit status, whatever layer it comes from.
    @Test("every error type reports through one protocol: one sanitized line, the verbose line, the exit status")
    func errorProtocol() {
        let sql = SQLiteError(extendedCode: 11, message: "database disk image is malformed", sql: "SELECT secret FROM conversation")
        let cases: [(any Error, Int32, String, String)] = [
            (UsageError(message: "unknown option '--frob'", command: "list"), 2, "unknown option '--frob' (see 'scrollback list --help')", ""),
            (StorageError.damaged(path: "/tmp/h\u{1B}]0;x\u{07}.db", detail: sql), 1, "is damaged", "SELECT secret"),
            (StorageError.sqlite(sql), 1, "database disk image is malformed", "while executing `SELECT secret"),
            (SyncError.wrongKey, 1, "this key does not open the history", ""),
            (ImportError(path: "/x.zip", problem: "not a ZIP", location: "byte 4"), 1, "/x.zip: not a ZIP (byte 4)", ""),
            (CommandFailure(message: "cannot write"), 1, "cannot write", ""),
            (CommandInterrupted(message: "interrupted"), 130, "interrupted", ""),
            (FilterError("since: needs a date"), 1, "since: needs a date", ""),
            (CocoaError(.fileNoSuchFile), 1, "NSCocoaErrorDomain", ""),
        ]
        for (error, status, line, verboseOnly) in cases {
            for verbose in [false, true] {
                var written = ""
                let console = Console(write: { _ in }, writeError: { written += $0 }, readLine: { nil }, inputIsTerminal: false, outputIsTerminal: false, errorIsTerminal: true)
                #expect(Scrollback.report(error, verbose: verbose, on: console) == status, "\(error)")
                #expect(written.hasPrefix("scrollback: ") && written.hasSuffix("\n") && written.filter { $0 == "\n" }.count == 1, "\(written)")
                #expect(!written.contains("\u{1B}") && !written.contains("\u{07}"), "\(written.debugDescription)")
                #expect(written.contains(line), "\(written)")
                if !verboseOnly.isEmpty { #expect(written.contains(verboseOnly) == verbose, "\(written)") }
            }
        }
    }
}
