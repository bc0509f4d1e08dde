import ScrollbackViewModels

/// The man page and the shell completions, made from the same tables as the parser and
/// `--help` (`CommandTable`) and the browser's keys (`KeyBindings`), so that they cannot
/// drift: `Resources/` holds what these return, and a test compares them.
enum Documentation {
    static let shells = ["bash", "zsh", "fish"]

    /// The environment variables scrollback reads, and what for.
    static let environment: [(name: String, help: String)] = [
        ("SCROLLBACK_DB", "the database, unless --db or --demo is given"),
        ("XDG_DATA_HOME", "where the database lives by default: $XDG_DATA_HOME/scrollback/history.sqlite (else ~/.local/share/…)"),
        ("XDG_CACHE_HOME", "where the demo database lives: $XDG_CACHE_HOME/scrollback/demo.sqlite (else ~/.cache/…)"),
        ("XDG_CONFIG_HOME", "where the config file is: $XDG_CONFIG_HOME/scrollback/config.toml (else ~/.config/…)"),
        ("HOME", "the base of the default folders when the XDG variables are not set"),
        ("TERM", "the terminal the browser draws on; an unknown or dumb terminal is refused with a note"),
        ("NO_COLOR", "when set and not empty, the browser draws without colour"),
        ("PAGER", "the pager o opens the conversation in (default: less -R); run by /bin/sh, the text on its standard input"),
        ("VISUAL, EDITOR", "the editor e opens the conversation in, as a read-only temporary file (default: vi)"),
        ("SCROLLBACK_CLIPBOARD", "a shell command that takes copied text on standard input, used besides OSC 52 (default: wl-copy, xclip, xsel or pbcopy, when found)"),
        ("WAYLAND_DISPLAY, DISPLAY", "which clipboard program is looked for: wl-copy under Wayland, xclip or xsel under X"),
        ("TMPDIR", "where the editor's temporary copy is made (default /tmp), in a folder only you can enter"),
        ("SCROLLBACK_SYNC_URL", "the sync server's connection string (libpq: a URI or key=value words), before secret_command and the secrets file; read-only"),
        ("SCROLLBACK_SYNC_KEY", "the sync key (44 characters of base64, as sync key show prints it), before secret_command and the secrets file; read-only"),
    ]

    /// The files scrollback reads and writes.
    static let files: [(name: String, help: String)] = [
        ("$XDG_DATA_HOME/scrollback/history.sqlite", "the database (SQLite, WAL mode), with its -wal and -shm beside it"),
        ("history.sqlite.schema-N-TIME.backup", "a copy made beside the database before its schema is upgraded"),
        ("$XDG_CACHE_HOME/scrollback/demo.sqlite", "the demo database (--demo)"),
        ("$XDG_CONFIG_HOME/scrollback/config.toml", "the browser's config (else ~/.config/scrollback/config.toml): keys, colours, date format, wheel step, programs; scrollback config --print-default writes the default file"),
        ("$XDG_CONFIG_HOME/scrollback/secrets", "sync's connection string and key (mode 0600 in a folder of mode 0700, replaced whole; refused when a symlink or readable by others); [sync] secret_command in config.toml reads them from a password manager instead"),
        ("history.sqlite.sync-lock", "beside the database: held while a sync runs, so that one runs at a time"),
    ]

    // MARK: Man page

