import Foundation
import ScrollbackModel
import TerminalText

/// What the screens share: writing (rename, delete, pin, undo) and handing a conversation to a program.
extension BrowserViewModel {
    /// `|`, `o` and `e`: the conversation (the branch shown, in the reader) to a program.
    func hand(_ conversation: ConversationDTO, branch: MessageBranch?, showingHidden: Bool = false, to command: BrowserCommand) throws {
        switch command {
        case .pipe:
            prompt = .pipe(editor: LineEditor(text: lastPipe, selected: true))
        case .pager:
            effect = .page(text: UntrustedText.sanitized(try markdown(of: conversation, branch: branch, showingHidden: showingHidden), keepNewlines: true))
        case .editor:
            effect = .edit(
                text: UntrustedText.sanitized(try markdown(of: conversation, branch: branch, showingHidden: showingHidden), keepNewlines: true),
                name: conversation.publicID.prefix(8) + ".md")
        default:
            break
        }
        pipeSource = (conversation, branch, showingHidden)
    }

    /// The export prompt, with a name made from the title (one conversation) or the count
    /// and the day (several), in the folder and format of the last export, if any.
    func openExportPrompt(ids: [Int64]) {
        let day = String(now().iso8601.prefix(10))
        let title = ids.count == 1 ? (try? repositories.conversations.conversations(ids: ids))?.first?.title : nil
        let slug = title.map { PathText.slug(of: $0) } ?? ""
        let name = ids.count > 1 ? "\(ids.count)-conversations-\(day)" : slug.isEmpty ? "conversation-\(day)" : slug
        var folder = "", fileExtension = "md"
        if let last = lastExport {
            folder = PathText.parent(of: last)
            let lastName = PathText.lastComponent(of: last)
            if let dot = lastName.lastIndex(of: "."), ["md", "json", "jsonl"].contains(String(lastName[lastName.index(after: dot)...])) {
                fileExtension = String(lastName[lastName.index(after: dot)...])
            }
        }
        let suggested = PathText.appending(to: folder, name + "." + fileExtension)
        prompt = .export(ids: ids, editor: LineEditor(text: suggested, selected: true))
    }

    /// A conversation as Markdown, as `export` writes it: the branch given (the one the
    /// reader shows), else its current one, then the other branches by their first lines;
    /// `showingHidden` (the reader's `z`, whose branch then holds them) lists the other
    /// branches with their hidden messages too, as `export --hidden` does.
    func markdown(of conversation: ConversationDTO, branch: MessageBranch?, showingHidden: Bool = false) throws -> String {
        let branch = try branch ?? repositories.messages.branch(of: conversation, leaf: nil)
        var messages: [MessageDTO] = []
        var position = PagePosition.first
        while true {
            let page = try repositories.messages.page(branch, at: position, limit: 1_000)
            messages += page.items
            guard let next = page.next, !page.items.isEmpty else { break }
            position = .after(next)
        }
        var others: [MarkdownTranscript.OtherBranch] = []
        if conversation.isBranched {
            let all = try repositories.messages.all(conversationID: conversation.id, showingHidden: showingHidden)
            others = MarkdownTranscript.otherBranches(
                all, tree: try repositories.messages.tree(conversationID: conversation.id, showingHidden: showingHidden),
                shown: messages.map(\.id))
        }
        return MarkdownTranscript.render(conversation, messages, otherBranches: others)
    }

