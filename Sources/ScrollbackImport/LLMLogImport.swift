import Foundation
import ScrollbackModel
import ScrollbackStorage

/// Reads an `llm` log database (Simon Willison's `llm` command-line tool), never writing it:
/// the legacy `conversations`/`responses` tables (before 0.32), the `threads`/`turns`/
/// `messages`/`parts` store (0.32 on), or both in one file (an old log upgraded by a newer
/// llm). One conversation per legacy conversation, and per family of threads: a thread and
/// the threads forked from it (`forked_from`, transitively) share their messages (one tree by
/// `parent_hash`) and are one conversation, keyed on the root thread, its branch shown the tip
/// of the thread used last. Prompts and responses become user and assistant messages, system
/// prompts system messages, with their models and times.
struct LLMLogImport {
    let path: String

    /// Opens the file read-only with `trusted_schema=OFF` and checks it before trusting it.
    func open() throws -> ForeignDatabase {
        let database: ForeignDatabase
        do {
            database = try ForeignDatabase(readingAt: path)
        } catch let error as StorageError {
            if case .notAScrollbackDatabase(_, let reason) = error {
                throw ImportError(path: path, problem: "not a SQLite file (\(reason))")
            }
            throw ImportError(path: path, problem: "cannot open: \(error)")
        }
        do {
            let check = try database.query("PRAGMA quick_check") { $0.text(0) }
            guard check == ["ok"] else {
                throw ImportError(path: path, problem: "the database is damaged (quick_check: \(check.first ?? "?"))")
            }
        } catch let error as ImportError {
            throw error
        } catch {
            throw ImportError(path: path, problem: "not a readable SQLite database (\(error))")
        }
        return database
    }

    /// Every conversation in the log.
    func conversations() throws -> (conversations: [ImportedConversation], skipped: [SkippedRecord]) {
        let database = try open()
        let tables = Set(try database.query("SELECT name FROM sqlite_schema WHERE type = 'table'") { $0.text(0) })
        let hasThreads = ["threads", "turns", "messages", "parts"].allSatisfy(tables.contains)
        let hasLegacy = tables.contains("responses")
        guard hasThreads || hasLegacy else {
            throw ImportError(path: path, problem: "a SQLite file, but not an llm log (no responses or threads table)")
        }
        var result: [ImportedConversation] = []
        var skipped: [SkippedRecord] = []
        var threadIDs: Set<String> = []
        do {
            let (legacy, legacySkips) = hasLegacy ? try legacyConversations(database) : ([], [])
            if hasThreads {
                var threads: [ImportedConversation]
                let threadSkips: [SkippedRecord]
                (threads, threadSkips) = try threadConversations(database)
                threadIDs = Set(threads.compactMap(\.sourceID))
                var legacyByID: [String: ImportedConversation] = [:]
                for conversation in legacy { if let id = conversation.sourceID { legacyByID[id] = conversation } }
                for index in threads.indices {
                    if let id = threads[index].sourceID, let earlier = legacyByID[id] { Self.keepLegacyDetails(of: earlier, in: &threads[index]) }
                }
                result += threads
                skipped += threadSkips
            }
            // A legacy conversation continued by a newer llm is read from its thread.
            result += legacy.filter { !threadIDs.contains($0.sourceID ?? "") }
            skipped += legacySkips
        } catch let error as ImportError {
            throw error
        } catch {
            throw ImportError(path: path, problem: "an llm log this scrollback cannot read (\(error))")
        }
        return (result, skipped)
    }

    /// The reference of an attachment whose bytes are in the log's `attachments` table: the
    /// import reads them from there when it stores them, one at a time.
    static let contentReference = "llm-attachment:"

