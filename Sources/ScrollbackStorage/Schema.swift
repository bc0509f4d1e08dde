import ScrollbackModel
/// The schema's history. Each step is frozen once released: add steps, never edit them.
extension Migrator {
    public static let scrollback = Migrator(migrations: Schema.migrations)
}

enum Schema {
    static let migrations: [Migration] = [
        Migration(name: "v1 conversations, messages, settings, search", sql: version1),
        Migration(name: "v2 ids in time order, word and CJK search index, counted conversations", sql: version2),
        Migration(name: "v3 conversations as trees, source node ids, token usage", sql: version3),
        Migration(name: "v4 pinned first in every order, the database's own id", sql: version4),
        Migration(name: "v5 sync: outbox, field clocks, tombstones, cursors", sql: version5),
        Migration(name: "v6 a message's clock in its own row", sql: version6),
        Migration(name: "v7 edits clocked while sync is off", sql: version7),
        Migration(name: "v8 message kinds: what the person saw, and what is kept hidden", sql: version8),
        Migration(name: "v9 sessions no longer dated 1970 by a first line without a time", sql: version9),
        Migration(name: "v10 the activity overview: conversations by model and by source", sql: version10),
        Migration(name: "v11 a message's role and kind checked without a table per row", sql: version11),
        Migration(name: "v12 attachments: the files of a message, their bytes stored once per content", sql: version12),
        Migration(name: "v13 synced attachments: bytes awaited from another machine, files on the server", sql: version13),
    ]

    static let version1 = """
        PRAGMA application_id = 1396920898;

        CREATE TABLE conversation (
            id            INTEGER PRIMARY KEY,
            public_id     TEXT    NOT NULL UNIQUE CHECK (length(public_id) = 36),
            title         TEXT    NOT NULL COLLATE NOCASE,
            model         TEXT,
            source        TEXT    NOT NULL DEFAULT 'local' CHECK (source <> ''),
            source_id     TEXT,
            created_at    INTEGER NOT NULL,
            updated_at    INTEGER NOT NULL CHECK (updated_at >= created_at),
            message_count INTEGER NOT NULL DEFAULT 0 CHECK (message_count >= 0),
            pinned        INTEGER NOT NULL DEFAULT 0 CHECK (pinned IN (0, 1)),
            UNIQUE (source, source_id)
        );
        -- One index per sort order the list offers, in exactly the order it pages.
        CREATE INDEX conversation_by_updated ON conversation (pinned DESC, updated_at DESC, id DESC);
        CREATE INDEX conversation_by_created ON conversation (created_at DESC, id DESC);
        CREATE INDEX conversation_by_title   ON conversation (title, id);

        CREATE TABLE message (
            id              INTEGER PRIMARY KEY,
            public_id       TEXT    NOT NULL UNIQUE,
            conversation_id INTEGER NOT NULL REFERENCES conversation (id) ON DELETE CASCADE,
            position        INTEGER NOT NULL CHECK (position >= 0),
            role            TEXT    NOT NULL CHECK (role IN ('system', 'user', 'assistant', 'tool')),
            content         TEXT    NOT NULL,
            created_at      INTEGER NOT NULL,
            model           TEXT,
            UNIQUE (conversation_id, position)
        );

        CREATE TABLE settings (
            key   TEXT PRIMARY KEY NOT NULL,
            value TEXT NOT NULL
        ) WITHOUT ROWID;

        -- message_count and updated_at follow the messages.
        CREATE TRIGGER message_counted AFTER INSERT ON message BEGIN
            UPDATE conversation
               SET message_count = message_count + 1,
                   updated_at = max(updated_at, new.created_at)
             WHERE id = new.conversation_id;
        END;
        CREATE TRIGGER message_uncounted AFTER DELETE ON message BEGIN
            UPDATE conversation SET message_count = message_count - 1
             WHERE id = old.conversation_id;
        END;

        -- Full-text search by substring (trigram), so that CJK and other unsegmented
        -- scripts are found without word boundaries. External content: the text is
        -- stored once, in its table; triggers keep the index in the same transaction.
        CREATE VIRTUAL TABLE message_fts USING fts5(
            content, content = 'message', content_rowid = 'id', tokenize = 'trigram'
        );
        CREATE TRIGGER message_fts_insert AFTER INSERT ON message BEGIN
            INSERT INTO message_fts (rowid, content) VALUES (new.id, new.content);
        END;
        CREATE TRIGGER message_fts_delete AFTER DELETE ON message BEGIN
            INSERT INTO message_fts (message_fts, rowid, content) VALUES ('delete', old.id, old.content);
        END;
        CREATE TRIGGER message_fts_update AFTER UPDATE OF content ON message BEGIN
            INSERT INTO message_fts (message_fts, rowid, content) VALUES ('delete', old.id, old.content);
            INSERT INTO message_fts (rowid, content) VALUES (new.id, new.content);
        END;

        CREATE VIRTUAL TABLE conversation_fts USING fts5(
            title, content = 'conversation', content_rowid = 'id', tokenize = 'trigram'
        );
        CREATE TRIGGER conversation_fts_insert AFTER INSERT ON conversation BEGIN
            INSERT INTO conversation_fts (rowid, title) VALUES (new.id, new.title);
        END;
        CREATE TRIGGER conversation_fts_delete AFTER DELETE ON conversation BEGIN
            INSERT INTO conversation_fts (conversation_fts, rowid, title) VALUES ('delete', old.id, old.title);
        END;
        CREATE TRIGGER conversation_fts_update AFTER UPDATE OF title ON conversation BEGIN
            INSERT INTO conversation_fts (conversation_fts, rowid, title) VALUES ('delete', old.id, old.title);
            INSERT INTO conversation_fts (rowid, title) VALUES (new.id, new.title);
        END;
        """

