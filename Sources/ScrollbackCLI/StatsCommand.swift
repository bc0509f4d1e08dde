import ScrollbackViewModels
import TerminalText
/// `scrollback stats`: counts, size, schema version, oldest and newest.
struct StatsCommand {
    let context: CommandContext

    struct Output: Encodable {
        let path: String
        let schemaVersion: Int
        let conversations: Int
        let messages: Int
        let fileBytes: Int64
        let oldest: String?
        let newest: String?
    }

    func run() throws {
        let store = try context.openStore(forReading: true)
        let stats = try store.stats()
        if context.wantsJSON {
            context.console.line(
                try OutputFormat.json(
                    Output(
                        path: store.path, schemaVersion: stats.schemaVersion, conversations: stats.conversations,
                        messages: stats.messages, fileBytes: stats.fileBytes, oldest: stats.oldest?.iso8601,
                        newest: stats.newest?.iso8601), for: context.console))
            return
        }
        let rows: [(String, String)] = [
            ("database", OutputFormat.line(store.path) + (store.isSnapshot ? " (read-only snapshot)" : "")),
            ("schema", "\(stats.schemaVersion)"),
            ("conversations", NumberText.grouped(stats.conversations)),
            ("messages", NumberText.grouped(stats.messages)),
            ("size", OutputFormat.bytes(stats.fileBytes)),
            ("oldest", stats.oldest.map(TimeText.absolute) ?? "-"),
            ("newest", stats.newest.map(TimeText.absolute) ?? "-"),
        ]
        for (name, value) in rows {
            context.console.line(name.padding(toLength: 15, withPad: " ", startingAt: 0) + value)
        }
    }
}
