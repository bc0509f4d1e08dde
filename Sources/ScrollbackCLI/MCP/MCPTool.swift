import Foundation
import ScrollbackModel
import ScrollbackStorage

/// A tool of `scrollback mcp`: its name, what it does in a line, the JSON Schemas of its
/// input and its output, and what runs it. The filters are the CLI's own options
/// (`CommandTable.filters`), by the same words and with the same help; the tools that a
/// command answers (`search`, `list_conversations`, `stats`) return that command's `--json`.
@MainActor
struct MCPTool {
    enum Kind {
        case string
        case integer(ClosedRange<Int>)
        case boolean
        case choice([String])
    }

    struct Property {
        let name: String
        let kind: Kind
        let description: String
        /// The CLI option it is given to (`--name=value`; a flag when true).
        var option: OptionKey?
        var defaultValue: JSONValue?

        var schema: JSONValue {
            var members: [String: JSONValue] = ["description": .string(description)]
            switch kind {
            case .string: members["type"] = .string("string")
            case .boolean: members["type"] = .string("boolean")
            case .integer(let range):
                members["type"] = .string("integer")
                members["minimum"] = .integer(Int64(range.lowerBound))
                members["maximum"] = .integer(Int64(range.upperBound))
            case .choice(let words):
                members["type"] = .string("string")
                members["enum"] = .array(words.map(JSONValue.string))
            }
            if let defaultValue { members["default"] = defaultValue }
            return .object(members)
        }
    }

    let name: String
    let title: String
    let description: String
    let properties: [Property]
    var required: [String] = []
    let output: JSONValue
    var writes = false
    let run: @MainActor (MCPServer, MCPTool, [String: JSONValue]) throws -> String

    /// As `tools/list` gives it.
    var listing: JSONValue {
        var input: [String: JSONValue] = [
            "type": .string("object"),
            "properties": .object(Dictionary(uniqueKeysWithValues: properties.map { ($0.name, $0.schema) })),
            "additionalProperties": .bool(false),
        ]
        if !required.isEmpty { input["required"] = .array(required.map(JSONValue.string)) }
        return .object([
            "name": .string(name), "title": .string(title), "description": .string(description), "inputSchema": .object(input),
            "outputSchema": output,
            "annotations": .object([
                "readOnlyHint": .bool(!writes), "destructiveHint": .bool(false), "idempotentHint": .bool(true),
                "openWorldHint": .bool(false),
            ]),
        ])
    }

    /// The arguments checked against the input schema, with defaults filled in; else a
    /// line that says what is wrong, in the tool's own words.
    func validated(_ arguments: [String: JSONValue]) throws -> [String: JSONValue] {
        var result: [String: JSONValue] = [:]
        for key in arguments.keys.sorted() where !properties.contains(where: { $0.name == key }) {
            throw MCPError(
                code: -32602,
                message: "\(name) takes no argument \(MCPServer.quoted(key)); it takes \(properties.map(\.name).joined(separator: ", "))")
        }
        for property in properties {
            guard let value = arguments[property.name], value != .null else {
                if required.contains(property.name) { throw MCPError(code: -32602, message: "\(name) needs \(property.name)") }
                if let defaultValue = property.defaultValue { result[property.name] = defaultValue }
                continue
            }
            switch property.kind {
            case .string:
                guard let text = value.string else { throw MCPError(code: -32602, message: "\(property.name) is a string") }
                guard text.utf8.count <= 10_000 else { throw MCPError(code: -32602, message: "\(property.name) is at most 10000 bytes") }
                result[property.name] = value
            case .boolean:
                guard case .bool = value else { throw MCPError(code: -32602, message: "\(property.name) is true or false") }
                result[property.name] = value
            case .integer(let range):
                let whole: Int64?
                switch value {
                case .integer(let number): whole = number
                case .number(let number) where number.rounded() == number && abs(number) < 1e15: whole = Int64(number)
                default: whole = nil
                }
                guard let whole, whole >= Int64(range.lowerBound), whole <= Int64(range.upperBound) else {
                    throw MCPError(code: -32602, message: "\(property.name) must be a whole number from \(range.lowerBound) to \(range.upperBound)")
                }
                result[property.name] = .integer(whole)
            case .choice(let words):
                guard let text = value.string, words.contains(text) else {
                    throw MCPError(code: -32602, message: "\(property.name) must be \(OutputFormat.list(words))")
                }
                result[property.name] = value
            }
        }
        return result
    }

    /// The CLI words of the arguments that are options: `--name=value`, or `--name` for a
    /// flag that is true.
    func options(_ arguments: [String: JSONValue]) -> [String] {
        var words: [String] = []
        for property in properties {
            guard let option = property.option, let value = arguments[property.name] else { continue }
            switch value {
            case .bool(true): words.append(option.name)
            case .string(let text): words.append(option.name + "=" + text)
            case .integer(let number): words.append(option.name + "=" + String(number))
            default: continue
            }
        }
        return words
    }
}

extension MCPTool {
    /// The CLI's filter options as properties: `source`, `model`, `project`, `since`,
    /// `until`, `pinned`, `title`.
    static var filters: [Property] {
        CommandTable.filters.map { spec in
            Property(name: String(spec.key.name.dropFirst(2)), kind: spec.value == nil ? .boolean : .string, description: spec.help, option: spec.key)
        }
    }

