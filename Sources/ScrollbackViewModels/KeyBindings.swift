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
    case openAttachment, saveAttachment
    case pin, filter, narrow, jumpToDate, export, overview

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
/// opened from, and the man page lists each. Each screen's type lists its bindings.
public enum BrowserScreen: String, CaseIterable, Sendable {
    case list, reader, results, outline, overview

    /// The screen's type: its bindings, title and help notes.
    var type: any BrowserScreenModel.Type {
        switch self {
        case .list: ListScreen.self
        case .reader: ReaderScreen.self
        case .results: ResultsScreen.self
        case .outline: OutlineScreen.self
        case .overview: OverviewScreen.self
        }
    }

    /// How the man page and help name it.
    public var title: String { type.title }

    /// The bindings of this screen's own, in the order help lists them (the shared ones,
    /// `KeyBindings.shared`, follow them).
    public var bindings: [KeyBinding] { type.bindings }

    /// What its help says after the keys and the mouse.
    var helpNotes: [String] { type.helpNotes }
}

/// A command, its keys and what it does, on the screens it belongs to.
public struct KeyBinding: Sendable {
    public let command: BrowserCommand
    public let keys: [Key]
    public let help: String
    /// The footer's short word for it (`search`, `quit`), when the footer may show it.
    public let hint: String?
    public let screens: Set<BrowserScreen>
    /// When it cannot act (`BrowserViewModel.disabledReason` says why).
    public let conditions: [BindingCondition]
    /// Whether a count before it repeats it (`5j`, `3]`); before another key a count acts once.
    public let repeats: Bool

    init(
        _ command: BrowserCommand, _ keys: [Key], _ help: String, hint: String? = nil, on screens: Set<BrowserScreen> = Set(BrowserScreen.allCases),
        when conditions: [BindingCondition] = [], repeats: Bool = false
    ) {
        self.command = command
        self.keys = keys
        self.help = help
        self.hint = hint
        self.screens = screens
        self.conditions = conditions
        self.repeats = repeats
    }

    /// The same binding on `keys`.
    func on(_ keys: [Key]) -> KeyBinding {
        KeyBinding(command, keys, help, hint: hint, on: screens, when: conditions, repeats: repeats)
    }
}

extension KeyBinding {
    // What the list and the reader do alike to a conversation (the selected one, the one read).
    static func rename(on screen: BrowserScreen) -> KeyBinding {
        KeyBinding(.rename, [.character("r")], "Rename the conversation", on: [screen], when: actsOnShown(screen) + [.writes(verb: "rename")])
    }
    static func delete(on screen: BrowserScreen) -> KeyBinding {
        KeyBinding(.delete, [.character("d")], "Delete the conversation (asks first)", on: [screen], when: actsOnShown(screen) + [.writes(verb: "delete")])
    }
    static func undo(on screen: BrowserScreen) -> KeyBinding {
        KeyBinding(
            .undo, [.character("u")], "Undo the last delete, rename or pin; again for the one before (up to 100)", on: [screen],
            when: actsOnShown(screen) + [.writes(verb: "undo")], repeats: true)
    }
    static func redo(on screen: BrowserScreen) -> KeyBinding {
        KeyBinding(
            .redo, [.control("r")], "Redo what u undid (until the next change)", on: [screen], when: actsOnShown(screen) + [.writes(verb: "redo")],
            repeats: true)
    }
    static func pipe(on screen: BrowserScreen) -> KeyBinding {
        KeyBinding(.pipe, [.character("|")], "Pipe the conversation (Markdown, exact) to a shell command", on: [screen], when: actsOnShown(screen))
    }
    static func pager(on screen: BrowserScreen) -> KeyBinding {
        KeyBinding(.pager, [.character("o")], "Open the conversation in $PAGER (less -R)", on: [screen], when: actsOnShown(screen))
    }
    static func editor(on screen: BrowserScreen) -> KeyBinding {
        KeyBinding(.editor, [.character("e")], "Open the conversation in $EDITOR, read-only", on: [screen], when: actsOnShown(screen))
    }

    /// A search is on its way only from the prompt of the list or the results: what acts on
    /// the conversation shown waits for it there.
    private static func actsOnShown(_ screen: BrowserScreen) -> [BindingCondition] {
        screen == .list || screen == .results ? [.actsOnShown] : []
    }
}

public enum KeyBindings {
    /// Every binding, screen by screen as each lists its own, then the shared ones.
    public static let table: [KeyBinding] = BrowserScreen.allCases.flatMap(\.bindings) + shared

    /// What every screen takes alike.
    static let shared: [KeyBinding] = [
        KeyBinding(.help, [.character("?")], "Show or hide this help", hint: "help"),
        KeyBinding(.suspend, [.control("z")], "Suspend to the shell (fg comes back)"),
    ]

    /// The moving keys of `screen`: down and up, its own paging (`pages`), half pages, the
    /// first and the last.
    static func moving(on screen: BrowserScreen, pages: [KeyBinding]) -> [KeyBinding] {
        [
            KeyBinding(.down, [.character("j"), .down, .control("n")], "Move down (a count first moves that many: 5j)", on: [screen], repeats: true),
            KeyBinding(.up, [.character("k"), .up, .control("p")], "Move up", on: [screen], repeats: true),
        ] + pages + [
            KeyBinding(.halfPageDown, [.control("d")], "Half a page down", on: [screen], repeats: true),
            KeyBinding(.halfPageUp, [.control("u")], "Half a page up", on: [screen], repeats: true),
            KeyBinding(.top, [.character("g"), .home], "Go to the first", on: [screen]),
            KeyBinding(.bottom, [.character("G"), .end], "Go to the last", on: [screen]),
        ]
    }

    /// Paging by `PgDn`/`Ctrl-F` and `PgUp`/`Ctrl-B`, said `down` and `up`.
    static func pages(on screen: BrowserScreen, down: String = "Page down", up: String = "Page up") -> [KeyBinding] {
        [
            KeyBinding(.pageDown, [.pageDown, .control("f")], down, on: [screen], repeats: true),
            KeyBinding(.pageUp, [.pageUp, .control("b")], up, on: [screen], repeats: true),
        ]
    }

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
    private let byScreen: [BrowserScreen: [Key: KeyBinding]]

    public static let standard = Keymap(KeyBindings.table)

    public init(_ bindings: [KeyBinding]) {
        self.bindings = bindings
        var maps: [BrowserScreen: [Key: KeyBinding]] = [:]
        for screen in BrowserScreen.allCases {
            var map: [Key: KeyBinding] = [:]
            for binding in bindings where binding.screens.contains(screen) {
                for key in binding.keys where map[key] == nil { map[key] = binding }
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
                if let chosen = keys[binding.command] { return binding.on(chosen) }
                return binding.on(binding.keys.filter { key in !binding.screens.contains { taken[$0]?.contains(key) == true } })
            })
    }

    public func command(for key: Key, on screen: BrowserScreen) -> BrowserCommand? { byScreen[screen]?[key]?.command }

    /// The binding `key` acts by on `screen`, if any.
    public func binding(for key: Key, on screen: BrowserScreen) -> KeyBinding? { byScreen[screen]?[key] }

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
        return lines + screen.helpNotes
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
