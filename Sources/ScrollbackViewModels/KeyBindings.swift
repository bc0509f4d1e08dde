/// Everything the browser can be asked to do.
public enum BrowserCommand: String, CaseIterable, Sendable {
    case down, up, pageDown, pageUp, halfPageDown, halfPageUp, top, bottom
    case open, back, quit
    case search, nextMatch, previousMatch
    case rename, delete, toggleMark, deleteMarked, undo
    case cycleSort, help, suspend
}

/// A command, its default keys and its help text. The help overlay is made from this table.
public struct KeyBinding: Sendable {
    public let command: BrowserCommand
    public let keys: [Key]
    public let help: String
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
        KeyBinding(command: .rename, keys: [.character("r")], help: "Rename the conversation"),
        KeyBinding(command: .delete, keys: [.character("d")], help: "Delete the conversation (asks first)"),
        KeyBinding(command: .toggleMark, keys: [.character(" ")], help: "Mark or unmark"),
        KeyBinding(command: .deleteMarked, keys: [.character("D")], help: "Delete every marked conversation (asks first)"),
        KeyBinding(command: .undo, keys: [.character("u")], help: "Undo the last delete or rename"),
        KeyBinding(command: .cycleSort, keys: [.character("s")], help: "Sort by updated, created or title"),
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

    /// The help overlay's lines: keys, then what they do.
    public static var helpLines: [String] {
        let labels = table.map { $0.keys.map(\.description).joined(separator: " ") }
        let width = (labels.map(\.count).max() ?? 0) + 2
        return zip(labels, table).map { label, binding in
            label + String(repeating: " ", count: width - label.count) + binding.help
        }
    }
}
