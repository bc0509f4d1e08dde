import Foundation
import ScrollbackExport
import ScrollbackImport
import ScrollbackModel
import ScrollbackStorage
import ScrollbackSync
import ScrollbackTerminal
import ScrollbackViewModels

/// `scrollback` with no command: the browser on a terminal, a summary otherwise.
struct BrowseCommand {
    let context: CommandContext

    /// Returns the exit status: 0, or 128 + a signal's number when one ended the browser.
    @MainActor
    func run() throws -> Int32 {
        let console = context.console
        guard console.inputIsTerminal && console.outputIsTerminal else {
            try SummaryCommand(context: context).run()
            return 0
        }
        // Before any file is opened or created: a terminal the browser cannot use is said
        // plainly, with what to do, and leaves nothing behind.
        try TerminalApp.checkTerminal(environment: context.environment)
        let store = try context.openStore(buildingIndex: false)
        // A key waits at most a second for another process's write (a long import holds the
        // lock for its whole file): then the browser says the database is busy, and what was
        // typed stays (the rename editor stays open; Enter tries again). Waiting the usual
        // 5 s froze the screen, and the keys typed meanwhile acted on the next one.
        store.waitForWriteLock(atMost: 1_000)
        // What an upgrade left of the search index is built meanwhile, on its own thread.
        let indexer = BackgroundIndexer()
        if try !store.isReadOnly && store.hasSearchBacklog() { indexer.start(path: store.path) }
        defer { indexer.stop() }
        // The composition root: the SQLite repositories behind the view models' protocols.
        let browser = try BrowserViewModel(
            repositories: .init(
                conversations: store.conversations, messages: store.messages, search: store.search,
                settings: store.settings, activity: store.activity),
            databasePath: store.path, isReadOnly: store.isReadOnly, isSnapshot: store.isSnapshot,
            searchRunner: BackgroundSearchRunner(path: store.path), positionRunner: BackgroundPositionRunner(path: store.path),
            activityRunner: BackgroundActivityRunner(path: store.path))
        // The config file: keys, colours, dates, the wheel, programs. A bad line is said in
        // the footer (all of them by `scrollback config --check`); the rest still counts.
        let config = ConfigLocation.load(environment: context.environment)
        browser.keymap = config.keymap
        browser.wheelStep = config.wheelStep
        if config.dateFormat != BrowserConfig.standardDateFormat { browser.dateFormat = config.dateFormat }
        try browser.start()
        if let first = config.problems.first {
            // How many, first: a long problem is cut at the footer's end, and the count with it.
            let count = config.problems.count
            browser.effectDone(count == 1 ? first : "\(count) config problems (scrollback config --check lists them); the first: \(first)")
        }
        // Sync, when it is on here: on a thread and connection of its own.
        // The secrets are read once (a secret_command may ask for a passphrase).
        let secrets = syncSecrets(store: store, config: config)
        let sync = try startSync(store: store, config: config, secrets: secrets)
        browser.syncMonitor = sync
        defer { sync?.stop() }
        // Attachments another machine holds: fetched when first shown or opened.
        let fetcher = startFetching(store: store, secrets: secrets)
        browser.attachmentFetcher = fetcher.fetcher
        browser.attachmentFetchUnavailable = fetcher.unavailable
        defer { fetcher.fetcher?.stop() }
        // The coding agents' sessions, followed when idle: what they append shows by itself.
        let follower = startFollowing(store: store, config: config)
        browser.sourceMonitor = follower
        defer { follower?.stop() }
        // Checkpoints happen away from the main actor, so that no write waits for one.
        let checkpointer = try BackgroundCheckpointer(for: store)
        defer { checkpointer.stop() }
        console.flush()
        let app = TerminalApp(
            browser: browser, environment: context.environment, config: config,
            exitAfterFirstFrame: context.parsed.has(.exitAfterFirstFrame))
        let environment = context.environment
        app.exporter = { ids, path, hidden in
            BrowserExport.run(ids: ids, path: path, showingHidden: hidden, store: store, environment: environment)
        }
        app.attachmentWriter = { hash, path in BrowserExport.writeAttachment(hash, to: path, store: store) }
        let status = try app.run()
        // No undo reaches the deletes made here now: the files only they used are freed.
        if !store.isReadOnly, !browser.filesOfDeletes.isEmpty {
            do {
                try store.freeUnusedAttachments(browser.filesOfDeletes)
            } catch {
                // Kept, not lost: a later write frees them after the grace time.
                console.errorLine("The files of deleted conversations stay until a later delete frees them: \((error as? any UserFacingError)?.userLine ?? "\(error)")")
            }
        }
        return status
    }