    static func limit(_ defaultValue: Int) -> Property {
        Property(name: "limit", kind: .integer(1...10_000), description: "at most this many", option: .limit, defaultValue: .integer(Int64(defaultValue)))
    }

    static let cursor = Property(
        name: "cursor", kind: .string, description: "the `next` of a result before, for the page after it (refused for another query or database)",
        option: .after)

    /// The words that run `command` on the server's database with `--json`.
    static func words(_ command: String, _ server: MCPServer) -> [String] {
        ["--db", server.context.databasePath] + (server.store.isReadOnly ? ["--readonly"] : []) + [command, "--json"]
    }

    static var all: [MCPTool] {
        [
            MCPTool(
                name: "search", title: "Search the history",
                description: "Find conversations whose title or messages hold every word of the query, newest first; each hit with its conversation, the message's number and a snippet.",
                properties: [
                    Property(name: "query", kind: .string, description: "the words to find (every one must occur; \"quoted words\" as a phrase)"),
                    limit(20), cursor,
                    Property(name: "hidden", kind: .boolean, description: "find in the hidden messages too (tool traffic, reasoning, context)", option: .hidden),
                ] + filters, required: ["query"], output: MCPSchemas.search
            ) { server, tool, arguments in
                try server.commandJSON(words("search", server) + tool.options(arguments) + ["--", arguments["query"]?.string ?? ""])
            },
            MCPTool(
                name: "list_conversations", title: "List conversations",
                description: "Conversations one page at a time, in an order (updated, created or title), pinned ones first, narrowed by the filters.",
                properties: [
                    Property(name: "sort", kind: .choice(ConversationOrder.allCases.map(\.rawValue)), description: "the order (default updated, newest first)", option: .sort, defaultValue: .string("updated")),
                    limit(20), cursor,
                ] + filters, output: MCPSchemas.list
            ) { server, tool, arguments in
                try server.commandJSON(words("list", server) + tool.options(arguments))
            },
            MCPTool(
                name: "read_conversation", title: "Read a conversation",
                description: "A conversation's messages in order along a branch (the current one, or the one that ends at a message id), from a message number, cut to a byte budget; `next` reads on.",
                properties: [
                    Property(name: "id", kind: .string, description: "the conversation's id (or the start of it that names only it)"),
                    Property(name: "from", kind: .integer(1...10_000_000), description: "the first message's number (default 1)"),
                    Property(name: "cursor", kind: .string, description: "the `next` of a read before: where it stopped"),
                    Property(name: "branch", kind: .string, description: "\"current\" (default), or a message id: the branch that ends at that message"),
                    Property(name: "hidden", kind: .boolean, description: "the hidden messages too (tool traffic, reasoning, context), each with its kind"),
                    Property(name: "max_bytes", kind: .integer(MCPRead.minimumBudget...MCPRead.maximumBudget), description: "the bytes of message text at most (default \(MCPRead.defaultBudget)); a message longer is cut and `next` goes on inside it", defaultValue: .integer(Int64(MCPRead.defaultBudget))),
                ], required: ["id"], output: MCPSchemas.read
            ) { server, _, arguments in
                try MCPRead(server: server).run(arguments)
            },
            MCPTool(
                name: "stats", title: "Count the history",
                description: "How many conversations, messages and attachments the whole history holds, from when to when, and per model.",
                properties: [], output: MCPSchemas.stats
            ) { server, tool, arguments in
                try server.commandJSON(words("stats", server) + tool.options(arguments))
            },
            MCPTool(
                name: "rename", title: "Rename a conversation",
                description: "Give a conversation a new title (it syncs as any rename does).",
                properties: [
                    Property(name: "id", kind: .string, description: "the conversation's id (or the start of it that names only it)"),
                    Property(name: "title", kind: .string, description: "the new title"),
                ], required: ["id", "title"], output: MCPSchemas.renamed, writes: true
            ) { server, _, arguments in
                let conversation = try server.store.conversations.conversation(matching: arguments["id"]?.string ?? "")
                let renamed = try server.store.conversations.rename(id: conversation.id, to: arguments["title"]?.string ?? "")
                return JSONValue.object([
                    "id": .string(renamed.publicID), "title": .string(renamed.title), "previousTitle": .string(conversation.title),
                ]).text
            },
            MCPTool(
                name: "pin", title: "Pin or unpin a conversation",
                description: "Pin a conversation (it comes first in every order), or unpin it with pinned false.",
                properties: [
                    Property(name: "id", kind: .string, description: "the conversation's id (or the start of it that names only it)"),
                    Property(name: "pinned", kind: .boolean, description: "true to pin (default), false to unpin", defaultValue: .bool(true)),
                ], required: ["id"], output: MCPSchemas.pinned, writes: true
            ) { server, _, arguments in
                let conversation = try server.store.conversations.conversation(matching: arguments["id"]?.string ?? "")
                let pinned = arguments["pinned"] != .bool(false)
                let changed = try server.store.conversations.setPinned(ids: [conversation.id], pinned)
                return JSONValue.object(["id": .string(conversation.publicID), "pinned": .bool(pinned), "changed": .bool(changed > 0)]).text
            },
        ]
    }
}
