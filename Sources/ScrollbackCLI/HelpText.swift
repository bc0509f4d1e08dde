/// `--help` text, made from `CommandTable`.
enum HelpText {
    static func text(for command: CommandSpec?) -> String {
        guard let command else { return overview }
        var text = "\(command.summary).\n\nusage: \(command.usage)\n"
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
        let width = (CommandTable.commands.map(\.name.count).max() ?? 0) + 2
        for command in CommandTable.commands {
            text += "  " + command.name.padding(toLength: width, withPad: " ", startingAt: 0) + command.summary + "\n"
        }
        text += "\noptions:\n" + table(CommandTable.global + CommandTable.browser.filter { !$0.hidden } + [OptionSpec(name: "--version", value: nil, help: "print the version")])
        text += "\n'scrollback COMMAND --help' tells more about a command.\n"
        return text
    }

    private static func table(_ options: [OptionSpec]) -> String {
        let labels = options.map(\.label)
        let width = (labels.map(\.count).max() ?? 0) + 2
        return zip(labels, options).map { label, option in
            "  " + label.padding(toLength: width, withPad: " ", startingAt: 0) + option.help + "\n"
        }.joined()
    }
}
