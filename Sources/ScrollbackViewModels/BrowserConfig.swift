import Foundation
import TerminalText

/// The roles of the browser's palette: what the config file's `[colors]` names.
public enum ColorRole: String, CaseIterable, Sendable {
    case header, selection, marked, highlight, hint, user, assistant, system, tool, code, fence, attachment, conversations, tokens

    /// The standard look: attribute words, then at most one colour.
    public var standard: String {
        switch self {
        case .header: "bold reverse"
        case .selection: "reverse"
        case .marked: "bold"
        case .highlight: "bold underline yellow"
        case .hint: "dim"
        case .user: "bold green"
        case .assistant: "bold cyan"
        case .system: "bold yellow"
        case .tool: "bold magenta"
        case .code: "green"
        case .fence: "dim"
        case .attachment: "bold blue"
        case .conversations: "blue"
        case .tokens: "magenta"
        }
    }

    public var help: String {
        switch self {
        case .header: "the top line"
        case .selection: "the selected row"
        case .marked: "marked rows"
        case .highlight: "search and find matches"
        case .hint: "the footer's key hints"
        case .user, .system, .tool: "the header of a \(rawValue) message"
        case .assistant: "the header of an assistant message"
        case .code: "code blocks"
        case .fence: "code fences (```)"
        case .attachment: "an attachment's line in the reader (▣ name, size, type)"
        case .conversations: "the overview's bars of conversations"
        case .tokens: "the overview's bars of tokens"
        }
    }

    /// The words a colour may be made of.
    public static let attributes = ["bold", "dim", "reverse", "underline", "plain"]
    public static let colors = ["red", "green", "yellow", "blue", "magenta", "cyan"]
}

/// `config.toml`: key bindings, colours, the date format, the wheel's step and the
/// programs the browser hands text to. A TOML subset read by hand: `[section]`,
/// `name = "text"`, `name = 3`, `name = ["a", "b"]`, comments after `#`.
///
/// A line that is wrong is reported (`config.toml:12: unknown key 'colour'`) and left out:
/// what it would have set keeps its default; every other line still counts.
public struct BrowserConfig: Sendable, Equatable {
    public var keys: [BrowserCommand: [Key]] = [:]
    public var colors: [ColorRole: String] = [:]
    public var dateFormat = BrowserConfig.standardDateFormat
    public var wheelStep = 3
    public var pager: String?
    public var editor: String?
    public var clipboard: String?
    /// `[sync] secret_command`: a shell command that prints a sync secret, `%s` its name.
    public var secretCommand: String?
    /// `[sync] interval`: seconds between the browser's background syncs.
    public var syncInterval = 60
    /// `[sync] fetch_attachments`: `always` fetches every attachment's bytes another machine
    /// sent with each sync; `on-open` (the default) when it is first shown or opened.
    public var fetchAttachmentsAlways = false
    /// `[sync] snapshot_after`: a sync makes a snapshot once the server holds this many
    /// changes after the newest one (0: only `sync snapshot` makes them).
    public var snapshotAfter = 100_000
    /// `[sync] keep_months`: months of snapshots kept, one a month, besides the newest.
    public var keepMonths = 12
    /// `[sync] compact_after_days`: a change goes from the server once every machine that
    /// synced in this many days has it.
    public var compactAfterDays = 90
    /// `[sync] secret_timeout`: seconds a secret_command may take before it is stopped.
    public var secretTimeout = 15
    /// `[sources] follow`: folders of coding agents' sessions the browser follows besides
    /// the session files imported before (`~/` is the home folder).
    public var followFolders: [String] = []
    /// `[sources] follow_interval`: seconds between looks at the followed files; 0: never.
    public var followInterval = 1
    /// What was wrong, one line each: `config.toml:12: unknown key 'colour'`.
    public var problems: [String] = []

    public static let standardDateFormat = "%Y-%m-%d %H:%M"

    public init() {}

    /// The keymap with this file's keys (a command given its standard keys is left as it is).
    public var keymap: Keymap {
        let changed = keys.filter { command, keys in KeyBindings.table.first { $0.command == command }?.keys != keys }
        return Keymap.standard.rebinding(changed)
    }

