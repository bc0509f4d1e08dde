import Foundation
import ScrollbackExport
import ScrollbackModel
import ScrollbackStorage

/// The export formats `scrollback import` reads.
public enum ImportFormat: String, CaseIterable, Sendable {
    case chatgpt, claude, llm, jsonl
    /// A Claude Code session file (`~/.claude/projects/<folder>/<session>.jsonl`).
    case claudeCode = "claude-code"
    /// A Codex CLI session file (`~/.codex/sessions/YYYY/MM/DD/rollout-….jsonl`).
    case codex
    /// A Gemini CLI session file (`~/.gemini/tmp/<project>/chats/session-….json` or `.jsonl`).
    case gemini

    /// A coding agent's session file, which grows while the agent runs: read from where the
    /// last import stopped.
    var isSession: Bool { self == .claudeCode || self == .codex || self == .gemini }
}

/// What a run of `import` did.
public struct ImportSummary: Sendable, Equatable {
    public var inserted = 0
    public var updated = 0
    public var unchanged = 0
    /// Left out: deleted before (`--restore` brings them back).
    public var deleted = 0
    public var skipped: [SkippedRecord] = []
    /// Attachments whose bytes the export holds but could not be read (a damaged entry,
    /// one over the unzip limit): their conversations are kept, they are missing.
    public var unreadable: [SkippedRecord] = []
    public var failed: [ImportError] = []
    public var interrupted = false
    /// Where exports were found beside what was named (a folder of export folders), one
    /// line each, for the summary.
    public var found: [String] = []
    /// Lines or blocks of a kind this version does not know, kept hidden as raw JSON.
    public var unknownParts = 0
    /// Session files read only from where the last import stopped, and those with nothing new.
    public var filesAppended = 0
    public var filesUnchanged = 0

    public init() {}

    /// Adds what another run did.
    mutating func add(_ other: ImportSummary) {
        inserted += other.inserted
        updated += other.updated
        unchanged += other.unchanged
        deleted += other.deleted
        unreadable += other.unreadable
        skipped += other.skipped
        failed += other.failed
        unknownParts += other.unknownParts
        filesAppended += other.filesAppended
        filesUnchanged += other.filesUnchanged
        interrupted = interrupted || other.interrupted
    }
}

/// Progress through one file, for the terminal.
public struct ImportProgress: Sendable {
    public var path: String
    public var records: Int
    public var bytesDone: Int
    public var bytesTotal: Int
}

/// Reads exports and stores their conversations: each file in one transaction (a file that
/// fails imports nothing), malformed records skipped with a reason, re-imports updating
/// instead of duplicating.
public struct Importer {
    let store: Store
    /// How far a ZIP entry may inflate.
    public var unzipLimit: UnzipLimit
    /// Brings back conversations deleted before, instead of leaving them out.
    public var restoring = false

    public init(store: Store, unzipLimit: UnzipLimit = UnzipLimit()) {
        self.store = store
        self.unzipLimit = unzipLimit
    }

    typealias Interrupted = ImportInterrupted

    /// Imports every file (a folder stands for the export files in it).
    ///
    /// - Parameter shouldStop: asked between records; true rolls the current file back and
    ///   ends the run.
    public func run(
        paths: [String], format: ImportFormat?, progress: ((ImportProgress) -> Void)? = nil,
        shouldStop: () -> Bool = { false }
    ) -> ImportSummary {
        var summary = ImportSummary()
        for path in paths {
            // Inflated ZIP entries live in unnamed files, freed when `files` goes.
            let files: [ExportFile]
            do {
                files = try Self.files(at: path, unzipLimit: unzipLimit, shouldStop: shouldStop)
            } catch is Interrupted {
                summary.interrupted = true
                return summary
            } catch let error as ImportError {
                summary.failed.append(error)
                continue
            } catch {
                summary.failed.append(ImportError(path: path, problem: "\(error)"))
                continue
            }
            if let folders = Self.exportFolders(in: path, for: files) {
                summary.found.append("\(path) holds no export itself; importing those in its folders \(folders.joined(separator: ", "))")
            }
            // A folder of session files: one load for all, each file in a savepoint of its own.
            if files.count > 1, files.allSatisfy(\.isSession) {
                let result = importSessions(files, format: format, shouldStop: shouldStop)
                summary.add(result)
                if result.interrupted { return summary }
                continue
            }
            for export in files {
                let (file, label) = (export.file, export.label)
                // Messages name what the user gave (archive!entry), not a temporary file.
                func relabel(_ error: ImportError) -> ImportError {
                    ImportError(path: label, problem: error.problem, location: error.location)
                }
                do {
                    let result = try importFile(
                        file, label: label, format: format, attachments: export.attachments, progress: progress, shouldStop: shouldStop)
                    summary.inserted += result.inserted
                    summary.updated += result.updated
                    summary.unchanged += result.unchanged
                    summary.deleted += result.deleted
                    summary.unknownParts += result.unknownParts
                    summary.filesAppended += result.filesAppended
                    summary.filesUnchanged += result.filesUnchanged
                    summary.skipped += result.skipped.map { SkippedRecord(path: label, record: $0.record, reason: $0.reason) }
                    summary.unreadable += result.unreadable
                } catch is Interrupted {
                    summary.interrupted = true
                    return summary
                } catch let error as ImportError {
                    summary.failed.append(relabel(error))
                } catch {
                    summary.failed.append(ImportError(path: label, problem: "\(error)"))
                }
            }
        }
        return summary
    }

