import Foundation

/// One sync at a time per database: an exclusive `flock` on `DATABASE.sync-lock` (a file of
/// its own: a descriptor opened and closed on the database file itself would drop SQLite's
/// own POSIX locks in this process). The lock goes with the process, kill -9 included.
public final class SyncLock {
    private let descriptor: Int32

    /// Takes the lock, or throws `SyncError.busy` when another process holds it.
    public init(databasePath: String) throws {
        let path = databasePath + ".sync-lock"
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else {
            throw SyncError.secretStore("cannot open \(path) (sync's lock beside the database): \(String(cString: strerror(errno)).lowercased())")
        }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            close(descriptor)
            throw SyncError.busy
        }
        self.descriptor = descriptor
    }

    deinit {
        flock(descriptor, LOCK_UN)
        close(descriptor)
    }
}