    // MARK: Reading

    public static func parse(_ text: String, name: String = "config.toml") -> BrowserConfig {
        var config = BrowserConfig()
        var section = ""
        var seen = Set<String>()
        // A byte-order mark (some editors write one) is not text of the first line.
        let text = text.hasPrefix("\u{FEFF}") ? String(text.dropFirst()) : text
        // Lines end at LF or CRLF (Swift reads "\r\n" as one character); a stray CR is space.
        let split = text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" })
        for (offset, rawLine) in split.enumerated() {
            let number = offset + 1
            func problem(_ message: String) { config.problems.append("\(name):\(number): \(message)") }
            if rawLine.contains("\u{FFFD}") {
                problem("this line is not UTF-8 text; it is left out")
                continue
            }
            let line = stripComment(String(rawLine)).trimmingCharacters(in: CharacterSet(charactersIn: " \t\r"))
            if line.isEmpty { continue }
            if line.hasPrefix("[") {
                guard line.hasSuffix("]") else {
                    problem("a section needs a closing ']'")
                    continue
                }
                let name = String(line.dropFirst().dropLast()).trimmingCharacters(in: .whitespaces)
                guard ["keys", "colors", "display", "programs", "sync", "sources"].contains(name) else {
                    problem("unknown section '\(shown(name))'; the sections are [keys], [colors], [display], [programs], [sync] and [sources]")
                    section = "?"
                    continue
                }
                section = name
                continue
            }
            guard let equals = line.firstIndex(of: "=") else {
                problem("expected name = value")
                continue
            }
            let key = line[..<equals].trimmingCharacters(in: .whitespaces)
            let valueText = line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            if section == "?" { continue }  // Said once, at the section.
            guard !key.isEmpty else {
                problem("expected name = value")
                continue
            }
            let value: Value
            do {
                value = try Value.parse(valueText)
            } catch let error as ConfigError {
                problem(error.message)
                continue
            } catch {
                continue
            }
            if !seen.insert(section + "." + key).inserted {
                problem("'\(shown(key))' is set twice; the later line counts")
            }
            if let message = config.apply(section: section, key: key, value: value) { problem(message) }
        }
        return config
    }