    /// Version 2. Row ids follow time, so that "newest first" is the order in which FTS5
    /// walks its index (backwards) without sorting matches: a row's id is at least its time
    /// in milliseconds (clamped to ±2^46, about the years −260 to 4199) times 65,536, and
    /// above the id of every row before it in (time, old order): `r + max(base − r)` over
    /// the rows so far, with r the row's rank, which is unique and in order however many
    /// rows share a millisecond. The trigram index gives way to the `scrollback`
    /// tokenizer (words and prefixes for alphabetic scripts, unigrams and bigrams for the
    /// scripts written without spaces). Rows that exist at the upgrade are indexed afterwards,
    /// newest first, by a resumable job (`search_backlog` says how far it has come); a count
    /// of conversations is kept in `tally` by the same transactions that change it.
    static let version2 = """
        DROP TABLE message_fts;
        DROP TABLE conversation_fts;
        DROP TRIGGER message_counted;
        DROP TRIGGER message_uncounted;
        DROP TRIGGER message_fts_insert;
        DROP TRIGGER message_fts_delete;
        DROP TRIGGER message_fts_update;
        DROP TRIGGER conversation_fts_insert;
        DROP TRIGGER conversation_fts_delete;
        DROP TRIGGER conversation_fts_update;

        CREATE TABLE conversation_v2 (
            id            INTEGER PRIMARY KEY,
            public_id     TEXT    NOT NULL UNIQUE CHECK (length(public_id) = 36),
            title         TEXT    NOT NULL COLLATE NOCASE,
            model         TEXT,
            source        TEXT    NOT NULL DEFAULT 'local' CHECK (source <> ''),
            source_id     TEXT,
            created_at    INTEGER NOT NULL,
            updated_at    INTEGER NOT NULL CHECK (updated_at >= created_at),
            message_count INTEGER NOT NULL DEFAULT 0 CHECK (message_count >= 0),
            pinned        INTEGER NOT NULL DEFAULT 0 CHECK (pinned IN (0, 1)),
            UNIQUE (source, source_id)
        );
        INSERT INTO conversation_v2
              (id, public_id, title, model, source, source_id, created_at, updated_at, message_count, pinned)
        SELECT ordinal + max(base - ordinal) OVER (ORDER BY ordinal ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW),
               public_id, title, model, source, source_id, created_at, updated_at, message_count, pinned
          FROM (SELECT *, min(max(created_at, -70368744177664), 70368744177663) * 65536 AS base,
                       row_number() OVER (ORDER BY min(max(created_at, -70368744177664), 70368744177663), id) AS ordinal
                  FROM conversation);

        CREATE TABLE message_v2 (
            id              INTEGER PRIMARY KEY,
            public_id       TEXT    NOT NULL UNIQUE,
            conversation_id INTEGER NOT NULL REFERENCES conversation_v2 (id) ON DELETE CASCADE,
            position        INTEGER NOT NULL CHECK (position >= 0),
            role            TEXT    NOT NULL CHECK (role IN ('system', 'user', 'assistant', 'tool')),
            content         TEXT    NOT NULL,
            created_at      INTEGER NOT NULL,
            model           TEXT,
            UNIQUE (conversation_id, position)
        );
        -- The new ids first (only integers are sorted), then the rows in the new order.
        CREATE TEMP TABLE message_key (id INTEGER PRIMARY KEY, old INTEGER NOT NULL);
        INSERT INTO message_key (id, old)
        SELECT ordinal + max(base - ordinal) OVER (ORDER BY ordinal ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW), id
          FROM (SELECT id, min(max(created_at, -70368744177664), 70368744177663) * 65536 AS base,
                       row_number() OVER (ORDER BY min(max(created_at, -70368744177664), 70368744177663),
                                          conversation_id, position) AS ordinal
                  FROM message);
        INSERT INTO message_v2 (id, public_id, conversation_id, position, role, content, created_at, model)
        SELECT k.id, m.public_id, c2.id, m.position, m.role, m.content, m.created_at, m.model
          FROM message_key AS k
          JOIN message AS m ON m.id = k.old
          JOIN conversation AS c ON c.id = m.conversation_id
          JOIN conversation_v2 AS c2 ON c2.public_id = c.public_id
         ORDER BY k.id;
        DROP TABLE message_key;

        DROP TABLE message;
        DROP TABLE conversation;
        ALTER TABLE conversation_v2 RENAME TO conversation;
        ALTER TABLE message_v2 RENAME TO message;

        CREATE INDEX conversation_by_updated ON conversation (pinned DESC, updated_at DESC, id DESC);
        CREATE INDEX conversation_by_created ON conversation (created_at DESC, id DESC);
        CREATE INDEX conversation_by_title   ON conversation (title, id);

        CREATE TRIGGER message_counted AFTER INSERT ON message BEGIN
            UPDATE conversation
               SET message_count = message_count + 1,
                   updated_at = max(updated_at, new.created_at)
             WHERE id = new.conversation_id;
        END;
        CREATE TRIGGER message_uncounted AFTER DELETE ON message BEGIN
            UPDATE conversation SET message_count = message_count - 1
             WHERE id = old.conversation_id;
        END;

        -- The number of conversations, for the list's position without count(*).
        CREATE TABLE tally (
            name  TEXT PRIMARY KEY NOT NULL,
            value INTEGER NOT NULL CHECK (value >= 0)
        ) WITHOUT ROWID;
        INSERT INTO tally (name, value) SELECT 'conversations', count(*) FROM conversation;
        CREATE TRIGGER conversation_tallied AFTER INSERT ON conversation BEGIN
            UPDATE tally SET value = value + 1 WHERE name = 'conversations';
        END;
        CREATE TRIGGER conversation_untallied AFTER DELETE ON conversation BEGIN
            UPDATE tally SET value = value - 1 WHERE name = 'conversations';
        END;

        -- Rows of `name` with an id below `below` are not indexed yet (a rebuild in progress,
        -- newest first); no row: every row is indexed. The triggers leave those rows to the
        -- rebuild, so that "indexed" is exactly "id >= below".
        CREATE TABLE search_backlog (
            name  TEXT PRIMARY KEY NOT NULL CHECK (name IN ('message', 'conversation')),
            below INTEGER NOT NULL
        ) WITHOUT ROWID;
        INSERT INTO search_backlog (name, below) SELECT 'message', max(id) + 1 FROM message HAVING count(*) > 0;
        INSERT INTO search_backlog (name, below) SELECT 'conversation', max(id) + 1 FROM conversation HAVING count(*) > 0;

        CREATE VIRTUAL TABLE message_fts USING fts5(
            content, content = 'message', content_rowid = 'id', tokenize = 'scrollback'
        );
        CREATE TRIGGER message_fts_insert AFTER INSERT ON message
        WHEN NOT EXISTS (SELECT 1 FROM search_backlog WHERE name = 'message' AND below > new.id) BEGIN
            INSERT INTO message_fts (rowid, content) VALUES (new.id, new.content);
        END;
        CREATE TRIGGER message_fts_delete AFTER DELETE ON message
        WHEN NOT EXISTS (SELECT 1 FROM search_backlog WHERE name = 'message' AND below > old.id) BEGIN
            INSERT INTO message_fts (message_fts, rowid, content) VALUES ('delete', old.id, old.content);
        END;
        CREATE TRIGGER message_fts_update AFTER UPDATE OF content ON message
        WHEN NOT EXISTS (SELECT 1 FROM search_backlog WHERE name = 'message' AND below > old.id) BEGIN
            INSERT INTO message_fts (message_fts, rowid, content) VALUES ('delete', old.id, old.content);
            INSERT INTO message_fts (rowid, content) VALUES (new.id, new.content);
        END;

        CREATE VIRTUAL TABLE conversation_fts USING fts5(
            title, content = 'conversation', content_rowid = 'id', tokenize = 'scrollback'
        );
        CREATE TRIGGER conversation_fts_insert AFTER INSERT ON conversation
        WHEN NOT EXISTS (SELECT 1 FROM search_backlog WHERE name = 'conversation' AND below > new.id) BEGIN
            INSERT INTO conversation_fts (rowid, title) VALUES (new.id, new.title);
        END;
        CREATE TRIGGER conversation_fts_delete AFTER DELETE ON conversation
        WHEN NOT EXISTS (SELECT 1 FROM search_backlog WHERE name = 'conversation' AND below > old.id) BEGIN
            INSERT INTO conversation_fts (conversation_fts, rowid, title) VALUES ('delete', old.id, old.title);
        END;
        CREATE TRIGGER conversation_fts_update AFTER UPDATE OF title ON conversation
        WHEN NOT EXISTS (SELECT 1 FROM search_backlog WHERE name = 'conversation' AND below > old.id) BEGIN
            INSERT INTO conversation_fts (conversation_fts, rowid, title) VALUES ('delete', old.id, old.title);
            INSERT INTO conversation_fts (rowid, title) VALUES (new.id, new.title);
        END;
        """