    /// One file to import: where to read it, and the name to show.
    struct ExportFile {
        let file: String
        let label: String
        /// The unnamed file holding an inflated ZIP entry, kept open while it is read.
        var scratch: ScratchFile?
        /// Found as a coding agent's session file (in a folder of them).
        var isSession = false
        /// The files the export holds beside it (a ChatGPT ZIP's or folder's images).
        var attachments: ExportAttachments?
    }

    /// The export files a path stands for, each with the name to show: a file is itself; a
    /// folder holds `conversations.json` or the split `conversations-000.json`, `-001.json`,
    /// …; a ZIP archive holds them too, and they are inflated into unnamed temporary files.
    static func files(at path: String, unzipLimit: UnzipLimit = UnzipLimit(), shouldStop: () -> Bool = { false }) throws
        -> [ExportFile]
    {
        // Looked at with stat before anything opens it: opening a FIFO waits forever.
        let isDirectory = try kind(of: path) == .folder
        if !isDirectory {
            let head = FileHandle(forReadingAtPath: path).flatMap { try? $0.read(upToCount: 4) } ?? Data()
            guard ZipArchive.looksLikeZip(head) else { return [ExportFile(file: path, label: path)] }
            let archive = try ZipArchive(path: path)
            let wanted = archive.entries.filter { isExportName(($0.name as NSString).lastPathComponent) }
                .sorted { $0.name < $1.name }
            guard !wanted.isEmpty else {
                throw ImportError(path: path, problem: "no conversations.json in this archive")
            }
            let attachments = ExportAttachments(archive: archive, limit: unzipLimit)
            return try wanted.map { entry in
                let scratch = try ScratchFile()
                try archive.extract(entry, to: scratch, limit: unzipLimit, shouldStop: shouldStop)
                return ExportFile(
                    file: scratch.path, label: "\(path)!\(entry.name)", scratch: scratch, attachments: attachments.isEmpty ? nil : attachments)
            }
        }
        if let here = try exportFiles(inFolder: path) { return here }
        // Coding agents' session files (a Claude Code projects folder, one project's).
        let sessions = sessionFiles(under: path)
        if !sessions.isEmpty { return sessions.map { ExportFile(file: $0, label: $0, isSession: true) } }
        // A folder of export folders (`chatgpt/`, `claude/`): those one level down.
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).filter { !$0.hasPrefix(".") }.sorted()
        var found: [ExportFile] = []
        var searched: [String] = []
        for name in names {
            let folder = PathText.appending(to: path, name)
            guard (try? kind(of: folder)) == .folder else { continue }
            searched.append(name + "/")
            if let inside = try exportFiles(inFolder: folder) { found += inside }
        }
        guard !found.isEmpty else {
            let shown = searched.prefix(5).joined(separator: ", ") + (searched.count > 5 ? "…" : "")
            throw ImportError(
                path: path,
                problem: "no export in this folder (looked for conversations.json and conversations-000.json\(searched.isEmpty ? "" : ", here and in \(shown)"))")
        }
        return found
    }

    /// The `.jsonl` files under `path` (at most 4 folders down, hidden folders skipped), in
    /// path order: a Claude Code projects folder holds its sessions so.
    static func sessionFiles(under path: String, depth: Int = 4) -> [String] {
        guard depth >= 0 else { return [] }
        var found: [String] = []
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).filter { !$0.hasPrefix(".") }.sorted()
        for name in names {
            let child = PathText.appending(to: path, name)
            switch try? kind(of: child) {
            case .file where name.hasSuffix(".jsonl"): found.append(child)
            // Gemini CLI's sessions are whole JSON files in its `chats` folders.
            case .file where name.hasPrefix("session-") && name.hasSuffix(".json") && PathText.lastComponent(of: path) == "chats":
                found.append(child)
            // And the chats saved with /chat save, beside a project's `chats` folder.
            case .file where name.hasPrefix("checkpoint-") && name.hasSuffix(".json") && PathText.lastComponent(of: PathText.parent(of: path)) == "tmp":
                found.append(child)
            case .folder: found += sessionFiles(under: child, depth: depth - 1)
            default: break
            }
        }
        return found
    }

    /// The export files of a folder (`conversations.json`, or the split ones); nil when it has none.
    private static func exportFiles(inFolder path: String) throws -> [ExportFile]? {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
        let split = names.filter { $0.hasPrefix("conversations-") && $0.hasSuffix(".json") }.sorted()
        let chosen = !split.isEmpty ? split : names.contains("conversations.json") ? ["conversations.json"] : []
        guard !chosen.isEmpty else { return nil }
        // The files beside a ChatGPT export's conversations (names only, read now).
        let attachments = ExportAttachments(folder: path)
        return try chosen.map { name in
            let file = PathText.appending(to: path, name)
            guard try kind(of: file) == .file else { throw ImportError(path: file, problem: "a folder, not an export file") }
            return ExportFile(file: file, label: file, attachments: attachments.isEmpty ? nil : attachments)
        }
    }

    /// The folders (`chatgpt/`, `claude/`) whose exports `files` are, when `path` is a folder
    /// that holds none itself; nil otherwise.
    static func exportFolders(in path: String, for files: [ExportFile]) -> [String]? {
        guard (try? kind(of: path)) == .folder else { return nil }
        var folders: [String] = []
        for file in files {
            let folder = PathText.parent(of: file.file)
            guard folder != path, PathText.parent(of: folder) == path else { return nil }
            let name = PathText.lastComponent(of: folder) + "/"
            if !folders.contains(name) { folders.append(name) }
        }
        return folders.isEmpty ? nil : folders
    }

    enum FileKind { case file, folder }

    /// Whether `path` is a regular file or a folder (symbolic links followed), found with
    /// `stat` so that nothing is opened: a FIFO, socket or device is refused.
    static func kind(of path: String) throws -> FileKind {
        var status = stat()
        guard stat(path, &status) == 0 else {
            if errno == ENOENT || errno == ENOTDIR { throw ImportError(path: path, problem: "no such file or folder") }
            throw ImportError(path: path, problem: "cannot read it (\(String(cString: strerror(errno))))")
        }
        switch status.st_mode & S_IFMT {
        case S_IFREG: return .file
        case S_IFDIR: return .folder
        case S_IFIFO: throw ImportError(path: path, problem: "a FIFO (named pipe), not a file; save the export to a file and import that")
        case S_IFSOCK: throw ImportError(path: path, problem: "a socket, not a file; import an export file or folder")
        default: throw ImportError(path: path, problem: "a device, not a file; import an export file or folder")
        }
    }

    static func isExportName(_ name: String) -> Bool {
        name == "conversations.json" || (name.hasPrefix("conversations-") && name.hasSuffix(".json"))
    }

    /// Imports one file in one transaction; `label` is the name to show for it (an archive's
    /// entry is read from an unnamed file).
    private func importFile(
        _ path: String, label: String, format forced: ImportFormat?, attachments files: ExportAttachments? = nil,
        progress: ((ImportProgress) -> Void)?, shouldStop: () -> Bool
    ) throws -> ImportSummary {
        // A session file read before is what it was: its format is not found again (that
        // reads its first lines, and more, each time it is followed).
        let known = forced == nil ? try store.sourceFile(path: Self.canonical(path)).flatMap { ImportFormat(rawValue: $0.format) } : nil
        let format = try forced ?? known ?? Self.detect(path)
        if format.isSession { return try importSession(path, label: label, format: format, shouldStop: shouldStop) }
        var result = ImportSummary()
        // About one message per 300 bytes of export, for the storage layer's bulk policy.
        var status = stat()
        let size = stat(path, &status) == 0 ? Int(status.st_size) : 0
        // The foreign database is read whole before our transaction starts; it is small next
        // to a JSON export, and is never written.
        let llm = format == .llm ? try LLMLogImport(path: path).conversations() : nil
        func body() throws {
            func store(_ conversation: ImportedConversation) throws {
                // Attachments named by the export's files, their bytes found there.
                var conversation = conversation
                if let files {
                    for index in conversation.messages.indices where !conversation.messages[index].attachments.isEmpty {
                        conversation.messages[index].attachments = conversation.messages[index].attachments.map(files.named)
                    }
                }
                let find: AttachmentFinder? =
                    files.map { files in { files.source(for: $0) } }
                    ?? (format == .jsonl ? { $0.file.flatMap(FileSource.regularFile) } : nil)
                    ?? (format == .llm
                        ? { attachment in
                            guard let reference = attachment.reference, reference.hasPrefix(LLMLogImport.contentReference) else { return nil }
                            return try LLMLogImport.content(of: String(reference.dropFirst(LLMLogImport.contentReference.count)), path: path)
                        } : nil)
                switch try self.store.upsert(conversation, restoring: restoring, attachments: find) {
                case .inserted: result.inserted += 1
                case .updated: result.updated += 1
                case .unchanged: result.unchanged += 1
                case .deleted: result.deleted += 1
                }
                for problem in self.store.takeAttachmentProblems() {
                    result.unreadable.append(SkippedRecord(path: label, record: "“\(conversation.title.prefix(60))”", reason: problem))
                }
            }
            /// Takes a piece of a file: the first starts it, the last stores it (its hash
            /// checked); one out of order or damaged leaves the file out, said as a skip.
            func take(_ piece: IncomingPiece, into incoming: inout IncomingFile?) throws {
                do {
                    if piece.index == 0 {
                        if let unfinished = incoming {
                            try unfinished.abandon()
                            incoming = nil
                            throw SkipReason(
                                "a new file starts before the file \(unfinished.sha256.prefix(12)) ends (after \(unfinished.next) of its \(unfinished.count) pieces); that one is left out")
                        }
                        incoming = try self.store.incomingFile(sha256: piece.sha256, size: piece.size, count: piece.count)
                    }
                    guard let file = incoming, file.sha256 == piece.sha256 else {
                        throw SkipReason("a piece of the file \(piece.sha256.prefix(12)) without its first piece; it is left out")
                    }
                    try file.add(piece.bytes, index: piece.index)
                    if file.isComplete {
                        incoming = nil
                        try file.finish()
                    }
                } catch StorageError.conflict(let reason) {
                    try incoming?.abandon()
                    incoming = nil
                    throw SkipReason("the file \(piece.sha256.prefix(12)) is left out: \(reason)")
                }
            }
            /// Stores one record; a record whose ids collide with another conversation's is
            /// skipped (nothing of it is kept), not the whole file.
            func storeRecord(_ conversation: ImportedConversation) throws {
                do {
                    try store(conversation)
                } catch StorageError.sqlite(let error) where error.code == 19 {
                    let ids = conversation.messages.compactMap(\.publicID)
                    if Set(ids).count < ids.count { throw SkipReason("two of its messages have the same id") }
                    throw SkipReason("its id or a message id belongs to another conversation already stored")
                }
            }
            switch format {
            case .chatgpt, .claude, .jsonl:
                let reader = RecordReader { deliver in try Self.readRecords(path: path, format: format, deliver) }
                defer { reader.cancel() }
                // The file whose pieces are coming (scrollback's JSON Lines), if any.
                var incoming: IncomingFile?
                while let record = try reader.next() {
                    if shouldStop() { throw Interrupted() }
                    if let piece = record.piece {
                        do {
                            try take(piece.get(), into: &incoming)
                        } catch let skip as SkipReason {
                            result.skipped.append(SkippedRecord(path: path, record: record.name, reason: skip.text))
                        }
                        progress?(ImportProgress(path: label, records: record.records, bytesDone: record.bytesDone, bytesTotal: record.bytesTotal))
                        continue
                    }
                    if let unfinished = incoming {
                        // A conversation came before the file's last piece: the file is cut short.
                        try unfinished.abandon()
                        incoming = nil
                        result.skipped.append(
                            SkippedRecord(
                                path: path, record: record.name,
                                reason: "the file \(unfinished.sha256.prefix(12)) before it ends after \(unfinished.next) of its \(unfinished.count) pieces; it is left out"))
                    }
                    do {
                        let conversation = try record.conversation.get()
                        try storeRecord(conversation)
                        result.unknownParts += conversation.unknownParts
                        result.skipped += conversation.leftOut.map { SkippedRecord(path: path, record: record.name, reason: $0) }
                    } catch let skip as SkipReason {
                        result.skipped.append(SkippedRecord(path: path, record: record.name, reason: skip.text))
                    }
                    progress?(ImportProgress(path: label, records: record.records, bytesDone: record.bytesDone, bytesTotal: record.bytesTotal))
                }
                if let unfinished = incoming {
                    try unfinished.abandon()
                    result.skipped.append(
                        SkippedRecord(
                            path: path, record: "the end",
                            reason: "the file \(unfinished.sha256.prefix(12)) ends after \(unfinished.next) of its \(unfinished.count) pieces; it is left out"))
                }
            case .claudeCode, .codex, .gemini:
                return
            case .llm:
                for conversation in llm?.conversations ?? [] {
                    if shouldStop() { throw Interrupted() }
                    try store(conversation)
                }
                result.skipped += llm?.skipped ?? []
            }
        }
        try store.inserting(about: size / 300, body)
        return result
    }

    /// `: messages[1].inputTokens is not of its kind (a whole number in range, …)`: which field
    /// of a JSON Lines record did not decode, by its path; its value is never repeated.
    static func `where`(_ error: DecodingError) -> String {
        let context: DecodingError.Context
        let problem: String
        switch error {
        case .typeMismatch(_, let found): (context, problem) = (found, "is not of its kind (text, a whole number in range, true or false)")
        case .valueNotFound(_, let found): (context, problem) = (found, "is missing")
        case .keyNotFound(let key, let found): (context, problem) = (Self.context(found, adding: key), "is missing")
        case .dataCorrupted(let found): (context, problem) = (found, "is not of its kind (a whole number in range, …)")
        @unknown default: return ""
        }
        let path = context.codingPath.map { key in key.intValue.map { "[\($0)]" } ?? ".\(key.stringValue)" }.joined()
        let field = path.hasPrefix(".") ? String(path.dropFirst()) : path
        return field.isEmpty ? "" : ": \(field.prefix(80)) \(problem)"
    }

    private static func context(_ context: DecodingError.Context, adding key: any CodingKey) -> DecodingError.Context {
        DecodingError.Context(codingPath: context.codingPath + [key], debugDescription: context.debugDescription)
    }

    /// Reads and parses the records of a ChatGPT, Claude or JSON Lines export, in order,
    /// until `deliver` returns false (on the reading thread of a `RecordReader`).
    static func readRecords(path: String, format: ImportFormat, _ deliver: (ReadRecord) -> Bool) throws {
        switch format {
        case .chatgpt, .claude:
            if format == .claude, let single = try ClaudeExport.singleConversation(path: path) {
                let conversation = Result<ImportedConversation, SkipReason> { () throws(SkipReason) in try ClaudeExport.conversation(from: single) }
                _ = deliver(ReadRecord(conversation: conversation, name: "record 1", records: 1, bytesDone: 1, bytesTotal: 1))
                return
            }
            var reader = try JSONArrayReader(path: path)
            while true {
                let conversation: Result<ImportedConversation, SkipReason>
                do {
                    if format == .chatgpt {
                        // Read in place: a long conversation is never parsed whole.
                        guard let range = try reader.nextRange() else { return }
                        conversation = .success(
                            try reader.withScanner { scanner throws(SkipReason) in try ChatGPTExport.conversation(in: range, of: scanner) })
                    } else {
                        guard let value = try reader.next() else { return }
                        conversation = .success(try ClaudeExport.conversation(from: value))
                    }
                } catch let skip as SkipReason {
                    conversation = .failure(skip)
                }
                let record = ReadRecord(
                    conversation: conversation, name: "record \(reader.count)", records: reader.count, bytesDone: reader.position,
                    bytesTotal: reader.size)
                guard deliver(record) else { return }
            }
        case .jsonl:
            let folder = PathText.parent(of: path).isEmpty ? "." : PathText.parent(of: path)
            try JSONLines.forEachLine(path: path) { line, number, done, total in
                if let line, line.starts(with: FilePiece.linePrefix.utf8) {
                    let piece = Result<IncomingPiece, SkipReason> { () throws(SkipReason) in try IncomingPiece(line: line) }
                    let record = ReadRecord(
                        conversation: .failure(SkipReason("")), name: "line \(number)", records: number, bytesDone: done, bytesTotal: total,
                        piece: piece)
                    guard deliver(record) else { throw JSONLines.Stop() }
                    return
                }
                let conversation: Result<ImportedConversation, SkipReason>
                do {
                    guard let line else { throw SkipReason("not UTF-8 text") }
                    let record: ScrollbackRecord
                    do {
                        record = try JSONDecoder().decode(ScrollbackRecord.self, from: line)
                    } catch let error as DecodingError {
                        throw SkipReason("not a scrollback record" + Self.where(error))
                    } catch {
                        throw SkipReason("not a scrollback record")
                    }
                    conversation = .success(try record.imported(folder: folder).get())
                } catch let skip as SkipReason {
                    conversation = .failure(skip)
                }
                let record = ReadRecord(conversation: conversation, name: "line \(number)", records: number, bytesDone: done, bytesTotal: total)
                guard deliver(record) else { throw JSONLines.Stop() }
            }
        case .llm, .claudeCode, .codex, .gemini:
            return
        }
    }

    /// The format, from the content: a SQLite file is an llm log; a JSON array is ChatGPT's
    /// or Claude's by the keys of its first record; lines of scrollback records are JSON Lines.
    ///
    /// - Parameter longestLine: the longest first line read to see whether it is JSON Lines.
    static func detect(_ path: String, longestLine: Int = 256 << 20) throws -> ImportFormat {
        guard let handle = FileHandle(forReadingAtPath: path) else { throw ImportError(path: path, problem: "cannot read the file") }
        defer { try? handle.close() }
        let head = (try? handle.read(upToCount: 64 * 1024)) ?? Data()
        if head.isEmpty { throw ImportError(path: path, problem: "the file is empty") }
        if head.starts(with: Array("SQLite format 3\u{0}".utf8)) { return .llm }
        if JSONArrayReader.holdsArray(path: path, head: head) {
            // The first record that is an object says which; broken ones before it are
            // skipped later, with their reasons.
            // Only the keys are read, in place: the first record may be huge.
            var reader = try JSONArrayReader(path: path)
            var first: Set<String>?
            while first == nil, reader.count < 1_000, let range = try reader.nextRange() {
                first = reader.withScanner { scanner in
                    var keys: Set<String> = []
                    guard scanner.isObject(range), (try? scanner.forEachMember(of: range) { key, _ in keys.insert(key) }) != nil else {
                        return nil
                    }
                    return keys
                }
            }
            guard let first else { throw ImportError(path: path, problem: "no conversations in the file") }
            if !first.isDisjoint(with: ["mapping", "current_node", "conversation_id"]) { return .chatgpt }
            if !first.isDisjoint(with: ["chat_messages", "uuid"]) { return .claude }
            // A Gemini CLI chat saved with /chat save: the model's history, {role, parts}.
            if first.isSuperset(of: ["role", "parts"]), PathText.lastComponent(of: path).hasPrefix("checkpoint-") { return .gemini }
            throw ImportError(path: path, problem: "a JSON array, but not of ChatGPT or Claude conversations")
        }
        // JSON Lines when one of the first lines is a scrollback record (a bad first line
        // is skipped later, with its reason, not taken for another format).
        var isJSONLines = false
        // Only the first lines are looked at, and only up to 256 MiB each: a file without line
        // breaks is not read whole (gigabytes) to find it is not JSON Lines.
        do {
            try JSONLines.forEachLine(path: path, longestLine: longestLine) { line, number, _, _ in
                if let line, line.starts(with: FilePiece.linePrefix.utf8) {
                    // A piece of a file the conversations after it use.
                    isJSONLines = true
                } else if let line, line.first == UInt8(ascii: "{"),
                    let object = try? JSONSerialization.jsonObject(with: line) as? [String: Any], object["format"] as? String == "scrollback"
                {
                    isJSONLines = true
                }
                if isJSONLines || number >= 100 { throw JSONLines.Stop() }
            }
        } catch is JSONLines.TooLong {
            throw ImportError(
                path: path,
                problem: "not a chat export, or a JSON Lines backup whose first line is over \(longestLine >> 20) MiB (then import it with --format jsonl)")
        }
        if isJSONLines { return .jsonl }
        if let session = try sessionFormat(path) { return session }
        if try ClaudeExport.isSingleConversation(path: path) { return .claude }
        guard String(data: head.prefix(4_000), encoding: .utf8) != nil || head.count > 4_000 else {
            throw ImportError(path: path, problem: "not UTF-8 text, nor a SQLite file")
        }
        throw ImportError(
            path: path,
            problem: "not a chat export (expected ChatGPT or Claude conversations.json, an llm logs.db or scrollback JSON Lines)")
    }
}

