import ScrollbackModel
import ScrollbackStorage

/// Fills a database with realistic, varied conversations: all roles, short and very long
/// messages, code blocks, CJK, emoji, combining marks, right-to-left text and a few very
/// long titles. The same seed gives the same conversations, ids and times on every run.
public struct DemoGenerator: Sendable {
    public let seed: UInt64
    /// The newest a demo conversation can be; they spread over the three years before it.
    public let anchor: Timestamp

    /// 2026-11-01T00:00:00Z, fixed so that a seed always gives the same data.
    public static let defaultAnchor = Timestamp(milliseconds: 1_793_491_200_000)

    public init(seed: UInt64 = 1, anchor: Timestamp = DemoGenerator.defaultAnchor) {
        self.seed = seed
        self.anchor = anchor
    }

    public struct Outcome: Sendable, Equatable {
        public var added: Int
        /// Conversations of this seed that were already in the database (left as they were).
        public var alreadyPresent: Int
        public var messages: Int
    }

    /// Adds conversations `0..<count` of this seed.
    ///
    /// A load at least as large as what the database holds (and of 5,000 or more) runs in one
    /// transaction with the search index built at the end; smaller ones commit every
    /// `batchSize` conversations with the index kept row by row.
    ///
    /// - Parameter progress: called after each batch with the number done so far.
    public func fill(
        _ store: Store, count: Int, batchSize: Int = 2_000, progress: ((Int) -> Void)? = nil
    ) throws -> Outcome {
        var outcome = Outcome(added: 0, alreadyPresent: 0, messages: 0)
        let database = store.database
        // A larger page cache lets the full-text index merge in memory. Put back afterwards,
        // since the connection lives on.
        let cacheSize = try database.scalarInt("PRAGMA cache_size")
        try database.execute("PRAGMA cache_size = -262144")
        defer { try? database.execute("PRAGMA cache_size = \(cacheSize)") }
        let insertAll = {
            var start = 0
            while start < count {
                let end = min(start + batchSize, count)
                try database.write {
                    for index in start..<end {
                        try insert(makeConversation(index: index), index: index, into: database, outcome: &outcome)
                    }
                }
                start = end
                progress?(start)
            }
        }
        if count >= 5_000, count >= (try store.conversations.count()) {
            try store.insertingInBulk(insertAll)
        } else {
            try insertAll()
        }
        return outcome
    }

    private func insert(_ conversation: DemoConversation, index: Int, into database: Database, outcome: inout Outcome) throws {
        try database.run(
            """
            INSERT INTO conversation (public_id, title, model, source, source_id, created_at, updated_at, pinned)
            VALUES (?, ?, ?, 'demo', ?, ?, ?, ?) ON CONFLICT (source, source_id) DO NOTHING
            """,
            [
                .text(conversation.publicID), .text(conversation.title), .text(conversation.model),
                .text("\(seed)-\(index)"), .integer(conversation.createdAt), .integer(conversation.createdAt),
                .integer(conversation.pinned ? 1 : 0),
            ])
        guard database.changes == 1 else {
            outcome.alreadyPresent += 1
            return
        }
        let conversationID = database.lastInsertRowID
        for (position, message) in conversation.messages.enumerated() {
            try database.run(
                """
                INSERT INTO message (public_id, conversation_id, position, role, content, created_at, model)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                """,
                [
                    .text(message.publicID), .integer(conversationID), .integer(Int64(position)),
                    .text(message.role.rawValue), .text(message.content), .integer(message.createdAt),
                    message.role == .assistant ? .text(conversation.model) : .null,
                ])
        }
        outcome.added += 1
        outcome.messages += conversation.messages.count
    }

    struct DemoMessage {
        var publicID: String
        var role: Role
        var content: String
        var createdAt: Int64
    }

    struct DemoConversation {
        var publicID: String
        var title: String
        var model: String
        var createdAt: Int64
        var pinned: Bool
        var messages: [DemoMessage]
    }

    /// Conversation `index` of this seed; independent of every other index.
    func makeConversation(index: Int) -> DemoConversation {
        var random = SplitMix64(seed: seed &* 0x2545_F491_4F6C_DD1D ^ UInt64(truncatingIfNeeded: index) &* 0x9E37_79B9_7F4A_7C15)
        let threeYears: Int64 = 3 * 365 * 24 * 3600 * 1000
        let createdAt = anchor.milliseconds - Int64(random.next() % UInt64(threeYears))
        let subject = random.pick(DemoVocabulary.subjects)
        let title: String
        switch random.below(100) {
        case 0..<55: title = random.pick(DemoVocabulary.verbs) + " " + subject
        case 55..<93: title = random.pick(DemoVocabulary.otherTitles)
        case 93..<99: title = subject.prefix(1).uppercased() + subject.dropFirst()
        default:
            title = random.pick(DemoVocabulary.longTitleParts) + " " + subject + ", "
                + (0..<6).map { _ in random.pick(DemoVocabulary.subjects) }.joined(separator: ", ") + " and more"
        }
        // Most chats are one question and its answer; a long tail runs to hundreds of turns.
        let turns: Int
        switch random.below(10_000) {
        case 0..<8_500: turns = 1
        case 8_500..<9_850: turns = 2 + random.below(3)
        case 9_850..<9_980: turns = 5 + random.below(16)
        case 9_980..<9_999: turns = 20 + random.below(80)
        default: turns = 300 + random.below(300)
        }
        var messages: [DemoMessage] = []
        var time = createdAt
        func add(_ role: Role, _ content: String, _ random: inout SplitMix64) {
            messages.append(DemoMessage(publicID: random.uuid(), role: role, content: content, createdAt: time))
            time += 2_000 + Int64(random.below(600_000))
        }
        if random.chance(15) { add(.system, random.pick(DemoVocabulary.systemPrompts), &random) }
        for _ in 0..<turns {
            add(.user, question(about: subject, &random), &random)
            if random.chance(8) {
                add(.tool, random.pick(DemoVocabulary.toolOutputs), &random)
            }
            add(.assistant, answer(&random), &random)
        }
        return DemoConversation(
            publicID: random.uuid(), title: title, model: random.pick(DemoVocabulary.models), createdAt: createdAt,
            pinned: random.below(500) == 0, messages: messages)
    }

    private static let questionParts: [(String, String)] = DemoVocabulary.questions.map { template in
        let parts = template.components(separatedBy: "%@")
        return (parts.first ?? "", parts.dropFirst().joined())
    }

    private func question(about subject: String, _ random: inout SplitMix64) -> String {
        let (before, after) = random.pick(Self.questionParts)
        var text = before + subject + after
        if random.chance(20) { text += " " + random.pick(DemoVocabulary.sentences) }
        return text
    }

    private func answer(_ random: inout SplitMix64) -> String {
        let paragraphs: Int
        switch random.below(1_000) {
        case 0..<700: paragraphs = 1
        case 700..<990: paragraphs = 2 + random.below(3)
        default: paragraphs = 20 + random.below(40)
        }
        var text = ""
        for paragraph in 0..<paragraphs {
            if paragraph > 0 { text += "\n\n" }
            for sentence in 0..<(1 + random.below(2)) {
                if sentence > 0 { text += " " }
                text += random.pick(DemoVocabulary.sentences)
            }
            if random.chance(10) {
                let (language, code) = random.pick(DemoVocabulary.codeSamples)
                text += "\n\n```\(language)\n\(code)\n```"
            } else if random.chance(10) {
                text += "\n\n" + (0..<(2 + random.below(3))).map { _ in "- " + random.pick(DemoVocabulary.bullets) }
                    .joined(separator: "\n")
            }
        }
        return text
    }
}