    /// Version 3. Messages form a tree: `parent_id` is the row id of the message a message
    /// follows (NULL for a first message; several first messages when the first question was
    /// edited), in the same conversation. `position` stays unique in a conversation and is
    /// the order in which the messages were stored, which is also their place when there is
    /// one branch; along a branch a message's place is its depth. A conversation knows the
    /// branch it shows by default (`current_leaf_id`, its last message) and that branch's
    /// length (`branch_length`, equal to `message_count` when there is one branch, so that a
    /// conversation without branches pages by position as before). `branch_choice` keeps,
    /// per message where the reader left a branch, the leaf it was on there, so that coming
    /// back returns to it. A message keeps the id of the export node it came from
    /// (`source_node_id`), and the token counts and time the source recorded.
    ///
    /// Existing messages become one chain each, the current leaf the last one.
    static let version3 = """
        ALTER TABLE message ADD COLUMN parent_id INTEGER;
        ALTER TABLE message ADD COLUMN source_node_id TEXT;
        ALTER TABLE message ADD COLUMN input_tokens INTEGER CHECK (input_tokens >= 0);
        ALTER TABLE message ADD COLUMN output_tokens INTEGER CHECK (output_tokens >= 0);
        ALTER TABLE message ADD COLUMN duration_ms INTEGER CHECK (duration_ms >= 0);
        ALTER TABLE conversation ADD COLUMN current_leaf_id INTEGER;
        ALTER TABLE conversation ADD COLUMN branch_length INTEGER NOT NULL DEFAULT 0 CHECK (branch_length >= 0);

        UPDATE message
           SET parent_id = (SELECT p.id FROM message AS p
                             WHERE p.conversation_id = message.conversation_id AND p.position < message.position
                             ORDER BY p.position DESC LIMIT 1)
         WHERE position > 0;
        UPDATE conversation
           SET current_leaf_id = (SELECT m.id FROM message AS m WHERE m.conversation_id = conversation.id
                                  ORDER BY m.position DESC LIMIT 1),
               branch_length = message_count
         WHERE message_count > 0;

        CREATE TABLE branch_choice (
            conversation_id INTEGER NOT NULL REFERENCES conversation (id) ON DELETE CASCADE,
            message_id      INTEGER NOT NULL,
            leaf_id         INTEGER NOT NULL,
            PRIMARY KEY (conversation_id, message_id)
        ) WITHOUT ROWID;
        """