    /// The attachments of each response (its prompt's: `prompt_attachments`, in their order):
    /// bytes llm kept are read when stored; a path or URL llm kept instead is a reference.
    private func attachments(_ database: ForeignDatabase) throws -> [String: [ImportedAttachment]] {
        guard try database.scalarInt("SELECT count(*) FROM sqlite_schema WHERE name IN ('attachments', 'prompt_attachments')") == 2 else {
            return [:]
        }
        let columns = Set(try database.query("SELECT name FROM pragma_table_info('attachments')") { $0.text(0) })
        func column(_ name: String) -> String { columns.contains(name) ? "a.\(name)" : "NULL" }
        let rows = try database.query(
            """
            SELECT p.response_id, a.id, \(column("type")), \(column("path")), \(column("url")), length(\(column("content")))
              FROM prompt_attachments AS p JOIN attachments AS a ON a.id = p.attachment_id
             ORDER BY p.response_id, p."order"
            """
        ) { ($0.text(0), $0.text(1), $0.optionalText(2), $0.optionalText(3), $0.optionalText(4), $0.optionalInt64(5)) }
        var found: [String: [ImportedAttachment]] = [:]
        for (response, id, type, path, url, length) in rows {
            let place = path ?? url
            let last = place.map { PathText.lastComponent(of: $0).prefix(200) }.map(String.init)
            let name = last.flatMap { $0.isEmpty ? nil : $0 } ?? "attachment-\((found[response]?.count ?? 0) + 1)"
            let mime = type.flatMap { $0.isEmpty || $0.count > 100 ? nil : $0 }
            if let length, length >= 0 {
                found[response, default: []].append(ImportedAttachment(name: name, mime: mime, size: length, reference: Self.contentReference + id))
            } else {
                found[response, default: []].append(
                    ImportedAttachment(name: name, mime: mime, reference: place, absence: "llm keeps only its \(path != nil ? "path" : "URL"), not the file"))
            }
        }
        return found
    }

    /// The bytes of the attachment `id` of the log, read whole (at most 64 MB; a larger one
    /// is kept missing, saying so).
    static func content(of id: String, path: String) throws -> (any AttachmentSource)? {
        let database = try ForeignDatabase(readingAt: path)
        guard let size = try database.query("SELECT length(content) FROM attachments WHERE id = ?", [.text(id)], { $0.optionalInt64(0) }).first ?? nil
        else { return nil }
        guard size <= Int64(InlineAttachments.largest) else {
            throw AttachmentUnreadable(reason: "larger than \(InlineAttachments.largest >> 20) MB in llm's database; not kept")
        }
        let bytes = try database.query("SELECT content FROM attachments WHERE id = ?", [.text(id)]) { $0.blob(0) }.first ?? []
        return InMemoryAttachmentSource(bytes)
    }