    /// `scrollback.1`, in roff (`man -l Resources/scrollback.1` shows it).
    static func manPage() -> String {
        var page = """
            .TH SCROLLBACK 1 "" "scrollback \(roff(Scrollback.version))" "User Commands"
            .SH NAME
            scrollback \\- browse, search and keep your AI chat history in the terminal
            .SH SYNOPSIS
            .B scrollback
            [\\fIOPTION\\fR]...
            .br
            .B scrollback
            \\fICOMMAND\\fR [\\fIOPTION\\fR]... [\\fIARGUMENT\\fR]...
            .SH DESCRIPTION
            Without a command, scrollback opens the browser on the database: conversations newest first, \
            a reader for each (one branch of its tree of answers at a time), and search over every message. \
            Away from a terminal it prints a summary instead. The commands below script the same data; \
            most take \\fB\\-\\-json\\fR.

            """
        page += ".SH OPTIONS\n"
        for option in CommandTable.global + CommandTable.browser { page += item(option) }
        page += ".SH COMMANDS\n"
        for command in CommandTable.commands {
            page += ".SS \(roff(command.name))\n\(roff(command.summary)).\n.PP\n.B \(roff(command.usage))\n"
            for option in command.options { page += item(option) }
            page += ".PP\nExample:\n.RS\n.B \(roff(command.example))\n.RE\n"
        }
        page += ".SH KEYS\nIn the browser, each screen has keys of its own (\\fB?\\fR shows those of the screen it is opened from):\n"
        for screen in BrowserScreen.allCases {
            page += ".SS \(roff(screen.title))\n"
            for binding in KeyBindings.keymap(for: screen) {
                page += ".TP\n.B \(roff(binding.keys.map(\.description).joined(separator: ", ")))\n\(roff(binding.help))\n"
            }
        }
        page += ".SH ENVIRONMENT\n"
        for variable in environment { page += ".TP\n.B \(variable.name)\n\(roff(variable.help))\n" }
        page += ".SH FILES\n"
        for file in files { page += ".TP\n.I \(roff(file.name))\n\(roff(file.help))\n" }
        page += """
            .SH EXIT STATUS
            0 on success; 1 when something failed (one line on standard error says what to do); \
            2 for a usage error; 128 + n when ended by signal n (130 for Ctrl-C).
            .SH SEE ALSO
            .BR sqlite3 (1),
            .BR llm (1)

            """
        return page
    }

    private static func item(_ option: OptionSpec) -> String {
        let short = option.short.map { "\\fB\\-\($0)\\fR, " } ?? ""
        let name = short + "\\fB\(roff(option.name))\\fR" + (option.value.map { " \\fI\(roff($0))\\fR" } ?? "")
        return ".TP\n\(name)\n\(roff(option.help))\n"
    }

    /// Text safe in roff: backslashes and dashes escaped, no line starting a request.
    static func roff(_ text: String) -> String {
        var escaped = text.replacingOccurrences(of: "\\", with: "\\e").replacingOccurrences(of: "-", with: "\\-")
        escaped = escaped.replacingOccurrences(of: "\n", with: " ")
        if escaped.hasPrefix(".") || escaped.hasPrefix("'") { escaped = "\\&" + escaped }
        return escaped
    }

    // MARK: Completions

    /// The completion script for `shell` (one of `shells`).
    static func completions(for shell: String) -> String? {
        switch shell {
        case "bash": bash()
        case "zsh": zsh()
        case "fish": fish()
        default: nil
        }
    }

    /// The words an option takes, when they are a fixed set (`updated|created|title`).
    private static func choices(_ option: OptionSpec) -> [String]? {
        guard let value = option.value, value.contains("|") else { return nil }
        return value.split(separator: "|").map(String.init)
    }

    private static var globalOptions: [String] { (CommandTable.global + CommandTable.browser).map(\.name) + ["--version"] }

    private static func bash() -> String {
        var script = """
            # bash completion for scrollback (made by `scrollback completions bash`)
            _scrollback() {
                local current previous command word
                current="${COMP_WORDS[COMP_CWORD]}"
                previous="${COMP_WORDS[COMP_CWORD-1]}"
                command=""
                for word in "${COMP_WORDS[@]:1:COMP_CWORD-1}"; do
                    case "$word" in -*) ;; *) command="$word"; break ;; esac
                done
                case "$previous" in
                    --db|--out) COMPREPLY=($(compgen -f -- "$current")); return ;;
                    --out-dir) COMPREPLY=($(compgen -d -- "$current")); return ;;

            """
        var seen = Set<String>()
        for command in CommandTable.commands {
            for option in command.options {
                guard let words = choices(option), seen.insert(option.name).inserted else { continue }
                script += "        \(option.name)) COMPREPLY=($(compgen -W \"\(words.joined(separator: " "))\" -- \"$current\")); return ;;\n"
            }
        }
        script += "    esac\n    case \"$command\" in\n"
        script += "        \"\") COMPREPLY=($(compgen -W \"\(CommandTable.commands.map(\.name).joined(separator: " ")) \(globalOptions.joined(separator: " "))\" -- \"$current\")) ;;\n"
        for command in CommandTable.commands {
            let options = (command.argumentWords + command.options.map(\.name) + CommandTable.global.map(\.name)).joined(separator: " ")
            let files = command.name == "import" ? " -f" : ""
            script += "        \(command.name)) COMPREPLY=($(compgen\(files) -W \"\(options)\" -- \"$current\")) ;;\n"
        }
        script += "    esac\n}\ncomplete -F _scrollback scrollback\n"
        return script
    }

