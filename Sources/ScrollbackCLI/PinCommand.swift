import ScrollbackModel
import ScrollbackStorage
import TerminalText

/// `scrollback pin ID...` and `scrollback unpin ID...`: every id is resolved first (nothing
/// changes if one is wrong), then all of them change in one transaction. Pinned
/// conversations come first in every order.
struct PinCommand {
    let context: CommandContext
    let pinned: Bool

    func run() throws {
        let store = try context.openStore()
        try context.requireWritable(store)
        let ids = try context.conversationsNamed(in: store).map(\.id)
        let changed = try store.conversations.setPinned(ids: ids, pinned)
        let verb = pinned ? "Pinned" : "Unpinned"
        var line = "\(verb) \(NumberText.grouped(changed)) conversation\(changed == 1 ? "" : "s")"
        let already = ids.count - changed
        if already > 0 { line += "; \(NumberText.grouped(already)) \(already == 1 ? "was" : "were") \(pinned ? "pinned" : "unpinned") already" }
        context.console.line(line + ".")
    }
}
