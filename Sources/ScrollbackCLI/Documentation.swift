import ScrollbackViewModels

/// The man page and the shell completions, made from the same tables as the parser and
/// `--help` (`CommandTable`) and the browser's keys (`KeyBindings`), so that they cannot
/// drift: `Resources/` holds what these return, and a test compares them.
enum Documentation {
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
        for command in CommandTable.commands.flatMap(\.family) where command.run != nil {
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

    /// The completion script for `shell`.
    static func completions(for shell: Shell) -> String {
        switch shell {
        case .bash: bash()
        case .zsh: zsh()
        case .fish: fish()
        }
    }

    // The completions of every shell are made from one reading of the tables, so that the
    // three offer the same words at the same places.

    /// Options the scripts offer: hidden ones (for benchmarks and the scripts themselves) left out.
    private static func shown(_ options: [OptionSpec]) -> [OptionSpec] { options.filter { !$0.hidden } }

    private static var globalOptions: [String] { shown(CommandTable.global + CommandTable.browser).map(\.name) + ["--version"] }

    /// The options of a command and of its subcommands (the scripts offer those of `sync
    /// status` and `sync off` after `sync`), each once.
    /// One that several take says what it does in each (`sync off: …; sync key show: …`).
    private static func ownOptions(of command: CommandSpec) -> [OptionSpec] {
        var options: [OptionSpec] = []
        for option in command.family.flatMap(\.options) where !options.contains(where: { $0.key == option.key }) {
            let takers = command.family.filter { $0.options.contains { $0.key == option.key } }
            guard takers.count > 1 else {
                options.append(option)
                continue
            }
            var described = option
            described.help = takers.compactMap { taker in
                taker.options.first { $0.key == option.key }.map { "\(taker.name): \($0.help)" }
            }.joined(separator: "; ")
            options.append(described)
        }
        return options
    }

    /// A command's options with the global ones, as offered after it.
    private static func options(of command: CommandSpec) -> [String] {
        shown(ownOptions(of: command) + CommandTable.global).map(\.name)
    }

    /// Every option that takes a value, with its short form: the word after one is that
    /// value, never a command (`--db PATH list`).
    private static var valueOptions: [String] {
        var names: [String] = []
        for option in CommandTable.global + CommandTable.commands.flatMap(ownOptions) where option.value != nil {
            for name in [option.name] + (option.short.map { ["-\($0)"] } ?? []) where !names.contains(name) { names.append(name) }
        }
        return names
    }

    /// What completes an option's value.
    private enum ValueCompletion: Equatable {
        case words([String])
        case files, folders
        /// What the database holds (`completions --words source`).
        case database(String)
        /// Nothing to offer (a number, a date, a token).
        case nothing
    }

    private static func valueCompletion(_ option: OptionSpec) -> ValueCompletion {
        if let words = option.choices { return .words(words) }
        switch option.key {
        case .db, .out: return .files
        case .outDir: return .folders
        case .source: return .database(CompletionWords.source.rawValue)
        case .model: return .database(CompletionWords.model.rawValue)
        default: return .nothing
        }
    }

    /// Per command, each option that takes a value, with what completes it.
    private static func values(of command: CommandSpec) -> [(option: OptionSpec, completion: ValueCompletion)] {
        ownOptions(of: command).filter { $0.value != nil && !$0.hidden }.map { ($0, valueCompletion($0)) }
    }

    /// The words of a command's arguments as a tree (`sync key show`): for each list of
    /// words typed after the command, the words that may come next. Empty for a command
    /// whose arguments are free (ids, paths, a query).
    private static func argumentTree(of command: CommandSpec) -> [(typed: [String], next: [String])] {
        guard command.arguments.contains("|"), !command.arguments.contains("...") else { return [] }
        let choices = command.arguments.filter { $0 != "[" && $0 != "]" }.split(separator: "|")
            .map { $0.split(separator: " ").map(String.init) }
        var tree: [(typed: [String], next: [String])] = []
        var prefixes: [[String]] = [[]]
        while let typed = prefixes.first {
            prefixes.removeFirst()
            var next: [String] = []
            for choice in choices where choice.count > typed.count && Array(choice.prefix(typed.count)) == typed {
                if !next.contains(choice[typed.count]) { next.append(choice[typed.count]) }
            }
            guard !next.isEmpty else { continue }
            tree.append((typed, next))
            prefixes += next.map { typed + [$0] }
        }
        return tree
    }

    private static func bash() -> String {
        let skip = valueOptions.filter { $0 != "--db" }.joined(separator: "|")
        var script = """
            # bash completion for scrollback (made by `scrollback completions bash`)
            # Words come back through mapfile and a literal prefix test, never through an
            # unquoted expansion: a word from the database (or a file name) is never taken
            # as a pattern or run.
            _scrollback_words() {
                "$1" ${2:+--db "$2"} completions --words "$3" 2>/dev/null
            }
            _scrollback_offer() {
                local word
                COMPREPLY=()
                while IFS= read -r word; do
                    [[ "$word" == "$1"* ]] && COMPREPLY+=("$word")
                done
            }
            # A word as typed ('my dir', "my dir", my\\ dir) as the shell will pass it, its
            # quotes and backslashes taken out one character at a time (never by eval).
            _scrollback_dequote() {
                local word="$1" out="" c quote=""
                while [[ -n "$word" ]]; do
                    c="${word:0:1}"
                    word="${word:1}"
                    if [[ "$quote" == "'" ]]; then
                        [[ "$c" == "'" ]] && quote="" || out+="$c"
                    elif [[ "$c" == '\\' && -n "$word" ]]; then
                        out+="${word:0:1}"
                        word="${word:1}"
                    elif [[ "$c" == '"' ]]; then
                        [[ "$quote" == '"' ]] && quote="" || quote='"'
                    elif [[ "$c" == "'" && -z "$quote" ]]; then
                        quote="'"
                    else
                        out+="$c"
                    fi
                done
                printf '%s' "$out"
            }
            _scrollback() {
                local current="${COMP_WORDS[COMP_CWORD]}" previous="" command="" db="" i word step
                local -a typed=()
                (( COMP_CWORD > 0 )) && previous="${COMP_WORDS[COMP_CWORD-1]}"
                # `--db=PATH`: bash splits it at the `=` into three words.
                [[ "$current" == "=" ]] && { previous="${COMP_WORDS[COMP_CWORD-1]}"; current=""; }
                [[ "$previous" == "=" ]] && (( COMP_CWORD > 1 )) && previous="${COMP_WORDS[COMP_CWORD-2]}"
                # The command and the words after it; an option's value is neither.
                for (( i = 1; i < COMP_CWORD; i++ )); do
                    word="${COMP_WORDS[i]}"
                    step=1
                    [[ "${COMP_WORDS[i+1]}" == "=" ]] && step=2
                    # `--db= list`: an empty value, and the command after it.
                    [[ "$word" == "--db" && $step == 2 && "$COMP_LINE" == *"--db= "* ]] && { i=$((i + 1)); continue; }
                    case "$word" in
                        --db) db="$(_scrollback_dequote "${COMP_WORDS[i+step]}")"; i=$((i + step)); continue ;;
                        \(skip)) i=$((i + step)); continue ;;
                        -*) continue ;;
                    esac
                    if [[ -z "$command" ]]; then command="$word"; else typed+=("$word"); fi
                done
                [[ "$db" == "~/"* ]] && db="$HOME/${db#"~/"}"
                case "$previous" in
                    --db) mapfile -t COMPREPLY < <(compgen -f -- "$current"); return ;;
                esac
                case "$command $previous" in

            """
        func reply(_ completion: ValueCompletion) -> String {
            switch completion {
            case .words(let words): "_scrollback_offer \"$current\" < <(printf '%s\\n' \(words.joined(separator: " ")))"
            case .files: "mapfile -t COMPREPLY < <(compgen -f -- \"$current\")"
            case .folders: "mapfile -t COMPREPLY < <(compgen -d -- \"$current\")"
            case .database(let kind): "_scrollback_offer \"$current\" < <(_scrollback_words \"${COMP_WORDS[0]}\" \"$db\" \(kind))"
            case .nothing: "COMPREPLY=()"
            }
        }
        for command in CommandTable.commands {
            for (option, completion) in values(of: command) {
                let names = ([option.name] + (option.short.map { ["-\($0)"] } ?? [])).map { "\"\(command.name) \($0)\"" }
                script += "        \(names.joined(separator: "|"))) \(reply(completion)); return ;;\n"
            }
        }
        script += "    esac\n"
        script += "    case \"$command\" in\n"
        script += "        \"\") _scrollback_offer \"$current\" < <(printf '%s\\n' \(CommandTable.commands.map(\.name).joined(separator: " ")) \(globalOptions.joined(separator: " "))) ;;\n"
        for command in CommandTable.commands {
            let options = "_scrollback_offer \"$current\" < <(printf '%s\\n' \(options(of: command).joined(separator: " ")))"
            let tree = argumentTree(of: command)
            if !tree.isEmpty {
                script += "        \(command.name))\n            if [[ \"$current\" == -* ]]; then \(options); return; fi\n"
                script += "            case \"${typed[*]}\" in\n"
                for (typed, next) in tree {
                    script += "                \"\(typed.joined(separator: " "))\") _scrollback_offer \"$current\" < <(printf '%s\\n' \(next.joined(separator: " "))) ;;\n"
                }
                script += "            esac ;;\n"
            } else if command.name == "import" {
                script += "        import) if [[ \"$current\" == -* ]]; then \(options); else mapfile -t COMPREPLY < <(compgen -f -- \"$current\"); fi ;;\n"
            } else {
                script += "        \(command.name)) \(options) ;;\n"
            }
        }
        script += "    esac\n}\ncomplete -F _scrollback scrollback\n"
        return script
    }

    private static func zsh() -> String {
        func quoted(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'" }
        let skip = valueOptions.filter { $0 != "--db" }.joined(separator: "|")
        var script = """
            #compdef scrollback
            # zsh completion for scrollback (made by `scrollback completions zsh`)
            _scrollback_words() {
                "$1" ${2:+--db} ${2:+"$2"} completions --words "$3" 2>/dev/null
            }
            _scrollback() {
                local current=${words[CURRENT]} previous=${words[CURRENT-1]} command= db= i word
                local -a typed described
                # The command and the words after it; an option's value is neither.
                for (( i = 2; i < CURRENT; i++ )); do
                    word=${words[i]}
                    case $word in
                        (--db) db=${(Q)words[i+1]}; i=$((i + 1)); continue ;;
                        (--db=*) db=${(Q)word#--db=}; continue ;;
                        (\(skip)) i=$((i + 1)); continue ;;
                        (-*) continue ;;
                    esac
                    if [[ -z $command ]]; then command=$word; else typed+=("$word"); fi
                done
                db=${db/#\\~\\//$HOME/}
                case $previous in
                    (--db) _files; return ;;
                esac
                case "$command $previous" in

            """
        func reply(_ completion: ValueCompletion) -> String {
            switch completion {
            case .words(let words): "compadd -- \(words.joined(separator: " "))"
            case .files: "_files"
            case .folders: "_directories"
            case .database(let kind): "compadd -- ${(f)\"$(_scrollback_words ${words[1]} \"$db\" \(kind))\"}"
            case .nothing: ":"
            }
        }
        for command in CommandTable.commands {
            for (option, completion) in values(of: command) {
                let names = ([option.name] + (option.short.map { ["-\($0)"] } ?? [])).map { "\"\(command.name) \($0)\"" }
                script += "        (\(names.joined(separator: "|"))) \(reply(completion)); return ;;\n"
            }
        }
        script += "    esac\n    case $command in\n"
        script += "        (\"\")\n            if [[ $current == -* ]]; then compadd -- \(globalOptions.joined(separator: " ")); return; fi\n"
        script += "            described=(\n"
        for command in CommandTable.commands {
            script += "                \(quoted(command.name + ":" + command.summary.replacingOccurrences(of: ":", with: "\\:")))\n"
        }
        script += "            )\n            _describe 'command' described ;;\n"
        for command in CommandTable.commands {
            let options = "compadd -- \(options(of: command).joined(separator: " "))"
            let tree = argumentTree(of: command)
            script += "        (\(command.name))\n            if [[ $current == -* ]]; then \(options); return; fi\n"
            if !tree.isEmpty {
                script += "            case \"${typed[*]}\" in\n"
                for (typed, next) in tree {
                    script += "                (\"\(typed.joined(separator: " "))\") compadd -- \(next.joined(separator: " ")) ;;\n"
                }
                script += "            esac ;;\n"
            } else if command.name == "import" {
                script += "            _files ;;\n"
            } else {
                script += "            ;;\n"
            }
        }
        script += "    esac\n}\n_scrollback \"$@\"\n"
        return script
    }

    private static func fish() -> String {
        func quoted(_ text: String) -> String {
            "'" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'") + "'"
        }
        let skip = valueOptions.filter { $0 != "--db" }.joined(separator: " ")
        var script = """
            # fish completion for scrollback (made by `scrollback completions fish`)
            # The command and the words after it, and the database, as typed so far; an
            # option's value is neither.
            function __scrollback_typed
                set -l tokens (commandline -opc)
                set -l found
                set -l skip 0
                set -l db
                for token in $tokens[2..-1]
                    if test $skip -eq 2
                        set db $token
                        set skip 0
                        continue
                    else if test $skip -eq 1
                        set skip 0
                        continue
                    end
                    switch $token
                        case --db
                            set skip 2
                        case '--db=*'
                            set db (string replace -- --db= '' $token)
                        case \(skip)
                            set skip 1
                        case '-*'
                        case '*'
                            set -a found $token
                    end
                end
                if test "$argv[1]" = --db
                    string replace -r '^~/' "$HOME/" -- $db
                else
                    string join ' ' -- $found
                end
            end
            # True when the words typed after `scrollback` are exactly these.
            function __scrollback_at
                test "$(__scrollback_typed)" = "$argv"
            end
            # True when the command typed is this one.
            function __scrollback_in
                set -l typed (string split ' ' -- (__scrollback_typed))
                test "$typed[1]" = "$argv[1]"
            end
            function __scrollback_words
                set -l program (commandline -opc)[1]
                set -l db (__scrollback_typed --db)
                if test -n "$db"
                    $program --db $db completions --words $argv[1] 2>/dev/null
                else
                    $program completions --words $argv[1] 2>/dev/null
                end
            end
            complete -c scrollback -f

            """
        for command in CommandTable.commands {
            script += "complete -c scrollback -n __scrollback_at -a \(command.name) -d \(quoted(command.summary))\n"
        }
        func line(_ option: OptionSpec, condition: String) -> String {
            var text = "complete -c scrollback -n \(quoted(condition)) -l \(option.name.dropFirst(2))"
            if let short = option.short { text += " -s \(short)" }
            switch option.value == nil ? nil : valueCompletion(option) {
            case .words(let words): text += " -x -a \(quoted(words.joined(separator: " ")))"
            case .files, .folders: text += " -r -F"
            case .database(let kind): text += " -x -a \(quoted("(__scrollback_words \(kind))"))"
            case .nothing: text += " -x"
            case nil: break
            }
            return text + " -d \(quoted(option.help))\n"
        }
        for option in shown(CommandTable.global + CommandTable.browser) {
            script += line(option, condition: "true")
        }
        for command in CommandTable.commands {
            for option in shown(ownOptions(of: command)) {
                script += line(option, condition: "__scrollback_in \(command.name)")
            }
            if command.name == "import" {
                script += "complete -c scrollback -n '__scrollback_in import' -F\n"
            }
            for (typed, next) in argumentTree(of: command) {
                let condition = "__scrollback_at " + ([command.name] + typed).joined(separator: " ")
                script += "complete -c scrollback -n \(quoted(condition)) -a \(quoted(next.joined(separator: " ")))\n"
            }
        }
        return script
    }
}
