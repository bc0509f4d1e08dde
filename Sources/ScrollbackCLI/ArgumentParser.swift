import ScrollbackModel

/// A command line, parsed against `CommandTable`.
struct ParsedArguments: Sendable, Equatable {
    /// The words that name the command (`sync key show`), nil for the browser.
    var command: String?
    var values: [OptionKey: String] = [:]
    var flags: Set<OptionKey> = []
    var positional: [String] = []

    func value(_ option: OptionKey) -> String? { values[option] }
    func has(_ flag: OptionKey) -> Bool { flags.contains(flag) }
}

/// A mistake in how the program was called: exit status 2, and where to read how.
struct UsageError: UserFacingError, Equatable {
    let message: String
    let command: String?

    var userLine: String {
        let hint = command.map { "see 'scrollback \($0) --help'" } ?? "see 'scrollback --help'"
        return "\(message) (\(hint))"
    }
    var exitStatus: Int32 { 2 }
}

enum ArgumentParser {
    /// Parses `arguments` (without the program name). Global options may come before or
    /// after the command; `--` ends options; `--name=value` and `--name value` both work.
    static func parse(_ given: [String]) throws -> ParsedArguments {
        var arguments = given
        var parsed = ParsedArguments()
        var index = 0
        var optionsEnded = false
        var spec: CommandSpec?
        func known(_ name: String) -> OptionSpec? {
            // A subcommand's option may come before the subcommand's word (`sync --json
            // status`): it is checked against the command at the end.
            (spec?.family.flatMap(\.options) ?? []).first { $0.name == name } ?? CommandTable.global.first { $0.name == name }
                ?? (spec == nil && name == OptionKey.version.name ? OptionSpec(.version, help: "") : nil)
                ?? (spec == nil ? CommandTable.browser.first { $0.name == name } : nil)
        }
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if !optionsEnded && argument == "--" {
                optionsEnded = true
                continue
            }
            if !optionsEnded && argument.count >= 2 && argument.hasPrefix("-") && !argument.hasPrefix("--") && Int(argument) == nil {
                // As getopt has them: `-n 20` and `-n20` are `--limit 20`, `-jv` is `-j -v`.
                var long: [String] = []
                var letters = argument.dropFirst()
                while let letter = letters.popFirst() {
                    guard let option = shortOption(letter, spec: spec) else {
                        let place = spec.map { " for '\($0.name)'" } ?? ""
                        // On a command line whose words may be secrets (a group before `sync`
                        // too), not even the letter: it is the first of the word.
                        if spec?.refuseWords != nil || (spec == nil && arguments[index...].contains { CommandTable.command(named: $0)?.refuseWords != nil }) {
                            throw UsageError(message: "unknown option (\(argument.count) characters, not shown)\(place)", command: spec?.name)
                        }
                        let within = argument.count > 2 ? " in \(Self.shown(argument, spec: spec))" : ""
                        throw UsageError(message: "unknown option '-\(letter)'\(within)\(place)", command: spec?.name)
                    }
                    guard option.value != nil, !letters.isEmpty else {
                        long.append(option.name)
                        continue
                    }
                    long.append(option.name + "=" + letters)
                    letters = ""
                }
                arguments.replaceSubrange((index - 1)..<index, with: long)
                index -= 1
                continue
            }
            if !optionsEnded && argument.hasPrefix("--") {
                var name = argument
                var inlineValue: String?
                if let equals = name.firstIndex(of: "=") {
                    inlineValue = String(name[name.index(after: equals)...])
                    name = String(name[..<equals])
                }
                guard let option = known(name) else {
                    // An option of another command of the same group: where it goes.
                    if let spec, let owner = Self.owners(of: name, near: spec) {
                        throw UsageError(message: "\(name) goes with \(owner) only", command: spec.name)
                    }
                    let place = spec.map { " for '\($0.name)'" } ?? ""
                    throw UsageError(message: "unknown option \(Self.shown(name, spec: spec))\(place)", command: spec?.name)
                }
                if option.value != nil {
                    let value: String
                    if let inlineValue {
                        value = inlineValue
                    } else if index < arguments.count {
                        value = arguments[index]
                        index += 1
                    } else {
                        throw UsageError(message: "\(name) needs a value (\(option.value ?? ""))", command: spec?.name)
                    }
                    // Given twice, one would be dropped without a word: which one was meant is not ours to guess.
                    if let first = parsed.values[option.key] {
                        throw UsageError(
                            message: "\(name) is given twice ('\(OutputFormat.word(first))', then '\(OutputFormat.word(value))'); give it once",
                            command: spec?.name)
                    }
                    parsed.values[option.key] = value
                } else {
                    if inlineValue != nil {
                        throw UsageError(message: "\(name) takes no value", command: spec?.name)
                    }
                    parsed.flags.insert(option.key)
                }
                continue
            }
            if !optionsEnded && argument.hasPrefix("-") && argument.count > 1 && Int(argument) == nil {
                throw UsageError(message: "unknown option \(Self.shown(argument, spec: spec))", command: spec?.name)
            }
            if spec == nil && parsed.command == nil {
                if argument == "help" {
                    // `help sync key show`: the words of a command, as far as they name one.
                    parsed.flags.insert(.help)
                    // `help help` is the help; an option before the topic (`help --db X sync`)
                    // leaves the topic to come as a command word does.
                    if index < arguments.count, arguments[index] == "help" { index += 1 }
                    guard index < arguments.count, !arguments[index].hasPrefix("-") else { continue }
                    guard var shown = CommandTable.command(named: arguments[index]) else { throw unknownCommand(arguments[index]) }
                    index += 1
                    while index < arguments.count, let sub = shown.subcommand(arguments[index]) {
                        shown = sub
                        index += 1
                    }
                    parsed.command = shown.name
                    // A word left over names nothing: said, not ignored (and not shown for sync).
                    if index < arguments.count, !arguments[index].hasPrefix("-") {
                        let extra = arguments[index]
                        let words = shown.subcommands.map { "`\($0.name)`" }
                        let what = shown.refuseWords != nil ? "a word (\(extra.count) characters, not shown)" : "'\(OutputFormat.word(extra))'"
                        throw UsageError(
                            message: words.isEmpty
                                ? "`help \(shown.name)` takes no more words; \(what) was given"
                                : "\(what) is not a command of `\(shown.name)`, which has \(OutputFormat.list(words, conjunction: "and"))",
                            command: shown.name)
                    }
                    continue
                }
                guard let command = CommandTable.commands.first(where: { $0.name == argument }) else {
                    throw unknownCommand(argument)
                }
                spec = command
                parsed.command = argument
                continue
            }
            // A subcommand's word, before any argument: `sync key show`.
            if let current = spec, parsed.positional.isEmpty, let sub = current.subcommand(argument) {
                spec = sub
                parsed.command = sub.name
                continue
            }
            parsed.positional.append(argument)
        }
        if parsed.has(.help) || parsed.has(.version) { return parsed }
        if let spec {
            // Words first: `sync --json SECRET status` is about the word that is not a
            // command, not about --json, which the command meant would take.
            let wrongCount =
                parsed.positional.count < spec.minimumArguments || spec.maximumArguments.map { parsed.positional.count > $0 } ?? false
            if let refuse = spec.refuseWords, spec.run == nil || wrongCount {
                throw refuse(spec.name.split(separator: " ").dropFirst().map(String.init) + parsed.positional)
            }
            for key in parsed.flags.union(parsed.values.keys).sorted(by: { $0.name < $1.name })
            where !(spec.options + CommandTable.global).contains(where: { $0.key == key }) {
                throw UsageError(message: "\(key) goes with \(owners(of: key.name, near: spec) ?? "another command") only", command: spec.name)
            }
            if spec.run == nil {
                let names = spec.subcommands.map(\.word)
                throw UsageError(
                    message: "'\(spec.name)' needs one of \(names.joined(separator: ", "))", command: spec.name)
            }
            if parsed.positional.count < spec.minimumArguments {
                throw UsageError(message: "'\(spec.name)' needs \(spec.arguments)", command: spec.name)
            }
            if let maximum = spec.maximumArguments, parsed.positional.count > maximum {
                let extra = parsed.positional[maximum]
                throw UsageError(message: "unexpected argument '\(OutputFormat.word(extra))' for '\(spec.name)'", command: spec.name)
            }
        } else if let stray = parsed.positional.first {
            throw unknownCommand(stray)
        }
        return parsed
    }

    /// The option a one-letter option stands for, in this command or globally.
    private static func shortOption(_ letter: Character, spec: CommandSpec?) -> OptionSpec? {
        ((spec?.family.flatMap(\.options) ?? []) + CommandTable.global).first { $0.short == letter }
    }

    /// The commands near `spec` (its group's) that take the option `name`, as a message
    /// names them: `` `sync off` and `sync key show` ``.
    private static func owners(of name: String, near spec: CommandSpec) -> String? {
        guard let root = spec.name.split(separator: " ").first.flatMap({ CommandTable.command(named: String($0)) }) else { return nil }
        let owners = root.family.filter { $0.options.contains { $0.name == name } }.map { "`\($0.name)`" }
        return owners.isEmpty ? nil : OutputFormat.list(owners, conjunction: "and")
    }

    /// A word of the command line for a message, quoted; not shown where it may be a secret:
    /// anything given to a command whose words may be secrets (`sync`: its connection string
    /// and key are never arguments, so one given there may well be one), and what looks like
    /// a connection string anywhere.
    static func shown(_ word: String, spec: CommandSpec?) -> String {
        if spec?.refuseWords != nil || word.contains("://") || word.contains("@") || word.count > 40 {
            return "(\(word.count) characters, not shown)"
        }
        return "'\(OutputFormat.word(word))'"
    }

    /// `unknown command 'lsit'; did you mean 'list'?` when one command is close.
    static func unknownCommand(_ name: String) -> UsageError {
        guard !name.contains("://"), !name.contains("@") else {
            return UsageError(message: "unknown command (\(name.count) characters, not shown: it looks like a connection string)", command: nil)
        }
        let shown = OutputFormat.word(name)
        let close = CommandTable.commands.map(\.name).filter { editDistance($0, name.lowercased()) <= 2 }
        guard let nearest = close.min(by: { editDistance($0, name.lowercased()) < editDistance($1, name.lowercased()) }) else {
            return UsageError(message: "unknown command '\(shown)'", command: nil)
        }
        return UsageError(message: "unknown command '\(shown)'; did you mean '\(nearest)'?", command: nil)
    }

    /// Edits (insert, delete, replace, swap two neighbours) from `a` to `b`; long words
    /// stop counting early, as nothing that far apart is a typo.
    static func editDistance(_ a: String, _ b: String) -> Int {
        let x = Array(a.prefix(40)), y = Array(b.prefix(40))
        if x.isEmpty || y.isEmpty { return max(x.count, y.count) }
        var table = Array(repeating: Array(repeating: 0, count: y.count + 1), count: x.count + 1)
        for i in 0...x.count { table[i][0] = i }
        for j in 0...y.count { table[0][j] = j }
        for i in 1...x.count {
            for j in 1...y.count {
                let cost = x[i - 1] == y[j - 1] ? 0 : 1
                table[i][j] = min(table[i - 1][j] + 1, table[i][j - 1] + 1, table[i - 1][j - 1] + cost)
                if i > 1, j > 1, x[i - 1] == y[j - 2], x[i - 2] == y[j - 1] {
                    table[i][j] = min(table[i][j], table[i - 2][j - 2] + 1)
                }
            }
        }
        return table[x.count][y.count]
    }
}