    // MARK: Actions
    /// Deletes `ids` (keeping snapshots for undo). `redoing`: this is `Ctrl-R` doing it again,
    /// which keeps what else there is to redo.
    func delete(ids: [Int64], redoing: Bool = false) throws {
        let doomed = Set(ids)
        if let reader, doomed.contains(reader.conversation.id) {
            // Deleted from the reader: back to the list, on the row after it.
            // (Opened from the list, it is the list's selection, which the next row replaces.)
            stack = []
        }
        let fallbacks = list.neighbours(of: list.selection, excluding: doomed)
        let keep = list.selected.map(\.id).flatMap { doomed.contains($0) ? nil : $0 }
        let snapshots = try repositories.conversations.deleteKeepingSnapshots(ids: ids)
        list.unmark(doomed)
        try list.reload(keeping: keep, fallbacks: fallbacks, totalChange: -snapshots.count)
        guard !snapshots.isEmpty else {
            status = "Nothing deleted: another process deleted \(ids.count == 1 ? "it" : "them") meanwhile"
            return
        }
        deletedHere.formUnion(snapshots.map(\.conversation.id))
        filesOfDeletes.formUnion(snapshots.flatMap { $0.attachments.compactMap(\.sha256) })
        let forgot = remember(.deleted(snapshots), redoing: redoing)
        let count = snapshots.count
        let alone = snapshots.reduce(0) { $0 + $1.messages.count } > undoMessageBudget
        status = "Deleted \(NumberText.grouped(count)) conversation\(count == 1 ? "" : "s")\(redoing ? " again" : "")\(redoNote(redoing)) — u undoes"
            + (forgot ? " (an older delete can no longer be undone: undo keeps \(NumberText.grouped(undoMessageBudget)) messages at most)" : "")
            + (alone ? " (until the next delete: it holds more than the \(NumberText.grouped(undoMessageBudget)) messages undo keeps)" : "")
    }

    func rename(id: Int64, to title: String, redoing: Bool = false) throws {
        guard let before = try repositories.conversations.conversation(id: id) else {
            // Another process deleted it while the editor was open.
            status = "Not renamed: that conversation was deleted meanwhile, by another process"
            try list.reload(keeping: id, totalChange: nil)
            return
        }
        let followed = try repositories.conversations.sourceTitle(id: id) == before.title
        let renamed = try repositories.conversations.rename(id: id, to: title)
        let mark = try repositories.conversations.editMark(id: id, field: .title)
        remember(.renamed(id: id, from: before.title, to: renamed.title, followedExport: followed, mark: mark), redoing: redoing)
        let fallbacks = list.neighbours(of: list.selection, excluding: [id])
        if let reader, reader.conversation.id == id {
            try reader.reload(renamed)
            try list.reload(keeping: list.selected?.id, fallbacks: fallbacks)
        } else {
            try list.reload(keeping: id, fallbacks: fallbacks)
        }
        // Renamed out of the filtered list: it says where the row went.
        let gone = list.filter.admits(renamed) ? "" : " (its new title is not in the filtered list: \(list.marks.isEmpty ? "Esc shows every one" : "Esc clears the marks, then shows every one"))"
        status = (redoing ? "Renamed again\(redoNote(redoing))" : "Renamed") + gone + " — u undoes"
    }

    /// Pins `ids` (unpins them when all are pinned already), in one transaction and one
    /// undo; the selected row stays selected wherever pinning moves it.
    func pin(ids: [Int64]) throws {
        let current = try repositories.conversations.conversations(ids: ids)
        guard !current.isEmpty else {
            status = "Nothing to pin: that conversation was deleted meanwhile, by another process"
            return
        }
        try setPinned(current, !current.allSatisfy(\.pinned), redoing: false)
    }

    /// Sets `conversations` pinned or not (those that are not so already), as one change.
    private func setPinned(_ conversations: [ConversationDTO], _ target: Bool, redoing: Bool) throws {
        let changing = conversations.filter { $0.pinned != target }.map(\.id)
        guard !changing.isEmpty else { return }
        _ = try repositories.conversations.setPinned(ids: changing, target)
        remember(.pinned(ids: changing, pinned: target, marks: try pinMarks(changing)), redoing: redoing)
        try list.reload(keeping: list.selected?.id)
        let count = changing.count
        let noun = count == 1 ? "the conversation" : "\(NumberText.grouped(count)) conversations"
        let again = redoing ? " again" : ""
        status = "\(target ? "Pinned" : "Unpinned") \(noun)\(again)\(target && !redoing ? " (first in every order)" : "")\(redoNote(redoing)) — u undoes"
    }

