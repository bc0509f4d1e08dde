import Foundation
import ScrollbackExport
import ScrollbackModel
import ScrollbackStorage

/// The resources of `scrollback mcp`: each conversation as Markdown (the text `export`
/// writes), at `scrollback://conversation/ID`, listed newest first a page at a time.
@MainActor
struct MCPResources {
    static let prefix = "scrollback://conversation/"
    static let pageSize = 100

    let server: MCPServer

    static var templates: String {
        JSONValue.object([
            "resourceTemplates": .array([
                .object([
                    "uriTemplate": .string(prefix + "{id}"), "name": .string("conversation"), "title": .string("A conversation"),
                    "description": .string("A conversation of the history as Markdown: its messages along the current branch."),
                    "mimeType": .string("text/markdown"),
                ])
            ])
        ]).text
    }

    func list(cursor: JSONValue?) throws -> String {
        let store = server.store
        let id = try store.settings.value(.databaseID)
        let scope = PageToken.Scope(databaseID: id.isEmpty ? store.path : id, query: "mcp resources")
        var position = PagePosition.first
        if let cursor, cursor != .null {
            guard let text = cursor.string else { throw MCPError(code: -32602, message: "\"cursor\" is a string") }
            do {
                position = .after(try PageToken.cursor(from: text, option: "cursor", scope: scope))
            } catch let error as UsageError {
                throw MCPError(code: -32602, message: error.message)
            }
        }
        let page = try store.conversations.page(sort: .updated, filter: .none, at: position, limit: Self.pageSize)
        var result: [String: JSONValue] = [
            "resources": .array(
                page.items.map { conversation in
                    .object([
                        "uri": .string(Self.prefix + conversation.publicID), "name": .string(conversation.publicID),
                        "title": .string(conversation.title), "mimeType": .string("text/markdown"),
                    ])
                })
        ]
        if let next = page.next { result["nextCursor"] = .string(PageToken.make(next, scope: scope)) }
        return JSONValue.object(result).text
    }

    func read(_ uri: JSONValue?) throws -> String {
        guard let uri = uri?.string else { throw MCPError(code: -32602, message: "resources/read needs \"uri\", a string") }
        guard uri.hasPrefix(Self.prefix) else {
            throw MCPError(code: -32002, message: "no resource \(MCPServer.quoted(uri)); resources are \(Self.prefix)ID")
        }
        let id = String(uri.dropFirst(Self.prefix.count))
        let conversation: ConversationDTO
        do {
            conversation = try server.store.conversations.conversation(matching: id)
        } catch StorageError.notFound {
            throw MCPError(code: -32002, message: "no conversation \(MCPServer.quoted(id)) in this history")
        }
        guard conversation.publicID == id.lowercased() else {
            // A resource is named by its whole id, not a prefix of it.
            throw MCPError(code: -32002, message: "no conversation \(MCPServer.quoted(id)) in this history (a resource takes the whole id)")
        }
        let markdown = try Exporter(store: server.store).render(conversation, as: .md)
        return JSONValue.object([
            "contents": .array([.object(["uri": .string(uri), "mimeType": .string("text/markdown"), "text": .string(markdown)])])
        ]).text
    }
}
