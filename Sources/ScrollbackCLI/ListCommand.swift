import ScrollbackModel
import ScrollbackStorage
import ScrollbackViewModels

/// `scrollback list`: one page of conversations, with the token for the next.
struct ListCommand {
    let context: CommandContext

    struct Output: Encodable {
        let sort: String
        let conversations: [ConversationJSON]
        let next: String?
        let previous: String?
    }

    func run() throws {
        let parsed = context.parsed
        var sort: ConversationOrder?
        if let text = parsed.value("--sort") {
            guard let order = ConversationOrder(rawValue: text) else {
                throw UsageError(message: "--sort must be updated, created or title, not '\(text)'", command: "list")
            }
            sort = order
        }
        let limit = try context.integer("--limit", default: 50, in: 1...10_000)
        let starts = [parsed.value("--after") != nil, parsed.value("--before") != nil, parsed.has("--last")]
        if starts.filter({ $0 }).count > 1 {
            throw UsageError(message: "use only one of --after, --before and --last", command: "list")
        }
        let position: PagePosition
        if let cursor = try context.cursor("--after") {
            position = .after(cursor)
        } else if let cursor = try context.cursor("--before") {
            position = .before(cursor)
        } else {
            position = parsed.has("--last") ? .last : .first
        }
        let store = try context.openStore(forReading: true)
        let order = try sort ?? store.settings.value(.listSort)
        let page = try store.conversations.page(sort: order, at: position, limit: limit)
        let console = context.console
        if context.wantsJSON {
            console.line(
                try OutputFormat.json(
                    Output(
                        sort: order.rawValue, conversations: page.items.map(ConversationJSON.init),
                        next: page.next?.token, previous: page.previous?.token), for: context.console))
            return
        }
        if page.items.isEmpty {
            if position == .first {
                console.errorLine(
                    "No conversations in \(store.path) yet. Try `scrollback demo` for sample data, or `scrollback --demo`.")
            } else {
                console.errorLine("No more conversations.")
            }
            return
        }
        let timeHeading = order == .created ? "CREATED" : "UPDATED"
        console.line("ID        \(timeHeading)            MSGS  MODEL               TITLE")
        for conversation in page.items {
            let time = TimeText.absolute(order == .created ? conversation.createdAt : conversation.updatedAt)
            let count = String(conversation.messageCount)
            let model = OutputFormat.line(conversation.model ?? conversation.source)
            let modelColumn = model.count > 18 ? String(model.prefix(17)) + "…" : model
            let title = (conversation.pinned ? "[pinned] " : "") + OutputFormat.line(conversation.title)
            console.line(
                OutputFormat.shortID(conversation.publicID) + "  " + time + "  "
                    + String(repeating: " ", count: max(0, 5 - count.count)) + count + "  "
                    + modelColumn.padding(toLength: 18, withPad: " ", startingAt: 0) + "  " + title)
        }
        if let next = page.next {
            let sortArgument = sort.map { " --sort \($0.rawValue)" } ?? ""
            console.errorLine("more: scrollback list\(sortArgument) --after \(next.token)")
        }
    }
}
