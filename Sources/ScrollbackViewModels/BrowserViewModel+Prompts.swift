import Foundation
import ScrollbackModel
import TerminalText

/// The prompts (the delete question and the line editors) and the keys they take.
extension BrowserViewModel {
    // MARK: Prompts
    func openQuestion(ids: [Int64], titles: [String], messages: Int) {
        prompt = .confirmDelete(ids: ids, titles: titles, messages: messages)
        questionShown = false
    }

    func handleInPrompt(_ key: Key) throws {
        // The prompt is moved out while its editor changes, so that the editor's text has a
        // single owner and is not copied at every key (which made long pastes quadratic).
        guard let prompt = self.prompt.take() else { return }
        switch consume prompt {
        case .confirmDelete(let ids, let titles, let messages):
            self.prompt = .confirmDelete(ids: ids, titles: titles, messages: messages)
            switch key {
            case .character("y"), .character("Y"):
                guard questionShown else { break }
                self.prompt = nil
                try deleteSaying(ids: ids, messages: messages)
            case .character("n"), .character("N"), .escape, .character("q"):
                self.prompt = nil
                status = "Nothing deleted"
            default:
                break
            }
        case .rename(let id, var editor):
            guard let outcome = edit(&editor, key, reopen: { .rename(id: id, editor: $0) }) else { return }
            switch outcome {
            case .editing:
                break
            case .cancelled:
                status = "Rename cancelled"
            case .submitted:
                guard editor.isEdited else {
                    // The title stays exactly as it was, whatever it holds.
                    status = "Title unchanged"
                    return
                }
                // The storage layer's rule, in its words, and the editor stays open with the text.
                // What the stored title held that no title may (an export's controls, shown
                // as placeholders) goes with the edit, and the footer says so.
                let cleaned = ConversationTitle.withoutRefused(editor.text)
                let title: String
                do {
                    title = try ConversationTitle.normalized(cleaned.text)
                } catch {
                    self.prompt = .rename(id: id, editor: editor)
                    status = Self.sentence(error.description)
                    return
                }
                do {
                    try rename(id: id, to: title)
                    if cleaned.removed > 0, status == "Renamed — u undoes" {
                        status = "Renamed, without the \(cleaned.removed) character\(cleaned.removed == 1 ? "" : "s") no title may hold (a control, bidi or format mark) — u undoes"
                    }
                } catch StorageError.busy {
                    // Typed text is never lost to another process's write: the editor stays.
                    self.prompt = .rename(id: id, editor: editor)
                    status = "The database is busy (another process is writing): Enter tries again, Esc gives up"
                }
            }
        case .search(var editor):
            let typed = editor.text
            guard let outcome = edit(&editor, key, reopen: { .search(editor: $0) }) else {
                if editor.text != typed { searchAsTyped(editor.text) }
                return
            }
            switch outcome {
            case .editing:
                break
            case .cancelled:
                cancelSearchPrompt()
            case .submitted:
                try submitSearch(editor.text)
            }
        case .find(var editor):
            guard let outcome = edit(&editor, key, reopen: { .find(editor: $0) }) else { return }
            if outcome == .submitted { try readerScreen?.find(editor.text) }
        case .filter(var editor):
            guard let outcome = edit(&editor, key, reopen: { .filter(editor: $0) }) else { return }
            if outcome == .submitted {
                do {
                    let filter = try ConversationFilter.parse(editor.text, now: now())
                    try list.setFilter(filter)
                    status = filter.isEmpty ? "Filter cleared: every conversation" : "Filtered — " + listScreen.escClears
                } catch let error as FilterError {
                    // The words stay for fixing.
                    self.prompt = .filter(editor: editor)
                    status = UntrustedText.sanitized(error.message)
                }
            }
        case .narrow(var editor, let before, let selected, let marks):
            let typed = editor.text
            guard let outcome = edit(&editor, key, reopen: { .narrow(editor: $0, before: before, selected: selected, marks: marks) }) else {
                // The list follows the typing, once it pauses.
                if editor.text != typed {
                    let (due, overflow) = now().milliseconds.addingReportingOverflow(Self.narrowDelay)
                    narrowDue = (editor.text, Timestamp(milliseconds: overflow ? Int64.max : due))
                }
                return
            }
            narrowDue = nil
            switch outcome {
            case .editing:
                break
            case .cancelled:
                // The list as it was before the prompt opened, the narrowing it had included.
                try list.setFilter(before, keeping: selected)
                try list.restoreMarks(marks)
                status = "Narrowing cancelled"
            case .submitted:
                try listScreen.narrow(to: editor.text, final: true)
                try list.restoreMarks(marks)
            }
        case .jump(var editor):
            guard let outcome = edit(&editor, key, reopen: { .jump(editor: $0) }) else { return }
            if outcome == .submitted {
                let text = editor.text.trimmingCharacters(in: .whitespaces)
                guard !text.isEmpty else { return }
                do {
                    // The end of a day, or just after a time: the newest at or before it.
                    let end = try ConversationFilter.time(text, now: now(), end: true)
                    let isAgo = text.last.map { "dwmy".contains($0) } ?? false
                    let time = isAgo ? end : Timestamp(milliseconds: end.milliseconds &- 1)
                    if try list.jump(toTimeAtOrBefore: time) {
                        status = "The newest conversation \(list.order == .created ? "created" : "updated") at or before \(UntrustedText.sanitized(text))"
                    } else {
                        status = "Nothing that old: the last conversation is newer than \(UntrustedText.sanitized(text))"
                    }
                } catch let error as FilterError {
                    self.prompt = .jump(editor: editor)
                    status = UntrustedText.sanitized(error.message)
                }
            }
        case .export(let ids, var editor):
            guard let outcome = edit(&editor, key, reopen: { .export(ids: ids, editor: $0) }) else { return }
            switch outcome {
            case .editing:
                break
            case .cancelled:
                status = "Nothing exported"
            case .submitted:
                let path = editor.text.trimmingCharacters(in: .whitespaces)
                guard !path.isEmpty else {
                    self.prompt = .export(ids: ids, editor: editor)
                    status = "Type a file name: .md, .json or .jsonl"
                    return
                }
                // The extension says the format: another one would get Markdown unasked.
                let name = PathText.lastComponent(of: path).lowercased()
                guard [".md", ".json", ".jsonl"].contains(where: { name.hasSuffix($0) && name.count > $0.count }) else {
                    self.prompt = .export(ids: ids, editor: editor)
                    status = "End the name in .md, .json or .jsonl: it says the format"
                    return
                }
                lastExport = path
                // From the reader, what it shows: with `z` on, the hidden messages too.
                effect = .export(ids: ids, path: path, showingHidden: screen == .reader && reader?.showsHidden == true)
            }
        case .saveAttachment(let attachment, var editor):
            guard let outcome = edit(&editor, key, reopen: { .saveAttachment(attachment: attachment, editor: $0) }) else { return }
            switch outcome {
            case .editing:
                break
            case .cancelled:
                status = "Not saved"
            case .submitted:
                let path = editor.text.trimmingCharacters(in: .whitespaces)
                guard !path.isEmpty, !path.hasSuffix("/") else {
                    self.prompt = .saveAttachment(attachment: attachment, editor: editor)
                    status = "Type the file's path (~/ is your home folder)"
                    return
                }
                effect = .saveAttachment(attachment, path: path)
            }
        case .pipe(var editor):
            guard let outcome = edit(&editor, key, reopen: { .pipe(editor: $0) }) else { return }
            switch outcome {
            case .editing:
                break
            case .cancelled:
                pipeSource = nil
                status = "Nothing piped"
            case .submitted:
                let command = editor.text.trimmingCharacters(in: .whitespaces)
                guard !command.isEmpty, let source = pipeSource else {
                    pipeSource = nil
                    status = "Nothing piped: type a command (wc -c, pbcopy, grep -n TODO…)"
                    return
                }
                lastPipe = command
                pipeSource = nil
                effect = .pipe(command: command, input: try markdown(of: source.conversation, branch: source.branch, showingHidden: source.showingHidden))
            }
        }
    }


    /// Gives `key` to a prompt's editor. While editing goes on, the prompt is open again with
    /// the new text (`reopen`) and this returns nil; else how the editing ended.
    private func edit(_ editor: inout LineEditor, _ key: Key, reopen: (LineEditor) -> Prompt) -> LineEditor.Outcome? {
        let outcome = editor.apply(key)
        noteIfCut(editor)
        guard outcome != .editing else {
            prompt = reopen(editor)
            return nil
        }
        return outcome
    }

    func noteIfCut(_ editor: LineEditor) {
        if editor.wasCut { status = "cut to \(NumberText.grouped(editor.limit)) characters" }
        if editor.dropped > 0 {
            let count = editor.dropped
            let what = editor.isTitle ? "a title cannot hold" : "that cannot be typed here"
            status = "Left out \(count == 1 ? "1 character" : "\(NumberText.grouped(count)) characters") \(what) (controls, bidi marks, invisible or format marks)"
                + (editor.wasCut ? "; cut to \(NumberText.grouped(editor.limit)) characters" : "")
        }
    }

    /// A message of the storage layer as the footer says things: a capital first.
    static func sentence(_ message: String) -> String {
        message.prefix(1).uppercased() + message.dropFirst()
    }
}
