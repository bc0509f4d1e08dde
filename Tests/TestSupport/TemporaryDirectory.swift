import Foundation

/// A fresh folder under the system's temporary folder, removed when released.
public final class TemporaryDirectory {
    public let path: String

    public init() throws {
        var template = Array((NSTemporaryDirectory() as NSString).appendingPathComponent("scrollback-test-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else {
            throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
        }
        path = String(cString: made)
    }

    deinit {
        try? FileManager.default.removeItem(atPath: path)
    }

    /// A path inside the folder.
    public func file(_ name: String) -> String { path + "/" + name }

    /// The names in the folder, sorted.
    public func listing() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: path).sorted()
    }
}

/// The SHA-256 of a file, from `sha256sum`, to show bytes did not change.
public func sha256(ofFile path: String) throws -> String {
    // A missing file is the caller's to judge (it throws): not a line in the test output.
    let outcome = try ChildProcess.run("/usr/bin/sha256sum", [path])
    guard outcome.status == 0, let digest = outcome.outputText.split(separator: " ").first else {
        throw POSIXError(.EIO)
    }
    return String(digest)
}

/// Runs `sql` on the file at `path` with the stock `sqlite3` shell, as another program would
/// (it lacks scrollback's tokenizer): its exit status, standard output and standard error.
@discardableResult
public func runSQLiteShell(_ path: String, _ sql: String) throws -> (status: Int32, output: String, error: String) {
    let outcome = try ChildProcess.run("/usr/bin/env", ["sqlite3", path, sql])
    return (outcome.status, outcome.outputText, outcome.errorText)
}

/// Makes an empty file at `path` (or empties it), in place: `FileManager.createFile` writes
/// atomically, through a `TemporaryDirectory.*` folder it leaves in /tmp for every call.
@discardableResult
public func makeEmptyFile(_ path: String) -> Bool {
    let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
    guard descriptor >= 0 else { return false }
    close(descriptor)
    return true
}
