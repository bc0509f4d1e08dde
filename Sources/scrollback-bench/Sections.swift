import CSQLite
import Foundation
import ScrollbackImport
import ScrollbackModel
import ScrollbackStorage
import ScrollbackTerminal
import ScrollbackViewModels
import TerminalText

@MainActor
enum Sections {
    static let columns = "id, public_id, title, model, source, source_id, created_at, updated_at, message_count, pinned"
    static let order = "ORDER BY pinned DESC, updated_at DESC, id DESC"

    // MARK: 1. Page cost at depth

    static func pageCost(big: String, total: Int, report: inout Report) throws {
        let store = try Store.open(path: big, readOnly: true)
        let raw = try RawSQLite(path: big)
        let rawFirst = try RawSQLite.Statement(raw, "SELECT \(columns) FROM conversation \(order) LIMIT 50")
        let rawAfter = try RawSQLite.Statement(
            raw, "SELECT \(columns) FROM conversation WHERE (pinned, updated_at, id) < (?, ?, ?) \(order) LIMIT 50")
        let rawLast = try RawSQLite.Statement(
            raw, "SELECT \(columns) FROM conversation ORDER BY pinned ASC, updated_at ASC, id ASC LIMIT 50")
        let offset = try RawSQLite.Statement(raw, "SELECT \(columns) FROM conversation \(order) LIMIT 50 OFFSET ?")
        let count = try store.conversations.count()
        var oursFirst = 0.0
        for (label, depth) in [("row 0", 0), ("row \(count / 2)", count / 2), ("last page", count - 50)] {
            let ours: [Double]
            let baseline: [Double]
            let offsetTimes: [Double]
            if depth == 0 {
                ours = try Measure.samples(300) { _ = try store.conversations.page(sort: .updated, at: .first, limit: 50) }
                baseline = Measure.samples(300) { rawFirst.run() }
                offsetTimes = Measure.samples(50) { offset.run([0]) }
            } else if depth == count - 50 {
                ours = try Measure.samples(300) { _ = try store.conversations.page(sort: .updated, at: .last, limit: 50) }
                baseline = Measure.samples(300) { rawLast.run() }
                offsetTimes = Measure.samples(5) { offset.run([Int64(depth)]) }
            } else {
                // The row just before the depth, found once (not measured).
                let anchor = try require_(store.conversations.page(sort: .updated, at: .first, limit: 1).items.first)
                let before = try anchorRow(raw, depth: depth - 1) ?? anchor
                let cursor = Cursor.conversation(before, order: .updated)
                ours = try Measure.samples(300) { _ = try store.conversations.page(sort: .updated, at: .after(cursor), limit: 50) }
                baseline = Measure.samples(300) { rawAfter.run([before.pinned ? 1 : 0, before.updatedAt.milliseconds, before.id]) }
                offsetTimes = Measure.samples(5) { offset.run([Int64(depth)]) }
            }
            let oursMedian = Measure.median(ours)
            if depth == 0 { oursFirst = oursMedian }
            report.add(
                "page", "50 rows at \(label): ours vs raw C API", ours: oursMedian, baseline: Measure.median(baseline), unit: "ms",
                figure: oursMedian / max(Measure.median(baseline), 0.000_1), figureName: "ours/raw", atMost: 1.5)
            if depth == count - 50 {
                report.add(
                    "page", "last page: ours vs first page", ours: oursMedian, baseline: oursFirst, unit: "ms",
                    figure: oursMedian / max(oursFirst, 0.000_1), figureName: "deepest/first", atMost: 1.5)
                report.add(
                    "page", "last page: OFFSET vs ours", ours: oursMedian, baseline: Measure.median(offsetTimes), unit: "ms",
                    figure: Measure.median(offsetTimes) / max(oursMedian, 0.000_1), figureName: "offset/ours", atLeast: 100)
            }
        }
    }

    // MARK: 1b. Filtered pages at depth

