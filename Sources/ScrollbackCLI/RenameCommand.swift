/// `scrollback rename ID TITLE...`: the words of TITLE are joined with spaces.
struct RenameCommand {
    let context: CommandContext

    func run() throws {
        let store = try context.openStore()
        try context.requireWritable(store)
        let conversation = try store.conversations.conversation(matching: context.parsed.positional[0])
        let title = context.parsed.positional.dropFirst().joined(separator: " ")
        let renamed = try store.conversations.rename(id: conversation.id, to: title)
        context.console.line(
            "Renamed \(OutputFormat.shortID(renamed.publicID)): \(OutputFormat.line(conversation.title)) → \(OutputFormat.line(renamed.title))")
    }
}