    /// Pinned conversations come first in every order, so the created and title indexes
    /// start with `pinned` as the updated one does. The database gets an id of its own
    /// (`database.id`), which page tokens carry so that a token from another database is
    /// refused.
    static let version4 = """
        DROP INDEX conversation_by_created;
        DROP INDEX conversation_by_title;
        CREATE INDEX conversation_by_created ON conversation (pinned DESC, created_at DESC, id DESC);
        CREATE INDEX conversation_by_title   ON conversation (pinned DESC, title, id);
        INSERT OR REPLACE INTO settings (key, value) VALUES ('database.id', lower(hex(randomblob(16))));
        """

    /// Version 5: sync, and deletes that stay deleted.
    ///
    /// - `sync_outbox`: this machine's changes not yet sent (and those sent, up to the
    ///   setting `sync.sent_through`, until it is emptied whole), numbered without gaps (`seq`),
    ///   each with its op id, entity (a conversation's or message's public id), kind, hybrid
    ///   clock, and a payload for deletes (their row is gone when the op is sent; other ops
    ///   are sent as their entity is then).
    /// - `sync_clock`: per entity and field, the clock of the change it shows (`*` for the
    ///   entity as a whole), so that an older change from elsewhere is not applied over it.
    ///   Written while sync is on; an entity without one is older than any change.
    /// - `sync_tombstone`: every deleted conversation, by public id and by source id, so that
    ///   importing the same export again does not bring it back (`import --restore` does).
    /// - `sync_cursor`: per other machine, the last op applied here.
    /// - `sync_parked`: ops from elsewhere that arrived before what they build on (a message
    ///   before its conversation, from a machine read earlier); applied once it is here.
    /// - `sync_shadow`: a deleted conversation's fields as they were, kept with their clocks
    ///   while sync is on, so that when another machine restores it, an edit made here
    ///   later than that restore's copy is kept, as the other machines keep it.
    ///
    /// Sync's own settings (`sync.machine`, `sync.next_seq`, `sync.clock`, …) are in `settings`.
    static let version5 = """
        CREATE TABLE sync_outbox (
            seq     INTEGER PRIMARY KEY CHECK (seq >= 1),
            op_id   TEXT    NOT NULL UNIQUE,
            entity  TEXT    NOT NULL,
            kind    TEXT    NOT NULL,
            clock   TEXT    NOT NULL,
            payload BLOB
        );
        CREATE TABLE sync_clock (
            entity TEXT NOT NULL,
            field  TEXT NOT NULL,
            clock  TEXT NOT NULL,
            PRIMARY KEY (entity, field)
        ) WITHOUT ROWID;
        CREATE TABLE sync_tombstone (
            public_id TEXT PRIMARY KEY NOT NULL,
            source    TEXT,
            source_id TEXT,
            clock     TEXT NOT NULL
        ) WITHOUT ROWID;
        CREATE INDEX sync_tombstone_by_source ON sync_tombstone (source, source_id);
        CREATE TABLE sync_cursor (
            machine TEXT PRIMARY KEY NOT NULL,
            seq     INTEGER NOT NULL CHECK (seq >= 0)
        ) WITHOUT ROWID;
        CREATE TABLE sync_parked (
            machine   TEXT    NOT NULL,
            seq       INTEGER NOT NULL,
            entity    TEXT    NOT NULL,
            waits_for TEXT    NOT NULL,
            conversation TEXT,
            clock     TEXT    NOT NULL,
            payload   BLOB    NOT NULL,
            PRIMARY KEY (machine, seq)
        ) WITHOUT ROWID;
        CREATE INDEX sync_parked_by_wait ON sync_parked (waits_for);
        CREATE TABLE sync_shadow (
            public_id  TEXT PRIMARY KEY NOT NULL,
            title      TEXT NOT NULL,
            model      TEXT,
            pinned     INTEGER NOT NULL,
            created_at INTEGER NOT NULL,
            updated_at INTEGER NOT NULL
        ) WITHOUT ROWID;
        """

