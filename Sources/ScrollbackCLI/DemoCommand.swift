import Foundation
import ScrollbackDemo
import ScrollbackModel
import ScrollbackStorage
import TerminalText

/// `scrollback demo`: generated conversations, the same for the same seed.
struct DemoCommand {
    let context: CommandContext

    func run() throws {
        let count = try context.integer(.count, default: 1_000, in: 0...50_000_000)
        let seedText = context.parsed.value(.seed) ?? "1"
        guard let seed = UInt64(seedText) else {
            throw UsageError(message: "--seed must be a whole number, not '\(seedText)'", command: "demo")
        }
        let console = context.console
        let intoHistory = context.parsed.value(.db) == nil && !context.parsed.has(.demo)
        if intoHistory && !context.parsed.has(.yes) && count > 0 {
            // Generated data in the real history is asked about first: nothing removes it
            // but `delete --source demo`.
            guard console.inputIsTerminal else {
                throw UsageError(
                    message:
                        "refusing to add generated conversations to your history (\(context.databasePath)) without --yes when standard input is not a terminal; `scrollback --demo` uses a database of its own",
                    command: "demo")
            }
            console.writeError(
                UntrustedText.sanitized(
                    "Add \(NumberText.grouped(count)) generated conversations to your history at \(context.databasePath)? (`scrollback --demo` keeps them apart; `scrollback delete --source demo` removes them) [y/N] "
                ))
            let answer = console.readLine()?.trimmingCharacters(in: .whitespaces).lowercased()
            guard answer == "y" || answer == "yes" else {
                console.errorLine("Nothing added.")
                return
            }
        }
        let store = try context.openStore()
        try context.requireWritable(store)
        let outcome = try Self.fill(store, count: count, seed: seed, console: console)
        var summary = "Added \(NumberText.grouped(outcome.added)) conversation\(outcome.added == 1 ? "" : "s") (\(NumberText.grouped(outcome.messages)) message\(outcome.messages == 1 ? "" : "s")) to \(store.path)"
        if outcome.alreadyPresent > 0 {
            summary += "; \(NumberText.grouped(outcome.alreadyPresent)) of seed \(seed) were there already"
        }
        console.line(summary + ".")
    }

    static func fill(_ store: Store, count: Int, seed: UInt64, console: Console) throws -> DemoGenerator.Outcome {
        let showProgress = console.errorIsTerminal && count >= 5_000
        let started = Date()
        let generator = DemoGenerator(seed: seed, anchor: DemoGenerator.anchor(at: .now()))
        // The line is cleared however the filling ends (a failure, a Ctrl-C), before anything
        // else is said: a prompt after it never sits beside "4,000 of 10,000".
        defer { if showProgress { console.writeError("\r\u{1B}[K") } }
        do {
            return try withInterruptsHeld { interrupted in
                try generator.fill(
                    store, count: count,
                    progress: { done in
                        guard showProgress else { return }
                        let rate = Double(done) / max(Date().timeIntervalSince(started), 0.001)
                        console.writeError(
                            "\r\u{1B}[Kmaking demo conversations: \(NumberText.grouped(done)) of \(NumberText.grouped(count)) (\(NumberText.grouped(Int(rate)))/s)")
                    }, stop: interrupted)
            }
        } catch is DemoGenerator.Stopped {
            throw CommandInterrupted(message: "stopped; no demo conversation was added")
        }
    }

    /// The demo database used by `--demo`: 10,000 conversations of seed 1, made once.
    static func ensureDemoDatabase(at path: String, console: Console) throws {
        let store = try Store.open(path: path)
        guard try store.conversations.count() == 0 else { return }
        console.errorLine("scrollback: making a demo database at \(path) (once)")
        _ = try fill(store, count: 10_000, seed: 1, console: console)
    }
}
