import ScrollbackModel
import ScrollbackStorage
import ScrollbackTerminal
import ScrollbackViewModels

/// `scrollback` with no command: the browser on a terminal, a summary otherwise.
struct BrowseCommand {
    let context: CommandContext

    @MainActor
    func run() throws {
        let console = context.console
        guard console.inputIsTerminal && console.outputIsTerminal else {
            try SummaryCommand(context: context).run()
            return
        }
        let store = try context.openStore()
        // The composition root: the SQLite repositories behind the view models' protocols.
        let browser = try BrowserViewModel(
            repositories: .init(
                conversations: store.conversations, messages: store.messages, search: store.search,
                settings: store.settings),
            databasePath: store.path, isReadOnly: store.isReadOnly, isSnapshot: store.database.isSnapshot,
            searchRunner: BackgroundSearchRunner(path: store.path))
        try browser.start()
        console.flush()
        try TerminalApp(
            browser: browser, environment: context.environment,
            exitAfterFirstFrame: context.parsed.has("--exit-after-first-frame")
        ).run()
    }
}