extension Importer {
    /// The coding agent whose session file `path` is, from its first lines; nil for none.
    static func sessionFormat(_ path: String) throws -> ImportFormat? {
        if path.hasSuffix(".json") {
            // A Gemini CLI session object: {sessionId, projectHash, messages}.
            guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
            defer { try? handle.close() }
            guard let data = try handle.read(upToCount: 256 << 20), let root = try? JSONSerialization.jsonObject(with: data) else { return nil }
            // A chat saved with /chat save: the model's history, a list (or {history}).
            if PathText.lastComponent(of: path).hasPrefix("checkpoint-"), GeminiSession.checkpointHistory(root) != nil { return .gemini }
            guard let object = root as? [String: Any] else { return nil }
            return object["sessionId"] is String && object["messages"] is [Any] ? .gemini : nil
        }
        var found: ImportFormat?
        var looked = 0
        do {
            try JSONLines.forEachLine(path: path, longestLine: 64 << 20) { line, _, _, _ in
                looked += 1
                if let line, let object = try? JSONSerialization.jsonObject(with: line) as? [String: Any] {
                    let type = object["type"] as? String
                    if object["sessionId"] is String && object["projectHash"] is String {
                        found = .gemini
                    } else if object["sessionId"] is String && (object["uuid"] is String || type == "user" || type == "assistant") {
                        found = .claudeCode
                    } else if type == "summary" && object["leafUuid"] is String {
                        found = .claudeCode
                    } else if object["payload"] is [String: Any],
                        ["session_meta", "response_item", "turn_context", "event_msg", "compacted"].contains(type ?? "")
                    {
                        found = .codex
                    } else if PathText.lastComponent(of: path).hasPrefix("rollout-"), object["instructions"] != nil || object["record_type"] != nil {
                        found = .codex
                    }
                }
                if found != nil || looked >= 20 { throw JSONLines.Stop() }
            }
        } catch is JSONLines.TooLong {
            return nil
        }
        return found
    }

