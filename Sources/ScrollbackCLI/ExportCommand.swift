import Foundation
import ScrollbackImport
import ScrollbackModel
import ScrollbackStorage
import TerminalText

/// `scrollback export [ID...]`: to standard output, to one file (`--out`), or to a folder
/// with one file per conversation (`--out-dir`).
struct ExportCommand {
    let context: CommandContext

    func run() throws {
        let format = try context.choice(.format, as: ExportFormat.self) ?? .md
        // `--out -` is standard output, as for most tools.
        let out = context.parsed.value(.out).flatMap { $0 == "-" ? nil : $0 }
        let outDir = context.parsed.value(.outDir)
        let force = context.parsed.has(.force)
        if out != nil && outDir != nil {
            throw UsageError(message: "--out (one file) and --out-dir (a folder) cannot be used together", command: "export")
        }
        if out == "" || outDir == "" {
            throw UsageError(message: "\(out == "" ? "--out" : "--out-dir") needs a path", command: "export")
        }
        // The target is checked before the database is even opened: a refusal costs nothing.
        if let out { try ExportTarget.checkFile(out, force: force) }
        if let outDir { try ExportTarget.checkFolder(outDir) }

        let filter = try context.filter()
        let store = try context.openStore(forReading: true)
        if let out { try ExportTarget.refuseDatabase(out, database: store.path) }
        let exporter = Exporter(store: store, showingHidden: context.parsed.has(.hidden))
        // Every id is checked before anything is written; a filter narrows them too.
        let chosen = try context.conversationsNamed(in: store)
        let each: ((ConversationDTO) throws -> Void) throws -> Void = { body in
            if context.parsed.positional.isEmpty {
                try exporter.forEachConversation(filter: filter, body)
            } else {
                try chosen.filter(filter.admits).forEach(body)
            }
        }
        if let outDir {
            try exportToFolder(outDir, format: format, force: force, exporter: exporter, each: each)
            return
        }
        let console = context.console
        let file = try out.map { try ExportFile(replacing: $0) }
        let emit: (String) throws -> Void = { piece in
            if let file {
                try file.write(piece)
            } else {
                console.write(OutputFormat.forOutput(piece, json: format != .md, console: console))
                try console.checkOutput()
            }
        }
        let count: Int
        do {
            count = try Self.write(format: format, exporter: exporter, each: each, emit: emit)
            try file?.commit(force: force)
        } catch {
            file?.discard()
            throw error
        }
        // What was written, beside it: a file always; standard output only for a person.
        let what = "\(NumberText.grouped(count)) conversation\(count == 1 ? "" : "s") as \(format.name)"
        if count == 0 {
            // Nothing at all is said plainly, wherever the output went.
            let why = context.parsed.positional.isEmpty ? "no conversation passes the filter" : "none of those named passes the filter"
            console.errorLine("Exported 0 conversations: \(filter.isEmpty ? "the database is empty" : why)\(out.map { "; \($0) holds none" } ?? "").")
        } else if let out {
            console.errorLine("Exported \(what) to \(out).")
        } else if console.errorIsTerminal && !console.outputIsTerminal {
            console.errorLine("Exported \(what) to standard output.")
        }
    }

    /// The conversations `each` gives, one after another in `format` (Markdown parts
    /// between rules, a JSON document, JSON Lines), through `emit`; how many.
    static func write(
        format: ExportFormat, exporter: Exporter, each: ((ConversationDTO) throws -> Void) throws -> Void,
        emit: @escaping (String) throws -> Void
    ) throws -> Int {
        var count = 0
        if format == .json { try emit("{\n\"conversations\" : [\n") }
        try each { conversation in
            let rendered = try exporter.render(conversation, as: format)
            switch format {
            case .md: try emit((count == 0 ? "" : "\n---\n\n") + rendered)
            case .json: try emit((count == 0 ? "" : ",\n") + rendered)
            case .jsonl: try emit(rendered + "\n")
            }
            count += 1
        }
        if format == .json { try emit("\n]\n}\n") }
        return count
    }

