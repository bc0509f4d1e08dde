/// A command line, parsed against `CommandTable`.
struct ParsedArguments: Sendable, Equatable {
    var command: String?
    var values: [String: String] = [:]
    var flags: Set<String> = []
    var positional: [String] = []

    func value(_ name: String) -> String? { values[name] }
    func has(_ flag: String) -> Bool { flags.contains(flag) }
}

/// A mistake in how the program was called: exit status 2.
struct UsageError: Error, Equatable {
    let message: String
    let command: String?

    var line: String {
        let hint = command.map { "see 'scrollback \($0) --help'" } ?? "see 'scrollback --help'"
        return "scrollback: \(message) (\(hint))"
    }
}

enum ArgumentParser {
    /// Parses `arguments` (without the program name). Global options may come before or
    /// after the command; `--` ends options; `--name=value` and `--name value` both work.
    static func parse(_ arguments: [String]) throws -> ParsedArguments {
        var parsed = ParsedArguments()
        var index = 0
        var optionsEnded = false
        var spec: CommandSpec?
        func known(_ name: String) -> OptionSpec? {
            (spec?.options ?? []).first { $0.name == name } ?? CommandTable.global.first { $0.name == name }
                ?? (spec == nil && name == "--version" ? OptionSpec(name: "--version", value: nil, help: "") : nil)
                ?? (spec == nil ? CommandTable.browser.first { $0.name == name } : nil)
        }
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if !optionsEnded && argument == "--" {
                optionsEnded = true
                continue
            }
            if !optionsEnded && (argument.hasPrefix("--") || argument == "-h") {
                var name = argument == "-h" ? "--help" : argument
                var inlineValue: String?
                if let equals = name.firstIndex(of: "=") {
                    inlineValue = String(name[name.index(after: equals)...])
                    name = String(name[..<equals])
                }
                guard let option = known(name) else {
                    let place = spec.map { " for '\($0.name)'" } ?? ""
                    throw UsageError(message: "unknown option '\(name)'\(place)", command: spec?.name)
                }
                if option.value != nil {
                    if let inlineValue {
                        parsed.values[name] = inlineValue
                    } else if index < arguments.count {
                        parsed.values[name] = arguments[index]
                        index += 1
                    } else {
                        throw UsageError(message: "\(name) needs a value (\(option.value ?? ""))", command: spec?.name)
                    }
                } else {
                    if inlineValue != nil {
                        throw UsageError(message: "\(name) takes no value", command: spec?.name)
                    }
                    parsed.flags.insert(name)
                }
                continue
            }
            if !optionsEnded && argument.hasPrefix("-") && argument.count > 1 && Int(argument) == nil {
                throw UsageError(message: "unknown option '\(argument)'", command: spec?.name)
            }
            if spec == nil && parsed.command == nil {
                if argument == "help" {
                    parsed.flags.insert("--help")
                    parsed.command = index < arguments.count ? arguments[index] : nil
                    if parsed.command != nil { index += 1 }
                    if let name = parsed.command, CommandTable.command(named: name) == nil {
                        throw UsageError(message: "unknown command '\(name)'", command: nil)
                    }
                    continue
                }
                guard let command = CommandTable.command(named: argument) else {
                    throw UsageError(message: "unknown command '\(argument)'", command: nil)
                }
                spec = command
                parsed.command = argument
                continue
            }
            parsed.positional.append(argument)
        }
        if parsed.has("--help") || parsed.has("--version") { return parsed }
        if let spec {
            if parsed.positional.count < spec.minimumArguments {
                throw UsageError(message: "'\(spec.name)' needs \(spec.arguments)", command: spec.name)
            }
            if let maximum = spec.maximumArguments, parsed.positional.count > maximum {
                let extra = parsed.positional[maximum]
                throw UsageError(message: "unexpected argument '\(extra)' for '\(spec.name)'", command: spec.name)
            }
        } else if let stray = parsed.positional.first {
            throw UsageError(message: "unknown command '\(stray)'", command: nil)
        }
        return parsed
    }
}