    /// Imports many session files in one load (the index built in batches, the messages
    /// counted once: a folder of 2,000 sessions, one transaction per file, took four times
    /// the floor), each file in a savepoint: one that fails leaves nothing of it, and the
    /// load then ends with the index rebuilt whole. Ctrl-C keeps the files done.
    private func importSessions(_ files: [ExportFile], format forced: ImportFormat?, shouldStop: () -> Bool) -> ImportSummary {
        var result = ImportSummary()
        // Planned first (a stat and a look at what was read before), then read on a second
        // thread a file or two ahead while this one stores: parsing and storing each take a
        // core.
        var plans: [Result<SessionPlan?, any Error>] = []
        for export in files {
            plans.append(Result {
                let known = try forced ?? store.sourceFile(path: Self.canonical(export.file)).flatMap { ImportFormat(rawValue: $0.format) }
                let format = try known ?? Self.detect(export.file)
                guard format.isSession else {
                    throw ImportError(path: export.label, problem: "not a coding agent's session (\(format.rawValue)); import it by itself")
                }
                return try planSession(export.file, label: export.label, format: format)
            })
        }
        let bytes = plans.reduce(0) { $0 + ((try? $1.get())??.unread ?? 0) }
        do {
            // Indexed a few thousand messages at a time: sessions hold long tool outputs, and
            // a batch's text is tokenized in one statement.
            try store.inserting(about: bytes / 300, indexingBatch: 5_000, cacheKiB: 8_192) {
                let ahead = SessionPrefetch(plans.compactMap { try? $0.get() ?? nil })
                defer { ahead.cancel() }
                var readIndex = 0
                for (export, plan) in zip(files, plans) {
                    if shouldStop() {
                        result.interrupted = true
                        return
                    }
                    do {
                        guard let plan = try plan.get() else {
                            result.filesUnchanged += 1
                            continue
                        }
                        let read = try ahead.take(readIndex).get()
                        readIndex += 1
                        result.add(try store.transaction { try storeSession(plan, read, shouldStop: shouldStop) })
                    } catch is Interrupted {
                        result.interrupted = true
                        return
                    } catch {
                        // The whole load was undone by SQLite (a full disk): it ends here.
                        if store.transactionLost { throw error }
                        try store.abandonBatchedIndexing()
                        result.failed.append(
                            (error as? ImportError).map { ImportError(path: export.label, problem: $0.problem, location: $0.location) }
                                ?? ImportError(path: export.label, problem: "\(error)"))
                    }
                }
            }
        } catch {
            // The load itself failed (a full disk): nothing of these files is kept.
            result = ImportSummary()
            result.failed.append(ImportError(path: PathText.parent(of: files[0].file), problem: "\(error)"))
        }
        return result
    }

