/// Everything the browser can be asked to do.
public enum BrowserCommand: String, CaseIterable, Sendable {
    case down, up, pageDown, pageUp, halfPageDown, halfPageUp, top, bottom
    case open, back, quit
    case search, nextMatch, previousMatch
    case rename, delete, toggleMark, deleteMarked, undo, redo
    case cycleSort, help, suspend
    case previousMessage, nextMessage, previousVersion, nextVersion, outline, nextConversation, previousConversation
    case toggleHidden, toggleExpanded, followLink
    case copyMessage, copyCode, copyConversation, pipe, pager, editor
    case pin, filter, narrow, jumpToDate, export

    /// Its name in the config file's `[keys]`: `page_down`, `copy_message`.
    public var configName: String {
        rawValue.reduce(into: "") { name, character in
            if character.isUppercase { name += "_" + character.lowercased() } else { name.append(character) }
        }
    }

    /// The command a config name stands for.
    public init?(configName: String) {
        guard let command = Self.allCases.first(where: { $0.configName == configName }) else { return nil }
        self = command
    }
}

/// The browser's screens. Each has a keymap of its own: the keys that act there, what they
/// do there, and the footer's hints; the help overlay shows the keymap of the screen it was
/// opened from, and the man page lists each.
public enum BrowserScreen: String, CaseIterable, Sendable {
    case list, reader, results, outline

    /// How the man page and help name it.
    public var title: String {
        switch self {
        case .list: "The list"
        case .reader: "The reader"
        case .results: "Search results"
        case .outline: "The outline of branches"
        }
    }
}

/// A command, its keys and what it does, on the screens it belongs to.
public struct KeyBinding: Sendable {
    public let command: BrowserCommand
    public let keys: [Key]
    public let help: String
    /// The footer's short word for it (`search`, `quit`), when the footer may show it.
    public let hint: String?
    public let screens: Set<BrowserScreen>

    init(_ command: BrowserCommand, _ keys: [Key], _ help: String, hint: String? = nil, on screens: Set<BrowserScreen> = Set(BrowserScreen.allCases)) {
        self.command = command
        self.keys = keys
        self.help = help
        self.hint = hint
        self.screens = screens
    }
}

public enum KeyBindings {
    private static let moving: Set<BrowserScreen> = [.list, .reader, .results, .outline]
    private static let lists: Set<BrowserScreen> = [.list, .results]