    /// The browser's `x`: the conversations `ids` to a new file at `path` (`~/` is the home
    /// folder; the extension says the format), written as `--out` writes, never over a file
    /// that exists; `showingHidden` (the reader's `z`) as `--hidden`. Returns what the footer
    /// says.
    static func exportFromBrowser(
        ids: [Int64], path given: String, showingHidden: Bool = false, store: Store, environment: [String: String]
    ) -> String {
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        let path = given == "~" ? home : given.hasPrefix("~/") ? home + given.dropFirst() : given
        let lowered = path.lowercased()
        let format: ExportFormat = lowered.hasSuffix(".jsonl") ? .jsonl : lowered.hasSuffix(".json") ? .json : .md
        do {
            // The browser's own words: it has no --force or --out-dir.
            var status = stat()
            if lstat(path, &status) == 0 {
                let folder = status.st_mode & S_IFMT == S_IFDIR
                return UntrustedText.sanitized(
                    "Not exported: \(path) \(folder ? "is a folder; give a file name in it" : "exists; choose another name (nothing is replaced from here)")")
            }
            try ExportTarget.checkFile(path, force: false)
            try ExportTarget.refuseDatabase(path, database: store.path)
            let conversations = try store.conversations.conversations(ids: ids)
            guard !conversations.isEmpty else {
                return "Not exported: \(ids.count == 1 ? "that conversation was" : "they were") deleted meanwhile, by another process; no file written"
            }
            let file = try ExportFile(replacing: path)
            let count: Int
            do {
                count = try write(
                    format: format, exporter: Exporter(store: store, showingHidden: showingHidden), each: { try conversations.forEach($0) },
                    emit: file.write)
                try file.commit(force: false)
            } catch {
                file.discard()
                throw error
            }
            // JSON and JSONL carry every message with its kind whatever is shown.
            let hidden = showingHidden && format == .md ? ", hidden messages included (z)" : ""
            return UntrustedText.sanitized("Exported \(NumberText.grouped(count)) conversation\(count == 1 ? "" : "s") as \(format.name) to \(path)\(hidden)")
        } catch {
            return "Not exported: " + UntrustedText.sanitized((error as? any UserFacingError)?.userLine ?? String(describing: error))
        }
    }

    /// One file per conversation; names that exist are refused (before anything is written)
    /// unless `--force`.
    private func exportToFolder(
        _ folder: String, format: ExportFormat, force: Bool, exporter: Exporter,
        each: ((ConversationDTO) throws -> Void) throws -> Void
    ) throws {
        try ExportTarget.makeFolder(folder)
        if !force {
            var existing: [String] = []
            try each { conversation in
                let name = Exporter.fileName(for: conversation, format: format)
                var status = stat()
                if lstat(PathText.appending(to: folder, name), &status) == 0 { existing.append(name) }
            }
            if let example = existing.first {
                throw CommandFailure(
                    message:
                        "\(folder) already holds \(existing.count) of these files (\(example)\(existing.count > 1 ? ", …" : "")); add --force to replace them"
                )
            }
        }
        var count = 0
        try each { conversation in
            let path = PathText.appending(to: folder, Exporter.fileName(for: conversation, format: format))
            try ExportTarget.checkFile(path, force: true)
            let file = try ExportFile(replacing: path)
            do {
                try file.write(try exporter.render(conversation, as: format) + "\n")
                try file.commit(force: true)
            } catch {
                file.discard()
                // What was written stays, each file whole: say how much, before the error.
                if count > 0 {
                    context.console.errorLine(
                        "scrollback: \(NumberText.grouped(count)) conversation\(count == 1 ? " was" : "s were") exported to \(OutputFormat.line(folder)) before this one failed, each file whole; they stay")
                }
                throw error
            }
            count += 1
        }
        context.console.errorLine(
            "Exported \(NumberText.grouped(count)) conversation\(count == 1 ? "" : "s") as \(format.name), one file each, to \(folder).")
    }
}

/// What `--out` and `--out-dir` may write to: regular files only, never through a symlink.
enum ExportTarget {
    /// Refuses a path that exists and is not a regular file, a symlink (not followed), a
    /// folder, or (without `force`) an existing file.
    static func checkFile(_ path: String, force: Bool) throws {
        if path.hasSuffix("/") {
            throw CommandFailure(message: "\(path) names a folder; use --out-dir for one file per conversation")
        }
        var status = stat()
        guard lstat(path, &status) == 0 else {
            if errno == ENOENT {
                // The file is new; its folder must be there (export makes no folders for --out).
                let folder = PathText.parent(of: path)
                var folderStatus = stat()
                if !folder.isEmpty && stat(folder, &folderStatus) != 0 && errno == ENOENT {
                    throw CommandFailure(message: "cannot write \(path): the folder \(folder) does not exist (create it first)")
                }
                return
            }
            throw CommandFailure(message: "cannot write \(path): \(String(cString: strerror(errno)).lowercased())")
        }
        switch status.st_mode & S_IFMT {
        case S_IFREG:
            if !force { throw CommandFailure(message: "\(path) exists; add --force to replace it") }
        case S_IFLNK:
            throw CommandFailure(message: "\(path) is a symbolic link, which export does not follow; give the file's real path")
        case S_IFDIR:
            throw CommandFailure(message: "\(path) is a folder; use --out-dir for one file per conversation")
        default:
            throw CommandFailure(message: "\(path) exists and is not a regular file (a device or a FIFO?); export writes regular files only")
        }
    }

    /// Refuses to write over the database being exported, or its `-wal` or `-shm` (as `cp`
    /// refuses to copy a file onto itself), whatever the path that names it.
    static func refuseDatabase(_ path: String, database: String) throws {
        var target = stat()
        guard stat(path, &target) == 0 else { return }
        for suffix in ["", "-wal", "-shm"] {
            var file = stat()
            if stat(database + suffix, &file) == 0 && file.st_dev == target.st_dev && file.st_ino == target.st_ino {
                throw CommandFailure(message: "\(path) is the database being exported\(suffix.isEmpty ? "" : " (its \(suffix) file)"); choose another file")
            }
        }
    }