    /// Imports a coding agent's session file: from where the last import stopped when the
    /// file only grew since (the same device and inode, not shorter, the 4 KiB before that
    /// point unchanged), else whole; nothing at all when it did not change. The conversations
    /// and how far the file was read are stored in one transaction.
    private func importSession(_ path: String, label: String, format: ImportFormat, shouldStop: () -> Bool) throws -> ImportSummary {
        guard let plan = try planSession(path, label: label, format: format) else {
            var unchanged = ImportSummary()
            unchanged.filesUnchanged = 1
            return unchanged
        }
        if shouldStop() { throw Interrupted() }
        let read = try Self.readSession(plan)
        // What is read, not the file: a line appended to a big session is a small write.
        return try store.inserting(about: plan.unread / 300) { try storeSession(plan, read, shouldStop: shouldStop) }
    }

    /// What reading a session file needs to know: where to start; nil when the file did not
    /// change since it was read (it is not read at all then).
    struct SessionPlan: Sendable {
        var path: String
        var label: String
        var format: ImportFormat
        var from: Int64
        var print: SessionFile.Fingerprint
        var key: String
        /// The bytes it will read.
        var unread: Int { Int(clamping: max(print.size - from, 0)) }
    }

    /// A session file's lines, read (on any thread).
    struct SessionRead: Sendable {
        var conversations: [ImportedConversation]
        var readTo: Int
        var skipped: [String]
        var window: [UInt8]
    }

