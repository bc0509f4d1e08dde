import Foundation
import ScrollbackModel

/// One named step of the schema's history. Frozen once shipped: never edit a step, add one.
public struct Migration: Sendable {
    public let name: String
    let apply: @Sendable (Database) throws -> Void

    /// A step written in plain SQL, independent of the program's types.
    public init(name: String, sql: String) {
        self.name = name
        self.apply = { try $0.execute(sql) }
    }

    /// A step with a body, for tests that need to observe or fail a step.
    init(name: String, body: @escaping @Sendable (Database) throws -> Void) {
        self.name = name
        self.apply = body
    }
}

/// What opening did to the schema.
public struct MigrationOutcome: Sendable, Equatable {
    public let fromVersion: Int
    public let toVersion: Int
    /// The copy made before upgrading an existing database.
    public let backupPath: String?

    public var didUpgrade: Bool { fromVersion > 0 && toVersion > fromVersion }
}

/// Brings a database to the latest schema: the version is `PRAGMA user_version`, each step
/// runs in its own transaction, and an existing database is copied (and the copy fsynced)
/// before its first step runs.
public struct Migrator: Sendable {
    public let migrations: [Migration]
    /// `PRAGMA application_id` of every scrollback database ("SCRB").
    public static let applicationID: Int64 = 0x5343_5242

    public init(migrations: [Migration]) {
        self.migrations = migrations
    }

    public var latestVersion: Int { migrations.count }

    /// Checks that `database` is one of ours and not newer than this program; the check
    /// only reads.
    ///
    /// - Parameter forUpgrade: the caller will open the file read-write next (so an older
    ///   schema is fine even on this read-only connection).
    func validate(_ database: Database, forUpgrade: Bool = false) throws -> Int {
        let storedVersion = try database.scalarInt("PRAGMA user_version")
        let applicationID = try database.scalarInt("PRAGMA application_id")
        guard storedVersion >= 0, let version = Int(exactly: storedVersion) else {
            throw StorageError.notAScrollbackDatabase(
                path: database.path, reason: "its schema version \(storedVersion) is not one scrollback ever wrote")
        }
        if version == 0 {
            let objects = try database.scalarInt("SELECT count(*) FROM sqlite_schema")
            if objects > 0 {
                throw StorageError.notAScrollbackDatabase(path: database.path, reason: "it holds other tables")
            }
        } else if applicationID != Self.applicationID {
            throw StorageError.notAScrollbackDatabase(path: database.path, reason: "it belongs to another program")
        }
        if version > latestVersion {
            throw StorageError.newerSchema(path: database.path, found: version, known: latestVersion)
        }
        if database.isReadOnly && !forUpgrade && version < latestVersion {
            if version == 0 {
                throw StorageError.notAScrollbackDatabase(path: database.path, reason: StorageError.emptyReason)
            }
            throw StorageError.needsUpgrade(path: database.path, found: version, needed: latestVersion)
        }
        return version
    }

    /// Upgrades `database` to the latest version.
    ///
    /// - Parameter willUpgrade: called with the versions before an existing database's
    ///   backup and upgrade start (they may take a while, without progress).
    /// - Parameter keepingCopy: back the file up first (false only for a file that is itself
    ///   a copy, whose original stays: a backup being restored).
    func migrate(_ database: Database, keepingCopy: Bool = true, willUpgrade: ((_ from: Int, _ to: Int) -> Void)? = nil) throws
        -> MigrationOutcome
    {
        let version = try validate(database)
        guard version < latestVersion else {
            return MigrationOutcome(fromVersion: version, toVersion: version, backupPath: nil)
        }
        if version > 0 { willUpgrade?(version, latestVersion) }
        let backup = version > 0 && keepingCopy ? try makeBackup(of: database, version: version) : nil
        var current = version
        var applied = 0
        for index in version..<latestVersion {
            let step = migrations[index]
            do {
                try database.write {
                    // Another process may have upgraded the file since it was validated.
                    guard try database.scalarInt("PRAGMA user_version") == Int64(index) else { return }
                    try step.apply(database)
                    try database.execute("PRAGMA user_version = \(index + 1)")
                    applied += 1
                }
            } catch {
                throw StorageError.migrationFailed(
                    path: database.path, step: step.name, version: current, backup: backup,
                    reason: (error as? StorageError)?.description ?? "\(error)")
            }
            current = index + 1
        }
        if applied == 0, let backup {
            // Another process did the upgrade (and kept its own copy): ours is not needed.
            try? FileManager.default.removeItem(atPath: backup)
            return MigrationOutcome(fromVersion: current, toVersion: current, backupPath: nil)
        }
        return MigrationOutcome(fromVersion: version, toVersion: current, backupPath: backup)
    }

    /// A consistent copy beside the database (`VACUUM INTO`), fsynced with its folder, since
    /// `VACUUM INTO` itself does not sync.
    private func makeBackup(of database: Database, version: Int) throws -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withYear, .withMonth, .withDay, .withTime, .withTimeZone]
        let stamp = formatter.string(from: Date())
        var path = "\(database.path).schema-\(version)-\(stamp).backup"
        var suffix = 1
        while FileManager.default.fileExists(atPath: path) {
            suffix += 1
            path = "\(database.path).schema-\(version)-\(stamp)-\(suffix).backup"
        }
        // Written under a temporary name and renamed into place once complete and synced, so
        // that a kill midway never leaves a partial copy under the backup's name.
        let partial = path + ".partial"
        do {
            try? FileManager.default.removeItem(atPath: partial)
            try database.run("VACUUM INTO ?", [.text(partial)])
            try Self.fsync(path: partial)
            guard rename(partial, path) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
            try Self.fsync(path: PathText.parent(of: path))
        } catch {
            try? FileManager.default.removeItem(atPath: partial)
            try? FileManager.default.removeItem(atPath: partial + "-journal")
            try? FileManager.default.removeItem(atPath: path)
            throw StorageError.migrationFailed(
                path: database.path, step: "backup", version: version, backup: nil,
                reason: "could not write \(path): \((error as? StorageError)?.description ?? "\(error)")")
        }
        return path
    }

    static func fsync(path: String) throws {
        let descriptor = Foundation.open(path.isEmpty ? "." : path, O_RDONLY)
        guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        defer { close(descriptor) }
        guard Foundation.fsync(descriptor) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    }
}