    private static func zsh() -> String {
        func spec(_ option: OptionSpec) -> String {
            let help = option.help.replacingOccurrences(of: "'", with: "'\\''").replacingOccurrences(of: "[", with: "(")
                .replacingOccurrences(of: "]", with: ")").replacingOccurrences(of: ":", with: "\\:")
            let action: String
            if let words = choices(option) {
                action = ":\(option.value ?? ""):(\(words.joined(separator: " ")))"
            } else if let value = option.value {
                action = ":\(value):" + (["--db", "--out"].contains(option.name) ? "_files" : option.name == "--out-dir" ? "_directories" : "")
            } else {
                action = ""
            }
            guard let short = option.short else { return "'\(option.name)[\(help)]\(action)'" }
            return "'(-\(short) \(option.name))'{-\(short),\(option.name)}'[\(help)]\(action)'"
        }
        var script = """
            #compdef scrollback
            # zsh completion for scrollback (made by `scrollback completions zsh`)
            _scrollback() {
                local -a commands
                commands=(

            """
        for command in CommandTable.commands {
            script += "        '\(command.name):\(command.summary.replacingOccurrences(of: "'", with: "'\\''").replacingOccurrences(of: ":", with: "\\:"))'\n"
        }
        script += "    )\n    if (( CURRENT == 2 )); then\n        _describe 'command' commands\n        _arguments \\\n"
        script += (CommandTable.global + CommandTable.browser).map { "            \(spec($0))" }.joined(separator: " \\\n") + "\n"
        script += "        return\n    fi\n    case \"$words[2]\" in\n"
        for command in CommandTable.commands {
            let options = (command.options + CommandTable.global).map { "            \(spec($0))" }
            let rest =
                command.name == "import" ? " \\\n            '*:file:_files'"
                : command.argumentWords.isEmpty ? "" : " \\\n            '*:argument:(\(command.argumentWords.joined(separator: " ")))'"
            script += "        \(command.name))\n            _arguments \\\n\(options.joined(separator: " \\\n"))\(rest) ;;\n"
        }
        script += "    esac\n}\n_scrollback \"$@\"\n"
        return script
    }

    private static func fish() -> String {
        func quoted(_ text: String) -> String {
            "'" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'") + "'"
        }
        let names = CommandTable.commands.map(\.name).joined(separator: " ")
        var script = "# fish completion for scrollback (made by `scrollback completions fish`)\n"
        script += "complete -c scrollback -f\n"
        for command in CommandTable.commands {
            script += "complete -c scrollback -n 'not __fish_seen_subcommand_from \(names)' -a \(command.name) -d \(quoted(command.summary))\n"
        }
        func line(_ option: OptionSpec, condition: String) -> String {
            var text = "complete -c scrollback -n \(quoted(condition)) -l \(option.name.dropFirst(2))"
            if let short = option.short { text += " -s \(short)" }
            if let words = choices(option) {
                text += " -x -a \(quoted(words.joined(separator: " ")))"
            } else if option.value != nil {
                text += " -r" + (["--db", "--out", "--out-dir"].contains(option.name) ? " -F" : "")
            }
            return text + " -d \(quoted(option.help))\n"
        }
        for option in CommandTable.global + CommandTable.browser {
            script += line(option, condition: "true")
        }
        for command in CommandTable.commands {
            for option in command.options {
                script += line(option, condition: "__fish_seen_subcommand_from \(command.name)")
            }
            if command.name == "import" {
                script += "complete -c scrollback -n '__fish_seen_subcommand_from import' -F\n"
            }
            if !command.argumentWords.isEmpty {
                script += "complete -c scrollback -n '__fish_seen_subcommand_from \(command.name)' -a \(quoted(command.argumentWords.joined(separator: " ")))\n"
            }
        }
        return script
    }
}
