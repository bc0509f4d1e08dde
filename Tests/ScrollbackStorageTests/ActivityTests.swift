import Foundation
import Testing

import ScrollbackModel
@testable import ScrollbackStorage
import TestSupport

/// The overview's charts: one grouped query each, over an index, counting what the list's
/// filter lets through.
@Suite("Activity charts")
struct ActivityTests {
    static let half = ConversationFilter(
        since: Timestamp(milliseconds: 1_735_689_600_000),  // 2025-01-01
        until: Timestamp(milliseconds: 1_751_328_000_000))  // 2025-07-01

    static func store() throws -> Store {
        let store = try Store.open(path: ":memory:")
        try store.addActivity()
        return store
    }

    static func chart(_ store: Store, _ chart: ActivityChart, _ filter: ConversationFilter = half) throws -> [String] {
        let data = try store.activity.chart(chart, filter: filter, window: ActivityWindow(filter: filter, now: Timestamp(milliseconds: 0)))
        return data.bars.map { "\($0.shownLabel) \($0.value)" } + (data.more > 0 ? ["+\(data.more)"] : [])
    }

    @Test("per month by update (a month's last and first millisecond on their own sides), tokens by message time, per model, per source, busiest days")
    func charts() throws {
        let store = try Self.store()
        #expect(try Self.chart(store, .months) == ["2025-01 4", "2025-02 1", "2025-03 4", "2025-04 3", "2025-05 1", "2025-06 1"])
        #expect(try Self.chart(store, .tokens) == ["2025-01 0", "2025-02 0", "2025-03 5000", "2025-04 660", "2025-05 0", "2025-06 0"])
        #expect(
            try Self.chart(store, .models) == [
                "claude-sonnet 5", "gpt-4o 4", "– 2", "\(Store.hostileModel) 1", "gpt-4o-mini 1", "o1 1",
            ])
        #expect(try Self.chart(store, .sources) == ["chatgpt 5", "claude-code 4", "llm 2", "claude 1", "codex 1", "evil 1"])
        #expect(
            try Self.chart(store, .days) == [
                "2025-03-14 4", "2025-01-05 3", "2025-04-02 2", "2025-06-30 1", "2025-05-01 1", "2025-04-01 1", "2025-02-01 1",
            ])
    }

    @Test("the filter narrows every chart; each bar's filter lists exactly what it counts")
    func filtered() throws {
        let store = try Self.store()
        var chatgpt = Self.half
        chatgpt.source = "ChatGPT"
        #expect(try Self.chart(store, .months, chatgpt) == ["2025-01 4", "2025-02 0", "2025-03 0", "2025-04 0", "2025-05 0", "2025-06 1"])
        #expect(try Self.chart(store, .models, chatgpt) == ["gpt-4o 4", "gpt-4o-mini 1"])
        // Per model and per source, the months shown: March alone.
        let march = ConversationFilter(since: Timestamp(milliseconds: 1_740_787_200_000), until: Timestamp(milliseconds: 1_743_465_600_000))
        #expect(try Self.chart(store, .models, march) == ["claude-sonnet 4"])
        #expect(try Self.chart(store, .sources, march) == ["claude-code 4"])
        var pinned = Self.half
        pinned.pinnedOnly = true
        #expect(try Self.chart(store, .days, pinned) == ["2025-06-30 1"])
        var code = Self.half
        code.source = "claude-code"
        #expect(try Self.chart(store, .tokens, code)[2] == "2025-03 4800")

        // Every bar's filter, as the list counts it, is the bar's number (the model filter
        // takes any model holding the name: gpt-4o's bar is the one that differs).
        let window = ActivityWindow(filter: Self.half, now: Timestamp(milliseconds: 0))
        for chart in [ActivityChart.months, .models, .sources, .days] {
            for bar in try store.activity.chart(chart, filter: Self.half, window: window).bars {
                guard let filter = bar.filter else {
                    #expect(bar.label == nil)
                    continue
                }
                let listed = try store.conversations.count(filter: filter)
                #expect(listed == Int(bar.value) || (chart == .models && bar.label == "gpt-4o" && listed == 5), "\(chart) \(bar.label): \(listed)")
            }
        }
    }

    @Test("the window: the last 24 months up to now, or the months the filter's range touches (a future since: its month), at most 120 (the latest), none before 1970, never a trap on extreme dates")
    func windows() throws {
        let now = Timestamp(milliseconds: 1_764_720_000_000)  // 2025-12-03
        let last = ActivityWindow(filter: .none, now: now)
        #expect(last.months == 24 && ActivityWindow.monthLabel(last.start) == "2024-01" && ActivityWindow.monthLabel(last.bounds[23]) == "2025-12")
        #expect(last.end.milliseconds == 1_767_225_600_000 && !last.isCut)  // 2026-01-01
        let one = ActivityWindow(filter: ConversationFilter(since: Timestamp(milliseconds: 1_741_910_400_000)), now: now)  // since 2025-03-14
        #expect(ActivityWindow.monthLabel(one.start) == "2025-03" && one.months == 10)
        // A since: after this month is its own month, not a window that ends before it.
        let future = ActivityWindow(filter: ConversationFilter(since: Timestamp(milliseconds: 1_800_000_000_000)), now: now)  // 2027-01-15
        #expect(future.months == 1 && ActivityWindow.monthLabel(future.start) == "2027-01")
        let before = ActivityWindow(filter: ConversationFilter(until: Timestamp(milliseconds: 86_400_000)), now: now)  // until 1970-01-02
        #expect(before.months == 1 && before.start.milliseconds == 0)
        let long = ActivityWindow(filter: ConversationFilter(since: Timestamp(milliseconds: 0)), now: now)
        #expect(long.months == 120 && long.isCut && ActivityWindow.monthLabel(long.start) == "2016-01")
        for (since, until) in [(Int64.min, Int64.max), (Int64.max - 1, Int64.max), (-62_135_596_800_000, -62_135_596_799_999)] {
            let window = ActivityWindow(filter: ConversationFilter(since: Timestamp(milliseconds: since), until: Timestamp(milliseconds: until)), now: now)
            #expect(window.months >= 1 && window.months <= 120)
            let store = try Self.store()
            for chart in ActivityChart.allCases { _ = try store.activity.chart(chart, filter: .none, window: window) }
        }
    }

    @Test("each chart walks an index: the updated order's (both halves), the model's, the source's; the tokens one read of the messages")
    func plans() throws {
        let store = try Self.store()
        let window = ActivityWindow(filter: Self.half, now: Timestamp(milliseconds: 0))
        let expected: [ActivityChart: String] = [
            .months: "conversation_by_updated", .tokens: "SCAN message", .models: "conversation_by_model",
            .sources: "conversation_by_source", .days: "conversation_by_updated",
        ]
        for chart in ActivityChart.allCases {
            let (sql, arguments) = try #require(try store.activity.statement(chart, filter: .none, window: window))
            let plan = try store.database.query("EXPLAIN QUERY PLAN " + sql, arguments) { $0.text(3) }.joined(separator: "\n")
            #expect(plan.contains(try #require(expected[chart])), "\(chart): \(plan)")
            #expect(!plan.contains("SCAN conversation\n") && !plan.hasSuffix("SCAN conversation"), "\(chart): \(plan)")
        }
    }
}