    /// Sets one name; the problem when the name or the value is wrong.
    private mutating func apply(section: String, key: String, value: Value) -> String? {
        switch section {
        case "keys":
            guard let command = BrowserCommand(configName: key) else {
                return "unknown key '\(Self.shown(key))' in [keys]; the commands are listed in `scrollback config --print-default`"
            }
            let names: [String]
            switch value {
            case .text(let one): names = [one]
            case .list(let many): names = many
            case .number: return "'\(key)' takes a key name or a list of them, like [\"j\", \"Down\"]"
            }
            var parsed: [Key] = []
            for name in names {
                // What a terminal sends for these is another key, or the browser's own.
                let reserved: [Key: String] = [
                    .control("c"): "Ctrl-C always quits", .control("z"): "Ctrl-Z always suspends",
                    .control("m"): "Ctrl-M is Enter to a terminal (use Enter)", .control("j"): "Ctrl-J is Enter to a terminal (use Enter)",
                    .control("i"): "Ctrl-I is Tab to a terminal (use Tab)", .control("h"): "Ctrl-H is Backspace to many terminals (use Backspace)",
                ]
                let own: [Key: BrowserCommand] = [.control("c"): .quit, .control("z"): .suspend]
                if let key = Key(configName: name), let why = reserved[key], own[key] != command { return "'\(Self.shown(name))' cannot be given to \(key == .control("c") ? "another command" : "a command"): \(why)" }
                guard let key = Key(configName: name) else {
                    return "'\(Self.shown(name))' is not a key name (a character, Ctrl-X, Alt-x, Up, Down, Left, Right, PgUp, PgDn, Home, End, Enter, Esc, Tab, Space, Backspace, Delete)"
                }
                parsed.append(key)
            }
            // A key given to two commands that act on the same screen: the later line loses.
            let screens = Set(KeyBindings.table.filter { $0.command == command }.flatMap(\.screens))
            for (other, otherKeys) in keys where other != command {
                let otherScreens = Set(KeyBindings.table.filter { $0.command == other }.flatMap(\.screens))
                if let clash = parsed.first(where: otherKeys.contains), !screens.isDisjoint(with: otherScreens) {
                    return "'\(Self.shown(clash.configName ?? ""))' is given to \(other.configName) already; this line is left out"
                }
            }
            keys[command] = parsed
        case "colors":
            guard let role = ColorRole(rawValue: key) else {
                return "unknown key '\(Self.shown(key))' in [colors]; the roles are \(ColorRole.allCases.map(\.rawValue).joined(separator: ", "))"
            }
            guard case .text(let spec) = value else { return "'\(key)' takes words in quotes, like \"bold yellow\"" }
            let words = spec.split(separator: " ").map { String($0).lowercased() }
            guard let wrong = words.first(where: { !ColorRole.attributes.contains($0) && !ColorRole.colors.contains($0) }) else {
                guard words.filter(ColorRole.colors.contains).count <= 1 else { return "'\(key)' takes one colour at most" }
                colors[role] = words.joined(separator: " ")
                return nil
            }
            return "'\(Self.shown(wrong))' is not a colour word: use \((ColorRole.attributes + ColorRole.colors).joined(separator: ", "))"
        case "display":
            switch key {
            case "wheel_step":
                guard case .number(let step) = value, (1...50).contains(step) else { return "wheel_step is a whole number from 1 to 50" }
                wheelStep = step
            case "date_format":
                guard case .text(let format) = value, !format.isEmpty, format.count <= 40 else {
                    return "date_format is a strftime format in quotes, at most 40 characters, like \"\(Self.standardDateFormat)\""
                }
                // Only the conversions strftime(3) names, without widths or modifiers.
                let allowed = Set("aAbBcCdDeFgGhHIjmMnprRStTuUVwWxXyYzZ%")
                var characters = format.makeIterator()
                while let character = characters.next() {
                    guard character == "%" else { continue }
                    guard let conversion = characters.next(), allowed.contains(conversion) else {
                        return "date_format: '%' must be followed by a strftime conversion (Y m d H M S a b …); '%%' is a percent sign"
                    }
                }
                dateFormat = format
            default:
                return "unknown key '\(Self.shown(key))' in [display]; the names are wheel_step and date_format"
            }
        case "programs":
            guard case .text(let command) = value else { return "'\(key)' is a shell command in quotes" }
            let chosen = command.trimmingCharacters(in: .whitespaces).isEmpty ? nil : command
            switch key {
            case "pager": pager = chosen
            case "editor": editor = chosen
            case "clipboard": clipboard = chosen
            default: return "unknown key '\(Self.shown(key))' in [programs]; the names are pager, editor and clipboard"
            }
        case "sync":
            switch key {
            case "secret_command":
                guard case .text(let command) = value else { return "secret_command is a shell command in quotes, like \"pass show scrollback/%s\"" }
                let trimmed = command.trimmingCharacters(in: .whitespaces)
                guard trimmed.isEmpty || trimmed.contains("%s") else {
                    return "secret_command needs %s where the secret's name (url or key) goes, like \"pass show scrollback/%s\""
                }
                secretCommand = trimmed.isEmpty ? nil : trimmed
            case "interval":
                guard case .number(let seconds) = value, (10...3600).contains(seconds) else {
                    return "interval is a whole number of seconds from 10 to 3600"
                }
                syncInterval = seconds
            case "secret_timeout":
                guard case .number(let seconds) = value, (1...600).contains(seconds) else {
                    return "secret_timeout is a whole number of seconds from 1 to 600"
                }
                secretTimeout = seconds
            case "fetch_attachments":
                guard case .text(let when) = value, ["always", "on-open"].contains(when) else {
                    return "fetch_attachments is \"always\" (with every sync) or \"on-open\" (when an attachment is first shown or opened)"
                }
                fetchAttachmentsAlways = when == "always"
            case "snapshot_after":
                guard case .number(let count) = value, (0...100_000_000).contains(count) else {
                    return "snapshot_after is a whole number of changes from 0 (only `sync snapshot` makes one) to 100000000"
                }
                snapshotAfter = count
            case "keep_months":
                guard case .number(let months) = value, (0...120).contains(months) else {
                    return "keep_months is a whole number of months from 0 (the newest snapshot only) to 120"
                }
                keepMonths = months
            case "compact_after_days":
                guard case .number(let days) = value, (1...3650).contains(days) else {
                    return "compact_after_days is a whole number of days from 1 to 3650"
                }
                compactAfterDays = days
            default:
                return "unknown key '\(Self.shown(key))' in [sync]; the names are secret_command, secret_timeout, interval, fetch_attachments, snapshot_after, keep_months and compact_after_days"
            }
        case "sources":
            switch key {
            case "follow":
                guard case .text(let folders) = value else { return "follow is folders in quotes, separated by ':', like \"~/.claude/projects\"" }
                followFolders = folders.split(separator: ":").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            case "follow_interval":
                guard case .number(let seconds) = value, (0...3600).contains(seconds) else {
                    return "follow_interval is a whole number of seconds from 0 (never) to 3600"
                }
                followInterval = seconds
            default:
                return "unknown key '\(Self.shown(key))' in [sources]; the names are follow and follow_interval"
            }
        default:
            return "'\(Self.shown(key))' is outside a section; put it under [keys], [colors], [display], [programs], [sync] or [sources]"
        }
        return nil
    }

