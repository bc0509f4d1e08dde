import Foundation
import ScrollbackExport
import ScrollbackModel
import ScrollbackStorage
import ScrollbackViewModels
import TerminalText

/// `scrollback attachment list ID` and `scrollback attachment get HASH --out FILE`: a
/// conversation's files, and one file's bytes written out (streamed, checked against their
/// SHA-256 as they go; a file that fails half-way is not left behind).
struct AttachmentCommand {
    let context: CommandContext

    /// The shortest hash prefix `get` takes: 6 hex digits, as git's shortest useful ids.
    static let shortestPrefix = 6

    struct ListOutput: Encodable {
        let conversation: String
        let attachments: [AttachmentJSON]
    }

    func list() throws {
        let store = try context.openStore(forReading: true)
        let conversation = try store.conversations.conversation(matching: context.parsed.positional[0])
        let attachments = try store.attachments(conversation: conversation.id)
        let messages = try store.messages.messages(ids: Array(Set(attachments.map(\.messageID))))
        let publicIDs = Dictionary(messages.map { ($0.id, $0.publicID) }, uniquingKeysWith: { first, _ in first })
        let console = context.console
        if context.wantsJSON {
            let rows = attachments.map { attachment in
                AttachmentJSON(attachment, message: publicIDs[attachment.messageID] ?? "", number: attachment.messagePosition + 1)
            }
            console.line(try OutputFormat.json(ListOutput(conversation: conversation.publicID, attachments: rows), for: console))
            return
        }
        guard !attachments.isEmpty else {
            console.errorLine("\(OutputFormat.line(conversation.title)) has no attachments.")
            return
        }
        // The hash as `get` takes it: 12 digits, a dash where the bytes are not here.
        let numbers = attachments.map { "#" + NumberText.grouped($0.messagePosition + 1) }
        let numberWidth = max(numbers.map(\.count).max() ?? 3, 3)
        console.line("MSG".padding(toLength: numberWidth, withPad: " ", startingAt: 0) + "  SHA-256       ATTACHMENT")
        for (attachment, number) in zip(attachments, numbers) {
            // Made safe: a damaged database may hold anything in the hash's place.
            let hash = (attachment.sha256 ?? attachment.awaited).map { OutputFormat.line(String($0.prefix(12))) } ?? "–           "
            console.line(
                number.padding(toLength: numberWidth, withPad: " ", startingAt: 0) + "  " + hash + "  "
                    + AttachmentText.line(attachment, width: 10_000))
        }
        let missing = attachments.filter { !$0.isStored }
        // Advice only where it helps: a file the import did not find may be in the ZIP; one it
        // could not read, or one freed, says its own reason on its line.
        let fromExport = missing.filter { $0.absence == nil && $0.awaited == nil }
        if !fromExport.isEmpty {
            console.errorLine(
                "\(NumberText.grouped(fromExport.count)) of \(NumberText.grouped(attachments.count)) are not here: if you imported conversations.json alone, import the export's ZIP or folder to bring in the files it holds.")
        }
        let awaited = missing.filter { $0.awaited != nil }
        if !awaited.isEmpty {
            console.errorLine(
                "\(NumberText.grouped(awaited.count)) of \(NumberText.grouped(attachments.count)) are on another machine, not here yet: `scrollback attachment get HASH --out FILE` fetches one through sync, and the browser fetches them when it shows them.")
        }
    }