    /// Every binding, in the order help lists them. A command may appear once per screen
    /// with its own words there.
    public static let table: [KeyBinding] = [
        KeyBinding(.down, [.character("j"), .down, .control("n")], "Move down (a count first moves that many: 5j)", on: moving),
        KeyBinding(.up, [.character("k"), .up, .control("p")], "Move up", on: moving),
        KeyBinding(.pageDown, [.pageDown, .control("f")], "Scroll a page down (the selection keeps its line)", on: [.list]),
        KeyBinding(.pageUp, [.pageUp, .control("b")], "Scroll a page up", on: [.list]),
        KeyBinding(.pageDown, [.pageDown, .control("f"), .character(" ")], "Page down", on: [.reader]),
        KeyBinding(.pageUp, [.pageUp, .control("b"), .character("b")], "Page up", on: [.reader]),
        KeyBinding(.pageDown, [.pageDown, .control("f")], "Page down", on: [.results, .outline]),
        KeyBinding(.pageUp, [.pageUp, .control("b")], "Page up", on: [.results, .outline]),
        KeyBinding(.halfPageDown, [.control("d")], "Half a page down", on: moving),
        KeyBinding(.halfPageUp, [.control("u")], "Half a page up", on: moving),
        KeyBinding(.top, [.character("g"), .home], "Go to the first", on: moving),
        KeyBinding(.bottom, [.character("G"), .end], "Go to the last", on: moving),
        KeyBinding(.open, [.enter, .character("l"), .right], "Open the conversation", hint: "open", on: lists),
        KeyBinding(.open, [.enter, .character("l"), .right], "Page down", on: [.reader]),
        KeyBinding(.open, [.enter], "Show the branch selected", hint: "show", on: [.outline]),
        KeyBinding(.back, [.escape, .character("h"), .left], "Clear the marks, then the filter", on: [.list]),
        KeyBinding(.back, [.escape, .character("h"), .left], "Back", hint: "back", on: [.reader, .results, .outline]),
        KeyBinding(.quit, [.character("q"), .control("c")], "Quit (Ctrl-C quits from anywhere)", hint: "quit", on: [.list]),
        KeyBinding(.quit, [.character("q")], "Back", on: [.reader, .results, .outline]),
        KeyBinding(.search, [.character("/")], "Search everything, as you type", hint: "search", on: lists),
        KeyBinding(.search, [.character("/")], "Find in this conversation (the branch shown)", hint: "find", on: [.reader]),
        KeyBinding(.nextMatch, [.character("n")], "Next hit", hint: "next", on: [.results]),
        KeyBinding(.previousMatch, [.character("N")], "Previous hit", on: [.results]),
        KeyBinding(.nextMatch, [.character("n")], "Next match in this conversation (wraps, and says so)", hint: "match", on: [.reader]),
        KeyBinding(.previousMatch, [.character("N")], "Previous match in this conversation", on: [.reader]),
        KeyBinding(.nextMatch, [.character("n")], "Back to the last search's results", on: [.list]),
        KeyBinding(.filter, [.character("f")], "Filter: source:NAME model:NAME project:FOLDER since:DATE until:DATE pinned title:WORDS (plain words are the title's)", hint: "filter", on: [.list]),
        KeyBinding(.narrow, [.character("\\")], "Narrow by title as you type (words as / finds them); Enter keeps it, Esc puts back the list", hint: "narrow", on: [.list]),
        KeyBinding(.jumpToDate, [.character(":")], "Go to a date: the newest conversation at or before it (2025-03-14, 2025-03, 3w)", on: [.list]),
        KeyBinding(.toggleMark, [.character(" ")], "Mark or unmark (marks act together: p, c, D)", on: [.list]),
        KeyBinding(.pin, [.character("p")], "Pin or unpin (the marked ones); pinned come first in every order", on: [.list]),
        KeyBinding(.pin, [.character("p")], "Pin or unpin this conversation", on: [.reader]),
        KeyBinding(.rename, [.character("r")], "Rename the conversation", on: [.list, .reader]),
        KeyBinding(.delete, [.character("d")], "Delete the conversation (asks first)", on: [.list, .reader]),
        KeyBinding(.deleteMarked, [.character("D")], "Delete every marked conversation (asks first)", on: [.list]),
        KeyBinding(.undo, [.character("u")], "Undo the last delete, rename or pin; again for the one before (up to 100)", on: [.list, .reader]),
        KeyBinding(.redo, [.control("r")], "Redo what u undid (until the next change)", on: [.list, .reader]),
        KeyBinding(.cycleSort, [.character("s")], "Sort by updated, created or title", on: [.list]),
        KeyBinding(.previousMessage, [.character("{")], "Focus the previous message", on: [.reader]),
        KeyBinding(.nextMessage, [.character("}")], "Focus the next message", on: [.reader]),
        KeyBinding(.previousVersion, [.character("[")], "Previous version of the focused message (‹ 2/3 ›)", hint: "version", on: [.reader]),
        KeyBinding(.nextVersion, [.character("]")], "Next version; the rest follows its branch", on: [.reader]),
        KeyBinding(.nextConversation, [.character("J")], "The next conversation of the list", on: [.reader]),
        KeyBinding(.previousConversation, [.character("K")], "The previous conversation of the list", on: [.reader]),
        KeyBinding(.outline, [.character("t")], "Outline of every branch, to show one", hint: "outline", on: [.reader]),
        KeyBinding(
            .toggleHidden, [.character("z")],
            "Show or hide the hidden messages (tool traffic, reasoning, context), dimmed and marked", on: [.reader]),
        KeyBinding(.toggleExpanded, [.tab], "Open or close the focused tool line (▸)", on: [.reader]),
        KeyBinding(.followLink, [.character("f")], "Open the subagent's conversation the focused tool result names; Esc comes back", on: [.reader]),
        KeyBinding(.outline, [.character("t")], "Back to the reader", on: [.outline]),
        KeyBinding(.copyMessage, [.character("y")], "Copy the focused message", hint: "copy", on: [.reader]),
        KeyBinding(.copyCode, [.character("Y")], "Copy the code block under the cursor", on: [.reader]),
        KeyBinding(.copyConversation, [.character("c")], "Copy the conversation as Markdown (the branch shown)", on: [.reader]),
        KeyBinding(.copyConversation, [.character("c")], "Copy as Markdown: the marked conversations, else the selected one", on: [.list]),
        KeyBinding(.pipe, [.character("|")], "Pipe the conversation (Markdown, exact) to a shell command", on: [.list, .reader]),
        KeyBinding(.export, [.character("x")], "Export to a file (.md, .json, .jsonl): the marked conversations, else the selected one", on: [.list]),
        KeyBinding(.export, [.character("x")], "Export this conversation to a file (.md, .json, .jsonl)", on: [.reader]),
        KeyBinding(.pager, [.character("o")], "Open the conversation in $PAGER (less -R)", on: [.list, .reader]),
        KeyBinding(.editor, [.character("e")], "Open the conversation in $EDITOR, read-only", on: [.list, .reader]),
        KeyBinding(.help, [.character("?")], "Show or hide this help", hint: "help"),
        KeyBinding(.suspend, [.control("z")], "Suspend to the shell (fg comes back)"),
    ]

