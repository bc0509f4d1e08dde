import ScrollbackModel

/// The search index's part in a bulk load (`SearchIndex.loading`), whose index triggers are
/// set aside: `Writer` reports each row it inserts, and they are indexed a batch at a time, in
/// id order, so that the index grows while the load goes on instead of in one rebuild after
/// it. Rows the load changes or removes would need their old index entries taken out; then
/// batching stops and the load ends with a whole rebuild (`needsRebuild`), as does a load into
/// a database whose older rows still wait for an upgrade's index build.
///
/// A page of synced ops (`SearchIndex.applying`) is a smaller load that also changes rows:
/// only the insert triggers are set aside (the index's and the count's), and the rows waiting
/// are indexed and counted before any change (`changedRows`), which the update and delete
/// triggers then handle as usual.
final class IndexingLoad {
    private let database: Database
    private(set) var needsRebuild: Bool
    private var messages: [Int64] = []
    private var conversations: [Int64] = []
    private var counts: [Int64: Writer.AddedMessages] = [:]
    /// Rows per batch: enough that each batch's statement is a small part of its cost.
    private let batch: Int
    static let batch = 50_000
    /// A page of synced ops: changes index and count what waits instead of ending in a
    /// rebuild, and the index merges as it does after any write.
    private let isPage: Bool

    init(database: Database, batch: Int = IndexingLoad.batch) throws {
        self.database = database
        self.batch = max(1, batch)
        isPage = false
        needsRebuild = try database.queryFirst("SELECT 1 FROM search_backlog LIMIT 1") { _ in true } ?? false
        if !needsRebuild { try SearchIndex.holdMerging(database) }
    }

    /// For a page of synced ops, in a database with no index backlog.
    init(pageIn database: Database) {
        self.database = database
        batch = IndexingLoad.batch
        isPage = true
        needsRebuild = false
    }

    func inserted(message id: Int64, conversation: Int64, at time: Timestamp, hidden: Bool) throws {
        guard !needsRebuild else { return }
        // The counts the set-aside triggers would have kept, applied once per conversation.
        var count = counts[conversation] ?? Writer.AddedMessages(latest: time.milliseconds)
        count.messages += 1
        if hidden { count.hidden += 1 }
        count.latest = max(count.latest, time.milliseconds)
        counts[conversation] = count
        messages.append(id)
        if messages.count >= batch { try index(&messages, into: "message_fts", column: "content", from: "message") }
    }

    func inserted(conversation id: Int64) throws {
        guard !needsRebuild else { return }
        conversations.append(id)
        if conversations.count >= batch { try index(&conversations, into: "conversation_fts", column: "title", from: "conversation") }
    }

    /// A row that may be indexed already is about to be changed or removed.
    func changedRows() throws {
        if isPage {
            // Its index entry (or that of a row removed with it) must be there first, and
            // its count (a row's id may be taken again once it is removed).
            try count()
            try index(&messages, into: "message_fts", column: "content", from: "message")
            try index(&conversations, into: "conversation_fts", column: "title", from: "conversation")
            return
        }
        needsRebuild = true
        messages = []
        conversations = []
        counts = [:]
    }

    /// Counts the new messages into their conversations (as `message_counted` does), indexes
    /// what is left, then merges the index's pieces once.
    func finish() throws {
        try count()
        try index(&messages, into: "message_fts", column: "content", from: "message")
        try index(&conversations, into: "conversation_fts", column: "title", from: "conversation")
        if !isPage { try SearchIndex.mergeOnce(database) }
    }

    /// The new messages counted into their conversations, as `message_counted` and
    /// `message_hidden_counted` do, by the conversation table's writer.
    private func count() throws {
        try Writer(database: database).count(counts)
        counts = [:]
    }

    /// One statement for the batch, in id order (FTS5 starts a new piece of index whenever
    /// an id is lower than the one before): the ids sorted here, and read in the list's
    /// order (an ORDER BY would sort the rows' text too: a third slower).
    private func index(_ ids: inout [Int64], into index: String, column: String, from table: String) throws {
        guard !ids.isEmpty else { return }
        ids.sort()
        let list = "[" + ids.map(String.init).joined(separator: ",") + "]"
        try database.run(
            """
            INSERT INTO \(index) (rowid, \(column))
            SELECT t.id, t.\(column) FROM json_each(?) AS j JOIN \(table) AS t ON t.id = j.value
            """, [.text(list)])
        ids = []
    }
}