    /// Keeps `edit` for undo. A new change (not a redo) ends what there was to redo; the
    /// oldest changes go beyond `undoLevels`. Beyond `undoMessageBudget` messages held, the
    /// oldest deletes let their snapshots go (the newest delete is always kept whole), each
    /// leaving a note in its place, and the renames and pins around them stay: returns true
    /// when one did.
    @discardableResult
    func remember(_ edit: Edit, redoing: Bool) -> Bool {
        undoHistory.append(edit)
        changesRemembered += 1
        if !redoing { redoHistory.removeAll() }
        if undoHistory.count > Self.undoLevels { undoHistory.removeFirst(undoHistory.count - Self.undoLevels) }
        var held = undoHistory.reduce(0) { $0 + $1.messagesHeld }
        var forgot = false
        // The newest delete is kept whole, whatever it holds (a rename after it lets go of nothing).
        let newestDelete = undoHistory.lastIndex { if case .deleted = $0 { true } else { false } }
        for index in undoHistory.indices where held > undoMessageBudget && index != newestDelete {
            guard case .deleted(let snapshots) = undoHistory[index] else { continue }
            held -= undoHistory[index].messagesHeld
            undoHistory[index] = .forgotten(conversations: snapshots.count)
            forgot = true
        }
        return forgot
    }

    /// The pin's edit marks of `ids` (those that have one).
    private func pinMarks(_ ids: [Int64]) throws -> [Int64: String] {
        var marks: [Int64: String] = [:]
        for id in ids { marks[id] = try repositories.conversations.editMark(id: id, field: .pin) }
        return marks
    }

    /// Those of `conversations` whose pin no other edit has touched since `marks` were taken.
    private func untouched(_ conversations: [ConversationDTO], since marks: [Int64: String]) throws -> [ConversationDTO] {
        try conversations.filter { try repositories.conversations.editMark(id: $0.id, field: .pin) == marks[$0.id] }
    }

    /// After an undo or redo of `edit` here: the next change of the same history that
    /// touches the same field of the same conversation expects the edit clock this one left
    /// (its own write), not the one it saw before.
    private func carryMarks(of edit: Edit, into history: inout [Edit]) throws {
        for (id, field) in edit.touched {
            guard let index = history.lastIndex(where: { other in other.touched.contains { $0.id == id && $0.field == field } }) else { continue }
            history[index] = history[index].expecting(try repositories.conversations.editMark(id: id, field: field), of: field, for: id)
        }
    }

    /// How the keys in use name a command here (`Ctrl-R`), for the footer.
    func keyName(_ command: BrowserCommand) -> String? {
        keymap.keymap(for: screen).first { $0.command == command }?.keys.first.map { UntrustedText.sanitized($0.description) }
    }

    /// " (2 more to redo)" while a redo goes on with more after it.
    private func redoNote(_ redoing: Bool) -> String {
        redoHistory.isEmpty || !redoing ? "" : " (\(NumberText.grouped(redoHistory.count)) more to redo)"
    }

    /// What the footer adds after an undo: how many more there are, and the redo key.
    private var afterUndo: String {
        let more = undoHistory.isEmpty ? "" : " (\(NumberText.grouped(undoHistory.count)) more to undo)"
        return more + (keyName(.redo).map { " — \($0) redoes" } ?? "")
    }

    /// `u`: the last change made here is undone, and can be done again with `Ctrl-R`. A
    /// change that another process (or a sync) has changed since is not undone over it: the
    /// footer says so, and the next `u` reaches the one before. Returns whether it undid one.
    @discardableResult
    func undo() throws -> Bool {
        if let slow = slowChange {
            // One is on its way: the footer says so again.
            status = Self.saying(slow.change)
            return false
        }
        guard let edit = undoHistory.popLast() else {
            status = redoHistory.isEmpty ? "Nothing to undo" : "Nothing more to undo" + (keyName(.redo).map { " — \($0) redoes" } ?? "")
            return false
        }
        if case .deleted(let snapshots) = edit, isSlow(conversations: snapshots.count, messages: edit.messagesHeld) {
            // Said first, done after the frame that says it (`poll`).
            slowChange = (.undo(edit), false)
            status = Self.saying(.undo(edit))
            return false
        }
        return try undo(edit)
    }

