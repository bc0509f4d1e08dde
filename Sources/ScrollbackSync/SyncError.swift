import ScrollbackModel

/// Why sync stopped, each as one line that says what happened and what to do. None
/// carries a secret: libpq's messages name hosts and users, never passwords, and the
/// connection string is never repeated.
public enum SyncError: UserFacingError, Equatable, CustomStringConvertible {
    /// Sync is not turned on for this database.
    case off
    /// No connection string, or no key, where one is needed.
    case missingSecret(String)
    case badConnectionString(String)
    /// The server could not be reached (down, wrong host, a network cut).
    case unreachable(String)
    /// The server answered and refused (a wrong password, TLS required or refused).
    case refused(String)
    /// The connection broke during a sync.
    case connectionLost(String)
    /// The server said no to a statement.
    case server(state: String, message: String)
    /// The key does not open the history on the server.
    case wrongKey
    /// The server's schema is newer than this program knows.
    case newerServerSchema(found: Int, known: Int)
    /// The server has no scrollback schema yet.
    case notInitialized
    /// The server's schema is there but damaged (its version row deleted).
    case damagedServer
    /// A column of the server's table of ops has another type than scrollback gave it.
    case changedColumn(name: String, type: String, table: String = "scrollback.op")
    /// An op on the server does not open, or breaks the order of its machine's ops.
    case damagedOp(String)
    /// The server lacks ops of another machine after `after` (rows deleted, or restored
    /// from an older backup): what came before was applied.
    case gap(machine: String, after: Int64)
    /// Another database sends under this machine's id (a copied database file).
    case machineClash(String)
    /// The server lacks changes this machine sent (reset, or restored from a backup).
    case serverLost(machine: String, held: Int64, sent: Int64)
    case crypto(String)
    case secretStore(String)
    /// Another sync of this database is running.
    case busy
    /// An attachment's bytes are not (or not whole) on the server yet.
    case fileNotOnServer(name: String)
    /// A chunk of an attachment's bytes on the server does not open, or is out of its place.
    case damagedFile(String)
    /// The server's schema must be raised (to hold attachments) and this user may not.
    case cannotRaiseSchema(String)

    public var description: String { described(retrying: "scrollback sync") }
    public var userLine: String { description }

    /// The line, with `command` as what to run again where trying again can help (`scrollback
    /// sync init` when it was init that failed).
    public func described(retrying command: String) -> String {
        switch self {
        case .off:
            "sync is off for this database; turn it on with `scrollback sync init`"
        case .missingSecret(let what):
            what
        case .badConnectionString(let message):
            "the connection string is not one libpq reads (\(message)); give a URI like postgresql://user@host:5432/db?sslmode=require, or key=value words"
        case .unreachable(let message):
            "cannot reach the sync server (\(message)); local data is unharmed and changes wait in the outbox; check the network or the server, then run `\(command)` again"
        case .refused(let message):
            "the sync server refused the connection (\(message)); check the user, password, database name and sslmode in the connection string (`scrollback sync init` takes a new one)"
        case .connectionLost(let message):
            "the connection to the sync server broke (\(message)); nothing was lost: what was not sent waits in the outbox; run `\(command)` again"
        case .server(let state, let message) where state == "42501" && message.lowercased().contains("permission denied for database"):
            // The user never had the right: nothing was changed on the server.
            "the sync server refused a request (\(message), SQLSTATE \(state)); local data is unharmed; this user may not create the schema `scrollback` in that database: grant it (`GRANT CREATE ON DATABASE … TO …` in psql), or give `scrollback sync init` a user who may"
        case .server(let state, let message) where state == "42501":
            // A user who never had the rights, as often as one whose rights were taken.
            "the sync server refused a request (\(message), SQLSTATE \(state)); local data is unharmed; this user lacks rights on the schema `scrollback`: let its owner grant them in psql (`GRANT USAGE ON SCHEMA scrollback TO …; GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA scrollback TO …`), or sync as the user that made it"
        case .server(let state, let message) where state.hasPrefix("42"):
            // Not a passing trouble: the schema or this user's rights were changed.
            "the sync server refused a request (\(message), SQLSTATE \(state)); local data is unharmed; the server's schema `scrollback` or this user's rights were changed: put them back (or restore the server) before syncing again"
        case .server(let state, let message):
            "the sync server refused a request (\(message)\(state.isEmpty ? "" : ", SQLSTATE \(state)")); local data is unharmed; run `\(command)` again, or see `scrollback sync status`"
        case .wrongKey:
            "this key does not open the history on the server; run `scrollback sync key import` with the key from `scrollback sync key show` on a machine that syncs"
        case .newerServerSchema(let found, let known):
            "the sync server's schema is version \(found), newer than this scrollback knows (\(known)); upgrade scrollback on this machine; nothing was changed"
        case .notInitialized:
            "the sync server holds no scrollback history; run `scrollback sync init`"
        case .damagedServer:
            "the sync server's schema `scrollback` has its tables but no version (a row of scrollback.schema_version was deleted); nothing was changed; put it back in psql with `INSERT INTO scrollback.schema_version VALUES (1)`, or restore the server from a backup"
        case .changedColumn(let name, let type, let table):
            "the sync server's table \(table) was changed: its column \(name) is no longer \(type); nothing was applied; put the column back as it was (or restore the server from a backup) before syncing again"
        case .damagedOp(let message):
            "\(message); it was not applied, nor what that machine sent after it (what came before it, and the other machines' changes, were); the server's copy was changed by someone without the key, or damaged: restore the server's database from a backup, then run `scrollback sync` again"
        case .gap(let machine, let after):
            "the sync server lacks changes of machine \(machine) after its change \(after) (rows were deleted, or it was restored from an older backup); everything before them was applied, and the rest of that machine's changes wait; when that machine syncs again against a server that lost them, it says so"
        case .machineClash(let message):
            message
        case .serverLost(let machine, let held, let sent):
            "the sync server lacks changes this machine sent (it holds \(held) of \(sent) for machine \(machine): it was reset or restored from a backup); nothing was sent; run `scrollback sync off --force`, then `scrollback sync init` to send everything here again as a new machine"
        case .crypto(let message):
            message
        case .secretStore(let message):
            message
        case .busy:
            "another sync of this database is running; try again when it ends"
        case .fileNotOnServer(let name):
            "the bytes of \(name) are not on the sync server yet: the machine that holds them sends them with its next `scrollback sync` (which says so if its copy is damaged)"
        case .cannotRaiseSchema(let message):
            "the sync server's schema `scrollback` must be raised to version \(SyncEngine.serverSchemaVersion) (tables for attachments' files and for snapshots), and this user may not create tables in it (\(message)); nothing was changed; let its owner run `scrollback sync` once, or grant it in psql: `GRANT CREATE ON SCHEMA scrollback TO …`"
        case .damagedFile(let message):
            "\(message); nothing of that file was kept here, and its line still says it is not here yet; the server's copy was changed by someone without the key, or damaged: restore the server's database from a backup, then open it again"
        }
    }
}
