/// Everything the browser can be asked to do.
public enum BrowserCommand: String, CaseIterable, Sendable {
    case down, up, pageDown, pageUp, halfPageDown, halfPageUp, top, bottom
    case open, back, quit
    case search, nextMatch, previousMatch
    case rename, delete, toggleMark, deleteMarked, undo
    case cycleSort, help, suspend
    case previousMessage, nextMessage, previousVersion, nextVersion, outline
    case copyMessage, copyCode, copyConversation, pipe, pager, editor
    case pin, filter
}

/// A command, its default keys and its help text. The help overlay is made from this table.
public struct KeyBinding: Sendable {
    /// Where a command does something: the help of each screen lists those.
    public enum Scope: Sendable {
        case everywhere, list, reader
    }

    public let command: BrowserCommand
    public let keys: [Key]
    public let help: String
    public let scope: Scope

    init(command: BrowserCommand, keys: [Key], help: String, scope: Scope = .everywhere) {
        self.command = command
        self.keys = keys
        self.help = help
        self.scope = scope
    }
}

public enum KeyBindings {
    public static let table: [KeyBinding] = [
        KeyBinding(command: .down, keys: [.character("j"), .down, .wheelDown], help: "Move down"),
        KeyBinding(command: .up, keys: [.character("k"), .up, .wheelUp], help: "Move up"),
        KeyBinding(command: .pageDown, keys: [.pageDown, .control("f")], help: "Page down"),
        KeyBinding(command: .pageUp, keys: [.pageUp, .control("b")], help: "Page up"),
        KeyBinding(command: .halfPageDown, keys: [.control("d")], help: "Half a page down"),
        KeyBinding(command: .halfPageUp, keys: [.control("u")], help: "Half a page up"),
        KeyBinding(command: .top, keys: [.character("g"), .home], help: "Go to the first"),
        KeyBinding(command: .bottom, keys: [.character("G"), .end], help: "Go to the last"),
        KeyBinding(command: .open, keys: [.enter, .character("l"), .right], help: "Open the conversation"),
        KeyBinding(command: .back, keys: [.escape, .character("h"), .left], help: "Back (clears marks in the list)"),
        KeyBinding(command: .quit, keys: [.character("q"), .control("c")], help: "Back; quit from the list"),
        KeyBinding(command: .search, keys: [.character("/")], help: "Search everything (as you type); in the reader, find in it"),
        KeyBinding(command: .nextMatch, keys: [.character("n")], help: "Next match (wraps in the reader)"),
        KeyBinding(command: .previousMatch, keys: [.character("N")], help: "Previous match (wraps in the reader)"),
        KeyBinding(command: .rename, keys: [.character("r")], help: "Rename the conversation", scope: .list),
        KeyBinding(command: .delete, keys: [.character("d")], help: "Delete the conversation (asks first)", scope: .list),
        KeyBinding(command: .toggleMark, keys: [.character(" ")], help: "Mark or unmark", scope: .list),
        KeyBinding(command: .deleteMarked, keys: [.character("D")], help: "Delete every marked conversation (asks first)", scope: .list),
        KeyBinding(command: .undo, keys: [.character("u")], help: "Undo the last delete or rename", scope: .list),
        KeyBinding(command: .cycleSort, keys: [.character("s")], help: "Sort by updated, created or title", scope: .list),
        KeyBinding(
            command: .pin, keys: [.character("p")],
            help: "Pin or unpin (the marked ones in the list); pinned come first in every order"),
        KeyBinding(command: .previousMessage, keys: [.character("{")], help: "Focus the previous message", scope: .reader),
        KeyBinding(command: .nextMessage, keys: [.character("}")], help: "Focus the next message", scope: .reader),
        KeyBinding(command: .previousVersion, keys: [.character("[")], help: "Previous version of the focused message (‹ 2/3 ›)", scope: .reader),
        KeyBinding(command: .nextVersion, keys: [.character("]")], help: "Next version; the rest follows its branch", scope: .reader),
        KeyBinding(command: .outline, keys: [.character("t")], help: "Outline of every branch, to show one", scope: .reader),
        KeyBinding(command: .copyMessage, keys: [.character("y")], help: "Copy the focused message", scope: .reader),
        KeyBinding(
            command: .copyCode, keys: [.character("Y")],
            help: "Copy the code block under the cursor (in the list: the conversation as Markdown)"),
        KeyBinding(
            command: .copyConversation, keys: [.character("c")],
            help: "Copy the conversation as Markdown (in the list: the marked ones, else the selected one)"),
        KeyBinding(command: .pipe, keys: [.character("|")], help: "Pipe the conversation (Markdown, exact) to a shell command"),
        KeyBinding(command: .pager, keys: [.character("o")], help: "Open the conversation in $PAGER (less -R)"),
        KeyBinding(command: .editor, keys: [.character("e")], help: "Open the conversation in $EDITOR, read-only"),
        KeyBinding(
            command: .filter, keys: [.character("f")],
            help: "Filter: source:NAME model:NAME since:DATE until:DATE pinned (Esc clears marks, then the filter)", scope: .list),
        KeyBinding(command: .help, keys: [.character("?")], help: "Show or hide this help"),
        KeyBinding(command: .suspend, keys: [.control("z")], help: "Suspend to the shell (fg comes back)"),
    ]

    private static let byKey: [Key: BrowserCommand] = {
        var map: [Key: BrowserCommand] = [:]
        for binding in table {
            for key in binding.keys where map[key] == nil { map[key] = binding.command }
        }
        return map
    }()

    public static func command(for key: Key) -> BrowserCommand? { byKey[key] }

    /// The help overlay's lines for the list (`reader` false) or the reader: keys, then
    /// what they do.
    public static func helpLines(reader: Bool) -> [String] {
        let bindings = table.filter { $0.scope == .everywhere || $0.scope == (reader ? .reader : .list) }
        let labels = bindings.map { $0.keys.map(\.description).joined(separator: " ") }
        let width = (labels.map(\.count).max() ?? 0) + 2
        return zip(labels, bindings).map { label, binding in
            label + String(repeating: " ", count: width - label.count) + binding.help
        }
    }
}