    /// Filtered lists page by key too: a time filter is a range of the order's index (the
    /// same cost at any depth); a model filter is checked as the index is walked. Each is
    /// measured beside the same query through the C API, and deep against first.
    static func filteredPages(big: String, report: inout Report) throws {
        let store = try Store.open(path: big, readOnly: true)
        let raw = try RawSQLite(path: big)
        let middle = try rawMedianUpdated(raw)
        let cases: [(name: String, filter: ConversationFilter, condition: String, integers: [Int64], text: [String], scans: Bool)] = [
            ("updated since the median", ConversationFilter(since: Timestamp(milliseconds: middle)), "updated_at >= ?", [middle], [], false),
            ("model contains 'gpt-4o'", ConversationFilter(model: "gpt-4o"), "model LIKE ? ESCAPE '\\'", [], ["%gpt-4o%"], true),
        ]
        for item in cases {
            let total = try store.conversations.count(filter: item.filter)
            let depth = max(total / 2, 1)
            // The row before the depth, found once through OFFSET (not measured).
            let find = try RawSQLite.Statement(
                raw, "SELECT id, pinned, updated_at FROM conversation WHERE \(item.condition) \(order) LIMIT 1 OFFSET \(depth - 1)")
            guard let row = find.first(item.integers, text: item.text) else { throw BenchError("no row at \(depth) for \(item.name)") }
            let before = ConversationDTO(
                id: row[0], publicID: "", title: "", model: nil, source: "", sourceID: nil, createdAt: Timestamp(milliseconds: 0),
                updatedAt: Timestamp(milliseconds: row[2]), messageCount: 0, pinned: row[1] != 0)
            // The same page through the C API: the key first, the filter's value last.
            let rawPage = try RawSQLite.Statement(
                raw, "SELECT \(columns) FROM conversation WHERE pinned = ? AND (updated_at, id) < (?, ?) AND \(item.condition) ORDER BY updated_at DESC, id DESC LIMIT 50")
            let cursor = Cursor.conversation(before, order: .updated)
            let first = try Measure.samples(100) { _ = try store.conversations.page(sort: .updated, filter: item.filter, at: .first, limit: 50) }
            let ours = try Measure.samples(100) { _ = try store.conversations.page(sort: .updated, filter: item.filter, at: .after(cursor), limit: 50) }
            let baseline = Measure.samples(100) {
                rawPage.run([row[1], before.updatedAt.milliseconds, before.id] + item.integers, text: item.text)
            }
            report.add(
                "filter", "\(item.name), 50 rows at row \(NumberText.grouped(depth)) of \(NumberText.grouped(total)): ours vs raw C API",
                ours: Measure.median(ours), baseline: Measure.median(baseline), unit: "ms",
                figure: Measure.median(ours) / max(Measure.median(baseline), 0.000_1), figureName: "ours/raw", atMost: 1.5)
            report.add(
                "filter", "\(item.name): the page at row \(NumberText.grouped(depth)) vs the first", ours: Measure.median(ours),
                baseline: Measure.median(first), unit: "ms", figure: Measure.median(ours) / max(Measure.median(first), 0.000_1),
                figureName: "deep/first", atMost: item.scans ? 10 : 1.5)
        }
    }

    /// Narrowing the list by title (`\\`, `--title`): the first page of 50 for what a
    /// person types, beside the first page of the whole list. A key typed into the prompt
    /// is one such page, so each is held to a frame (16 ms at the 99th percentile). The worst
    /// case is shown without a bar: a letter the title index proposes for thousands of
    /// titles that the rule refuses (the index splits the demo's Zalgo "t̶e̴x̵t" at its
    /// strokes, the rule keeps the word whole), which walks the whole order.
    static func narrowedPages(big: String, report: inout Report) throws {
        let store = try Store.open(path: big, readOnly: true)
        let whole = try Measure.samples(100) { _ = try store.conversations.page(sort: .updated, at: .first, limit: 50) }
        let cases: [(words: String, what: String, bar: Double?)] = [
            ("a", "one letter, in most titles", 16), ("py", "two letters", 16), ("react", "a word in many titles", 16),
            ("react hook", "two words", 16), ("rare", "a word in 3 titles of 1 M", 16), ("x", "the worst: thousands of candidates the rule refuses", nil),
        ]
        for item in cases {
            let filter = ConversationFilter(title: item.words)
            let count = try store.conversations.count(filter: filter)
            let samples = try Measure.samples(item.bar == nil ? 5 : 50) {
                _ = try store.conversations.page(sort: .updated, filter: filter, at: .first, limit: 50)
            }
            report.add(
                "filter", "narrow by title '\(item.words)' (\(item.what); \(NumberText.grouped(count)) pass): first page vs the whole list's",
                ours: Measure.median(samples), baseline: Measure.median(whole), unit: "ms", figure: Measure.percentile(samples, 99),
                figureName: "p99 ms", atMost: item.bar)
        }
    }