    /// Version 6: a message's clock (the change it shows, written while sync is on; NULL
    /// when none was) in its own row, moved there from `sync_clock`: a new machine's
    /// catch-up wrote a row of that table for each message, keyed by a random public id,
    /// and read it back for each newer copy; the table grew to a third of the database.
    static let version6 = """
        ALTER TABLE message ADD COLUMN clock TEXT;
        UPDATE message
           SET clock = (SELECT c.clock FROM sync_clock AS c WHERE c.entity = message.public_id AND c.field = '*')
         WHERE public_id IN (SELECT entity FROM sync_clock WHERE field = '*');
        DELETE FROM sync_clock WHERE field = '*' AND entity IN (SELECT public_id FROM message);
        """

    /// Version 7: from this version on, every edit made here (a title, a pin, a branch
    /// chosen, a delete, a restore) records its clock in `sync_clock` even while sync is off
    /// (with the machine id of zeros until sync is turned on), so that an edit made before
    /// `sync init` keeps its real time on every machine. What was stored before cannot say
    /// whether or when it was edited: `sync_unclocked` lists those conversations (by row id)
    /// of a database where sync was not on, for `sync init` to stamp with its own time on
    /// the first machine, and as older than anything on the server on a joining one.
    ///
    /// A conversation keeps the title its export gave when it was last imported
    /// (`source_title`), so that importing an export again never puts back a title a person
    /// changed, here or on another machine: the export's title is taken only when the
    /// stored one is still the export's last. NULL (stored before, or from another machine)
    /// means not known: the stored title stays.
    static let version7 = """
        ALTER TABLE conversation ADD COLUMN source_title TEXT;
        CREATE TABLE sync_unclocked (id INTEGER PRIMARY KEY);
        INSERT INTO sync_unclocked (id)
        SELECT id FROM conversation WHERE NOT EXISTS (SELECT 1 FROM settings WHERE key = 'sync.machine');
        """

