import ScrollbackModel
import ScrollbackStorage
import ScrollbackViewModels
import TerminalText

/// `scrollback show ID`: a conversation and all its messages, in order, read page by page.
struct ShowCommand {
    let context: CommandContext

    struct Output: Encodable {
        let conversation: ConversationJSON
        let messages: [MessageJSON]
    }

    func run() throws {
        let store = try context.openStore(forReading: true)
        let conversation = try store.conversations.conversation(matching: context.parsed.positional[0])
        let console = context.console
        var position = PagePosition.first
        var messages: [MessageJSON] = []
        if !context.wantsJSON {
            console.line(OutputFormat.line(conversation.title))
            var facts = ["id \(OutputFormat.line(conversation.publicID))"]
            if let model = conversation.model { facts.append("model \(OutputFormat.line(model))") }
            facts.append("source \(OutputFormat.line(conversation.source))")
            facts.append("created \(TimeText.absolute(conversation.createdAt))")
            facts.append("updated \(TimeText.absolute(conversation.updatedAt))")
            facts.append("\(NumberText.grouped(conversation.messageCount)) messages")
            console.line(facts.joined(separator: " · "))
        }
        while true {
            let page = try store.messages.page(conversationID: conversation.id, at: position, limit: 500)
            for message in page.items {
                if context.wantsJSON {
                    messages.append(MessageJSON(message))
                } else {
                    let model = message.model.map { " · \(OutputFormat.line($0))" } ?? ""
                    console.line()
                    console.line("── \(message.role.rawValue) · \(TimeText.absolute(message.createdAt))\(model)")
                    console.line(OutputFormat.block(message.content))
                }
            }
            guard let next = page.next else { break }
            position = .after(next)
        }
        if context.wantsJSON {
            console.line(try OutputFormat.json(Output(conversation: ConversationJSON(conversation), messages: messages), for: context.console))
        }
    }
}
