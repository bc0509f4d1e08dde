import ScrollbackModel
import ScrollbackStorage
import ScrollbackViewModels
import TerminalText

/// `scrollback search QUERY`: titles first, then messages, newest first.
struct SearchCommand {
    let context: CommandContext

    struct Hit: Encodable {
        struct Message: Encodable {
            let id: String
            /// From 1, as `#4` in text.
            let number: Int
            let role: String
            let createdAt: String
            /// `text`, `document`, `tool`, or (with `--hidden`) `reasoning`, `internal`, `unknown`.
            let kind: String
        }
        let conversation: ConversationJSON
        let message: Message?
        /// When the hit was written: the message's created time, or the conversation's for a
        /// title hit (ISO 8601, UTC).
        let date: String
        let snippet: String
        /// `[start, end)` pairs, in Characters of `snippet`.
        let matches: [[Int]]
    }

    struct Output: Encodable {
        let query: String
        let hits: [Hit]
        let next: String?
    }

    func run() throws {
        let query = context.parsed.positional.joined(separator: " ")
        let limit = try context.integer(.limit, default: 50, in: 1...10_000)
        let filter = try context.filter()
        let store = try context.openStore(forReading: true)
        let hiddenToo = context.parsed.has(.hidden)
        // A page token of a search with --hidden is for that search only.
        let scope = try context.pageScope(
            store, query: "search \(query) \(CommandContext.filterOptions(filter))\(hiddenToo ? " --hidden" : "")")
        let cursor = try context.cursor(.after, scope: scope)
        let page = try store.search.search(
            query, filter: filter, includingHidden: hiddenToo, after: cursor, limit: limit)
        let token = { (cursor: Cursor) in PageToken.make(cursor, scope: scope) }
        let console = context.console
        // A note for a person, never for a script reading standard error.
        if console.errorIsTerminal, let progress = try? store.search.indexingProgress() {
            console.errorLine(Self.indexingNote(progress))
        }
        if context.wantsJSON {
            let hits = page.items.map { hit in
                Hit(
                    conversation: ConversationJSON(hit.conversation),
                    message: hit.message.map {
                        Hit.Message(
                            id: $0.publicID, number: $0.position + 1, role: $0.role.rawValue, createdAt: $0.createdAt.iso8601,
                            kind: $0.kind.rawValue)
                    },
                    date: Self.date(of: hit).iso8601, snippet: hit.snippet, matches: hit.matches.map { [$0.lowerBound, $0.upperBound] })
            }
            console.line(try OutputFormat.json(Output(query: query, hits: hits, next: page.next.map(token)), for: context.console))
            return
        }
        if page.items.isEmpty {
            let filtered = filter.isEmpty ? "" : " among the conversations that pass \(filter.description)"
            console.errorLine(cursor == nil ? "Nothing matches '\(OutputFormat.line(query))'\(filtered)." : "No more matches.")
            return
        }
        // Bold only where a terminal can show it: not with NO_COLOR, not on TERM=dumb or none.
        let terminal = context.environment["TERM"] ?? ""
        let highlight =
            console.outputIsTerminal && (context.environment["NO_COLOR"].map(\.isEmpty) ?? true) && !terminal.isEmpty
            && terminal != "dumb"
        for hit in page.items {
            let head = OutputFormat.uniqueID(hit.conversation.publicID, in: store) + "  " + TimeText.absolute(Self.date(of: hit)) + "  "
            guard let message = hit.message else {
                // A title hit: the title itself shows the match; the line under it says so
                // (the snippet would only repeat the title).
                console.line(head + Self.marked(hit.snippet, matches: hit.matches, highlight: highlight))
                let count = hit.conversation.seenCount
                console.line("          title match, \(NumberText.grouped(count)) message\(count == 1 ? "" : "s")")
                continue
            }
            console.line(head + OutputFormat.line(hit.conversation.title))
            // A hidden message says so: the person never saw it.
            let hidden = message.kind.isSeen ? "" : " (hidden \(message.kind.rawValue))"
            console.line(
                "          #\(message.position + 1) \(message.role.rawValue)\(hidden): "
                    + Self.marked(hit.snippet, matches: hit.matches, highlight: highlight))
        }
        if let next = page.next {
            var words = context.commandPrefix + ["search"]
            if context.parsed.value(.limit) != nil { words += ["--limit", String(limit)] }
            if hiddenToo { words.append("--hidden") }
            words += CommandContext.filterOptions(filter) + ["--after", token(next), "--"] + context.parsed.positional
            console.errorLine("more: " + ShellWords.line(words))
        }
    }

    /// When a hit was written: its message's time, or its conversation's for a title hit.
    static func date(of hit: SearchHit) -> Timestamp {
        hit.message?.createdAt ?? hit.conversation.createdAt
    }

    /// `the search index is being rebuilt (37%); results are complete but slower`.
    static func indexingNote(_ progress: Double) -> String {
        "the search index is being rebuilt (\(SearchViewModel.indexingPercent(progress))%); results are complete but slower"
    }

    /// The snippet made safe, with matches in bold on a terminal or in [brackets] elsewhere.
    static func marked(_ snippet: String, matches: [Range<Int>], highlight: Bool) -> String {
        let characters = Array(snippet)
        var result = ""
        var offset = 0
        for match in matches where match.lowerBound >= offset && match.upperBound <= characters.count {
            result += UntrustedText.sanitized(String(characters[offset..<match.lowerBound]))
            let text = UntrustedText.sanitized(String(characters[match]))
            result += highlight ? "\u{1B}[1m\(text)\u{1B}[22m" : "[\(text)]"
            offset = match.upperBound
        }
        result += UntrustedText.sanitized(String(characters[offset...]))
        return result
    }
}
