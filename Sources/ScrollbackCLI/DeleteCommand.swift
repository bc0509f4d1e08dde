import ScrollbackModel
import ScrollbackStorage
import TerminalText

/// `scrollback delete ID...`: resolves every id first (nothing is deleted if one is wrong),
/// asks once on a terminal, then deletes all of them in one transaction.
struct DeleteCommand {
    let context: CommandContext

    func run() throws -> Int32 {
        let store = try context.openStore()
        try context.requireWritable(store)
        var targets: [ConversationDTO] = []
        for id in context.parsed.positional {
            let conversation = try store.conversations.conversation(matching: id)
            if !targets.contains(where: { $0.id == conversation.id }) { targets.append(conversation) }
        }
        let console = context.console
        let noun = targets.count == 1 ? "conversation" : "conversations"
        if !context.parsed.has("--yes") {
            guard console.inputIsTerminal else {
                throw UsageError(
                    message: "refusing to delete without --yes when standard input is not a terminal", command: "delete")
            }
            let names = targets.prefix(3).map { "“\(OutputFormat.line($0.title))”" }.joined(separator: ", ")
            let more = targets.count > 3 ? " and \(targets.count - 3) more" : ""
            let messages = targets.reduce(0) { $0 + $1.messageCount }
            console.writeError(
                "Delete \(targets.count) \(noun) (\(names)\(more)) with \(NumberText.grouped(messages)) messages? [y/N] ")
            let answer = console.readLine()?.trimmingCharacters(in: .whitespaces).lowercased()
            guard answer == "y" || answer == "yes" else {
                console.errorLine("Nothing deleted.")
                return 1
            }
        }
        let deleted = try store.conversations.delete(ids: targets.map(\.id))
        console.line("deleted \(deleted) \(deleted == 1 ? "conversation" : "conversations")")
        return 0
    }
}
