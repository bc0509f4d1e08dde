import Foundation
import Testing

import ScrollbackModel
@testable import ScrollbackStorage
import TestSupport

/// The FTS5 tokenizer "scrollback" (Sources/SearchTokenizer), through connections the storage
/// layer opens: unicode61 for spaced text, bigrams plus colocated unigrams for CJK-class runs.
@Suite("Search tokenizer")
struct TokenizerTests {
    /// An in-memory connection with `t`, an FTS5 table of one column `x` on the tokenizer, and
    /// `v`, its fts5vocab 'instance' table.
    static func makeTable(_ documents: [String] = []) throws -> Database {
        let database = try Database.inMemory()
        try database.execute("""
            CREATE VIRTUAL TABLE t USING fts5(x, tokenize = 'scrollback');
            CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance');
            """)
        for document in documents {
            try database.run("INSERT INTO t(x) VALUES (?1)", [.text(document)])
        }
        return database
    }

    /// The rowids (1-based insertion order) of the documents a MATCH expression finds.
    func matches(_ database: Database, _ expression: String) throws -> [Int64] {
        try database.query("SELECT rowid FROM t WHERE t MATCH ?1 ORDER BY rowid", [.text(expression)]) { $0.int64(0) }
    }

    func integrityCheck(_ database: Database, table: String = "t") throws {
        try database.execute("INSERT INTO \(table)(\(table)) VALUES ('integrity-check')")
    }

    @Test("Japanese: every one- and two-character substring, and longer phrases, are found; a reversed pair is not")
    func japaneseSubstrings() throws {
        let database = try Self.makeTable(["東京で会議室を予約", "大阪"])
        for phrase in [#""東""#, #""京""#, #""東京""#, #""会議""#, #""会議室""#, #""予約""#, #""約""#, #""東京で会議室を予約""#] {
            #expect(try matches(database, phrase) == [1], "\(phrase)")
        }
        #expect(try matches(database, #""京東""#) == [])
        #expect(try matches(database, #""会室""#) == [])
        #expect(try matches(database, #""大阪""#) == [2])
        #expect(try matches(database, #""阪""#) == [2])
    }

    @Test("mixed phrases line up across the boundary between CJK and Latin text, with or without a space")
    func mixedPhrases() throws {
        let database = try Self.makeTable(["東京tower", "東京 tower", "tower東京", "京都tower", "東京 big tower"])
        #expect(try matches(database, #""東京tower""#) == [1, 2])
        #expect(try matches(database, #""京tower""#) == [1, 2, 4])
        #expect(try matches(database, #""tower東京""#) == [3])
        #expect(try matches(database, #""tower東""#) == [3])
        #expect(try matches(database, #""都tower""#) == [4])
    }

    @Test("prefix queries: a word's start, not its middle")
    func prefixes() throws {
        let database = try Self.makeTable(["three towers", "Zalgo text", "she goes home", "東京タワー"])
        #expect(try matches(database, #""tower"*"#) == [1])
        #expect(try matches(database, #""go"*"#) == [3])
        #expect(try matches(database, #""東"*"#) == [4])
        #expect(try matches(database, #""タワ"*"#) == [4])
    }

    @Test("Thai, Korean, Lao, Khmer, Myanmar: substrings found, words across a space not joined")
    func otherScripts() throws {
        let database = try Self.makeTable([
            "ฉันชอบภาษาไทยมาก", "한국어 문장을 검색합니다", "ພາສາລາວ", "ភាសាខ្មែរ", "မြန်မာစာ",
        ])
        #expect(try matches(database, #""ภาษาไทย""#) == [1])
        #expect(try matches(database, #""ไทย""#) == [1])
        #expect(try matches(database, #""ภาษาลาว""#) == [])
        #expect(try matches(database, #""한국어""#) == [2])
        #expect(try matches(database, #""검색""#) == [2])
        #expect(try matches(database, #""국""#) == [2])
        #expect(try matches(database, #""어문""#) == [])  // "한국어 문장": a space between them
        #expect(try matches(database, #""한국어 문장""#) == [2])
        #expect(try matches(database, #""ລາວ""#) == [3])
        #expect(try matches(database, #""ខ្មែរ""#) == [4])
        #expect(try matches(database, #""မာစာ""#) == [5])
    }

    @Test("Latin text: diacritics and case folded away by unicode61, full-width letters kept apart")
    func latin() throws {
        let database = try Self.makeTable(["Un café, naïve Ärger", "ＡＢＣ full width"])
        #expect(try matches(database, #""cafe""#) == [1])
        #expect(try matches(database, #""CAFÉ""#) == [1])
        #expect(try matches(database, #""naive""#) == [1])
        #expect(try matches(database, #""arger""#) == [1])
        #expect(try matches(database, #""ａｂｃ""#) == [2])
        #expect(try matches(database, #""abc""#) == [])
    }

