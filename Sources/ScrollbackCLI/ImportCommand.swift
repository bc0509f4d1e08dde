import Foundation
import ScrollbackModel
import ScrollbackImport
import ScrollbackStorage
import TerminalText

/// `scrollback import PATH...`: every file in its own transaction; a summary at the end.
struct ImportCommand {
    let context: CommandContext

    func run() throws -> Int32 {
        let format = try context.choice(.format, as: ImportFormat.self)
        var unzipLimit = UnzipLimit()
        if let text = context.parsed.value(.unzipLimit) {
            guard let bytes = UnzipLimit.parse(text) else {
                throw UsageError(message: "--unzip-limit must be a size such as 500M or 8G, not '\(text)'", command: "import")
            }
            unzipLimit = UnzipLimit(bytes: bytes)
        }
        // No path: the places scrollback knows (found before the database is opened: with
        // nothing to import, none is made).
        let known = context.parsed.positional.isEmpty ? KnownSources.find(environment: context.environment) : []
        if context.parsed.positional.isEmpty && known.isEmpty {
            let looked = KnownSources.lookedIn(environment: context.environment).map(OutputFormat.line).joined(separator: ", ")
            throw UsageError(message: "no history found where scrollback looks (\(looked)); name an export: scrollback import PATH", command: "import")
        }
        let store = try context.openStore()
        try context.requireWritable(store)
        let console = context.console
        var paths = context.parsed.positional
        if paths.isEmpty {
            // After a yes.
            let places = known
            console.line("Found:")
            for place in places {
                let files = place.files == 1 ? "" : ", \(NumberText.grouped(place.files)) files"
                console.line("  \(place.name): \(OutputFormat.line(place.path)) (\(OutputFormat.bytes(place.bytes))\(files))")
            }
            if !context.parsed.has(.yes) {
                guard console.inputIsTerminal else {
                    throw UsageError(message: "import these with --yes (standard input is not a terminal to ask)", command: "import")
                }
                console.writeError("Import them? [y/N] ")
                let answer = console.readLine()?.trimmingCharacters(in: .whitespaces).lowercased()
                guard answer == "y" || answer == "yes" else {
                    console.errorLine("Nothing imported.")
                    return 0
                }
            }
            paths = places.map(\.path)
        }
        let showProgress = console.errorIsTerminal && !context.parsed.has(.quiet)
        // Ctrl-C is held back and looked for between records, so that the file being read
        // is rolled back cleanly rather than cut off.
        let started = Date()
        var lastShown = Date.distantPast
        let summary = withInterruptsHeld { interrupted in
            var importer = Importer(store: store, unzipLimit: unzipLimit)
            importer.restoring = context.parsed.has(.restore)
            return importer.run(
                paths: paths, format: format,
                progress: { progress in
                    guard showProgress, Date().timeIntervalSince(lastShown) > 0.2 else { return }
                    lastShown = Date()
                    let percent = progress.bytesTotal > 0 ? progress.bytesDone * 100 / progress.bytesTotal : 100
                    let rate = Double(progress.records) / max(Date().timeIntervalSince(started), 0.001)
                    console.writeError(
                        "\r\u{1B}[K\(UntrustedText.sanitized(PathText.lastComponent(of: progress.path))): \(NumberText.grouped(progress.records)) \(progress.records == 1 ? "conversation" : "conversations"), \(percent)% (\(NumberText.grouped(Int(rate)))/s)")
                },
                shouldStop: interrupted)
        }
        if showProgress { console.writeError("\r\u{1B}[K") }
        var line = "Imported \(NumberText.grouped(summary.inserted)) new, \(NumberText.grouped(summary.updated)) updated, \(NumberText.grouped(summary.unchanged)) unchanged"
        if summary.deleted > 0 {
            line += "; \(NumberText.grouped(summary.deleted)) deleted before, left out (import --restore brings them back)"
        }
        if !summary.skipped.isEmpty { line += "; skipped \(NumberText.grouped(summary.skipped.count))" }
        if !summary.unreadable.isEmpty {
            line += "; \(NumberText.grouped(summary.unreadable.count)) attachment\(summary.unreadable.count == 1 ? "" : "s") the export holds could not be read (kept as missing)"
        }
        if summary.filesAppended > 0 || summary.filesUnchanged > 0 {
            var parts: [String] = []
            if summary.filesAppended > 0 {
                parts.append("\(NumberText.grouped(summary.filesAppended)) session file\(summary.filesAppended == 1 ? "" : "s") read from where the last import stopped")
            }
            if summary.filesUnchanged > 0 {
                parts.append("\(NumberText.grouped(summary.filesUnchanged)) unchanged since, not read")
            }
            line += "; " + parts.joined(separator: ", ")
        }
        if summary.unknownParts > 0 {
            line += "; \(NumberText.grouped(summary.unknownParts)) line\(summary.unknownParts == 1 ? "" : "s") or block\(summary.unknownParts == 1 ? "" : "s") of a kind scrollback does not know yet, kept hidden"
        }
        if !summary.failed.isEmpty { line += "; \(NumberText.grouped(summary.failed.count)) file\(summary.failed.count == 1 ? "" : "s") failed" }
        console.line(line)
        for found in summary.found { console.line(UntrustedText.sanitized("found: " + found)) }
        for skipped in summary.skipped {
            console.line(UntrustedText.sanitized("skipped: \(skipped.path) \(skipped.record): \(skipped.reason)"))
        }
        for unread in summary.unreadable {
            console.line(UntrustedText.sanitized("not read: \(unread.path) \(unread.record): \(unread.reason)"))
        }
        for failure in summary.failed {
            console.errorLine("scrollback: \(UntrustedText.sanitized(failure.description))")
        }
        if summary.interrupted {
            console.errorLine("scrollback: interrupted; the file being read was not imported (files before it were)")
            return 130
        }
        return summary.failed.isEmpty ? 0 : 1
    }
}