    /// Text from the file, safe to show and short.
    static func shown(_ text: String) -> String { DisplayWidth.truncated(UntrustedText.sanitized(text), to: 40) }

    /// The line without a comment: `#` outside quotes.
    static func stripComment(_ line: String) -> String {
        var quoted = false
        var escaped = false
        var result = ""
        for character in line {
            if escaped {
                escaped = false
            } else if character == "\\" && quoted {
                escaped = true
            } else if character == "\"" {
                quoted.toggle()
            } else if character == "#" && !quoted {
                break
            }
            result.append(character)
        }
        return result
    }

    struct ConfigError: Error {
        let message: String
    }

    enum Value {
        case text(String)
        case number(Int)
        case list([String])

        static func parse(_ text: String) throws -> Value {
            if text.hasPrefix("[") {
                guard text.hasSuffix("]") else { throw ConfigError(message: "a list needs a closing ']' on the same line") }
                var items: [String] = []
                var rest = Substring(text.dropFirst().dropLast()).drop { $0 == " " }
                while !rest.isEmpty {
                    let (item, after) = try string(rest)
                    items.append(item)
                    rest = after.drop { $0 == " " }
                    if rest.hasPrefix(",") { rest = rest.dropFirst().drop { $0 == " " } } else if !rest.isEmpty {
                        throw ConfigError(message: "items of a list are separated by commas")
                    }
                }
                return .list(items)
            }
            if text.hasPrefix("\"") {
                let (value, rest) = try string(Substring(text))
                guard rest.trimmingCharacters(in: .whitespaces).isEmpty else { throw ConfigError(message: "text after the closing quote") }
                return .text(value)
            }
            if let number = Int(text), text.count <= 9 { return .number(number) }
            throw ConfigError(message: "a value is text in double quotes, a whole number, or a list in [ ]")
        }

        /// A double-quoted string at the start of `text` (escapes \" \\ \n \t), and the rest.
        static func string(_ text: Substring) throws -> (String, Substring) {
            guard text.first == "\"" else { throw ConfigError(message: "text goes in double quotes") }
            var result = ""
            var index = text.index(after: text.startIndex)
            while index < text.endIndex {
                let character = text[index]
                if character == "\"" { return (result, text[text.index(after: index)...]) }
                if character == "\\" {
                    index = text.index(after: index)
                    guard index < text.endIndex else { break }
                    switch text[index] {
                    case "\"": result.append("\"")
                    case "\\": result.append("\\")
                    case "n": result.append("\n")
                    case "t": result.append("\t")
                    default: throw ConfigError(message: "unknown escape '\\\(shown(String(text[index])))' in quotes")
                    }
                } else {
                    result.append(character)
                }
                index = text.index(after: index)
            }
            throw ConfigError(message: "a quote is not closed")
        }
    }

