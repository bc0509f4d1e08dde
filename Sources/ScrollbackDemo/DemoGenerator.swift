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

    /// The anchor for data made now: the start of the current hour (UTC), so that the
    /// newest conversations are recent on the day the demo is made. The same seed gives
    /// the same data, shifted in time.
    public static func anchor(at now: Timestamp) -> Timestamp {
        let hour: Int64 = 3_600_000
        return Timestamp(milliseconds: now.milliseconds / hour * hour)
    }

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

    /// Adds conversations `0..<count` of this seed, in one transaction (with the search
    /// index built once at the end when the load is large: the storage layer's bulk policy).
    ///
    /// - Parameter progress: called after each `batchSize` conversations with the number done.
    /// `fill` was asked to stop (`stop` said so): nothing of it was kept.
    public struct Stopped: Error {}

    /// Adds `count` conversations in one transaction; `stop` is asked after each batch,
    /// and when it says so, the transaction is rolled back and `Stopped` thrown.
    public func fill(
        _ store: Store, count: Int, batchSize: Int = 2_000, progress: ((Int) -> Void)? = nil, stop: () -> Bool = { false }
    ) throws -> Outcome {
        var outcome = Outcome(added: 0, alreadyPresent: 0, messages: 0)
        // About 3.4 messages per conversation.
        try store.inserting(about: count.multipliedReportingOverflow(by: 3).partialValue) {
            for index in 0..<count {
                let conversation = makeConversation(index: index)
                if try store.add(imported(conversation, index: index)) {
                    outcome.added += 1
                    outcome.messages += conversation.messages.count
                } else {
                    outcome.alreadyPresent += 1
                }
                if (index + 1) % max(1, batchSize) == 0 || index + 1 == count {
                    if stop() { throw Stopped() }
                    progress?(index + 1)
                }
            }
        }
        return outcome
    }

    private func imported(_ conversation: DemoConversation, index: Int) -> ImportedConversation {
        // Token counts as an API reports them, about four bytes a token: each answer's input
        // is what came before it, its output its own text (made from the text, not drawn, so
        // that every title and text stays as it was).
        var context: Int64 = 0
        return ImportedConversation(
            source: "demo", sourceID: "\(seed)-\(index)", title: conversation.title, model: conversation.model,
            createdAt: Timestamp(milliseconds: conversation.createdAt), updatedAt: Timestamp(milliseconds: conversation.createdAt),
            messages: conversation.messages.map { message in
                let bytes = Int64(message.content.utf8.count)
                defer { context += bytes }
                return ImportedMessage(
                    role: message.role, content: message.content, createdAt: Timestamp(milliseconds: message.createdAt),
                    model: message.role == .assistant ? conversation.model : nil, publicID: message.publicID,
                    parent: message.parent.map { .index($0) } ?? .previous,
                    usage: message.role == .assistant ? MessageUsage(inputTokens: context / 4 + 1, outputTokens: bytes / 4 + 1) : MessageUsage())
            },
            publicID: conversation.publicID, pinned: conversation.pinned)
    }

    struct DemoMessage {
        var publicID: String
        var role: Role
        var content: String
        var createdAt: Int64
        /// The index of the message it follows when that is not the one before it (a
        /// regenerated answer beside the first).
        var parent: Int? = nil
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
        // Message ids hash the seed and index with what the stream drew (the stream itself,
        // and so every title and text, stays as it was): two seeds' streams can meet, and
        // a second seed in the same database then failed on an id the first one had made.
        func messageID(_ drawn: String) -> String { StableID.uuid("demo", String(seed), String(index), drawn) }
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
        // The last message of the branch the conversation goes on with.
        var tip: Int?
        func add(_ role: Role, _ content: String, _ random: inout SplitMix64) {
            let parent = tip.flatMap { $0 == messages.count - 1 ? nil : $0 }
            messages.append(DemoMessage(publicID: messageID(random.uuid()), role: role, content: content, createdAt: time, parent: parent))
            tip = messages.count - 1
            time += 2_000 + Int64(random.below(600_000))
        }
        // Regenerated answers come from a generator of their own, so that everything else
        // is what this seed always gave.
        var regenerations = SplitMix64(seed: seed &* 0x9E37_79B9_7F4A_7C15 ^ UInt64(truncatingIfNeeded: index) &* 0xBF58_476D_1CE4_E5B9)
        if random.chance(15) { add(.system, random.pick(DemoVocabulary.systemPrompts), &random) }
        for _ in 0..<turns {
            add(.user, question(about: subject, &random), &random)
            if random.chance(8) {
                add(.tool, random.pick(DemoVocabulary.toolOutputs), &random)
            }
            add(.assistant, answer(&random), &random)
            // Now and then the answer was regenerated, once or twice: other versions beside
            // it, made after it; the conversation goes on from the first.
            if regenerations.chance(7), let first = tip {
                for _ in 0..<(1 + regenerations.below(2)) {
                    messages.append(
                        DemoMessage(
                            publicID: messageID(regenerations.uuid()), role: .assistant, content: answer(&regenerations),
                            createdAt: messages[first].createdAt + 1_000 + Int64(regenerations.below(60_000)), parent: first - 1))
                }
            }
        }
        // Nothing is later than the anchor: a conversation that would run past it starts
        // earlier by as much.
        var start = createdAt
        if let last = messages.map(\.createdAt).max(), last > anchor.milliseconds {
            let overshoot = last - anchor.milliseconds
            start -= overshoot
            for index in messages.indices { messages[index].createdAt -= overshoot }
        }
        // A handful pinned, as people do: four of the first forty, then about one in 2,000.
        return DemoConversation(
            publicID: random.uuid(), title: title, model: random.pick(DemoVocabulary.models), createdAt: start,
            pinned: random.below(2_000) == 0 || (index < 40 && index % 12 == 3), messages: messages)
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