    func get() throws -> Int32 {
        let given = context.parsed.positional[0]
        let prefix = given.lowercased()
        guard prefix.count >= Self.shortestPrefix, prefix.count <= 64, prefix.allSatisfy({ $0.isASCII && $0.isHexDigit }) else {
            throw UsageError(
                message: "'\(OutputFormat.word(given))' is not an attachment's SHA-256: give at least \(Self.shortestPrefix) of its hex digits (`scrollback attachment list ID` shows them)",
                command: "attachment get")
        }
        guard let out = context.parsed.value(.out), !out.isEmpty else {
            throw UsageError(message: "'attachment get' needs --out FILE (or --out - for a pipe)", command: "attachment get")
        }
        var store = try context.openStore(forReading: true)
        var found = try store.attachmentFiles(prefix: prefix)
        if found.isEmpty, let awaited = try store.awaitedFiles(prefix: prefix).first {
            // Another machine holds it: fetched from the sync server first (and kept here).
            guard try store.awaitedFiles(prefix: prefix).count == 1 else {
                throw CommandFailure(message: "\(prefix) starts the SHA-256 of several attachments; give more of its digits")
            }
            if context.readOnly {
                throw CommandFailure(
                    message: "the bytes of \(OutputFormat.line(awaited.name)) are on another machine, and --readonly does not fetch them; run it without --readonly")
            }
            store = try context.openStore()
            try context.requireWritable(store)
            guard try store.localSyncState().isOn else {
                throw CommandFailure(
                    message: "the bytes of \(OutputFormat.line(awaited.name)) are on another machine, and sync is off here; run `scrollback sync init` to fetch them")
            }
            if context.console.errorIsTerminal { context.console.errorLine("Fetching \(OutputFormat.line(awaited.name)) from the sync server…") }
            // Ctrl-C and SIGTERM are looked for between chunks: nothing of the file is kept.
            let fetching = store
            try withInterruptsHeld { interrupted in
                try SyncCommand(context: context).fetch(fetching, sha256: awaited.sha256, size: awaited.size, name: OutputFormat.line(awaited.name)) {
                    if interrupted() { throw CommandInterrupted(message: "Interrupted: nothing of the file was fetched") }
                }
            }
            found = try store.attachmentFiles(prefix: prefix)
        }
        guard let file = found.first else {
            throw CommandFailure(message: "no stored attachment's SHA-256 starts with \(prefix); `scrollback attachment list ID` shows them")
        }
        guard found.count == 1 else {
            throw CommandFailure(message: "\(prefix) starts the SHA-256 of several attachments; give more of its digits")
        }
        let console = context.console
        if out == "-" {
            guard !console.outputIsTerminal else {
                throw UsageError(
                    message: "refusing to write a file's bytes to the terminal; give --out FILE, or pipe the output", command: "attachment get")
            }
            // Standard output opened onto the database (`1<> history.sqlite`) is refused as
            // --out naming it is.
            try ExportTarget.refuseDatabase(descriptor: STDOUT_FILENO, database: store.path, tool: "attachment get")
            // Bytes, not text: straight to the descriptor, every write checked. (A file that
            // turns out damaged has been partly written by then: the status says so.)
            console.flush()
            var pending: [UInt8] = []
            func send() throws {
                if let code = DescriptorWrite.all(pending, to: STDOUT_FILENO) {
                    throw CommandFailure(
                        message: "cannot write to standard output (\(String(cString: strerror(code)).lowercased())); the output is incomplete")
                }
                pending.removeAll(keepingCapacity: true)
            }
            try withInterruptsHeld { interrupted in
                try store.readAttachment(sha256: file.sha256) { piece in
                    if interrupted() { throw CommandInterrupted(message: "Interrupted: standard output holds part of the file") }
                    pending.append(contentsOf: piece)
                    if pending.count >= 1 << 16 { try send() }
                }
                try send()
            }
            return 0
        }
        let force = context.parsed.has(.force)
        try ExportTarget.checkFile(out, force: force, folderAdvice: "give the file's path in it", tool: "attachment get")
        try ExportTarget.refuseDatabase(out, database: store.path, tool: "attachment get")
        let target = try ExportFile(replacing: out)
        // Ctrl-C and SIGTERM are looked for between pieces: the half-written file goes.
        do {
            try withInterruptsHeld { interrupted in
                try store.readAttachment(sha256: file.sha256) { piece in
                    if interrupted() { throw CommandInterrupted(message: "Interrupted: \(out) was not written") }
                    try target.write(bytes: piece)
                }
                if interrupted() { throw CommandInterrupted(message: "Interrupted: \(out) was not written") }
                try target.commit(force: force)
            }
        } catch {
            target.discard()
            throw error
        }
        console.errorLine("Wrote \(AttachmentText.size(file.size)) to \(OutputFormat.line(out)).")
        return 0
    }
}
