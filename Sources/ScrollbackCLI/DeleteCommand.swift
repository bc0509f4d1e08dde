import ScrollbackExport
import ScrollbackModel
import ScrollbackStorage
import ScrollbackViewModels
import TerminalText

/// `scrollback delete ID...`: resolves every id first (nothing is deleted if one is wrong),
/// asks once on a terminal, then deletes all of them in one transaction.
struct DeleteCommand {
    let context: CommandContext

    func run() throws -> Int32 {
        let store = try context.openStore()
        try context.requireWritable(store)
        var targets: [ConversationDTO] = []
        if let sourceText = context.parsed.value(.source) {
            guard context.parsed.positional.isEmpty else {
                throw UsageError(message: "give ids or --source, not both", command: "delete")
            }
            let filter = try context.filter()
            try Exporter(store: store).forEachConversation(filter: filter) { targets.append($0) }
            guard !targets.isEmpty else {
                context.console.errorLine("No conversations from source '\(sourceText)': nothing deleted.")
                return 0
            }
        } else {
            guard !context.parsed.positional.isEmpty else {
                throw UsageError(message: "'delete' needs IDs, or --source NAME", command: "delete")
            }
            targets = try context.conversationsNamed(in: store)
        }
        let console = context.console
        if !context.parsed.has(.yes) {
            guard console.inputIsTerminal else {
                throw UsageError(
                    message: "refusing to delete without --yes when standard input is not a terminal", command: "delete")
            }
            let messages = targets.reduce(0) { $0 + $1.messageCount }
            let question = DeleteQuestion.text(
                titles: targets.prefix(3).map(\.title), count: targets.count, messages: messages, answers: "[y/N]",
                width: 160)
            console.writeError(question + " ")
            let answer = console.readLine()?.trimmingCharacters(in: .whitespaces).lowercased()
            guard answer == "y" || answer == "yes" else {
                // Declining is an answer, not a failure.
                console.errorLine("Nothing deleted.")
                return 0
            }
        }
        // No undo follows a delete here: the files only these conversations used go with them.
        let files = try store.attachmentHashes(conversations: targets.map(\.id))
        let deleted = try store.conversations.delete(ids: targets.map(\.id))
        let freed = try store.freeUnusedAttachments(files)
        var line = "Deleted \(NumberText.grouped(deleted)) conversation\(deleted == 1 ? "" : "s")"
        if freed.files > 0 {
            line += " and \(NumberText.grouped(freed.files)) attachment file\(freed.files == 1 ? "" : "s") no other conversation uses (\(AttachmentText.size(freed.bytes)))"
        }
        console.line(line + ".")
        return 0
    }
}
