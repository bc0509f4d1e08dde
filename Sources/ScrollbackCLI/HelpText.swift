/// `--help` text, made from `CommandTable`.
enum HelpText {
    static func text(for command: CommandSpec?) -> String {
        guard let command else { return overview }
        var text = "\(command.summary).\n\nusage: \(command.usage)\n"
        let subcommands = command.subcommands.flatMap(\.family).filter { $0.run != nil }
        if !subcommands.isEmpty {
            text += "\ncommands:\n" + list(subcommands.map { ($0.name, $0.summary) })
            text += "\n'scrollback \(subcommands[0].name) --help' tells more about one.\n"
        }
        let options = command.options + CommandTable.global
        text += "\noptions:\n" + table(options)
        text += "\nexample:\n  \(command.example)\n"
        return text
    }

    static var overview: String {
        var text = """
            scrollback \(Scrollback.version) — browse, search and keep a large AI chat history

            usage: scrollback [--db PATH] [--readonly] [--demo] [COMMAND] [ARGS]

            With no command, opens the browser (on a terminal; elsewhere, a summary).

            commands:

            """
        text += list(CommandTable.commands.map { ($0.name, $0.summary) })
        text += "\noptions:\n" + table(CommandTable.global + CommandTable.browser.filter { !$0.hidden } + [OptionSpec(.version, help: "print the version")])
        text += "\n'scrollback COMMAND --help' tells more about a command.\n"
        return text
    }

    /// Names and what they do, in two columns.
    private static func list(_ rows: [(name: String, summary: String)]) -> String {
        let width = (rows.map(\.name.count).max() ?? 0) + 2
        return rows.map { "  " + $0.name.padding(toLength: width, withPad: " ", startingAt: 0) + $0.summary + "\n" }.joined()
    }

    private static func table(_ options: [OptionSpec]) -> String {
        let labels = options.map(\.label)
        let width = (labels.map(\.count).max() ?? 0) + 2
        return zip(labels, options).map { label, option in
            "  " + label.padding(toLength: width, withPad: " ", startingAt: 0) + option.help + "\n"
        }.joined()
    }
}
