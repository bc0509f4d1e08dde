import Foundation
import ScrollbackDemo
import ScrollbackModel
import ScrollbackStorage
import TerminalText

/// `scrollback demo`: generated conversations, the same for the same seed.
struct DemoCommand {
    let context: CommandContext

    func run() throws {
        let count = try context.integer("--count", default: 1_000, in: 0...50_000_000)
        let seedText = context.parsed.value("--seed") ?? "1"
        guard let seed = UInt64(seedText) else {
            throw UsageError(message: "--seed must be a whole number, not '\(seedText)'", command: "demo")
        }
        let store = try context.openStore()
        try context.requireWritable(store)
        let outcome = try Self.fill(store, count: count, seed: seed, console: context.console)
        var summary = "added \(NumberText.grouped(outcome.added)) conversations (\(NumberText.grouped(outcome.messages)) messages) to \(store.path)"
        if outcome.alreadyPresent > 0 {
            summary += "; \(NumberText.grouped(outcome.alreadyPresent)) of seed \(seed) were there already"
        }
        context.console.line(summary)
    }

    static func fill(_ store: Store, count: Int, seed: UInt64, console: Console) throws -> DemoGenerator.Outcome {
        let showProgress = console.errorIsTerminal && count >= 5_000
        let started = Date()
        let outcome = try DemoGenerator(seed: seed).fill(store, count: count) { done in
            guard showProgress else { return }
            let rate = Double(done) / max(Date().timeIntervalSince(started), 0.001)
            console.writeError("\r\u{1B}[Kmaking demo conversations: \(NumberText.grouped(done)) of \(NumberText.grouped(count)) (\(NumberText.grouped(Int(rate)))/s)")
        }
        if showProgress { console.writeError("\r\u{1B}[K") }
        return outcome
    }

    /// The demo database used by `--demo`: 10,000 conversations of seed 1, made once.
    static func ensureDemoDatabase(at path: String, console: Console) throws {
        let store = try Store.open(path: path)
        guard try store.conversations.count() == 0 else { return }
        console.errorLine("scrollback: making a demo database at \(path) (once)")
        _ = try fill(store, count: 10_000, seed: 1, console: console)
    }
}