    private func legacyConversations(_ database: ForeignDatabase) throws -> ([ImportedConversation], [SkippedRecord]) {
        let columns = Set(try database.query("SELECT name FROM pragma_table_info('responses')") { $0.text(0) })
        guard ["id", "prompt", "response"].allSatisfy(columns.contains) else {
            throw ImportError(path: path, problem: "the responses table lacks id, prompt or response")
        }
        func column(_ name: String) -> String { columns.contains(name) ? name : "NULL" }
        var names: [String: String] = [:]
        if (try database.scalarInt("SELECT count(*) FROM sqlite_schema WHERE name = 'conversations'")) == 1 {
            let rows = try database.query("SELECT id, name FROM conversations") { ($0.text(0), $0.optionalText(1)) }
            for (id, name) in rows {
                if let name { names[id] = name }
            }
        }
        struct Response {
            var id: String
            var conversation: String
            var model: String?
            var prompt: String
            var system: String?
            var response: String
            var usage: MessageUsage
            var time: Timestamp?
            /// Why the time could not be read, when it could not.
            var badTime: String?
        }
        let responses = try database.query(
            """
            SELECT id, \(column("conversation_id")), \(column("model")), prompt, \(column("system")), response, \(column("datetime_utc")),
                   \(ImportUsage.integer(column("input_tokens"))), \(ImportUsage.integer(column("output_tokens"))),
                   \(ImportUsage.integer(column("duration_ms")))
            FROM responses ORDER BY \(column("datetime_utc")), rowid
            """
        ) { row in
            var time: Timestamp?
            var badTime: String?
            do throws(SkipReason) { time = try ImportTime.llm(row.optionalText(6)) } catch { badTime = error.text }
            return Response(
                id: row.text(0), conversation: row.optionalText(1) ?? "response:" + row.text(0), model: row.optionalText(2),
                prompt: row.text(3), system: row.optionalText(4), response: row.text(5),
                usage: ImportUsage.usage(input: row.optionalInt64(7), output: row.optionalInt64(8), duration: row.optionalInt64(9)),
                time: time, badTime: badTime)
        }
        let files = try attachments(database)
        var order: [String] = []
        var grouped: [String: [Response]] = [:]
        for response in responses {
            if grouped[response.conversation] == nil { order.append(response.conversation) }
            grouped[response.conversation, default: []].append(response)
        }
        var conversations: [ImportedConversation] = []
        var skipped: [SkippedRecord] = []
        for id in order {
            let turns = grouped[id] ?? []
            if let badTime = turns.lazy.compactMap(\.badTime).first {
                skipped.append(SkippedRecord(path: path, record: "conversation \(id)", reason: badTime))
                continue
            }
            var messages: [ImportedMessage] = []
            var lastSystem: String?
            for turn in turns {
                let time = turn.time ?? Timestamp(milliseconds: 0)
                // Node ids from the response's own id, so that a re-import finds each message again.
                if let system = turn.system, !ImportText.isBlank(system), system != lastSystem {
                    messages.append(ImportedMessage(role: .system, content: system, createdAt: time, nodeID: turn.id + ":system"))
                    lastSystem = system
                }
                let attached = files[turn.id] ?? []
                if !ImportText.isBlank(turn.prompt) || !attached.isEmpty {
                    var prompt = ImportedMessage(role: .user, content: turn.prompt, createdAt: time, nodeID: turn.id + ":prompt")
                    prompt.attachments = attached
                    messages.append(prompt)
                }
                if !ImportText.isBlank(turn.response) {
                    messages.append(
                        ImportedMessage(
                            role: .assistant, content: turn.response, createdAt: time, model: turn.model, nodeID: turn.id + ":response",
                            usage: turn.usage))
                }
            }
            guard let first = messages.first, let last = messages.last else {
                skipped.append(SkippedRecord(path: path, record: "conversation \(id)", reason: "no messages"))
                continue
            }
            conversations.append(
                ImportedConversation(
                    source: "llm", sourceID: id, title: names[id].flatMap { ImportText.isBlank($0) ? nil : $0 } ?? ImportText.title(from: messages),
                    model: turns.last?.model, createdAt: first.createdAt, updatedAt: last.createdAt, messages: messages))
        }
        return (conversations, skipped)
    }

    /// A legacy conversation continued by llm 0.32 or later becomes a thread (of the same
    /// id) whose first messages are copies of the legacy ones, under new ids (hashes) and
    /// without their models, counts or times taken. They keep the legacy messages' node ids
    /// and what the copies lost, so that a conversation imported from the log before it was
    /// continued is matched, not stored twice, and reads the same: as far as the two agree,
    /// message by message, on role and text.
    static func keepLegacyDetails(of legacy: ImportedConversation, in thread: inout ImportedConversation) {
        for (index, earlier) in zip(thread.messages.indices, legacy.messages) {
            let message = thread.messages[index]
            guard message.role == earlier.role, message.content == earlier.content, let node = earlier.nodeID else { return }
            thread.messages[index].nodeID = node
            if message.model == nil { thread.messages[index].model = earlier.model }
            if message.usage.isEmpty { thread.messages[index].usage = earlier.usage }
        }
    }

    /// A row of `threads`: a named pointer at a message of the shared tree.
    struct ThreadRow {
        var id: String
        var name: String?
        var tip: String?
        var startedText: String?
        /// The thread this one was forked from (llm's Python API, `LogStore.fork`).
        var forkedFrom: String?
    }

    /// The kept message nearest `tip`: itself, else its closest ancestor among `kept`.
    private func leaf(at tip: String?, in kept: Set<String>, messages: [String: (parent: String?, role: String)]) -> String? {
        var seen: Set<String> = []
        var current = tip
        while let hash = current, !seen.contains(hash) {
            if kept.contains(hash) { return hash }
            seen.insert(hash)
            current = messages[hash]?.parent ?? nil
        }
        return nil
    }