    /// Version 8: every message has a kind (`MessageKind`): what the person saw (`text`,
    /// `document`, `tool`) or what is kept but hidden by default (`reasoning`, `internal`,
    /// `unknown`). What was stored before is `text`, as it was shown; importing the same
    /// export again moves it to its kind. A conversation counts its hidden messages
    /// (`hidden_count`, kept by triggers, in the transaction that changes them), so that the
    /// list says how many the person saw without reading the messages.
    ///
    /// A conversation from a coding agent's session keeps the folder it ran in (`project`)
    /// and its git branch. `source_file` is this machine's note of each agent session file
    /// read (never synced): how far it was read (`read_to`, after the last whole line), the
    /// file's device, inode, size and modification time then, and a hash of the 4 KiB before
    /// `read_to` (`window`), so that the next import reads only what was appended, and reads
    /// the whole file again when it shrank, was replaced or changed before that point.
    static let version8 = """
        ALTER TABLE message ADD COLUMN kind TEXT NOT NULL DEFAULT 'text'
            CHECK (kind IN ('text', 'document', 'tool', 'reasoning', 'internal', 'unknown'));
        ALTER TABLE conversation ADD COLUMN hidden_count INTEGER NOT NULL DEFAULT 0 CHECK (hidden_count >= 0);
        ALTER TABLE conversation ADD COLUMN project TEXT;
        ALTER TABLE conversation ADD COLUMN git_branch TEXT;

        CREATE TABLE source_file (
            path        TEXT PRIMARY KEY NOT NULL,
            format      TEXT NOT NULL,
            read_to     INTEGER NOT NULL CHECK (read_to >= 0),
            device      INTEGER NOT NULL,
            inode       INTEGER NOT NULL,
            size        INTEGER NOT NULL CHECK (size >= 0),
            modified_ns INTEGER NOT NULL,
            window      BLOB NOT NULL
        ) WITHOUT ROWID;

        CREATE TRIGGER message_hidden_counted AFTER INSERT ON message
        WHEN new.kind IN ('reasoning', 'internal', 'unknown') BEGIN
            UPDATE conversation SET hidden_count = hidden_count + 1 WHERE id = new.conversation_id;
        END;
        CREATE TRIGGER message_hidden_uncounted AFTER DELETE ON message
        WHEN old.kind IN ('reasoning', 'internal', 'unknown') BEGIN
            UPDATE conversation SET hidden_count = hidden_count - 1 WHERE id = old.conversation_id;
        END;
        CREATE TRIGGER message_hidden_recounted AFTER UPDATE OF kind ON message
        WHEN (old.kind IN ('reasoning', 'internal', 'unknown')) <> (new.kind IN ('reasoning', 'internal', 'unknown')) BEGIN
            UPDATE conversation
               SET hidden_count = hidden_count + CASE WHEN new.kind IN ('reasoning', 'internal', 'unknown') THEN 1 ELSE -1 END
             WHERE id = new.conversation_id;
        END;
        """