    /// Whether deleting (or restoring) this many conversations with this many messages
    /// takes long enough to be said first.
    func isSlow(conversations: Int, messages: Int) -> Bool {
        conversations >= slowUndoAt || messages >= 10 * slowUndoAt
    }

    /// Deletes `ids` now, or, when that takes a while, after a frame that says so.
    func deleteSaying(ids: [Int64], messages: Int) throws {
        guard isSlow(conversations: ids.count, messages: messages) else {
            try delete(ids: ids)
            return
        }
        slowChange = (.delete(ids: ids), false)
        status = Self.saying(.delete(ids: ids), messages: messages)
    }

    /// "Restoring 150,000 conversations (450,000 messages)…", "Deleting 2,500 conversations…"
    static func saying(_ change: SlowChange, messages: Int? = nil) -> String {
        func counted(_ count: Int, _ noun: String) -> String { "\(NumberText.grouped(count)) \(noun)\(count == 1 ? "" : "s")" }
        switch change {
        case .undo(let edit):
            guard case .deleted(let snapshots) = edit else { return "Undoing…" }
            return "Restoring \(counted(snapshots.count, "conversation")) (\(counted(edit.messagesHeld, "message")))…"
        case .delete(let ids):
            return "Deleting \(counted(ids.count, "conversation"))" + (messages.map { " (\(counted($0, "message")))" } ?? "") + "…"
        case .redo(let edit):
            guard case .deleted(let snapshots) = edit else { return "Redoing…" }
            let held = snapshots.reduce(0) { $0 + $1.conversation.messageCount }
            return "Deleting \(counted(snapshots.count, "conversation")) (\(counted(held, "message"))) again…"
        }
    }

    /// Undoes `edit`, taken off the history (back on it when it fails as it is now).
    @discardableResult
    func undo(_ edit: Edit) throws -> Bool {
        let done: String
        do {
            guard let (message, redo) = try reverse(edit) else { return false }
            try carryMarks(of: redo, into: &undoHistory)
            redoHistory.append(redo)
            done = message
        } catch StorageError.conflict(let message) {
            // The data refuses it as it is now: it stays undone-not, and the one before is next.
            status = Self.sentence(message) + (undoHistory.isEmpty ? "" : "; u undoes the change before it")
            return false
        } catch {
            // Nothing changed (busy, a full disk): it can be tried again.
            undoHistory.append(edit)
            throw error
        }
        status = done + afterUndo
        return true
    }

    /// `5u` and `5 Ctrl-R`: up to `times` undos (redos), one after another, stopping at the
    /// first that cannot be done; the footer says how many were, and why it stopped.
    func repeatUndo(times: Int, redoing: Bool) throws {
        var done = 0
        let waiting = redoing ? redoHistory.count : undoHistory.count
        while done < times, try redoing ? redo() : undo() { done += 1 }
        let verb = redoing ? "redone" : "undone"
        let said = status ?? ""
        guard done > 0 else {
            // The first could not be done (it is used up, as a single key's would be).
            if (redoing ? redoHistory.count : undoHistory.count) < waiting, slowChange == nil {
                status = "0 of \(NumberText.grouped(times)) changes \(verb): " + said
            }
            return
        }
        if done == times {
            status = "\(NumberText.grouped(done)) changes \(verb): the last — " + said
        } else {
            status = "\(NumberText.grouped(done)) of \(NumberText.grouped(times)) changes \(verb), then: " + said
        }
    }