    /// The median updated time, through OFFSET (not measured).
    private static func rawMedianUpdated(_ raw: RawSQLite) throws -> Int64 {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(raw.handle, "SELECT updated_at FROM conversation ORDER BY updated_at LIMIT 1 OFFSET (SELECT count(*) / 2 FROM conversation)", -1, &statement, nil) == SQLITE_OK else {
            throw BenchError("cannot find the median time")
        }
        defer { sqlite3_finalize(statement) }
        guard sqlite3_step(statement) == SQLITE_ROW else { throw BenchError("the database is empty") }
        return sqlite3_column_int64(statement, 0)
    }

    private static func require_<T>(_ value: T?) throws -> T {
        guard let value else { throw BenchError("the database is empty") }
        return value
    }

    private static func anchorRow(_ raw: RawSQLite, depth: Int) throws -> ConversationDTO? {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(raw.handle, "SELECT id, pinned, updated_at FROM conversation \(order) LIMIT 1 OFFSET ?", -1, &statement, nil) == SQLITE_OK else { return nil }
        defer { sqlite3_finalize(statement) }
        sqlite3_bind_int64(statement, 1, Int64(depth))
        guard sqlite3_step(statement) == SQLITE_ROW else { return nil }
        return ConversationDTO(
            id: sqlite3_column_int64(statement, 0), publicID: "", title: "", model: nil, source: "", sourceID: nil,
            createdAt: Timestamp(milliseconds: 0), updatedAt: Timestamp(milliseconds: sqlite3_column_int64(statement, 2)),
            messageCount: 0, pinned: sqlite3_column_int64(statement, 1) != 0)
    }

    // MARK: 2. First frame