    /// Version 9, data only: version 8 dated a Claude Code or Codex session 1 January 1970
    /// when its first line had no time (Claude Code's file-history snapshot), and the lines
    /// before the first with a time too. Each such conversation starts at its first message
    /// with a time, and its messages without one are at that start, as imports now read
    /// them. (The follower reads only what is appended: without this step they would stay.)
    static let version9 = """
        UPDATE conversation
           SET created_at = (SELECT min(m.created_at) FROM message AS m WHERE m.conversation_id = conversation.id AND m.created_at > 0)
         WHERE created_at = 0 AND source IN ('claude-code', 'codex')
           AND EXISTS (SELECT 1 FROM message AS m WHERE m.conversation_id = conversation.id AND m.created_at > 0);
        UPDATE message
           SET created_at = (SELECT c.created_at FROM conversation AS c WHERE c.id = message.conversation_id)
         WHERE created_at = 0
           AND conversation_id IN (SELECT id FROM conversation WHERE source IN ('claude-code', 'codex') AND created_at > 0);
        """

    /// Version 10: the overview's charts by model and by source are each a walk of an
    /// index: conversations by model and by source, then time (grouped as they walk,
    /// counting the months shown). (A partial index of the messages with token counts cost
    /// a ChatGPT import 13% more, past its bar: the tokens chart reads the messages.)
    static let version10 = """
        CREATE INDEX conversation_by_model ON conversation (model, updated_at);
        CREATE INDEX conversation_by_source ON conversation (source, updated_at);

        """

    /// Version 11, the same rules, checked faster: SQLite evaluates `x IN (a, b, c)` with more
    /// than two constants by building a temporary table of them once per execution of a
    /// statement, and an import runs its insert once per message: the message table's
    /// checks of role and kind built two tables for every message stored (and the triggers
    /// that count hidden messages a third), a third of what an insert cost. The same checks
    /// as comparisons joined by OR build none. A table's CHECK is changed in place (its SQL
    /// in `sqlite_schema`, as SQLite's documentation allows for a change that leaves the
    /// stored rows valid: these accept exactly what the old ones did), and `RESET` reloads
    /// the schema on this connection; other connections reload it on the triggers' change.
    static let version11 = """
        PRAGMA writable_schema = ON;
        UPDATE sqlite_schema
           SET sql = replace(replace(sql,
                 'CHECK (role IN (''system'', ''user'', ''assistant'', ''tool''))',
                 'CHECK (role = ''system'' OR role = ''user'' OR role = ''assistant'' OR role = ''tool'')'),
                 'CHECK (kind IN (''text'', ''document'', ''tool'', ''reasoning'', ''internal'', ''unknown''))',
                 'CHECK (kind = ''text'' OR kind = ''document'' OR kind = ''tool'' OR kind = ''reasoning'' OR kind = ''internal'' OR kind = ''unknown'')')
         WHERE type = 'table' AND name = 'message';
        PRAGMA writable_schema = RESET;

        DROP TRIGGER message_hidden_counted;
        DROP TRIGGER message_hidden_uncounted;
        DROP TRIGGER message_hidden_recounted;
        CREATE TRIGGER message_hidden_counted AFTER INSERT ON message
        WHEN new.kind = 'reasoning' OR new.kind = 'internal' OR new.kind = 'unknown' BEGIN
            UPDATE conversation SET hidden_count = hidden_count + 1 WHERE id = new.conversation_id;
        END;
        CREATE TRIGGER message_hidden_uncounted AFTER DELETE ON message
        WHEN old.kind = 'reasoning' OR old.kind = 'internal' OR old.kind = 'unknown' BEGIN
            UPDATE conversation SET hidden_count = hidden_count - 1 WHERE id = old.conversation_id;
        END;
        CREATE TRIGGER message_hidden_recounted AFTER UPDATE OF kind ON message
        WHEN (old.kind = 'reasoning' OR old.kind = 'internal' OR old.kind = 'unknown')
             <> (new.kind = 'reasoning' OR new.kind = 'internal' OR new.kind = 'unknown') BEGIN
            UPDATE conversation
               SET hidden_count = hidden_count
                   + CASE WHEN new.kind = 'reasoning' OR new.kind = 'internal' OR new.kind = 'unknown' THEN 1 ELSE -1 END
             WHERE id = new.conversation_id;
        END;
        """