    /// Undoes `edit`: what the footer says, and the change that does it again; nil (with
    /// the footer saying why) when the data has moved on and it cannot be undone.
    private func reverse(_ edit: Edit) throws -> (String, Edit)? {
        switch edit {
        case .pinned(let ids, let pinned, let marks):
            let there = try repositories.conversations.conversations(ids: ids)
            let current = try untouched(there.filter { $0.pinned == pinned }, since: marks)
            guard !current.isEmpty else {
                let why = there.isEmpty ? deletedBy(ids) : "changed meanwhile, by another process or a sync"
                status = "Cannot undo the \(pinned ? "pin" : "unpin"): " + why + nextUndo
                return nil
            }
            let undone = current.map(\.id)
            _ = try repositories.conversations.setPinned(ids: undone, !pinned)
            try list.reload(keeping: list.selected?.id)
            return (pinned ? "Pin undone" : "Unpin undone", .pinned(ids: undone, pinned: pinned, marks: try pinMarks(undone)))
        case .forgotten(let count):
            status = "The delete of \(NumberText.grouped(count)) conversation\(count == 1 ? "" : "s") here can no longer be undone: undo keeps \(NumberText.grouped(undoMessageBudget)) messages at most" + nextUndo
            return nil
        case .deleted(let snapshots):
            // Those another process imported again are there already; those put back and
            // deleted again elsewhere since stay deleted (that delete is the later change):
            // the rest come back.
            var back: [ConversationSnapshot] = []
            var deletedAgain: [ConversationSnapshot] = []
            var restorable: [ConversationSnapshot] = []
            for snapshot in snapshots {
                let present = (try? repositories.conversations.conversation(matching: snapshot.conversation.publicID))?.publicID == snapshot.conversation.publicID
                let mark = try repositories.conversations.deleteMark(publicID: snapshot.conversation.publicID)
                if present {
                    back.append(snapshot)
                } else if let mark, let own = snapshot.deleteMark, mark != own {
                    deletedAgain.append(snapshot)
                } else {
                    restorable.append(snapshot)
                }
            }
            let notes = [
                Self.titles(back, were: "back already (imported again by another process)"),
                Self.titles(deletedAgain, were: "deleted again meanwhile, by another process or a sync"),
            ].compactMap { $0 }
            let backNote = notes.isEmpty ? nil : notes.joined(separator: "; ")
            guard !restorable.isEmpty else {
                status = "Cannot undo the delete: " + (backNote ?? "") + nextUndo
                return nil
            }
            // Files another process's delete freed meanwhile come back as missing: said.
            let files = Set(restorable.flatMap { $0.attachments.compactMap(\.sha256) })
            let freed = files.isEmpty ? 0 : files.subtracting(try repositories.conversations.storedFiles(files)).count
            let ids = try repositories.conversations.restore(restorable)
            deletedHere.subtract(restorable.map(\.conversation.id))
            // The first restored row in the list's order is selected, so that it and the
            // others after it are in view.
            let order = list.order
            var restored = restorable.map(\.conversation)
            for index in restored.indices where index < ids.count { restored[index].id = ids[index] }
            let first = restored.min { order.sorts($0, before: $1) }
            try list.reload(keeping: first?.id, totalChange: restorable.count)
            // Redo deletes them again by id: it keeps no messages.
            let count = restorable.count
            let freedNote =
                freed == 0
                ? nil
                : "\(NumberText.grouped(freed)) attachment file\(freed == 1 ? " was" : "s were") freed meanwhile by another process's delete (import the export again to bring \(freed == 1 ? "it" : "them") back)"
            return ("Restored \(NumberText.grouped(count)) conversation\(count == 1 ? "" : "s")" + ([backNote, freedNote].compactMap { $0 }.map { "; " + $0 }.joined()),
                .deleted(restored.map { ConversationSnapshot(conversation: $0, messages: []) }))
        case .renamed(let id, let from, let to, let followed, let mark):
            guard let current = try repositories.conversations.conversation(id: id) else {
                status = "Cannot undo the rename: " + deletedBy([id]) + nextUndo
                return nil
            }
            guard current.title == to, try repositories.conversations.editMark(id: id, field: .title) == mark else {
                status = "Cannot undo the rename: the title was changed meanwhile, by another process or a sync" + nextUndo
                return nil
            }
            // The title followed the export: it does again, as the export has it now.
            let exportTitle = followed ? try repositories.conversations.sourceTitle(id: id) : nil
            let title = exportTitle.flatMap { $0.isEmpty ? nil : $0 } ?? from
            let renamed = try repositories.conversations.restoreTitle(id: id, to: title)
            if let reader, reader.conversation.id == id { try reader.reload(renamed) }
            try list.reload(keeping: id)
            let note = title == from ? "" : " (the export's title now: a later import changed it)"
            return ("Rename undone" + note, .renamed(
                id: id, from: title, to: to, followedExport: followed, mark: try repositories.conversations.editMark(id: id, field: .title)))
        }
    }

