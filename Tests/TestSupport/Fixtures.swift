import ScrollbackModel
import ScrollbackStorage

/// Small helpers to fill a store in tests.
extension Store {
    /// Creates a conversation with `messages` user/assistant messages.
    @discardableResult
    public func addConversation(
        title: String, createdAt: Int64, updatedAt: Int64? = nil, pinned: Bool = false, messages: [String] = [],
        source: String = "local", sourceID: String? = nil
    ) throws -> ConversationDTO {
        let conversation = try conversations.create(
            NewConversation(
                title: title, model: "test-model", source: source, sourceID: sourceID,
                createdAt: Timestamp(milliseconds: createdAt),
                updatedAt: updatedAt.map(Timestamp.init(milliseconds:)), pinned: pinned))
        if !messages.isEmpty {
            _ = try self.messages.append(
                messages.enumerated().map { index, text in
                    NewMessage(role: index % 2 == 0 ? .user : .assistant, content: text, createdAt: Timestamp(milliseconds: createdAt))
                }, to: conversation.id)
        }
        return try conversations.conversation(id: conversation.id) ?? conversation
    }
}
