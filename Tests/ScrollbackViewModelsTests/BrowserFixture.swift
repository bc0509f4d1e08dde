import ScrollbackModel
@testable import ScrollbackStorage
import ScrollbackViewModels
import TestSupport

/// A browser over a real SQLite store, at a fixed time.
@MainActor
struct BrowserFixture {
    let store: Store
    let browser: BrowserViewModel

    static let now = Timestamp(milliseconds: 1_800_000_000_000)

    init(store: Store, readOnly: Bool = false, width: Int = 80, height: Int = 24) throws {
        self.store = store
        browser = try BrowserViewModel(
            repositories: .init(
                conversations: store.conversations, messages: store.messages, search: store.search, settings: store.settings, activity: store.activity),
            databasePath: store.path, isReadOnly: readOnly, now: { BrowserFixture.now }, zone: .utc)
        browser.resize(width: width, height: height)
        try browser.start()
    }

    /// Conversation `i` was updated `i` minutes before `now`, so the list order is 0, 1, 2…
    static func store(count: Int, messages: Int = 2) throws -> Store {
        let store = try Store.open(path: ":memory:")
        try store.inserting(about: .max) {
            for index in 0..<count {
                let time = now.milliseconds - Int64(index) * 60_000
                try store.addConversation(
                    title: "conversation \(index)", createdAt: time, updatedAt: time,
                    messages: (0..<messages).map { "message \($0) of conversation \(index)" })
            }
        }
        return store
    }

    func press(_ keys: Key...) throws {
        // A person sees a frame after each key (a question is drawn before it is answered).
        for key in keys {
            _ = try browser.handle(key)
            browser.promptShown()
        }
    }

    func type(_ text: String) throws {
        for character in text { _ = try browser.handle(.character(character)) }
    }

    var selectedTitle: String? { browser.list.selected?.title }
}