    private func threadConversations(_ database: ForeignDatabase) throws -> ([ImportedConversation], [SkippedRecord]) {
        var messages: [String: (parent: String?, role: String)] = [:]
        let rows = try database.query("SELECT hash, parent_hash, role FROM messages") { ($0.text(0), $0.optionalText(1), $0.text(2)) }
        for (hash, parent, role) in rows {
            messages[hash] = (parent, role)
        }
        var texts: [String: [String]] = [:]
        let parts = try database.query(
            "SELECT message_hash, type, tool_name, text, payload FROM parts ORDER BY message_hash, position"
        ) { ($0.text(0), $0.optionalText(1), $0.optionalText(2), $0.optionalText(3), $0.optionalText(4)) }
        for (hash, type, tool, text, payload) in parts {
            let piece: String
            switch type {
            case "text", nil: piece = text ?? ""
            default:
                // Tool calls, results and anything newer: kept, labelled, as text.
                piece = "[\(type ?? "part")\(tool.map { " \($0)" } ?? "")] " + (text ?? payload ?? "")
            }
            if !ImportText.isBlank(piece) { texts[hash, default: []].append(piece) }
        }
        // Times and models come from the turns: a turn's prompt and answer take its time.
        var times: [String: Timestamp] = [:]
        var models: [String: String] = [:]
        var usages: [String: MessageUsage] = [:]
        var threadModel: [String: String] = [:]
        // When each thread was last used: the time of its newest turn.
        var lastActive: [String: Timestamp] = [:]
        // A thread with a turn whose time cannot be read is skipped, with the reason.
        var badTimes: [String: String] = [:]
        let turnColumns = Set(try database.query("SELECT name FROM pragma_table_info('turns')") { $0.text(0) })
        func usageColumn(_ name: String) -> String { ImportUsage.integer(turnColumns.contains(name) ? name : "NULL") }
        let turns = try database.query(
            """
            SELECT thread_id, parent_message_hash, tip_message_hash, model, datetime_utc,
                   \(usageColumn("input_tokens")), \(usageColumn("output_tokens")), \(usageColumn("duration_ms"))
            FROM turns ORDER BY datetime_utc
            """
        ) {
            (
                $0.optionalText(0), $0.optionalText(1), $0.optionalText(2), $0.optionalText(3), $0.optionalText(4),
                ImportUsage.usage(input: $0.optionalInt64(5), output: $0.optionalInt64(6), duration: $0.optionalInt64(7))
            )
        }
        for (thread, parent, tip, model, timeText, usage) in turns {
            var time: Timestamp?
            do {
                time = try ImportTime.llm(timeText)
            } catch {
                if let thread, badTimes[thread] == nil { badTimes[thread] = error.text }
            }
            for hash in [parent, tip].compactMap({ $0 }) {
                if let time, times[hash] == nil { times[hash] = time }
            }
            if let tip, let model { models[tip] = model }
            // The counts and time of the answer that ends the turn.
            if let tip, !usage.isEmpty { usages[tip] = usage }
            if let thread, let model { threadModel[thread] = model }
            if let thread, let time { lastActive[thread] = max(time, lastActive[thread] ?? time) }
        }
        let threadColumns = Set(try database.query("SELECT name FROM pragma_table_info('threads')") { $0.text(0) })
        let forkedFrom = threadColumns.contains("forked_from") ? "forked_from" : "NULL"
        let threads = try database.query(
            "SELECT id, name, tip_message_hash, datetime_utc, \(forkedFrom) FROM threads ORDER BY datetime_utc, id"
        ) {
            ThreadRow(id: $0.text(0), name: $0.optionalText(1), tip: $0.optionalText(2), startedText: $0.optionalText(3), forkedFrom: $0.optionalText(4))
        }
        var skipped: [SkippedRecord] = []
        let families = ThreadFamilies(threads, path: path, skipped: &skipped)
        var conversations: [ImportedConversation] = []
        for family in families.all {
            var members: [(thread: ThreadRow, started: Timestamp?)] = []
            for thread in family {
                do throws(SkipReason) {
                    let started = try ImportTime.llm(thread.startedText)
                    if let badTime = badTimes[thread.id] { throw SkipReason(badTime) }
                    members.append((thread, started))
                } catch {
                    skipped.append(SkippedRecord(path: path, record: "thread \(thread.id)", reason: error.text))
                }
            }
            guard let root = family.first else { continue }
            var imported: [ImportedMessage] = []
            var added: Set<String> = []
            var brokenChain: String?
            var lastTime = members.first?.started ?? Timestamp(milliseconds: 0)
            for (thread, started) in members {
                // The thread's messages, first to last, up from its tip; a loop of parents or a
                // missing parent ends the walk (the message reached last then starts the chain).
                var chain: [String] = []
                var seen: Set<String> = []
                var current = thread.tip
                while let hash = current, let message = messages[hash], !seen.contains(hash) {
                    seen.insert(hash)
                    chain.append(hash)
                    current = message.parent
                }
                if chain.isEmpty {
                    // Nothing to walk: said, not dropped without a word.
                    let reason = thread.tip == nil ? "no messages (its tip names none)" : "its tip names a message that is not in the log"
                    skipped.append(SkippedRecord(path: path, record: "thread \(thread.id)", reason: reason))
                } else if current != nil, brokenChain == nil {
                    brokenChain = thread.id
                }
                chain.reverse()
                // The kept message before each one: its parent in the tree.
                var parent: String?
                if let started { lastTime = started }
                for hash in chain {
                    guard let message = messages[hash], let role = Role(rawValue: message.role) else { continue }
                    let content = (texts[hash] ?? []).joined(separator: "\n\n")
                    guard !ImportText.isBlank(content) else { continue }
                    defer { parent = hash }
                    let time = times[hash] ?? lastTime
                    lastTime = time
                    guard added.insert(hash).inserted else { continue }
                    // The message's hash is its node id: a re-import finds it by that.
                    imported.append(
                        ImportedMessage(
                            role: role, content: content, createdAt: time, model: role == .assistant ? models[hash] : nil, nodeID: hash,
                            // One thread is one chain, as it always was; a family is a tree.
                            parent: members.count > 1 ? parent.map { .node($0) } ?? .root : .previous,
                            usage: role == .assistant ? usages[hash] ?? MessageUsage() : MessageUsage()))
                }
            }
            if let brokenChain {
                skipped.append(
                    SkippedRecord(
                        path: path, record: "thread \(brokenChain)",
                        reason: "a message's parent is missing or on a loop of parents: what comes after it is imported as a first message"))
            }
            guard let first = imported.first, let last = imported.last else { continue }
            // The branch shown: the tip of the thread used last (its newest turn, else its start).
            var current: (thread: ThreadRow, time: Timestamp)?
            for (thread, started) in members {
                let time = lastActive[thread.id] ?? started ?? Timestamp(milliseconds: 0)
                if current == nil || time >= (current?.time ?? time) { current = (thread, time) }
            }
            let currentNode = members.count > 1 ? current.flatMap { leaf(at: $0.thread.tip, in: added, messages: messages) } : nil
            let starts = members.compactMap(\.started)
            let model = current.flatMap { threadModel[$0.thread.id] } ?? members.lazy.compactMap { threadModel[$0.thread.id] }.last
            conversations.append(
                ImportedConversation(
                    source: "llm", sourceID: root.id,
                    title: root.name.flatMap { ImportText.isBlank($0) ? nil : $0 } ?? ImportText.title(from: imported),
                    model: model, createdAt: min(starts.min() ?? first.createdAt, first.createdAt),
                    updatedAt: members.count > 1 ? imported.map(\.createdAt).max() ?? last.createdAt : last.createdAt,
                    messages: imported, currentNodeID: currentNode))
        }
        return (conversations, skipped)
    }
}

