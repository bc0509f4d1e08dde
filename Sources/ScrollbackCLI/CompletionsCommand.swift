import Foundation
import ScrollbackStorage

/// `scrollback completions SHELL`: the completion script of a shell; and, for the scripts,
/// `completions --words source|model`.
struct CompletionsCommand {
    let context: CommandContext

    func run() throws -> Int32 {
        let parsed = context.parsed
        if let kind = try context.choice(.words, as: CompletionWords.self) { return try words(kind) }
        guard parsed.positional.count == 1 else {
            throw UsageError(message: "completions needs the shell: \(Self.shells)", command: parsed.command)
        }
        let given = parsed.positional[0]
        guard let shell = Shell(rawValue: given) else {
            throw UsageError(message: "no completions for '\(OutputFormat.line(given))': \(Self.shells)", command: parsed.command)
        }
        // Written whole by one call: a script is text for a file, never sanitized away.
        context.console.write(Documentation.completions(for: shell))
        return 0
    }

    /// `bash, zsh or fish`.
    private static var shells: String { OutputFormat.list(Shell.allCases.map(\.rawValue)) }

    /// The words a completion script offers after `--source` and `--model`, one a line, from
    /// the database if there is one (never made for this); a word a shell would split or a
    /// terminal would act on is left out.
    private func words(_ kind: CompletionWords) throws -> Int32 {
        guard context.parsed.positional.isEmpty else {
            throw UsageError(message: "--words takes source or model, and no shell", command: context.parsed.command)
        }
        guard FileManager.default.fileExists(atPath: context.databasePath) else { return 0 }
        let words = try Store.open(path: context.databasePath, readOnly: true).filterWords()
        for word in kind == .source ? words.sources : words.models where Self.offerable(word) {
            context.console.line(word)
        }
        return 0
    }

    private static func offerable(_ word: String) -> Bool {
        !word.isEmpty && word.count <= 200
            && !word.unicodeScalars.contains {
                $0.properties.isWhitespace || $0.properties.generalCategory == .control || $0.properties.generalCategory == .format
                    || "'\"\\$`*?[]{}~!&;|<>()#".unicodeScalars.contains($0)
            }
    }
}
