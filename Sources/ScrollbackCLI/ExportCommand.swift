import Foundation
import ScrollbackExport
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
        let filesDir = context.parsed.value(.attachmentsDir)
        if filesDir != nil && format != .jsonl {
            throw UsageError(
                message: "--attachments-dir goes with --format jsonl (Markdown written with --out or --out-dir puts the files beside it)",
                command: "export")
        }
        if filesDir == "" { throw UsageError(message: "--attachments-dir needs a path", command: "export") }
        // The target is checked before the database is even opened: a refusal costs nothing.
        if let out { try ExportTarget.checkFile(out, force: force) }
        if let outDir { try ExportTarget.checkFolder(outDir) }
        if let filesDir { try ExportTarget.checkFolder(filesDir) }

        let filter = try context.filter()
        let store = try context.openStore(forReading: true)
        if let out { try ExportTarget.refuseDatabase(out, database: store.path) }
        var exporter = Exporter(store: store, showingHidden: context.parsed.has(.hidden))
        if let filesDir {
            // Named in each record as seen from the export's own folder, where import looks.
            try ExportTarget.makeFolder(filesDir)
            let from = outDir ?? out.map { PathText.parent(of: $0) } ?? ""
            exporter.fileBytes = .folder(filesDir, link: Self.relativePath(from: from.isEmpty ? "." : from, to: filesDir))
        }
        if format == .md, let out {
            // The files beside the Markdown, in a folder named after it.
            let folder = Self.filesFolder(for: out)
            exporter.markdownFiles = (folder, PathText.lastComponent(of: folder))
        }
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
            count = try exporter.write(format: format, each: each, emit: emit)
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

    /// The folder of a Markdown file's attachments: its name without `.md`, then `.files`.
    static func filesFolder(for path: String) -> String {
        (path.hasSuffix(".md") ? String(path.dropLast(3)) : path) + ".files"
    }

    /// `target` as seen from the folder `from`: `files`, `../files`, or absolute when they
    /// share nothing but the root.
    static func relativePath(from folder: String, to target: String) -> String {
        func canonical(_ path: String) -> [String] {
            let resolved = (realpath(path, nil)).map { pointer in
                defer { free(pointer) }
                return String(cString: pointer)
            } ?? (path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path)
            return resolved.split(separator: "/").map(String.init)
        }
        let start = canonical(folder)
        let end = canonical(target)
        var common = 0
        while common < start.count && common < end.count && start[common] == end[common] { common += 1 }
        guard common > 0 else { return "/" + end.joined(separator: "/") }
        let parts = Array(repeating: "..", count: start.count - common) + end[common...]
        return parts.isEmpty ? "." : parts.joined(separator: "/")
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
            var exporter = exporter
            if format == .md {
                let files = Self.filesFolder(for: path)
                exporter.markdownFiles = (files, PathText.lastComponent(of: files))
            }
            do {
                // One conversation a file, with its files (JSON Lines: their pieces first).
                _ = try exporter.write(format: format, each: { try $0(conversation) }, emit: { try file.write($0) })
                if format != .jsonl { try file.write("\n") }
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