    // MARK: The default file

    /// The whole default file, with comments: every command and its keys, every colour role,
    /// the display settings and the programs. `scrollback config --print-default` prints it.
    public static func defaultFile() -> String {
        var text = """
            # scrollback's configuration: $XDG_CONFIG_HOME/scrollback/config.toml
            # (else ~/.config/scrollback/config.toml). Every line here is a default; change the
            # ones you want. A line that is wrong is reported when the browser starts and left
            # out: what it would set keeps its default.

            [keys]
            # Any command to any key, on the screens where the command acts. Names: a character,
            # Ctrl-X, Alt-x, Up, Down, Left, Right, PgUp, PgDn, Home, End, Enter, Esc, Tab, Space,
            # Backspace, Delete. A key given here is taken from the command that had it.

            """
        for command in BrowserCommand.allCases {
            let bindings = KeyBindings.table.filter { $0.command == command }
            guard let first = bindings.first else { continue }
            let keys = first.keys.compactMap(\.configName)
            // What it does on each screen, the screens that say it alike together.
            var said: [(help: String, screens: [BrowserScreen])] = []
            for screen in BrowserScreen.allCases {
                guard let help = bindings.first(where: { $0.screens.contains(screen) })?.help else { continue }
                if let index = said.firstIndex(where: { $0.help == help }) { said[index].screens.append(screen) } else { said.append((help, [screen])) }
            }
            let parts = said.enumerated().map { index, part in
                let help = index == 0 ? part.help : part.help.prefix(1).lowercased() + part.help.dropFirst()
                return "\(help) (\(part.screens.map(\.rawValue).joined(separator: ", ")))"
            }
            text += "# \(parts.joined(separator: "; "))\n"
            text += "\(command.configName) = [\(keys.map(quoted).joined(separator: ", "))]\n"
        }
        text += """

            [colors]
            # Words: \(ColorRole.attributes.joined(separator: ", ")), and at most one colour of \(ColorRole.colors.joined(separator: ", ")).
            # Without colour (NO_COLOR, a monochrome terminal) only the other words count.

            """
        for role in ColorRole.allCases {
            text += "\(role.rawValue) = \(quoted(role.standard))  # \(role.help)\n"
        }
        text += """

            [display]
            # Times in the reader's message headers, as strftime(3) writes them (local time, TZ).
            date_format = \(quoted(standardDateFormat))
            # Rows the mouse wheel scrolls.
            wheel_step = 3

            [programs]
            # Shell commands (run by /bin/sh). Text goes on their standard input; the editor gets
            # a file name. Empty: $PAGER (else less -R), $VISUAL or $EDITOR (else vi), and for
            # the clipboard wl-copy, xclip, xsel or pbcopy when found (besides OSC 52).
            pager = ""
            editor = ""
            clipboard = ""

            [sync]
            # Only when sync is on (`scrollback sync init`). Where the connection string and the
            # key come from, besides $SCROLLBACK_SYNC_URL and $SCROLLBACK_SYNC_KEY: a shell
            # command that prints one (%s is its name: url or key), like "pass show scrollback/%s";
            # else the file secrets beside this one (mode 0600).
            secret_command = ""
            # Seconds the command may take (a pinentry waiting for a passphrase); then it is
            # stopped, with everything it started, and sync says so.
            secret_timeout = 15
            # Seconds between the browser's syncs (it also syncs soon after a change).
            interval = 60
            # When the bytes of an attachment another machine added come here: "on-open" when it
            # is first shown in the reader or opened (`attachment get` too), "always" with every
            # sync (the whole history's files on this disk).
            fetch_attachments = "on-open"

            [sources]
            # The browser follows the coding agents' session files imported before (Claude Code,
            # Codex): what an agent appends shows within a second or two. Folders to watch for
            # new sessions too, separated by ':' (like "~/.claude/projects:~/.codex/sessions");
            # the places `scrollback import` found are watched once something of them is imported.
            follow = ""
            # Seconds between looks (a stat of each file, nothing read unless it grew); 0: never.
            follow_interval = 1

            """
        return text
    }

    static func quoted(_ text: String) -> String {
        "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }
}