/// llm's threads grouped into families: a thread and the threads forked from it,
/// transitively. Each family is one conversation, keyed on its root thread.
struct ThreadFamilies {
    /// Each family's threads, its root first, the others in the order given; families in the
    /// order of their roots.
    var all: [[LLMLogImport.ThreadRow]] = []

    /// - Parameter threads: every thread, oldest first.
    init(_ threads: [LLMLogImport.ThreadRow], path: String, skipped: inout [SkippedRecord]) {
        var order: [String: Int] = [:]
        var unique: [LLMLogImport.ThreadRow] = []
        for thread in threads {
            guard order[thread.id] == nil else {
                skipped.append(SkippedRecord(path: path, record: "thread \(thread.id)", reason: "a second thread with the same id"))
                continue
            }
            order[thread.id] = unique.count
            unique.append(thread)
        }
        // The index of each thread's root, found by following forked_from.
        var rootOf: [Int?] = Array(repeating: nil, count: unique.count)
        for start in unique.indices where rootOf[start] == nil {
            var walk = [start]
            var onPath: [Int: Int] = [start: 0]
            var root: Int
            while true {
                let at = walk[walk.count - 1]
                if let known = rootOf[at] {
                    root = known
                    break
                }
                guard let parentID = unique[at].forkedFrom else {
                    root = at
                    break
                }
                guard let parent = order[parentID] else {
                    root = at
                    skipped.append(
                        SkippedRecord(
                            path: path, record: "thread \(unique[at].id)",
                            reason: "forked from thread \(parentID.prefix(80)), which is not in the log: imported as a conversation of its own"))
                    break
                }
                if let loopStart = onPath[parent] {
                    // Threads forked from each other in a loop: the oldest of them is the root.
                    root = walk[loopStart...].min() ?? parent
                    skipped.append(
                        SkippedRecord(
                            path: path, record: "thread \(unique[root].id)",
                            reason: "threads forked from each other in a loop: imported as one conversation under the oldest of them"))
                    break
                }
                onPath[parent] = walk.count
                walk.append(parent)
            }
            for at in walk { rootOf[at] = root }
        }
        var members: [Int: [Int]] = [:]
        for at in unique.indices {
            let root = rootOf[at] ?? at
            if at != root { members[root, default: []].append(at) }
        }
        for at in unique.indices where (rootOf[at] ?? at) == at {
            all.append([unique[at]] + (members[at] ?? []).map { unique[$0] })
        }
    }
}