    /// "“First” and 2 more were …" for the footer; nil for none.
    private static func titles(_ snapshots: [ConversationSnapshot], were what: String) -> String? {
        snapshots.first.map { first in
            let title = "“\(DisplayWidth.truncated(UntrustedText.sanitized(first.conversation.title), to: 40))”"
            let others = snapshots.count > 1 ? " and \(NumberText.grouped(snapshots.count - 1)) more" : ""
            return "\(title)\(others) \(snapshots.count == 1 ? "was" : "were") \(what)"
        }
    }

    /// Who deleted `ids` (none of which is there): this browser, by a delete it can no
    /// longer undo, or another process.
    private func deletedBy(_ ids: [Int64]) -> String {
        let one = ids.count == 1
        if ids.allSatisfy(deletedHere.contains) {
            return "\(one ? "the conversation was" : "they were") deleted here, and that delete can no longer be undone"
        }
        return "another process deleted \(one ? "the conversation" : "them")"
    }

    /// "; u undoes the change before it" when there is one.
    private var nextUndo: String { undoHistory.isEmpty ? "" : "; u undoes the change before it" }

    /// `Ctrl-R`: the last change undone is made again, unless the data has moved on since.
    /// Returns whether it did one again.
    @discardableResult
    func redo() throws -> Bool {
        if let slow = slowChange {
            status = Self.saying(slow.change)
            return false
        }
        guard let edit = redoHistory.popLast() else {
            status = "Nothing to redo"
            return false
        }
        if case .deleted(let snapshots) = edit,
            isSlow(conversations: snapshots.count, messages: snapshots.reduce(0) { $0 + $1.conversation.messageCount })
        {
            // Said at once (finding what is there to delete again takes a while too), done
            // after the frame that says it.
            slowChange = (.redo(edit), false)
            status = Self.saying(.redo(edit))
            return false
        }
        return try redo(edit)
    }

    /// Does `edit` again, taken off the redo history (back on it when it fails as it is now).
    @discardableResult
    func redo(_ edit: Edit) throws -> Bool {
        let before = changesRemembered
        do {
            switch edit {
            case .forgotten:
                status = "Nothing to redo"
                return false
            case .deleted(let snapshots):
                let present = try repositories.conversations.conversations(ids: snapshots.map(\.conversation.id))
                    .filter { conversation in snapshots.contains { $0.conversation.publicID == conversation.publicID } }
                guard !present.isEmpty else {
                    status = "Nothing to delete again: another process deleted \(snapshots.count == 1 ? "it" : "them") meanwhile"
                    return false
                }
                try delete(ids: present.map(\.id), redoing: true)
            case .renamed(let id, let from, let to, _, let mark):
                guard let current = try repositories.conversations.conversation(id: id), current.title == from,
                    try repositories.conversations.editMark(id: id, field: .title) == mark
                else {
                    status = "Cannot rename again: the conversation was changed or deleted meanwhile, by another process or a sync"
                    return false
                }
                try rename(id: id, to: to, redoing: true)
            case .pinned(let ids, let pinned, let marks):
                let current = try untouched(try repositories.conversations.conversations(ids: ids).filter { $0.pinned != pinned }, since: marks)
                guard !current.isEmpty else {
                    status = "Cannot \(pinned ? "pin" : "unpin") again: changed meanwhile, by another process or a sync"
                    return false
                }
                try setPinned(current, pinned, redoing: true)
            }
        } catch {
            // Nothing changed: it can be tried again.
            redoHistory.append(edit)
            throw error
        }
        // Done again, as a change of its own: what is redone next expects its marks.
        guard changesRemembered > before else { return false }
        if let done = undoHistory.last { try carryMarks(of: done, into: &redoHistory) }
        return true
    }
}
