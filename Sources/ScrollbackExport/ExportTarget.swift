import Foundation
import ScrollbackModel
import ScrollbackStorage
import TerminalText

/// What `--out` and `--out-dir` may write to: regular files only, never through a symlink.
public enum ExportTarget {
    /// Refuses a path that exists and is not a regular file, a symlink (not followed), a
    /// folder, or (without `force`) an existing file.
    /// - Parameter folderAdvice: what to do instead when `path` is a folder.
    /// - Parameter tool: who writes, as messages name it.
    public static func checkFile(
        _ path: String, force: Bool, folderAdvice: String = "use --out-dir for one file per conversation", tool: String = "export"
    ) throws {
        if path.hasSuffix("/") {
            throw ExportError(message: "\(path) names a folder; \(folderAdvice)")
        }
        var status = stat()
        guard lstat(path, &status) == 0 else {
            if errno == ENOENT {
                // The file is new; its folder must be there (export makes no folders for --out).
                let folder = PathText.parent(of: path)
                var folderStatus = stat()
                if !folder.isEmpty && stat(folder, &folderStatus) != 0 && errno == ENOENT {
                    throw ExportError(message: "cannot write \(path): the folder \(folder) does not exist (create it first)")
                }
                return
            }
            throw ExportError(message: "cannot write \(path): \(String(cString: strerror(errno)).lowercased())")
        }
        switch status.st_mode & S_IFMT {
        case S_IFREG:
            if !force { throw ExportError(message: "\(path) exists; add --force to replace it") }
        case S_IFLNK:
            throw ExportError(message: "\(path) is a symbolic link, which \(tool) does not follow; give the file's real path")
        case S_IFDIR:
            throw ExportError(message: "\(path) is a folder; \(folderAdvice)")
        default:
            throw ExportError(message: "\(path) exists and is not a regular file (a device or a FIFO?); \(tool) writes regular files only")
        }
    }

    /// Refuses to write over the database being exported, or its `-wal` or `-shm` (as `cp`
    /// refuses to copy a file onto itself), whatever the path that names it.
    public static func refuseDatabase(_ path: String, database: String, tool: String = "export") throws {
        var target = stat()
        guard stat(path, &target) == 0 else { return }
        try refuse(target, named: path, database: database, tool: tool)
    }

    /// The same for an open descriptor (standard output redirected onto the database).
    public static func refuseDatabase(descriptor: Int32, database: String, tool: String) throws {
        var target = stat()
        guard fstat(descriptor, &target) == 0, (target.st_mode & S_IFMT) == S_IFREG else { return }
        try refuse(target, named: "standard output", database: database, tool: tool)
    }

    private static func refuse(_ target: stat, named name: String, database: String, tool: String) throws {
        for suffix in ["", "-wal", "-shm"] {
            var file = stat()
            if stat(database + suffix, &file) == 0 && file.st_dev == target.st_dev && file.st_ino == target.st_ino {
                let role = tool == "export" ? "the database being exported" : "the database \(tool) reads"
                throw ExportError(message: "\(name) is \(role)\(suffix.isEmpty ? "" : " (its \(suffix) file)"); choose another file")
            }
        }
    }

    /// Refuses a path that exists and is not a folder (a symlink to one is fine: the user made it).
    public static func checkFolder(_ path: String) throws {
        let shown = UntrustedText.sanitized(path)
        var status = stat()
        guard stat(path, &status) == 0 else {
            if errno == ELOOP {
                throw ExportError(message: "\(shown) is a loop of symlinks (each points on to the next); give --out-dir another name")
            }
            // A symlink to nothing: no folder can be made in its place without removing it.
            if lstat(path, &status) == 0, (status.st_mode & S_IFMT) == S_IFLNK {
                let target = (try? FileManager.default.destinationOfSymbolicLink(atPath: path)).map { " (to \(UntrustedText.sanitized($0)), which does not exist)" } ?? ""
                throw ExportError(
                    message: "\(shown) is a symlink to nothing\(target); make the folder it points to, or give --out-dir another name")
            }
            return
        }
        if (status.st_mode & S_IFMT) != S_IFDIR {
            throw ExportError(message: "\(shown) exists and is not a folder; --out-dir needs a folder (or a new name)")
        }
    }

    public static func makeFolder(_ path: String) throws {
        guard mkdirs(path) else {
            throw ExportError(message: "cannot create the folder \(UntrustedText.sanitized(path)): \(String(cString: strerror(errno)).lowercased())")
        }
    }

    /// Makes `path` and the folders above it that are missing (as `mkdir -p`); errno says why not.
    private static func mkdirs(_ path: String) -> Bool {
        var status = stat()
        if stat(path, &status) == 0 {
            errno = (status.st_mode & S_IFMT) == S_IFDIR ? 0 : EEXIST
            return errno == 0
        }
        let parent = PathText.parent(of: path)
        if parent != path && !parent.isEmpty && parent != "." && !mkdirs(parent) { return false }
        return mkdir(path, 0o777) == 0 || errno == EEXIST
    }
}
