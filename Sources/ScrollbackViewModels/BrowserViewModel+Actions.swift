import Foundation
import ScrollbackModel
import TerminalText

/// What the screens share: writing (rename, delete, pin, undo) and handing a conversation to a program.
extension BrowserViewModel {
    /// `|`, `o` and `e`: the conversation (the branch shown, in the reader) to a program.
    func hand(_ conversation: ConversationDTO, branch: MessageBranch?, to command: BrowserCommand) throws {
        switch command {
        case .pipe:
            prompt = .pipe(editor: LineEditor(text: lastPipe, selected: true))
        case .pager:
            effect = .page(text: UntrustedText.sanitized(try markdown(of: conversation, branch: branch), keepNewlines: true))
        case .editor:
            effect = .edit(
                text: UntrustedText.sanitized(try markdown(of: conversation, branch: branch), keepNewlines: true),
                name: conversation.publicID.prefix(8) + ".md")
        default:
            break
        }
        pipeSource = (conversation, branch)
    }

    /// A conversation as Markdown, as `export` writes it: the branch given (the one the
    /// reader shows), else its current one, then the other branches by their first lines.
    func markdown(of conversation: ConversationDTO, branch: MessageBranch?) throws -> String {
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
            let all = try repositories.messages.all(conversationID: conversation.id)
            others = MarkdownTranscript.otherBranches(
                all, tree: try repositories.messages.tree(conversationID: conversation.id), shown: messages.map(\.id))
        }
        return MarkdownTranscript.render(conversation, messages, otherBranches: others)
    }

    // MARK: Actions
    func allowWrite(_ action: String) -> Bool {
        if isReadOnly {
            status = "read-only: cannot \(action)"
            return false
        }
        return true
    }

    func delete(ids: [Int64]) throws {
        let doomed = Set(ids)
        if let reader, doomed.contains(reader.conversation.id) {
            // Deleted from the reader: back to the list, on the row after it.
            self.reader = nil
            outline = nil
            // (Opened from the list, it is the list's selection, which the next row replaces.)
            mode = .list
        }
        let fallbacks = list.neighbours(of: list.selection, excluding: doomed)
        let keep = list.selected.map(\.id).flatMap { doomed.contains($0) ? nil : $0 }
        let snapshots = try repositories.conversations.deleteKeepingSnapshots(ids: ids)
        undoAction = .deleted(snapshots)
        list.unmark(doomed)
        try list.reload(keeping: keep, fallbacks: fallbacks, totalChange: -snapshots.count)
        let count = snapshots.count
        status = "Deleted \(count) conversation\(count == 1 ? "" : "s") — u undoes"
    }

    func rename(id: Int64, to title: String) throws {
        guard let before = try repositories.conversations.conversation(id: id) else {
            // Another process deleted it while the editor was open.
            status = "Not renamed: that conversation was deleted meanwhile, by another process"
            try list.reload(keeping: id, totalChange: nil)
            return
        }
        let renamed = try repositories.conversations.rename(id: id, to: title)
        undoAction = .renamed(id: id, title: before.title)
        if let reader, reader.conversation.id == id {
            try reader.reload(renamed)
            try list.reload(keeping: list.selected?.id)
        } else {
            try list.reload(keeping: id)
        }
        status = "Renamed — u undoes"
    }

    /// Pins `ids` (unpins them when all are pinned already), in one transaction and one
    /// undo; the selected row stays selected wherever pinning moves it.
    func pin(ids: [Int64]) throws {
        let current = try repositories.conversations.conversations(ids: ids)
        guard !current.isEmpty else {
            status = "Nothing to pin: that conversation was deleted meanwhile, by another process"
            return
        }
        let target = !current.allSatisfy(\.pinned)
        let changing = current.filter { $0.pinned != target }.map(\.id)
        _ = try repositories.conversations.setPinned(ids: changing, target)
        undoAction = .pinned(ids: changing, pinned: target)
        try list.reload(keeping: list.selected?.id)
        let count = changing.count
        let noun = count == 1 ? "the conversation" : "\(NumberText.grouped(count)) conversations"
        status = "\(target ? "Pinned" : "Unpinned") \(noun)\(target ? " (first in every order)" : "") — u undoes"
    }

    func undo() throws {
        guard allowWrite("undo") else { return }
        switch undoAction {
        case .pinned(let ids, let pinned):
            _ = try repositories.conversations.setPinned(ids: ids, !pinned)
            undoAction = nil
            try list.reload(keeping: list.selected?.id)
            status = pinned ? "Pin undone" : "Unpin undone"
        case nil:
            status = "Nothing to undo"
        case .deleted(let snapshots):
            try repositories.conversations.restore(snapshots)
            undoAction = nil
            // The first restored row in the list's order is selected, so that it and the
            // others after it are in view.
            let order = list.order
            let first = snapshots.map(\.conversation).min { order.sorts($0, before: $1) }
            try list.reload(keeping: first?.id, totalChange: snapshots.count)
            status = "Restored \(snapshots.count) conversation\(snapshots.count == 1 ? "" : "s")"
        case .renamed(let id, let title):
            guard try repositories.conversations.conversation(id: id) != nil else {
                undoAction = nil
                status = "Cannot undo the rename: another process deleted the conversation"
                return
            }
            _ = try repositories.conversations.rename(id: id, to: title)
            undoAction = nil
            try list.reload(keeping: id)
            status = "Rename undone"
        }
    }
}
