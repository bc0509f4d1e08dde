import Foundation
import Testing

import ScrollbackModel
@testable import ScrollbackStorage
@testable import ScrollbackTerminal
@testable import ScrollbackViewModels
import TerminalText
import TestSupport

/// Every binding that cannot act now says why, in the footer, and changes nothing: the
/// reasons come from the conditions the screens' bindings list, not from refusals written by
/// hand in each handler.
@Suite("Disabled bindings")
@MainActor
struct DisabledReasonTests {
    static let width = 100

    static func browser(_ path: String, readOnly: Bool) throws -> BrowserViewModel {
        let store = try Store.open(path: path)
        let browser = try BrowserViewModel(
            repositories: .init(conversations: store.conversations, messages: store.messages, search: store.search, settings: store.settings, activity: store.activity),
            databasePath: path, isReadOnly: readOnly, searchRunner: BackgroundSearchRunner(path: path), now: { LayoutTests.now }, zone: .utc)
        browser.resize(width: width, height: 24)
        try browser.start()
        return browser
    }

    /// Keys that bring a fresh browser to `screen`, on the branched conversation.
    static func go(_ browser: BrowserViewModel, to screen: BrowserScreen) throws {
        switch screen {
        case .list:
            break
        case .reader:
            _ = try browser.handle(.enter)
        case .outline:
            _ = try browser.handle(.enter)
            _ = try browser.handle(.character("t"))
        case .overview:
            _ = try browser.handle(.character("a"))
        case .results:
            // A search run here (no runner's wait): the results show at once.
            _ = try browser.handle(.character("/"))
            for character in "rye" { _ = try browser.handle(.character(character)) }
            _ = try browser.handle(.enter)
            for _ in 0..<2_000 where browser.screen != .results {
                browser.poll()
                usleep(1_000)
            }
        }
        #expect(browser.screen == screen)
    }

    /// A search asked for from the prompt and not taken in yet (nothing polls for it).
    static func askForSearch(_ browser: BrowserViewModel) throws {
        _ = try browser.handle(.character("/"))
        for character in "forked" { _ = try browser.handle(.character(character)) }
        _ = try browser.handle(.enter)
        #expect(browser.searching == "forked")
    }

    @Test("each binding's disabled reason shows in the footer when its condition holds (writes in --readonly, acting while a search is on its way), and nothing changes")
    func everyReasonShows() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("h.sqlite")
        do {
            let store = try Store.open(path: path)
            try store.addTree(title: "Forked plan", start: LayoutTests.now.milliseconds - 60_000)
            try store.addConversation(title: "rye bread", createdAt: 1_000, messages: ["rye", "more rye"])
        }
        var checked: [BindingCondition: Int] = [:]
        for screen in BrowserScreen.allCases {
            for binding in KeyBindings.keymap(for: screen) {
                for condition in binding.conditions {
                    let browser = try Self.browser(path, readOnly: condition != .actsOnShown)
                    try Self.go(browser, to: screen)
                    if condition == .actsOnShown { try Self.askForSearch(browser) }
                    let before = try browser.repositories.conversations.conversations(ids: [1, 2]).map { "\($0.title) \($0.pinned)" }
                    let key = try #require(binding.keys.first)
                    #expect(try browser.handle(key))
                    let reason = try #require(browser.disabledReason(binding), "\(screen) \(binding.command)")
                    #expect(browser.status == reason, "\(screen) \(binding.command)")
                    #expect(browser.prompt == nil && effectless(browser), "\(screen) \(binding.command) acted")
                    let footer = LayoutTests.render(browser, width: Self.width, height: 24).lines[23]
                    #expect(footer.contains(reason), "\(screen) \(binding.command): \(footer)")
                    #expect(try browser.repositories.conversations.conversations(ids: [1, 2]).map { "\($0.title) \($0.pinned)" } == before)
                    #expect(browser.screen == screen)
                    checked[condition, default: 0] += 1
                }
            }
        }
        // Both kinds of condition were met, on the screens that have them.
        #expect(checked[.actsOnShown, default: 0] >= 20)
        #expect(checked.filter { if case .writes = $0.key { true } else { false } }.values.reduce(0, +) == 11)
    }

    func effectless(_ browser: BrowserViewModel) -> Bool { browser.takeEffect() == nil }

    @Test("the read-only reason is said even with nothing selected; the readable keys still act in --readonly")
    func readOnlyWithNothingSelected() throws {
        let folder = try TemporaryDirectory()
        let browser = try Self.browser(folder.file("empty.sqlite"), readOnly: true)
        _ = try browser.handle(.character("r"))
        #expect(browser.status == "read-only: cannot rename")
        _ = try browser.handle(.character("s"))
        #expect(browser.status == "Sorted by created")
    }
}
