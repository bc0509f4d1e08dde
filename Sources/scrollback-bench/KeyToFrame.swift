import Foundation
import ScrollbackModel
import ScrollbackStorage
import ScrollbackTerminal
import ScrollbackViewModels

/// "key to frame": each action that changes the list, from the key to the drawn frame, on
/// the real view model and renderer (an in-memory 200×60 screen), beside drawing the frame
/// alone. The selection sits far down the list, where its index costs the most to count.
/// Between samples the background position is awaited (not measured): every sample is the
/// key's own path, warm.
@MainActor
enum KeyToFrame {
    static func run(big: String, quick: Bool, report: inout Report) throws {
        let store = try Store.open(path: big)
        // Another process's writes, as the periodic check meets them.
        let other = try Store.open(path: big)
        let browser = try BrowserViewModel(
            repositories: .init(
                conversations: store.conversations, messages: store.messages, search: store.search, settings: store.settings, activity: store.activity),
            databasePath: big, isReadOnly: false, searchRunner: BackgroundSearchRunner(path: big),
            positionRunner: BackgroundPositionRunner(path: big), activityRunner: BackgroundActivityRunner(path: big))
        let screen = MemoryScreen(width: 200, height: 60)
        browser.resize(width: 200, height: 60)
        try browser.start()
        // As the browser runs: checkpoints on a thread of their own.
        let checkpointer = try BackgroundCheckpointer(for: store)
        defer { checkpointer.stop() }
        let originalOrder = browser.list.order
        let rounds = quick ? 4 : 60
        let pagesUp = quick ? 5 : 200

        func frame() { BrowserRenderer.render(browser, on: screen) }
        func press(_ key: Key) throws {
            _ = try browser.handle(key)
            browser.promptShown()
        }
        func timed(_ key: Key) throws -> Double {
            try Measure.time {
                try press(key)
                frame()
            }
        }
        /// Takes in the background position (not measured).
        func settle() {
            for _ in 0..<60_000 {
                browser.poll()
                if !browser.list.isFindingPosition { return }
                usleep(500)
            }
        }
        /// Far down the list (not measured).
        func reposition() throws {
            try press(.character("G"))
            for _ in 0..<pagesUp { try press(.pageUp) }
            settle()
            frame()
        }

        try reposition()
        let frameOnly = Measure.samples(quick ? 50 : 500) { frame() }
        var times: [String: [Double]] = [:]
        let outsideID = try store.conversations.page(sort: .updated, at: .first, limit: 1).items.first?.id
        let outsideTitle = try outsideID.flatMap { try store.conversations.conversation(id: $0)?.title } ?? ""
        for round in 0..<rounds {
            // Rename, then undo it.
            try press(.character("r"))
            try press(.character("~"))
            times["rename", default: []].append(try timed(.enter))
            settle()
            times["undo", default: []].append(try timed(.character("u")))
            settle()
            // Delete, then undo it.
            try press(.character("d"))
            times["delete", default: []].append(try timed(.character("y")))
            settle()
            times["undo", default: []].append(try timed(.character("u")))
            settle()
            // Each order in turn, back to the first.
            for _ in ConversationOrder.allCases {
                times["sort change", default: []].append(try timed(.character("s")))
                settle()
            }
            // Mark (and its move down), then unmark.
            times["mark", default: []].append(try timed(.character(" ")))
            try press(.character("k"))
            try press(.character(" "))
            try press(.character("k"))
            // Another process renames a conversation; the periodic check picks it up.
            if let outsideID {
                _ = try other.conversations.rename(id: outsideID, to: round % 2 == 0 ? outsideTitle + " (bench)" : outsideTitle)
                times["outside change", default: []].append(
                    try Measure.time {
                        _ = try browser.idle()
                        frame()
                    })
                settle()
            }
            // The overview opens at once; its charts are counted in the background (awaited,
            // not measured), then Esc goes back.
            times["overview", default: []].append(try timed(.character("a")))
            for _ in 0..<120_000 {
                browser.poll()
                if (browser.top as? OverviewScreen)?.isCounting != true { break }
                usleep(500)
            }
            try press(.escape)
            times["G", default: []].append(try timed(.character("G")))
            settle()
            times["g", default: []].append(try timed(.character("g")))
            try reposition()
        }
        if let outsideID, rounds % 2 == 1 { _ = try other.conversations.rename(id: outsideID, to: outsideTitle) }
        if browser.list.order != originalOrder { try store.settings.set(originalOrder, for: .listSort) }

        let frameMedian = Measure.median(frameOnly)
        for label in ["rename", "delete", "undo", "sort change", "mark", "outside change", "overview", "G", "g"] {
            let samples = times[label] ?? []
            let median = Measure.median(samples)
            let ratio = median / max(frameMedian, 0.000_1)
            report.add(
                "keyframe", "\(label): key to frame, p99 (median ×\(Report.format(ratio)) frame alone)", ours: median,
                baseline: frameMedian, unit: "ms", figure: Measure.percentile(samples, 99), figureName: "p99 ms", atMost: 16)
        }
    }
}