    private func planSession(_ path: String, label: String, format: ImportFormat) throws -> SessionPlan? {
        let print = try SessionFile.fingerprint(path)
        let key = Self.canonical(path)
        var from: Int64 = 0
        // A Gemini CLI `.json` session is written again whole: never read from an offset.
        let appendable = !(format == .gemini && path.hasSuffix(".json"))
        if let known = try store.sourceFile(path: key), known.format == format.rawValue, known.device == print.device,
            known.inode == print.inode, print.size >= known.readTo
        {
            if print.size == known.size && print.modifiedNanoseconds == known.modifiedNanoseconds { return nil }
            if appendable, try SessionFile.windowHash(path, before: Int(known.readTo)) == known.window { from = known.readTo }
        }
        return SessionPlan(path: path, label: label, format: format, from: from, print: print, key: key)
    }

    static func readSession(_ plan: SessionPlan) throws -> SessionRead {
        let (path, from) = (plan.path, Int(plan.from))
        let stem = (PathText.lastComponent(of: path) as NSString).deletingPathExtension
        let read =
            switch plan.format {
            case .codex: try CodexSession.conversations(path: path, from: from, appended: from > 0, fallbackID: stem)
            case .gemini: try GeminiSession.conversations(path: path, from: from, appended: from > 0, fallbackID: stem)
            default: try ClaudeCodeSession.conversations(path: path, from: from, appended: from > 0, fallbackID: stem)
            }
        return SessionRead(
            conversations: read.conversations, readTo: read.readTo, skipped: read.skipped,
            window: try SessionFile.windowHash(path, before: read.readTo))
    }