    /// The follower of the session files imported before and the folders the config names
    /// (and the places `import` finds that something was imported from); nil when there is
    /// nothing to follow or following is off.
    private func startFollowing(store: Store, config: BrowserConfig) -> (any SourceMonitor)? {
        guard config.followInterval > 0, !store.isSnapshot else { return nil }
        let home = context.environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        let known = (try? store.sourceFiles().map(\.path)) ?? []
        var folders = config.followFolders.map { $0 == "~" ? home : $0.hasPrefix("~/") ? home + $0.dropFirst() : $0 }
        // The known places (not walked here: the follower lists them on its own thread).
        for place in KnownSources.sessionRoots(environment: context.environment) {
            let root = Importer.canonical(place)
            if known.contains(where: { $0.hasPrefix(root + "/") }) && !folders.contains(place) { folders.append(place) }
        }
        guard !known.isEmpty || !folders.isEmpty else { return nil }
        return SourceFollower(path: store.path, readOnly: store.isReadOnly, folders: folders, interval: TimeInterval(config.followInterval))
    }

    /// The fetcher of attachments' bytes when sync is on here (and the database writable,
    /// the secrets here); else why none.
    private func startFetching(store: Store, secrets: (url: String, key: SyncKey)?) -> (fetcher: (any AttachmentFetcher)?, unavailable: String?) {
        guard let local = try? store.localSyncState(), local.isOn else { return (nil, "sync is off here (scrollback sync init)") }
        guard !store.isReadOnly else { return (nil, "--readonly does not fetch it") }
        guard let secrets else { return (nil, "no sync key or server here (scrollback sync status)") }
        return (BackgroundFetcher(path: store.path, conninfo: secrets.url, key: secrets.key), nil)
    }

    /// The sync server and key, when sync is on for a writable `store` and they are here.
    private func syncSecrets(store: Store, config: BrowserConfig) -> (url: String, key: SyncKey)? {
        guard !store.isReadOnly, let local = try? store.localSyncState(), local.isOn else { return nil }
        let secrets = SecretChain(
            environment: context.environment, secretCommand: config.secretCommand, secretTimeout: config.secretTimeout,
            file: PathText.parent(of: ConfigLocation.path(environment: context.environment)) + "/secrets")
        guard let url = try? secrets.read(.url), let keyText = try? secrets.read(.key), let key = SyncKey(text: keyText) else { return nil }
        return (url, key)
    }

    /// The background sync when sync is on for `store` (and it is writable); a footer that
    /// says what is missing when the secrets are.
    private func startSync(store: Store, config: BrowserConfig, secrets: (url: String, key: SyncKey)?) throws -> (any SyncMonitor)? {
        guard !store.isReadOnly, let local = try? store.localSyncState(), local.isOn else { return nil }
        var initial = SyncFooterState(lastSync: local.lastSync, toSend: local.pending)
        // A failure that stands is said from the first frame, until the first sync here.
        if local.failure != nil { BackgroundSync.describe(local.failure, in: &initial) }
        guard let secrets else {
            var missing = initial
            missing.problem = "sync: no key or server here (scrollback sync status)"
            return FixedSyncState(missing)
        }
        return BackgroundSync(
            path: store.path, conninfo: secrets.url, key: secrets.key, interval: TimeInterval(config.syncInterval), initial: initial,
            fetchAttachments: config.fetchAttachmentsAlways)
    }
}

/// A footer note that does not change: sync is on, but cannot run here.
final class FixedSyncState: SyncMonitor {
    let state: SyncFooterState
    init(_ state: SyncFooterState) { self.state = state }
    func stop() {}
}