extension ImportTime {
    /// llm's times: `2026-11-30T09:37:00.633463+00:00` or `2026-11-30 09:37:05.632958+00:00`.
    ///
    /// - Throws: `SkipReason` when the text is there but not a valid time in 1970–9999.
    static func llm(_ text: String?) throws(SkipReason) -> Timestamp? {
        guard var text else { return nil }
        if text.count > 10, text[text.index(text.startIndex, offsetBy: 10)] == " " {
            text.replaceSubrange(text.index(text.startIndex, offsetBy: 10)...text.index(text.startIndex, offsetBy: 10), with: "T")
        }
        guard let time = iso8601(text) else {
            throw SkipReason("the time '\(text.prefix(40))' is not a valid time between the years 1970 and 9999")
        }
        return time
    }
}

/// Token counts and durations read from a foreign database, which may hold anything there.
enum ImportUsage {
    /// The most tokens one message is taken to have: more is a damaged or made-up value.
    static let maximumTokens: Int64 = 1_000_000_000
    /// The longest a response is taken to have run (30 days), in milliseconds.
    static let maximumDurationMilliseconds: Int64 = 30 * 24 * 3_600_000

    /// SQL for `column` as an integer, NULL unless it holds one: a text or real value is not
    /// quietly read as 0 or truncated.
    static func integer(_ column: String) -> String {
        "CASE WHEN typeof(\(column)) = 'integer' THEN \(column) END"
    }

    /// The counts and duration, each nil when missing, negative or absurd.
    static func usage(input: Int64?, output: Int64?, duration: Int64?) -> MessageUsage {
        MessageUsage(
            inputTokens: checked(input, maximum: maximumTokens), outputTokens: checked(output, maximum: maximumTokens),
            durationMilliseconds: checked(duration, maximum: maximumDurationMilliseconds))
    }

    static func checked(_ value: Int64?, maximum: Int64) -> Int64? {
        guard let value, value >= 0, value <= maximum else { return nil }
        return value
    }
}
