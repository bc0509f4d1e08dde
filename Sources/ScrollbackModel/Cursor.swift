import Foundation

/// A keyset pagination cursor: the sort key of a row, as an opaque token outside Storage.
///
/// Each listing has its own kind of cursor; a token of another kind, or one that does not
/// parse, is `StorageError.invalidCursor`.
public struct Cursor: Sendable, Hashable, CustomStringConvertible {
    package enum Key: Sendable, Hashable {
        case updated(pinned: Bool, updatedAt: Int64, id: Int64)
        case created(pinned: Bool, createdAt: Int64, id: Int64)
        case title(pinned: Bool, title: String, id: Int64)
        case message(conversationID: Int64, position: Int64)
        case searchTitle(id: Int64)
        case searchMessage(id: Int64)
        /// Search hits on attachments' names, after the messages'.
        case searchAttachment(id: Int64)
    }

    package let key: Key

    package init(_ key: Key) { self.key = key }

    /// The token to hand to scripts and to pass back: base64url, no padding.
    public var token: String {
        let fields: [String]
        switch key {
        case .updated(let pinned, let updatedAt, let id): fields = ["u", pinned ? "1" : "0", "\(updatedAt)", "\(id)"]
        case .created(let pinned, let createdAt, let id): fields = ["c", pinned ? "1" : "0", "\(createdAt)", "\(id)"]
        case .title(let pinned, let title, let id): fields = ["t", pinned ? "1" : "0", "\(id)", title]
        case .message(let conversationID, let position): fields = ["m", "\(conversationID)", "\(position)"]
        case .searchTitle(let id): fields = ["st", "\(id)"]
        case .searchMessage(let id): fields = ["sm", "\(id)"]
        case .searchAttachment(let id): fields = ["sa", "\(id)"]
        }
        let plain = Self.version + Self.separator + fields.joined(separator: Self.separator)
        return Data(plain.utf8).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    public var description: String { token }

    /// The token format: `sb2` since pinned conversations come first in every order.
    private static let version = "sb2"
    private static let separator = "\u{1F}"

    /// Parses a token made by `token`.
    public init(token: String) throws {
        var base64 = token.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        guard !token.isEmpty, !token.contains("="), let data = Data(base64Encoded: base64),
              let plain = String(data: data, encoding: .utf8)
        else {
            throw StorageError.invalidCursor(reason: "'\(token.prefix(40))' is not a page token")
        }
        let fields = plain.components(separatedBy: Self.separator)
        if fields.first == "sb1" {
            throw StorageError.invalidCursor(reason: "'\(token.prefix(40))' is from an earlier version of scrollback; start again from the first page")
        }
        guard fields.count >= 3, fields[0] == Self.version else {
            throw StorageError.invalidCursor(reason: "'\(token.prefix(40))' is not a page token")
        }
        let values = Array(fields.dropFirst(2))
        func integer(_ index: Int) throws -> Int64 {
            guard index < values.count, let number = Int64(values[index]) else {
                throw StorageError.invalidCursor(reason: "'\(token.prefix(40))' is damaged")
            }
            return number
        }
        func flag(_ index: Int) throws -> Bool {
            guard index < values.count, values[index] == "0" || values[index] == "1" else {
                throw StorageError.invalidCursor(reason: "'\(token.prefix(40))' is damaged")
            }
            return values[index] == "1"
        }
        func expectCount(_ count: Int) throws {
            guard values.count == count else { throw StorageError.invalidCursor(reason: "'\(token.prefix(40))' is damaged") }
        }
        switch fields[1] {
        case "u":
            try expectCount(3)
            key = .updated(pinned: try flag(0), updatedAt: try integer(1), id: try integer(2))
        case "c":
            try expectCount(3)
            key = .created(pinned: try flag(0), createdAt: try integer(1), id: try integer(2))
        case "t":
            // The title is last and may itself hold the separator.
            guard values.count >= 3 else { throw StorageError.invalidCursor(reason: "'\(token.prefix(40))' is damaged") }
            key = .title(pinned: try flag(0), title: values.dropFirst(2).joined(separator: Self.separator), id: try integer(1))
        case "m":
            try expectCount(2)
            key = .message(conversationID: try integer(0), position: try integer(1))
        case "st":
            try expectCount(1)
            key = .searchTitle(id: try integer(0))
        case "sm":
            try expectCount(1)
            key = .searchMessage(id: try integer(0))
        case "sa":
            try expectCount(1)
            key = .searchAttachment(id: try integer(0))
        default:
            throw StorageError.invalidCursor(reason: "'\(token.prefix(40))' is not a page token")
        }
    }

    /// The name of the listing this cursor belongs to, for error messages.
    package var listing: String {
        switch key {
        case .updated: "the list sorted by updated"
        case .created: "the list sorted by created"
        case .title: "the list sorted by title"
        case .message: "the messages of a conversation"
        case .searchTitle, .searchMessage, .searchAttachment: "search results"
        }
    }
}

extension Cursor {
    /// The cursor of `conversation` in `order`: pages `after:` it start with the next row.
    public static func conversation(_ conversation: ConversationDTO, order: ConversationOrder) -> Cursor {
        switch order {
        case .updated:
            Cursor(.updated(pinned: conversation.pinned, updatedAt: conversation.updatedAt.milliseconds, id: conversation.id))
        case .created:
            Cursor(.created(pinned: conversation.pinned, createdAt: conversation.createdAt.milliseconds, id: conversation.id))
        case .title:
            Cursor(.title(pinned: conversation.pinned, title: conversation.title, id: conversation.id))
        }
    }

    /// A cursor just before every conversation updated at or before `updatedAt` (in the
    /// half of the list `pinned` says): a page after it starts with the newest of them.
    public static func conversationKey(pinned: Bool, updatedAt: Int64) -> Cursor {
        Cursor(.updated(pinned: pinned, updatedAt: updatedAt, id: Int64.max))
    }

    /// As `conversationKey(pinned:updatedAt:)`, by created time.
    public static func conversationKey(pinned: Bool, createdAt: Int64) -> Cursor {
        Cursor(.created(pinned: pinned, createdAt: createdAt, id: Int64.max))
    }

    /// The cursor of the message at `position` in a conversation.
    public static func message(conversationID: Int64, position: Int) -> Cursor {
        Cursor(.message(conversationID: conversationID, position: Int64(position)))
    }
}