    private func storeSession(_ plan: SessionPlan, _ read: SessionRead, shouldStop: () -> Bool) throws -> ImportSummary {
        var result = ImportSummary()
        for conversation in read.conversations {
            if shouldStop() { throw Interrupted() }
            switch try store.upsert(conversation, restoring: restoring) {
            case .inserted: result.inserted += 1
            case .updated: result.updated += 1
            case .unchanged: result.unchanged += 1
            case .deleted: result.deleted += 1
            }
            result.unknownParts += conversation.unknownParts
        }
        try store.recordSourceFile(
            SourceFileState(
                path: plan.key, format: plan.format.rawValue, readTo: Int64(read.readTo), device: plan.print.device,
                inode: plan.print.inode, size: plan.print.size, modifiedNanoseconds: plan.print.modifiedNanoseconds, window: read.window))
        result.skipped += read.skipped.map { SkippedRecord(path: plan.label, record: "line", reason: $0) }
        if plan.from > 0 { result.filesAppended = 1 }
        return result
    }

    /// The path with symbolic links and `..` resolved: one file is one key however named.
    public static func canonical(_ path: String) -> String {
        URL(fileURLWithPath: path).standardizedFileURL.resolvingSymlinksInPath().path
    }

    /// Reads the Claude Code sessions under `folder`, as `import` does, without storing them:
    /// for the benchmark's floor.
    public static func readClaudeCodeSessions(folder: String, _ body: (ImportedConversation) throws -> Void) throws {
        for file in sessionFiles(under: folder) {
            let stem = (PathText.lastComponent(of: file) as NSString).deletingPathExtension
            for conversation in try ClaudeCodeSession.conversations(path: file, from: 0, appended: false, fallbackID: stem).conversations {
                try body(conversation)
            }
        }
    }

    /// The bytes before where a session file was read that a later import checks.
    public static let sessionWindow = SessionFile.window

    /// Reads the conversations of a ChatGPT export, as `import` does, without storing them:
    /// for the benchmark's floor (the same parsing, into a table without any index).
    public static func readChatGPTExport(path: String, _ body: (ImportedConversation) throws -> Void) throws {
        var reader = try JSONArrayReader(path: path)
        while let range = try reader.nextRange() {
            let conversation = try? reader.withScanner { scanner throws(SkipReason) in
                try ChatGPTExport.conversation(in: range, of: scanner)
            }
            if let conversation { try body(conversation) }
        }
    }
}
