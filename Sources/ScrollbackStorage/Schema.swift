import ScrollbackModel
/// The schema's history. Each step is frozen once released: add steps, never edit them.
extension Migrator {
    public static let scrollback = Migrator(migrations: Schema.migrations)
}

enum Schema {
    static let migrations: [Migration] = [
        Migration(name: "v1 conversations, messages, settings, search", sql: version1)
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
}
