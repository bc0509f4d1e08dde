import ScrollbackModel
import ScrollbackStorage
import ScrollbackViewModels
import TerminalText

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
        let sort = try context.choice(.sort, as: ConversationOrder.self)
        let limit = try context.integer(.limit, default: 50, in: 1...10_000)
        let filter = try context.filter()
        let starts = [parsed.value(.after) != nil, parsed.value(.before) != nil, parsed.has(.last)]
        if starts.filter({ $0 }).count > 1 {
            throw UsageError(message: "use only one of --after, --before and --last", command: "list")
        }
        let store = try context.openStore(forReading: true)
        let order = try sort ?? store.settings.value(.listSort)
        // Tokens are bound to this database, this order and this filter.
        let scope = try context.pageScope(store, query: "list \(order.rawValue) \(CommandContext.filterOptions(filter))")
        let position: PagePosition
        if let cursor = try context.cursor(.after, scope: scope) {
            position = .after(cursor)
        } else if let cursor = try context.cursor(.before, scope: scope) {
            position = .before(cursor)
        } else {
            position = parsed.has(.last) ? .last : .first
        }
        let page = try store.conversations.page(sort: order, filter: filter, at: position, limit: limit)
        let token = { (cursor: Cursor) in PageToken.make(cursor, scope: scope) }
        let console = context.console
        if context.wantsJSON {
            console.line(
                try OutputFormat.json(
                    Output(
                        sort: order.rawValue, conversations: page.items.map(ConversationJSON.init),
                        next: page.next.map(token), previous: page.previous.map(token)), for: context.console))
            return
        }
        if page.items.isEmpty {
            if position == .first && !filter.isEmpty {
                console.errorLine("No conversations match \(filter.description).")
            } else if position == .first {
                console.errorLine(
                    "No conversations in \(OutputFormat.line(store.path)) yet: import an export (`scrollback import ~/Downloads/chatgpt-export.zip`), or try `scrollback --demo`, which browses sample data in a database of its own.")
            } else {
                console.errorLine("No more conversations.")
            }
            return
        }
        let timeHeading = order == .created ? "CREATED" : "UPDATED"
        // Ids are as long as they must be to name one conversation: the column is as wide as
        // the longest on the page, so that the columns after it line up.
        let ids = page.items.map { OutputFormat.uniqueID($0.publicID, in: store) }
        let idWidth = max(ids.map(\.count).max() ?? 8, 8)
        // Counts grouped as everywhere else (520,000), the column as wide as the widest.
        let counts = page.items.map { NumberText.grouped($0.seenCount) }
        let countWidth = max(counts.map(\.count).max() ?? 5, 5)
        console.line(
            "ID".padding(toLength: idWidth, withPad: " ", startingAt: 0) + "  " + timeHeading.padding(toLength: 16, withPad: " ", startingAt: 0)
                + "  " + String(repeating: " ", count: countWidth - 4) + "MSGS  MODEL               TITLE")
        for (conversation, (id, count)) in zip(page.items, zip(ids, counts)) {
            let time = TimeText.absolute(order == .created ? conversation.createdAt : conversation.updatedAt)
            let model = conversation.model.flatMap { $0.trimmingCharacters(in: .whitespaces).isEmpty ? nil : OutputFormat.line($0) } ?? "–"
            // In terminal cells, as the browser lays it out: a CJK name is two a character.
            let modelColumn = DisplayWidth.fitted(model, to: 18)
            let title = (conversation.pinned ? "[pinned] " : "") + OutputFormat.line(conversation.title)
            console.line(
                id.padding(toLength: idWidth, withPad: " ", startingAt: 0) + "  " + time + "  "
                    + String(repeating: " ", count: max(0, countWidth - count.count)) + count + "  "
                    + modelColumn + "  " + title)
        }
        if let next = page.next {
            // A command that works pasted as it is: the same database, order, size and filter.
            var words = context.commandPrefix + ["list", "--sort", order.rawValue]
            if parsed.value(.limit) != nil { words += ["--limit", String(limit)] }
            words += CommandContext.filterOptions(filter) + ["--after", token(next)]
            console.errorLine("more: " + ShellWords.line(words))
        }
    }
}