    @Test("arguments after the name go to unicode61, after remove_diacritics 2; a wrong one is an error")
    func arguments() throws {
        let database = try Database.inMemory()
        try database.execute("CREATE VIRTUAL TABLE t USING fts5(x, tokenize = 'scrollback remove_diacritics 0')")
        try database.run("INSERT INTO t(x) VALUES ('café 東京')")
        #expect(try matches(database, #""cafe""#) == [])
        #expect(try matches(database, #""café 東京""#) == [1])
        #expect(throws: StorageError.self) {
            try database.execute("CREATE VIRTUAL TABLE u USING fts5(x, tokenize = 'scrollback no_such_option 1')")
        }
    }

    @Test("the tokens and positions of a mixed string (golden)")
    func golden() throws {
        let database = try Self.makeTable(["Café東京タワー towers 한국어! 猫、ＡＢ12 ๑๒ ﾀﾜｰ"])
        let tokens = try database.query("SELECT offset, term FROM v ORDER BY offset, term") { "\($0.int64(0)) \($0.text(1))" }
        #expect(tokens == [
            "0 cafe",
            "1 東", "1 東京", "2 京", "2 京タ", "3 タ", "3 タワ", "4 ワ", "4 ワー", "4 ー",
            "5 towers",
            "6 한", "6 한국", "7 국", "7 국어", "7 어",
            "8 猫",  // one character alone; 、 is punctuation, not part of the run
            "9 ａｂ12",  // full-width Latin goes to unicode61, which folds case only
            "10 ๑๒",  // Thai digits are left to unicode61: one number token
            "11 ﾀ", "11 ﾀﾜ", "12 ｰ", "12 ﾜ", "12 ﾜｰ",  // halfwidth katakana
        ])
    }

    @Test("highlight() marks a whole CJK phrase by its bigrams' offsets")
    func highlight() throws {
        let database = try Self.makeTable(["東京で会議室を予約 tower"])
        let marked = try database.queryFirst(
            "SELECT highlight(t, 0, '[', ']') FROM t WHERE t MATCH ?1", [.text(#""会議室を予約 tower""#)]
        ) { $0.text(0) }
        #expect(marked == "東京で[会議室を予約 tower]")
    }

    /// An external-content table: integrity-check tokenizes the content again and compares it
    /// with the index, and a 'delete' with the same text must remove exactly what was added.
    static func makeExternalContentTable() throws -> Database {
        let database = try Database.inMemory()
        try database.execute("""
            CREATE TABLE doc(id INTEGER PRIMARY KEY, body TEXT);
            CREATE VIRTUAL TABLE d USING fts5(body, content = 'doc', content_rowid = 'id', tokenize = 'scrollback');
            CREATE VIRTUAL TABLE dv USING fts5vocab(d, 'row');
            """)
        return database
    }

    func insert(_ database: Database, id: Int64, body: SQLValue) throws {
        try database.run("INSERT INTO doc(id, body) VALUES (?1, CAST(?2 AS TEXT))", [.integer(id), body])
        try database.run("INSERT INTO d(rowid, body) SELECT id, body FROM doc WHERE id = ?1", [.integer(id)])
    }

    func delete(_ database: Database, id: Int64) throws {
        try database.run("INSERT INTO d(d, rowid, body) SELECT 'delete', id, body FROM doc WHERE id = ?1", [.integer(id)])
        try database.run("DELETE FROM doc WHERE id = ?1", [.integer(id)])
    }

    @Test("inserts and external-content deletes with the same text keep the index consistent")
    func insertAndDelete() throws {
        let database = try Self.makeExternalContentTable()
        let bodies = ["東京で会議室を予約", "Café 東京タワー towers", "ภาษาไทย 한국어", "plain English text", "東"]
        for (index, body) in bodies.enumerated() { try insert(database, id: Int64(index + 1), body: .text(body)) }
        try integrityCheck(database, table: "d")
        try delete(database, id: 2)
        try delete(database, id: 5)
        try integrityCheck(database, table: "d")
        #expect(try database.query("SELECT rowid FROM d WHERE d MATCH '\"東京\"' ORDER BY rowid") { $0.int64(0) } == [1])
        for id: Int64 in [1, 3, 4] { try delete(database, id: id) }
        try integrityCheck(database, table: "d")
        #expect(try database.scalarInt("SELECT count(*) FROM dv") == 0)
    }

    @Test("text that is not valid UTF-8 neither crashes nor corrupts the index", arguments: [
        [0xE6, 0xE2, 0xFF, 0x80],
        [0xE6, 0xE6, 0x9D, 0xB1, 0xE4],  // a stray lead byte, 東, a truncated sequence
        [0xE6, 0x9D],  // 東 cut short at the end
        [0xED, 0xA0, 0x80, 0xE4, 0xBA, 0xAC],  // an encoded surrogate, then 京
        [0xC0, 0xAF, 0x61, 0x80, 0xE6, 0x9D, 0xB1, 0xE4, 0xBA, 0xAC, 0xF0, 0x9F],
    ] as [[UInt8]])
    func invalidUTF8(bytes: [UInt8]) throws {
        let database = try Self.makeExternalContentTable()
        try insert(database, id: 1, body: .blob(bytes))
        try insert(database, id: 2, body: .text("東京"))
        try integrityCheck(database, table: "d")
        #expect(try database.query("SELECT rowid FROM d WHERE d MATCH '\"東京\"' ORDER BY rowid") { $0.int64(0) }.contains(2))
        try delete(database, id: 1)
        try delete(database, id: 2)
        try integrityCheck(database, table: "d")
        #expect(try database.scalarInt("SELECT count(*) FROM dv") == 0)
    }

    @Test("2,000 random strings of mixed scripts and stray bytes: inserted, half deleted, all deleted, index consistent")
    func randomStrings() throws {
        let pieces: [[UInt8]] = [
            "東", "京", "で", "会議室", "タワー", "ｰ", "ﾀﾜｰ", "ไทย", "ภาษา", "๑๒", "한국어", "ພາສາລາວ", "ភាសាខ្មែរ", "မြန်မာ",
            "𠀀", "𪜀", "々", "〇", "・", "、", " ", "tower", "Café", "naïve", "Zalgo", "123", "ＡＢ", "\u{301}", "👍🏽",
        ].map { Array($0.utf8) } + [[0xE6], [0xE2, 0xFF], [0x80], [0xF0, 0x9F], [0xED, 0xA0, 0x80], [0xC0, 0xAF], [0x00]]
        var random = SplitMix(seed: 20_261_130)
        let database = try Self.makeExternalContentTable()
        try database.write {
            for id in 1...2_000 {
                var bytes: [UInt8] = []
                for _ in 0..<random.next(below: 24) {
                    if random.next(below: 8) == 0 {
                        bytes.append(UInt8(truncatingIfNeeded: random.next(below: 256)))
                    } else {
                        bytes += pieces[random.next(below: pieces.count)]
                    }
                }
                try insert(database, id: Int64(id), body: .blob(bytes))
            }
        }
        try integrityCheck(database, table: "d")
        try database.write { for id in stride(from: 2, through: 2_000, by: 2) { try delete(database, id: Int64(id)) } }
        try integrityCheck(database, table: "d")
        try database.write { for id in stride(from: 1, through: 2_000, by: 2) { try delete(database, id: Int64(id)) } }
        try integrityCheck(database, table: "d")
        #expect(try database.scalarInt("SELECT count(*) FROM dv") == 0)
    }

    @Test("the stock sqlite3 shell, which lacks the tokenizer, still reads the other tables and passes quick_check")
    func stockShell() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("history.sqlite")
        do {
            let database = try Database.open(path: path, access: .readWrite)
            try database.execute("""
                CREATE TABLE note(id INTEGER PRIMARY KEY, body TEXT);
                CREATE VIRTUAL TABLE note_fts USING fts5(body, content = 'note', content_rowid = 'id', tokenize = 'scrollback');
                INSERT INTO note(body) VALUES ('東京で会議室を予約'), ('plain text'), ('ภาษาไทย');
                INSERT INTO note_fts(rowid, body) SELECT id, body FROM note;
                """)
        }
        let shell = try runSQLiteShell(path, "PRAGMA quick_check; SELECT count(*) FROM note;")
        #expect(shell.status == 0)
        #expect(shell.output == "ok\n3\n")
        // The FTS table itself needs the tokenizer: the shell says so rather than misreading it.
        let search = try runSQLiteShell(path, "SELECT count(*) FROM note_fts WHERE note_fts MATCH 'text';")
        #expect(search.status != 0)
        #expect(search.error.contains("no such tokenizer: scrollback"))
        // And a connection of ours reads it all.
        let database = try Database.open(path: path, access: .readOnly)
        #expect(try database.scalarInt("SELECT rowid FROM note_fts WHERE note_fts MATCH '\"会議\"'") == 1)
    }
}

/// SplitMix64: a small reproducible generator for the random strings.
private struct SplitMix {
    var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next(below bound: Int) -> Int {
        state &+= 0x9E37_79B9_7F4A_7C15
        var value = state
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        value ^= value >> 31
        return Int(value % UInt64(max(bound, 1)))
    }
}
