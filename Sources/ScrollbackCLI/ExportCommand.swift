import Foundation
import ScrollbackImport
import ScrollbackModel
import ScrollbackStorage

/// `scrollback export [ID...]`: to standard output, a file, or a folder (one file each).
struct ExportCommand {
    let context: CommandContext

    func run() throws {
        let formatText = context.parsed.value("--format") ?? "md"
        guard let format = ExportFormat(rawValue: formatText) else {
            throw UsageError(message: "--format must be md, json or jsonl, not '\(formatText)'", command: "export")
        }
        let store = try context.openStore()
        let exporter = Exporter(store: store)
        // Every id is checked before anything is written.
        let chosen = try context.parsed.positional.map { try store.conversations.conversation(matching: $0) }
        let each: ((ConversationDTO) throws -> Void) throws -> Void = { body in
            if chosen.isEmpty { try exporter.forEachConversation(body) } else { try chosen.forEach(body) }
        }
        let out = context.parsed.value("--out")
        var isDirectory: ObjCBool = false
        if let out, out.hasSuffix("/") || (FileManager.default.fileExists(atPath: out, isDirectory: &isDirectory) && isDirectory.boolValue) {
            try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
            var count = 0
            try each { conversation in
                let path = (out as NSString).appendingPathComponent(Exporter.fileName(for: conversation, format: format))
                try Self.write(try exporter.render(conversation, as: format) + "\n", to: path)
                count += 1
            }
            context.console.errorLine("wrote \(count) file\(count == 1 ? "" : "s") to \(out)")
            return
        }
        var text = ""
        var first = true
        let emit: (String) -> Void = { piece in
            if out == nil { context.console.write(piece) } else { text += piece }
        }
        if format == .json { emit("{\n\"conversations\" : [\n") }
        try each { conversation in
            let rendered = try exporter.render(conversation, as: format)
            switch format {
            case .md: emit((first ? "" : "\n---\n\n") + rendered)
            case .json: emit((first ? "" : ",\n") + rendered)
            case .jsonl: emit(rendered + "\n")
            }
            first = false
        }
        if format == .json { emit("\n]\n}\n") }
        if let out { try Self.write(text, to: out) }
    }

    /// Writes through a temporary file renamed into place, so a failed export leaves no
    /// half-written file.
    static func write(_ text: String, to path: String) throws {
        do {
            try Data(text.utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
        } catch {
            throw CommandFailure(message: "cannot write \(path): \((error as NSError).localizedDescription)")
        }
    }
}