    /// Version 12, attachments. A message's files (`attachment`, in its order) point to their
    /// bytes by content (`attachment_content`, one row per SHA-256: a photo in five
    /// conversations is stored once), kept in chunks (`attachment_chunk`: SQLite caps one
    /// value at 1 GB, and a chunk is read and written with incremental blob I/O, so no file
    /// is ever whole in memory). An attachment without content is a reference the export
    /// named but did not hold (`absence` says why, when the source says). The foreign keys
    /// are kept by triggers, as the message table's are: a message deleted takes its
    /// attachments, and content no attachment uses any more is marked (`unused_since`), to be
    /// freed once no undo can reach it.
    static let version12 = """
        CREATE TABLE attachment_content (
            id           INTEGER PRIMARY KEY,
            sha256       TEXT    NOT NULL UNIQUE CHECK (length(sha256) = 64),
            size         INTEGER NOT NULL CHECK (size >= 0),
            chunk_size   INTEGER NOT NULL CHECK (chunk_size > 0),
            unused_since INTEGER
        );
        CREATE TABLE attachment_chunk (
            content_id INTEGER NOT NULL,
            idx        INTEGER NOT NULL CHECK (idx >= 0),
            data       BLOB    NOT NULL,
            UNIQUE (content_id, idx)
        );
        CREATE TABLE attachment (
            id         INTEGER PRIMARY KEY,
            message_id INTEGER NOT NULL,
            position   INTEGER NOT NULL CHECK (position >= 0),
            name       TEXT    NOT NULL,
            mime       TEXT,
            size       INTEGER CHECK (size IS NULL OR size >= 0),
            width      INTEGER CHECK (width IS NULL OR width > 0),
            height     INTEGER CHECK (height IS NULL OR height > 0),
            reference  TEXT,
            content_id INTEGER,
            extracted  TEXT,
            absence    TEXT,
            UNIQUE (message_id, position)
        );
        CREATE INDEX attachment_by_content ON attachment (content_id) WHERE content_id IS NOT NULL;
        CREATE INDEX attachment_by_reference ON attachment (reference) WHERE reference IS NOT NULL;

        CREATE TRIGGER message_attachments_gone AFTER DELETE ON message BEGIN
            DELETE FROM attachment WHERE message_id = old.id;
        END;
        CREATE TRIGGER attachment_content_unused AFTER DELETE ON attachment
        WHEN old.content_id IS NOT NULL BEGIN
            UPDATE attachment_content SET unused_since = CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)
             WHERE id = old.content_id AND NOT EXISTS (SELECT 1 FROM attachment WHERE content_id = old.content_id);
        END;
        CREATE TRIGGER attachment_content_used AFTER INSERT ON attachment
        WHEN new.content_id IS NOT NULL BEGIN
            UPDATE attachment_content SET unused_since = NULL WHERE id = new.content_id AND unused_since IS NOT NULL;
        END;
        CREATE TRIGGER attachment_content_moved AFTER UPDATE OF content_id ON attachment BEGIN
            UPDATE attachment_content SET unused_since = NULL WHERE id = new.content_id AND unused_since IS NOT NULL;
            UPDATE attachment_content SET unused_since = CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)
             WHERE id = old.content_id AND NOT EXISTS (SELECT 1 FROM attachment WHERE content_id = old.content_id);
        END;
        """

    /// Version 13, attachments through sync. An attachment another machine holds the bytes
    /// of, and this one does not yet, names them by their SHA-256 (`awaited`) until they are
    /// fetched from the server (then `content_id` points at them, and `awaited` is NULL).
    /// `sync_file` is this machine's note of the files it knows the server holds whole (it
    /// sent them, or fetched them), so that none is sent twice; it goes with the rest of the
    /// machine's sync state.
    static let version13 = """
        ALTER TABLE attachment ADD COLUMN awaited TEXT CHECK (awaited IS NULL OR length(awaited) = 64);
        CREATE INDEX attachment_by_awaited ON attachment (awaited) WHERE awaited IS NOT NULL;
        CREATE TABLE sync_file (sha256 TEXT PRIMARY KEY NOT NULL CHECK (length(sha256) = 64)) WITHOUT ROWID;
        """
}
