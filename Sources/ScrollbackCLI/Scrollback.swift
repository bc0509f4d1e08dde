import Foundation
import ScrollbackDemo
import ScrollbackModel
import ScrollbackStorage
import ScrollbackTerminal

/// A command that failed for a reason the user can act on: exit status 1.
struct CommandFailure: Error {
    let message: String
}

/// The command line: parses arguments, opens the store, runs one command.
public enum Scrollback {
    public static let version = "0.1.0"

    /// Runs the program and returns its exit status: 0 success, 1 failure, 2 usage.
    @MainActor
    public static func run(arguments: [String], environment: [String: String], console: Console) -> Int32 {
        defer { console.flush() }
        do {
            let parsed = try ArgumentParser.parse(arguments)
            if parsed.has("--version") {
                console.line("scrollback \(version)")
                return 0
            }
            if parsed.has("--help") {
                console.write(HelpText.text(for: parsed.command.flatMap(CommandTable.command(named:))))
                return 0
            }
            let context = try CommandContext(parsed: parsed, environment: environment, console: console)
            return try context.run()
        } catch let error as UsageError {
            console.errorLine(error.line)
            return 2
        } catch let error as StorageError {
            console.errorLine("scrollback: \(error)")
            return 1
        } catch let error as TerminalError {
            console.errorLine("scrollback: \(error)")
            return 1
        } catch let error as CommandFailure {
            console.errorLine("scrollback: \(error.message)")
            return 1
        } catch {
            console.errorLine("scrollback: \(error)")
            return 1
        }
    }
}

/// What every command gets: its arguments, the console and a way to open the store.
struct CommandContext {
    let parsed: ParsedArguments
    let environment: [String: String]
    let console: Console
    let readOnly: Bool
    let databasePath: String

    init(parsed: ParsedArguments, environment: [String: String], console: Console) throws {
        self.parsed = parsed
        self.environment = environment
        self.console = console
        readOnly = parsed.has("--readonly")
        if parsed.has("--demo") && parsed.value("--db") != nil {
            throw UsageError(message: "--demo and --db cannot be used together", command: parsed.command)
        }
        if let path = parsed.value("--db") {
            guard !path.isEmpty else { throw UsageError(message: "--db needs a path", command: parsed.command) }
            databasePath = path
        } else if parsed.has("--demo") {
            databasePath = DatabaseLocation.demoPath(environment: environment)
        } else {
            databasePath = DatabaseLocation.defaultPath(environment: environment)
        }
    }

    var wantsJSON: Bool { parsed.has("--json") }

    @MainActor
    func run() throws -> Int32 {
        switch parsed.command {
        case "list": try ListCommand(context: self).run()
        case "show": try ShowCommand(context: self).run()
        case "search": try SearchCommand(context: self).run()
        case "rename": try RenameCommand(context: self).run()
        case "delete": return try DeleteCommand(context: self).run()
        case "stats": try StatsCommand(context: self).run()
        case "check": return try CheckCommand(context: self).run()
        case "demo": try DemoCommand(context: self).run()
        case "import": return try ImportCommand(context: self).run()
        case "export": try ExportCommand(context: self).run()
        default: return try BrowseCommand(context: self).run()
        }
        return 0
    }

    /// Opens the store, making the demo database first when `--demo` asks for it.
    func openStore() throws -> Store {
        if parsed.has("--demo") && !readOnly {
            try DemoCommand.ensureDemoDatabase(at: databasePath, console: console)
        }
        let store = try Store.open(path: databasePath, readOnly: readOnly)
        if let backup = store.migration.backupPath {
            console.errorLine(
                "scrollback: upgraded \(databasePath) from schema \(store.migration.fromVersion) to \(store.migration.toVersion); the previous version is kept at \(backup)"
            )
        }
        return store
    }

    /// Fails up front, before any question is asked, when the store cannot be written.
    func requireWritable(_ store: Store) throws {
        if store.isReadOnly { throw StorageError.readOnly }
    }

    func integer(_ name: String, default defaultValue: Int, in range: ClosedRange<Int>) throws -> Int {
        guard let text = parsed.value(name) else { return defaultValue }
        guard let value = Int(text), range.contains(value) else {
            throw UsageError(
                message: "\(name) must be a whole number from \(range.lowerBound) to \(range.upperBound), not '\(text)'",
                command: parsed.command)
        }
        return value
    }

    func cursor(_ name: String) throws -> Cursor? {
        guard let token = parsed.value(name) else { return nil }
        return try Cursor(token: token)
    }
}