    /// Refuses a path that exists and is not a folder (a symlink to one is fine: the user made it).
    static func checkFolder(_ path: String) throws {
        let shown = OutputFormat.line(path)
        var status = stat()
        guard stat(path, &status) == 0 else {
            if errno == ELOOP {
                throw CommandFailure(message: "\(shown) is a loop of symlinks (each points on to the next); give --out-dir another name")
            }
            // A symlink to nothing: no folder can be made in its place without removing it.
            if lstat(path, &status) == 0, (status.st_mode & S_IFMT) == S_IFLNK {
                let target = (try? FileManager.default.destinationOfSymbolicLink(atPath: path)).map { " (to \(OutputFormat.line($0)), which does not exist)" } ?? ""
                throw CommandFailure(
                    message: "\(shown) is a symlink to nothing\(target); make the folder it points to, or give --out-dir another name")
            }
            return
        }
        if (status.st_mode & S_IFMT) != S_IFDIR {
            throw CommandFailure(message: "\(shown) exists and is not a folder; --out-dir needs a folder (or a new name)")
        }
    }

    static func makeFolder(_ path: String) throws {
        guard mkdirs(path) else {
            throw CommandFailure(message: "cannot create the folder \(OutputFormat.line(path)): \(String(cString: strerror(errno)).lowercased())")
        }
    }

    /// Makes `path` and the folders above it that are missing (as `mkdir -p`); errno says why not.
    private static func mkdirs(_ path: String) -> Bool {
        var status = stat()
        if stat(path, &status) == 0 {
            errno = (status.st_mode & S_IFMT) == S_IFDIR ? 0 : EEXIST
            return errno == 0
        }
        let parent = PathText.parent(of: path)
        if parent != path && !parent.isEmpty && parent != "." && !mkdirs(parent) { return false }
        return mkdir(path, 0o777) == 0 || errno == EEXIST
    }
}

/// A file written beside its final name and moved into place when complete: a failed or
/// interrupted export leaves no half-written file, and every write is checked.
final class ExportFile {
    let path: String
    private let temporary: String
    private let descriptor: Int32
    private var buffer: [UInt8] = []

    init(replacing path: String) throws {
        self.path = path
        let folder = PathText.parent(of: path)
        let name = PathText.lastComponent(of: path)
        var attempt = 0
        var opened: (String, Int32)?
        while opened == nil {
            let candidate = (folder.isEmpty ? "" : folder + "/") + ".\(name).\(getpid()).\(attempt).partial"
            let descriptor = Foundation.open(candidate, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
            if descriptor >= 0 {
                opened = (candidate, descriptor)
            } else if errno != EEXIST || attempt > 100 {
                throw CommandFailure(message: "cannot write \(path): \(String(cString: strerror(errno)).lowercased())")
            }
            attempt += 1
        }
        guard let (temporary, descriptor) = opened else {
            throw CommandFailure(message: "cannot write \(path)")
        }
        self.temporary = temporary
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }

    func write(_ text: String) throws {
        buffer.append(contentsOf: text.utf8)
        if buffer.count >= 1 << 16 { try flush() }
    }

    private func flush() throws {
        if let code = DescriptorWriter.writeAll(buffer, to: descriptor) { throw failure(code) }
        buffer.removeAll(keepingCapacity: true)
    }

    /// Syncs the file and moves it into place: replacing what is there only with `force`
    /// (else `link`, which refuses a name that appeared meanwhile).
    func commit(force: Bool) throws {
        try flush()
        guard fsync(descriptor) == 0 else { throw failure(errno) }
        if force {
            guard rename(temporary, path) == 0 else { throw failure(errno) }
        } else {
            if link(temporary, path) == 0 {
                unlink(temporary)
            } else if errno == EEXIST {
                discard()
                throw CommandFailure(message: "\(path) exists; add --force to replace it")
            } else {
                // A file system without hard links: rename, after one more look.
                var status = stat()
                guard errno == EPERM || errno == EOPNOTSUPP, lstat(path, &status) != 0, rename(temporary, path) == 0 else {
                    throw failure(errno)
                }
            }
        }
        let folder = PathText.parent(of: path)
        let folderDescriptor = Foundation.open(folder.isEmpty ? "." : folder, O_RDONLY | O_DIRECTORY)
        if folderDescriptor >= 0 {
            _ = fsync(folderDescriptor)
            close(folderDescriptor)
        }
    }

    func discard() {
        unlink(temporary)
    }

    private func failure(_ code: Int32) -> CommandFailure {
        let reason = String(cString: strerror(code)).lowercased()
        discard()
        return CommandFailure(message: "cannot write \(path) (\(reason)); nothing was written there")
    }
}
