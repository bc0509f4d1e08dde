import ScrollbackModel
import ScrollbackStorage
import ScrollbackViewModels
import TerminalText

/// `scrollback stats`: counts, size, schema version, oldest and newest, and per model the
/// conversations, messages and tokens.
struct StatsCommand {
    let context: CommandContext

    struct Output: Encodable {
        let path: String
        let schemaVersion: Int
        let conversations: Int
        let messages: Int
        let hiddenMessages: Int
        let fileBytes: Int64
        /// Attachments of messages, those whose bytes are missing, and the distinct files
        /// stored with their bytes.
        let attachments: Int
        let missingAttachments: Int
        let attachmentFiles: Int
        let attachmentBytes: Int64
        /// Files no conversation uses any more (kept for undo; a delete frees them after 7
        /// days) and their bytes.
        let unusedAttachmentFiles: Int
        let unusedAttachmentBytes: Int64
        let oldest: String?
        let newest: String?
        let models: [ModelJSON]
    }

    /// One model's counts; `model` is left out for messages of no known model, and the token
    /// sums when no count is known.
    struct ModelJSON: Encodable {
        let model: String?
        let conversations: Int
        let messages: Int
        let inputTokens: Int64?
        let outputTokens: Int64?

        init(_ stats: ModelStats) {
            model = stats.model
            conversations = stats.conversations
            messages = stats.messages
            inputTokens = stats.inputTokens
            outputTokens = stats.outputTokens
        }
    }

    /// The widest a model name is shown in the table; longer ones end in `…`.
    static let modelWidth = 32

    func run() throws {
        if context.parsed.has(.chart) { return try runChart() }
        if let option = CommandTable.filters.map(\.key).first(where: { context.parsed.has($0) || context.parsed.value($0) != nil }) {
            throw UsageError(message: "\(option) chooses what --chart counts: add --chart (the counts without it are of the whole database)", command: "stats")
        }
        let store = try context.openStore(forReading: true)
        let stats = try store.stats(perModel: context.wantsJSON)
        if context.wantsJSON {
            context.console.line(
                try OutputFormat.json(
                    Output(
                        path: store.path, schemaVersion: stats.schemaVersion, conversations: stats.conversations,
                        messages: stats.messages, hiddenMessages: stats.hiddenMessages, fileBytes: stats.fileBytes,
                        attachments: stats.attachments.attachments, missingAttachments: stats.attachments.missing,
                        attachmentFiles: stats.attachments.files, attachmentBytes: stats.attachments.bytes,
                        unusedAttachmentFiles: stats.attachments.unusedFiles, unusedAttachmentBytes: stats.attachments.unusedBytes,
                        oldest: stats.oldest?.iso8601,
                        newest: stats.newest?.iso8601, models: stats.models.map(ModelJSON.init)), for: context.console))
            return
        }
        let files = stats.attachments
        let attachmentRow: [(String, String)] =
            (files.attachments == 0 ? [] : [
                ("attachments", NumberText.grouped(files.attachments)
                    + " (\(NumberText.grouped(files.files)) \(files.files == 1 ? "file" : "files"), \(OutputFormat.bytes(files.bytes))"
                    + (files.missing > 0 ? "; \(NumberText.grouped(files.missing)) not here" : "") + ")")
            ]) + (files.unusedFiles == 0 ? [] : [
                ("unused files", "\(NumberText.grouped(files.unusedFiles)), \(OutputFormat.bytes(files.unusedBytes)): of deleted conversations, kept for undo; a delete frees them once 7 days old")
            ])
        let rows: [(String, String)] = [
            ("database", OutputFormat.line(store.path) + (store.isSnapshot ? " (read-only snapshot)" : "")),
            ("schema", "\(stats.schemaVersion)"),
            ("conversations", NumberText.grouped(stats.conversations)),
            ("messages", NumberText.grouped(stats.messages) + (stats.hiddenMessages > 0 ? " (and \(NumberText.grouped(stats.hiddenMessages)) hidden: tool traffic, reasoning, context)" : "")),
        ] + attachmentRow + [
            ("size", OutputFormat.bytes(stats.fileBytes)),
            ("oldest", stats.oldest.map { TimeText.absolute($0) } ?? "-"),
            ("newest", stats.newest.map { TimeText.absolute($0) } ?? "-"),
        ]
        for (name, value) in rows {
            context.console.line(name.padding(toLength: 15, withPad: " ", startingAt: 0) + value)
        }
        // The counts per model read every message (seconds on millions): the rest shows first.
        context.console.flush()
        let models = try store.modelStats()
        guard !models.isEmpty else { return }
        context.console.line()
        for line in Self.modelTable(models) { context.console.line(line) }
    }

    /// The per-model table: names sanitized and cut to `modelWidth` cells, numbers
    /// right-aligned under their headings, `-` where no token count is known.
    static func modelTable(_ models: [ModelStats]) -> [String] {
        let headings = ["model", "conversations", "messages", "input tokens", "output tokens"]
        func tokens(_ value: Int64?) -> String { value.map { NumberText.grouped(Int(clamping: $0)) } ?? "-" }
        let rows = models.map { stats in
            [
                stats.model.map { DisplayWidth.truncated(OutputFormat.line($0), to: modelWidth) } ?? "(unknown)",
                NumberText.grouped(stats.conversations), NumberText.grouped(stats.messages), tokens(stats.inputTokens),
                tokens(stats.outputTokens),
            ]
        }
        let widths = headings.indices.map { column in
            ([headings[column]] + rows.map { $0[column] }).map { DisplayWidth.of($0) }.max() ?? 0
        }
        return ([headings] + rows).map { row in
            let name = DisplayWidth.fitted(row[0], to: widths[0], ellipsis: false)
            let numbers = (1..<row.count).map { DisplayWidth.rightAligned(row[$0], to: widths[$0]) }
            return ([name] + numbers).joined(separator: "  ")
        }
    }
}