    static func firstFrame(big: String, binary: String, report: inout Report) throws {
        let environment = ["TERM": "xterm-256color", "LANG": "C.UTF-8", "TZ": "UTC"]
        func quoted(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'" }
        // Both run under script(1), which gives each a terminal: the same harness for both.
        let browser = ["-qec", "\(quoted(binary)) --db \(quoted(big)) --readonly --exit-after-first-frame", "/dev/null"]
        let query = "SELECT \(columns) FROM conversation \(order) LIMIT 50"
        let sqlite = ["-qec", "sqlite3 -readonly \(quoted(big)) \(quoted(query))", "/dev/null"]
        _ = try Measure.run("/usr/bin/script", browser, environment: environment)
        _ = try Measure.run("/usr/bin/script", sqlite, environment: environment)
        var ours: [Double] = []
        var baseline: [Double] = []
        for _ in 0..<7 {
            let frame = try Measure.run("/usr/bin/script", browser, environment: environment)
            guard frame.status == 0 else { throw BenchError("the browser exited with \(frame.status)") }
            ours.append(frame.milliseconds)
            baseline.append(try Measure.run("/usr/bin/script", sqlite, environment: environment).milliseconds)
        }
        report.add(
            "frame", "start to first frame vs sqlite3 query", ours: Measure.median(ours), baseline: Measure.median(baseline),
            unit: "ms", figure: Measure.median(ours) / max(Measure.median(baseline), 0.001), figureName: "ours/sqlite3", atMost: 3)
    }

    // MARK: 3. Memory

    static func memory(big: String, small: String, tiny: String, sizes: Sizes, report: inout Report) throws {
        let me = CommandLine.arguments[0]
        func peak(_ mode: String, _ database: String) throws -> Double {
            let result = try Measure.run(me, ["--child", mode, "--db", database])
            guard result.status == 0, let peak = result.peakKilobytes else {
                throw BenchError("child \(mode) failed (\(result.status))")
            }
            return Double(peak) / 1024
        }
        let walkBig = try peak("walk", big)
        let walkSmall = try peak("walk", small)
        report.add(
            "memory", "walk \(sizes.big) and back vs \(sizes.small)", ours: walkBig, baseline: walkSmall, unit: "MiB",
            figure: walkBig / max(walkSmall, 0.001), figureName: "big/small", atMost: 1.2)
        report.add(
            "memory", "walk \(sizes.big) and back: peak RSS", ours: walkBig, baseline: 50, unit: "MiB", figure: walkBig,
            figureName: "MiB", atMost: 50)
        let openBig = try peak("open", big)
        let openTiny = try peak("open", tiny)
        report.add(
            "memory", "open \(sizes.big) vs \(sizes.tiny)", ours: openBig, baseline: openTiny, unit: "MiB",
            figure: openBig / max(openTiny, 0.001), figureName: "big/tiny")
    }

    // MARK: 4. Per key

    static func perKey(big: String, report: inout Report) throws {
        let store = try Store.open(path: big, readOnly: true)
        let browser = try BrowserViewModel(
            repositories: .init(conversations: store.conversations, messages: store.messages, search: store.search, settings: store.settings, activity: store.activity),
            databasePath: big, isReadOnly: true)
        let screen = MemoryScreen(width: 200, height: 60)
        browser.resize(width: 200, height: 60)
        try browser.start()
        BrowserRenderer.render(browser, on: screen)
        let frameOnly = Measure.samples(500) { BrowserRenderer.render(browser, on: screen) }
        for (label, key, count) in [("j", Key.character("j"), 3_000), ("PgDn", Key.pageDown, 1_500)] {
            let times = try Measure.samples(count) {
                _ = try browser.handle(key)
                BrowserRenderer.render(browser, on: screen)
            }
            report.add(
                "key", "\(label) + 200×60 frame: p99 (median in ours)", ours: Measure.median(times), baseline: Measure.median(frameOnly),
                unit: "ms", figure: Measure.percentile(times, 99), figureName: "p99 ms", atMost: 2)
        }
        var jumps: [Double] = []
        for _ in 0..<100 {
            _ = try browser.handle(.character("g"))
            jumps.append(try Measure.time {
                _ = try browser.handle(.character("G"))
                BrowserRenderer.render(browser, on: screen)
            })
        }
        report.add(
            "key", "G + 200×60 frame: p99 (median in ours)", ours: Measure.median(jumps), baseline: Measure.median(frameOnly),
            unit: "ms", figure: Measure.percentile(jumps, 99), figureName: "p99 ms", atMost: 2)
    }

    // MARK: 5. Import

    static func importSpeed(data: DataSet, sizes: Sizes, report: inout Report) throws {
        let export = try data.chatGPTExport()
        let fileBytes = ((try FileManager.default.attributesOfItem(atPath: export))[.size] as? NSNumber)?.doubleValue ?? 1
        let messages = Double(sizes.exportConversations * sizes.exportMessages)
        let target = data.path("import.sqlite")
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: target + suffix) }
        let ours = try Measure.run(CommandLine.arguments[0], ["--child", "import", "--db", target, "--file", export])
        guard ours.status == 0, let oursPeak = ours.peakKilobytes else { throw BenchError("import failed (\(ours.status))") }
        // The floor: the same export parsed by the same reader, its messages inserted
        // through the C API into a table without any index, in one transaction.
        let rawTarget = data.path("import-raw.sqlite")
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: rawTarget + suffix) }
        let raw = try RawSQLite(path: rawTarget, create: true)
        try raw.execute(
            "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; CREATE TABLE m (conversation TEXT, position INTEGER, role TEXT, content TEXT, created_at INTEGER);")
        let insert = try RawSQLite.Statement(raw, "INSERT INTO m VALUES (?3, ?1, ?4, ?5, ?2)")
        var floorMessages = 0
        let rawTime = try Measure.time {
            try raw.execute("BEGIN")
            try Importer.readChatGPTExport(path: export) { conversation in
                for (position, message) in conversation.messages.enumerated() {
                    insert.run(
                        [Int64(position), message.createdAt.milliseconds],
                        text: [conversation.sourceID ?? "", message.role.rawValue, message.content])
                    floorMessages += 1
                }
            }
            try raw.execute("COMMIT")
        }
        guard floorMessages == Int(messages) else { throw BenchError("the floor read \(floorMessages) messages, not \(Int(messages))") }
        report.add(
            "import", "\(Int(messages)) messages with the index built vs parsed into an unindexed table", ours: ours.milliseconds,
            baseline: rawTime, unit: "ms", figure: ours.milliseconds / rawTime, figureName: "× floor", atMost: 1.5)
        report.add(
            "import", "messages per second, end to end with the index built", ours: ours.milliseconds, baseline: rawTime,
            unit: "ms", figure: messages / (ours.milliseconds / 1000), figureName: "messages/s", atLeast: 100_000)
        report.add(
            "import", "peak RSS vs file size", ours: Double(oursPeak) / 1024, baseline: fileBytes / 1_048_576, unit: "MiB",
            figure: Double(oursPeak) * 1024 / fileBytes, figureName: "× file", atMost: 1.5)
    }

    // MARK: 6. Batch delete

    static func batchDelete(data: DataSet, sizes: Sizes, report: inout Report) throws {
        let medium = try data.demo(sizes.medium, name: "medium")
        let ours = data.path("delete-ours.sqlite")
        let rawPath = data.path("delete-raw.sqlite")
        for copy in [ours, rawPath] {
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: copy + suffix) }
            try FileManager.default.copyItem(atPath: medium, toPath: copy)
        }
        let ids = try RawSQLite(path: ours).integers("SELECT id FROM conversation ORDER BY id LIMIT \(sizes.deleted)")
        let store = try Store.open(path: ours)
        let oursTime = try Measure.time { _ = try store.conversations.delete(ids: ids) }
        let healthy = try store.check().isHealthy
        let raw = try RawSQLite(path: rawPath)
        try raw.execute("PRAGMA foreign_keys = ON; PRAGMA journal_mode = WAL;")
        let delete = try RawSQLite.Statement(raw, "DELETE FROM conversation WHERE id = ?")
        let rawTime = try Measure.time {
            try raw.execute("BEGIN IMMEDIATE")
            for id in ids { delete.run([id]) }
            try raw.execute("COMMIT")
        }
        report.add(
            "delete", "\(ids.count) conversations in one call vs raw", ours: oursTime, baseline: rawTime, unit: "ms",
            figure: Double(ids.count) / (oursTime / 1000), figureName: "conversations/s", atLeast: 20_000)
        report.add(
            "delete", "scrollback check afterwards", ours: healthy ? 1 : 0, baseline: 1, unit: "ok", figure: healthy ? 1 : 0,
            figureName: "clean", atLeast: 1)
    }

    // MARK: 7. Search

    static func search(big: String, report: inout Report) throws {
        let store = try Store.open(path: big, readOnly: true)
        let raw = try RawSQLite(path: big)
        // The baseline does what the search must at least do: titles first, then messages,
        // 51 rows in all (one more than the page, to know there is a next page), each row
        // read whole, through the C API with no checking, snippets or DTOs.
        let titles = try RawSQLite.Statement(
            raw,
            """
            SELECT c.* FROM conversation_fts JOIN conversation AS c ON c.id = conversation_fts.rowid
             WHERE conversation_fts MATCH ?2 ORDER BY conversation_fts.rowid DESC LIMIT ?1
            """)
        let bodies = try RawSQLite.Statement(
            raw,
            """
            SELECT m.*, c.* FROM message_fts JOIN message AS m ON m.id = message_fts.rowid
              JOIN conversation AS c ON c.id = m.conversation_id
             WHERE message_fts MATCH ?2 ORDER BY message_fts.rowid DESC LIMIT ?1
            """)
        func rawFirstPage(_ expression: String) {
            let found = titles.run([51], text: [expression])
            if found < 51 { bodies.run([Int64(51 - found)], text: [expression]) }
        }
        let messages = try store.messages.count()
        let classes: [(String, String)] = [
            ("common word", "the"), ("rare word", DataSet.rareWord), ("2-char CJK, rare", DataSet.rareCJK),
            ("2-char CJK, common", "東京"), ("1-char CJK", "鰻"), ("2-letter word", "Go"), ("1-letter word", "a"),
            ("common word, in messages only", "because"), ("prefix", "refact"),
            ("phrase", "\"edge cases\""), ("code token", "len(items)"), ("no match", "zzqxv"),
        ]
        for (label, query) in classes {
            let expression = SearchQuery(query).indexExpression ?? ""
            _ = try store.search.search(query, after: nil, limit: 50)
            let ours = try Measure.samples(20) { _ = try store.search.search(query, after: nil, limit: 50) }
            let baseline = Measure.samples(20) { rawFirstPage(expression) }
            report.add(
                "search", "warm: first 50 for \(label) '\(query)' in \(messages) messages", ours: Measure.median(ours),
                baseline: Measure.median(baseline), unit: "ms", figure: Measure.percentile(ours, 95), figureName: "p95 ms",
                atMost: 50)
            // Cold: the file's pages dropped from the page cache before each query, on a
            // connection opened for it (so that SQLite's own cache is empty too).
            var coldOurs: [Double] = []
            var coldRaw: [Double] = []
            for _ in 0..<5 {
                let fresh = try Store.open(path: big, readOnly: true)
                PageCache.evict(big)
                coldOurs.append(try Measure.time { _ = try fresh.search.search(query, after: nil, limit: 50) })
                let freshRaw = try RawSQLite(path: big)
                let freshTitles = try RawSQLite.Statement(freshRaw, titles.sql)
                let freshBodies = try RawSQLite.Statement(freshRaw, bodies.sql)
                PageCache.evict(big)
                coldRaw.append(
                    Measure.time {
                        let found = freshTitles.run([51], text: [expression])
                        if found < 51 { freshBodies.run([Int64(51 - found)], text: [expression]) }
                    })
            }
            report.add(
                "search", "cold: first 50 for \(label) '\(query)'", ours: Measure.median(coldOurs),
                baseline: Measure.median(coldRaw), unit: "ms", figure: Measure.median(coldOurs), figureName: "median ms",
                atMost: 250)
        }
        // Index size: the same 100,000 messages indexed both ways in a scratch file.
        let scratch = big + ".index-size.sqlite"
        try? FileManager.default.removeItem(atPath: scratch)
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let sizes = try RawSQLite(path: scratch, create: true)
        try sizes.execute(
            """
            ATTACH '\(big.replacingOccurrences(of: "'", with: "''"))' AS big;
            CREATE TABLE m (id INTEGER PRIMARY KEY, content TEXT);
            INSERT INTO m SELECT id, content FROM big.message ORDER BY id LIMIT 100000;
            CREATE VIRTUAL TABLE ours USING fts5(content, content = 'm', content_rowid = 'id', tokenize = 'scrollback');
            INSERT INTO ours (ours) VALUES ('rebuild');
            CREATE VIRTUAL TABLE tri USING fts5(content, content = 'm', content_rowid = 'id', tokenize = 'trigram');
            INSERT INTO tri (tri) VALUES ('rebuild');
            """)
        let sample = Double(try sizes.integers("SELECT count(*) FROM m").first ?? 1)
        let oursBytes = Double(try sizes.integers("SELECT sum(pgsize) FROM dbstat WHERE name LIKE 'ours%'").first ?? 0)
        let trigramBytes = Double(try sizes.integers("SELECT sum(pgsize) FROM dbstat WHERE name LIKE 'tri%'").first ?? 0)
        report.add(
            "search", "index bytes per message vs the trigram index it replaces", ours: oursBytes / sample,
            baseline: trigramBytes / sample, unit: "B", figure: oursBytes / trigramBytes, figureName: "× trigram", atMost: 1)
    }
}

/// Drops a file from the page cache (POSIX_FADV_DONTNEED needs no privileges): the next
/// read comes from the disk, as after a reboot.
enum PageCache {
    static func evict(_ path: String) {
        for suffix in ["", "-wal"] {
            let descriptor = open(path + suffix, O_RDONLY)
            guard descriptor >= 0 else { continue }
            _ = posix_fadvise(descriptor, 0, 0, Int32(POSIX_FADV_DONTNEED))
            close(descriptor)
        }
    }
}

/// The message texts of a store, for the import baseline.
enum MessageTexts {
    static func read(path: String) throws -> [String] {
        try RawSQLite(path: path).texts("SELECT content FROM message ORDER BY id")
    }
}
