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
        let store = try context.openStore()
        let stats = try store.stats()
        if context.wantsJSON {
            context.console.line(
                try OutputFormat.json(
                    Output(
                        path: store.path, schemaVersion: stats.schemaVersion, conversations: stats.conversations,
                        messages: stats.messages, fileBytes: stats.fileBytes, oldest: stats.oldest?.iso8601,
                        newest: stats.newest?.iso8601)))
            return
        }
        let rows: [(String, String)] = [
            ("database", OutputFormat.line(store.path) + (store.database.isSnapshot ? " (read-only snapshot)" : "")),
            ("schema", "\(stats.schemaVersion)"),
            ("conversations", OutputFormat.grouped(stats.conversations)),
            ("messages", OutputFormat.grouped(stats.messages)),
            ("size", OutputFormat.bytes(stats.fileBytes)),
            ("oldest", stats.oldest.map(OutputFormat.localTime) ?? "-"),
            ("newest", stats.newest.map(OutputFormat.localTime) ?? "-"),
        ]
        for (name, value) in rows {
            context.console.line(name.padding(toLength: 15, withPad: " ", startingAt: 0) + value)
        }
    }
}
