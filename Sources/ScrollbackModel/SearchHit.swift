/// One search result: a conversation whose title matched, or one of its messages.
public struct SearchHit: Sendable, Hashable {
    public struct MessageReference: Sendable, Hashable {
        public var id: Int64
        public var publicID: String
        public var position: Int
        public var role: Role
        public var createdAt: Timestamp
        /// What it is: hidden kinds are found only when a search asks for them.
        public var kind: MessageKind

        public init(id: Int64, publicID: String, position: Int, role: Role, createdAt: Timestamp, kind: MessageKind) {
            self.id = id
            self.publicID = publicID
            self.position = position
            self.role = role
            self.createdAt = createdAt
            self.kind = kind
        }
    }

    public var conversation: ConversationDTO
    /// The matching message; nil when the hit is the conversation's title.
    public var message: MessageReference?
    /// A short piece of the text around the first match, whitespace folded to single spaces.
    public var snippet: String
    /// Where the query's terms occur in `snippet`, in Characters (grapheme clusters).
    public var matches: [Range<Int>]

    public init(conversation: ConversationDTO, message: MessageReference?, snippet: String, matches: [Range<Int>]) {
        self.conversation = conversation
        self.message = message
        self.snippet = snippet
        self.matches = matches
    }
}
