/// The JSON Schemas of what the tools return: the shapes of the CLI's `--json` (see
/// `ConversationJSON`, `SearchCommand.Output`, `ListCommand.Output`, `StatsCommand.Output`).
/// A key whose value may be absent is left out of `required`.
enum MCPSchemas {
    static func object(_ properties: [String: JSONValue], required: [String], open: Bool = false) -> JSONValue {
        .object([
            "type": .string("object"), "properties": .object(properties), "required": .array(required.map(JSONValue.string)),
            "additionalProperties": .bool(open),
        ])
    }

    static func type(_ name: String, _ description: String? = nil) -> JSONValue {
        var members: [String: JSONValue] = ["type": .string(name)]
        if let description { members["description"] = .string(description) }
        return .object(members)
    }

    static func array(_ items: JSONValue) -> JSONValue { .object(["type": .string("array"), "items": items]) }

    static let string = type("string")
    static let integer = type("integer")
    static let boolean = type("boolean")

    static let conversationProperties: [String: JSONValue] = [
        "id": type("string", "what the other tools take as id"), "title": string, "model": string, "source": string,
        "sourceID": string, "createdAt": type("string", "ISO 8601, UTC"), "updatedAt": type("string", "ISO 8601, UTC"),
        "messageCount": type("integer", "the messages the person saw, on every branch"),
        "hiddenCount": type("integer", "the messages kept but hidden (tool traffic, reasoning, context)"), "pinned": boolean,
        "project": type("string", "a coding agent's working folder"), "gitBranch": string,
    ]
    static let conversationRequired = ["id", "title", "source", "createdAt", "updatedAt", "messageCount", "hiddenCount", "pinned"]
    static let conversation = object(conversationProperties, required: conversationRequired)

    static let attachment = object(
        [
            "name": string, "mime": string, "type": string, "size": integer, "width": integer, "height": integer, "sha256": string,
            "missing": string, "reference": string, "extracted": string, "message": string, "messageNumber": integer,
        ], required: ["name", "type"])

    static let search = object(
        [
            "query": string,
            "hits": array(
                object(
                    [
                        "conversation": conversation,
                        "message": object(
                            ["id": string, "number": integer, "role": string, "createdAt": string, "kind": string],
                            required: ["id", "number", "role", "createdAt", "kind"]),
                        "date": type("string", "when the hit was written, ISO 8601, UTC"),
                        "snippet": type("string", "the text around the match, quoted from the history"),
                        "matches": .object([
                            "type": .string("array"), "description": .string("[start, end) in characters of snippet"),
                            "items": array(integer),
                        ]),
                    ], required: ["conversation", "date", "snippet", "matches"])),
            "next": type("string", "the cursor of the next page; absent on the last"),
        ], required: ["query", "hits"])

    static let list = object(
        [
            "sort": string, "conversations": array(conversation), "next": type("string", "the cursor of the next page; absent on the last"),
            "previous": type("string", "the page before, for `scrollback list --before` (cursor reads on only)"),
        ], required: ["sort", "conversations"])

    static let stats = object(
        ["conversations": integer, "messages": integer, "hiddenMessages": integer, "schemaVersion": integer, "path": string],
        required: ["conversations", "messages"], open: true)

    static let read = object(
        [
            "conversation": object(
                conversationProperties.merging(["branchLeafID": type("string", "the last message of the branch read")]) { $1 },
                required: conversationRequired),
            "branch": type("string", "\"current\", or the message id the branch ends at"),
            "total": type("integer", "the messages on this branch"),
            "messages": array(
                object(
                    [
                        "id": string, "number": type("integer", "its place on the branch, from 1"), "role": string, "kind": string,
                        "createdAt": string, "model": string, "content": type("string", "its text, or the part of it within the budget"),
                        "contentBytes": type("integer", "the bytes of its whole text"),
                        "offset": type("integer", "where this part starts in its text, in bytes, when not at 0"),
                        "complete": type("boolean", "false when the text goes on past the budget (`next` reads on)"),
                        "attachments": array(attachment),
                    ], required: ["id", "number", "role", "kind", "createdAt", "content", "contentBytes", "complete"])),
            "next": type("string", "where to read on (the cursor argument); absent at the end of the branch"),
        ], required: ["conversation", "branch", "total", "messages"])

    static let renamed = object(["id": string, "title": string, "previousTitle": string], required: ["id", "title", "previousTitle"])
    static let pinned = object(["id": string, "pinned": boolean, "changed": boolean], required: ["id", "pinned", "changed"])
}
