/// The errors of the storage layer that a user can meet, each with a one-line message that
/// says what went wrong and what to do.
public enum StorageError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Read-only opening of a path where there is no file.
    case noDatabase(path: String)
    /// The file exists but is not a SQLite database, or is someone else's SQLite database.
    case notAScrollbackDatabase(path: String, reason: String)
    /// The database or its folder cannot be created or opened for writing.
    case cannotOpen(path: String, reason: String)
    /// The database was written by a newer version of the program.
    case newerSchema(path: String, found: Int, known: Int)
    /// A read-only open of a database that needs an upgrade first.
    case needsUpgrade(path: String, found: Int, needed: Int)
    /// A migration step failed; the database stays at `version`.
    case migrationFailed(path: String, step: String, version: Int, backup: String?, reason: String)
    /// A write was attempted on a read-only database.
    case readOnly
    /// Another process held the write lock for longer than the busy timeout.
    case busy
    /// No conversation (or message) has this id.
    case notFound(id: String)
    /// A prefix that matches several conversations.
    case ambiguousID(prefix: String, matches: Int)
    /// A page token that is malformed or belongs to another listing.
    case invalidCursor(reason: String)
    /// A title that is empty or only whitespace.
    case invalidTitle
    /// A title longer than `ConversationTitle.maximumLength` characters (it had this many).
    case titleTooLong(characters: Int)
    /// Few characters, but more code points than a title may hold (letters under many marks).
    case titleTooManyCodePoints(Int)
    /// It starts with a combining mark, which would sit on whatever is drawn before it.
    case titleStartsWithMark
    /// A title with a control character (ESC, a bell, …) or a bidi override in it.
    case titleHasControls
    /// SQLite found the file damaged (`SQLITE_CORRUPT`, `SQLITE_NOTADB` past the header).
    case damaged(path: String, detail: SQLiteError)
    /// The disk (or the file system's quota) is full: nothing of the change was kept.
    case diskFull(path: String)
    /// The operating system failed to read or write the file.
    case inputOutput(path: String, detail: SQLiteError)
    /// A change that the data as it is now refuses (undoing a delete of a conversation that
    /// is back already, a trigger that is not scrollback's); the message says which.
    case conflict(String)
    /// Anything else SQLite reported.
    case sqlite(SQLiteError)

    /// The reason given for an empty file opened read-only (a new database to be).
    public static let emptyReason = "it is empty"
    /// A read-only open of a file whose rollback journal a crashed writer left: SQLite must
    /// roll it back, which only a connection that may write can do.
    public static let hotJournalReason =
        "a writer that crashed left its -journal beside it, which must be rolled back before the file is read; run it once without --readonly (any command: SQLite rolls it back by itself)"

    public var description: String {
        switch self {
        case .noDatabase(let path):
            return "no database at \(path); run without --readonly to create one, or pass --db PATH"
        case .notAScrollbackDatabase(let path, let reason):
            return "\(path) is not a scrollback database (\(reason)); pass another --db PATH"
        case .cannotOpen(let path, let reason):
            return "cannot open \(path): \(reason)"
        case .newerSchema(let path, let found, let known):
            return "\(path) was written by a newer scrollback (schema \(found), this one knows \(known)); upgrade scrollback"
        case .needsUpgrade(let path, let found, let needed):
            return "\(path) has schema \(found) and this scrollback needs \(needed); open it once without --readonly to upgrade it"
        case .migrationFailed(let path, let step, let version, let backup, let reason):
            let kept = backup.map { "; a copy from before the upgrade is at \($0)" } ?? ""
            return "upgrading \(path) failed at step '\(step)' (\(reason)); the database is unchanged at schema \(version)\(kept)"
        case .readOnly:
            return "the database is open read-only; run without --readonly to change it"
        case .busy:
            return "the database is busy: another process (an import?) is writing; try again in a moment"
        case .notFound(let id):
            return "no conversation with id '\(id)'; `scrollback list` shows the ids"
        case .ambiguousID(let prefix, let matches):
            return "id '\(prefix)' matches \(matches) conversations; type more of it"
        case .invalidCursor(let reason):
            return "invalid page token: \(reason); start again without --after/--before"
        case .invalidTitle:
            return "a title cannot be empty or blank; type some text"
        case .titleTooLong(let characters):
            return "a title is at most 1,000 characters (this one has \(Self.grouped(characters))); nothing was changed"
        case .titleTooManyCodePoints(let count):
            return "a title is at most \(Self.grouped(4 * ConversationTitle.maximumLength)) code points, counting each accent or mark on a letter (this one has \(Self.grouped(count))); nothing was changed"
        case .titleStartsWithMark:
            return "a title cannot start with a combining mark (an accent with no letter under it); nothing was changed"
        case .titleHasControls:
            return "a title cannot hold control characters (ESC, a bell…), bidi marks or overrides, tag characters, or marks that change the letters next to them (U+0600, U+FFF9…); nothing was changed"
        case .damaged(let path, let detail):
            return "\(path) is damaged (\(detail.message)); run `scrollback check` to see what can be read, or restore a backup"
        case .diskFull(let path):
            return "the disk holding \(path) is full; nothing was changed; free some space and try again"
        case .inputOutput(let path, let detail):
            return "cannot read or write \(path) (\(detail.message)); check the disk and the file's permissions"
        case .conflict(let message):
            return message
        case .sqlite(let error):
            return error.summary
        }
    }

    /// The description with what SQLite said and the SQL that ran, for `--verbose`.
    public var verboseDescription: String {
        switch self {
        case .damaged(_, let detail), .inputOutput(_, let detail):
            return description + " [\(detail.description)]"
        case .sqlite(let error):
            return error.description
        default:
            return description
        }
    }

    /// 100000 as 100,000.
    private static func grouped(_ number: Int) -> String {
        let digits = String(number.magnitude)
        var text = ""
        for (index, digit) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 { text.append(",") }
            text.append(digit)
        }
        return (number < 0 ? "-" : "") + text
    }
}