    /// The command `key` gives on `screen`, if any, by the standard keys.
    public static func command(for key: Key, on screen: BrowserScreen) -> BrowserCommand? { Keymap.standard.command(for: key, on: screen) }

    /// The standard bindings of one screen, in table order.
    public static func keymap(for screen: BrowserScreen) -> [KeyBinding] { Keymap.standard.keymap(for: screen) }

    /// The help overlay's lines for `screen`, by the standard keys.
    public static func helpLines(for screen: BrowserScreen, wheelStep: Int = 3) -> [String] {
        Keymap.standard.helpLines(for: screen, wheelStep: wheelStep)
    }

    /// The footer's hints, by the standard keys.
    public static func hints(_ commands: [BrowserCommand], on screen: BrowserScreen) -> String {
        Keymap.standard.hints(commands, on: screen)
    }
}

/// The keys in use: the standard table, with the config file's changes. Everything that
/// shows or reads keys (the key handling, help, the footer's hints) asks this.
public struct Keymap: Sendable {
    public let bindings: [KeyBinding]
    private let byScreen: [BrowserScreen: [Key: BrowserCommand]]

    public static let standard = Keymap(KeyBindings.table)

    public init(_ bindings: [KeyBinding]) {
        self.bindings = bindings
        var maps: [BrowserScreen: [Key: BrowserCommand]] = [:]
        for screen in BrowserScreen.allCases {
            var map: [Key: BrowserCommand] = [:]
            for binding in bindings where binding.screens.contains(screen) {
                for key in binding.keys where map[key] == nil { map[key] = binding.command }
            }
            maps[screen] = map
        }
        byScreen = maps
    }

    /// The same bindings, each command in `keys` on the keys given instead (on every screen
    /// it acts on). A key given to a command is taken from the others on those screens.
    public func rebinding(_ keys: [BrowserCommand: [Key]]) -> Keymap {
        guard !keys.isEmpty else { return self }
        var taken: [BrowserScreen: Set<Key>] = [:]
        for binding in bindings {
            guard let chosen = keys[binding.command] else { continue }
            for screen in binding.screens { taken[screen, default: []].formUnion(chosen) }
        }
        return Keymap(
            bindings.map { binding in
                if let chosen = keys[binding.command] {
                    return KeyBinding(binding.command, chosen, binding.help, hint: binding.hint, on: binding.screens)
                }
                let kept = binding.keys.filter { key in !binding.screens.contains { taken[$0]?.contains(key) == true } }
                return KeyBinding(binding.command, kept, binding.help, hint: binding.hint, on: binding.screens)
            })
    }

    public func command(for key: Key, on screen: BrowserScreen) -> BrowserCommand? { byScreen[screen]?[key] }

    /// The bindings of one screen, in table order (a command left with no key is not there).
    public func keymap(for screen: BrowserScreen) -> [KeyBinding] {
        bindings.filter { $0.screens.contains(screen) && !$0.keys.isEmpty }
    }

    /// The help overlay's lines for `screen`: its keys, then what they do there, and what
    /// the mouse does (the wheel scrolls `wheelStep` rows).
    public func helpLines(for screen: BrowserScreen, wheelStep: Int = 3) -> [String] {
        let bindings = keymap(for: screen)
        let labels = bindings.map { $0.keys.map(\.description).joined(separator: " ") }
        let width = (labels.map(\.count).max() ?? 0) + 2
        var lines = zip(labels, bindings).map { label, binding in
            label + String(repeating: " ", count: width - label.count) + binding.help
        }
        lines += ["", "Mouse: a click selects, a double click opens, the wheel scrolls \(wheelStep) rows.", "Shift with the mouse selects text, as without scrollback."]
        switch screen {
        case .list:
            lines += ["Pinned conversations come first in every order.", "Editing a line: ← → Home End, Ctrl-A Ctrl-E Ctrl-W Ctrl-U, Alt-B Alt-F."]
        case .reader:
            lines += ["In a prompt: Enter accepts, Esc cancels."]
        case .results, .outline:
            break
        }
        return lines
    }

    /// The footer's hints for `commands` on `screen`, from the table: `? help  / search`.
    public func hints(_ commands: [BrowserCommand], on screen: BrowserScreen) -> String {
        commands.compactMap { command in
            guard let binding = keymap(for: screen).first(where: { $0.command == command && $0.hint != nil }), let hint = binding.hint,
                let key = binding.keys.first
            else { return nil }
            // A pair of keys for a pair of commands: `n/N match`, `[ ] version`.
            let partner: [BrowserCommand: BrowserCommand] = [.nextMatch: .previousMatch, .previousVersion: .nextVersion]
            if let other = partner[command], let otherKey = keymap(for: screen).first(where: { $0.command == other })?.keys.first {
                return "\(key)\(command == .nextMatch ? "/" : " ")\(otherKey) \(hint)"
            }
            return "\(key) \(hint)"
        }.joined(separator: "  ")
    }
}
