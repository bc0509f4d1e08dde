import TerminalText
/// `scrollback` with no command: what is in the database. (The browser replaces this.)
struct SummaryCommand {
    let context: CommandContext

    func run() throws {
        let store = try context.openStore(forReading: true)
        let stats = try store.stats()
        let console = context.console
        var line = "\(OutputFormat.line(store.path)): \(NumberText.grouped(stats.conversations)) conversations, \(NumberText.grouped(stats.messages)) messages"
        if store.isReadOnly { line += " [read-only]" }
        console.line(line)
        if stats.conversations == 0 {
            console.line(
                "Nothing here yet: `scrollback import PATH` brings in an export; `scrollback --demo` browses sample data in a database of its own.")
        } else {
            console.line("Try `scrollback list`, `scrollback show ID` or `scrollback search WORDS`; `scrollback --help` lists every command.")
        }
    }
}
