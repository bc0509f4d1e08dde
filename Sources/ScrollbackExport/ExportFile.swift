import Foundation
import ScrollbackModel
import ScrollbackStorage
import TerminalText

/// A file written beside its final name and moved into place when complete: a failed or
/// interrupted export leaves no half-written file, and every write is checked.
public final class ExportFile {
    public let path: String
    private let temporary: String
    private let descriptor: Int32
    private var buffer: [UInt8] = []

    public init(replacing path: String) throws {
        self.path = path
        let folder = PathText.parent(of: path)
        let name = PathText.lastComponent(of: path)
        var attempt = 0
        var opened: (String, Int32)?
        while opened == nil {
            let candidate = (folder.isEmpty ? "" : folder + "/") + ".\(name).\(getpid()).\(attempt).partial"
            let descriptor = Foundation.open(candidate, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
            if descriptor >= 0 {
                opened = (candidate, descriptor)
            } else if errno != EEXIST || attempt > 100 {
                throw ExportError(message: "cannot write \(path): \(String(cString: strerror(errno)).lowercased())")
            }
            attempt += 1
        }
        guard let (temporary, descriptor) = opened else {
            throw ExportError(message: "cannot write \(path)")
        }
        self.temporary = temporary
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }

    public func write(_ text: String) throws {
        buffer.append(contentsOf: text.utf8)
        if buffer.count >= 1 << 16 { try flush() }
    }

    /// Bytes as they are (an attachment's), buffered like text.
    public func write(bytes: UnsafeRawBufferPointer) throws {
        buffer.append(contentsOf: bytes)
        if buffer.count >= 1 << 16 { try flush() }
    }

    private func flush() throws {
        if let code = DescriptorWrite.all(buffer, to: descriptor) { throw failure(code) }
        buffer.removeAll(keepingCapacity: true)
    }

    /// Syncs the file and moves it into place: replacing what is there only with `force`
    /// (else `link`, which refuses a name that appeared meanwhile).
    public func commit(force: Bool) throws {
        try flush()
        guard fsync(descriptor) == 0 else { throw failure(errno) }
        if force {
            guard rename(temporary, path) == 0 else { throw failure(errno) }
        } else {
            if link(temporary, path) == 0 {
                unlink(temporary)
            } else if errno == EEXIST {
                discard()
                throw ExportError(message: "\(path) exists; add --force to replace it")
            } else {
                // A file system without hard links: rename, after one more look.
                var status = stat()
                guard errno == EPERM || errno == EOPNOTSUPP, lstat(path, &status) != 0, rename(temporary, path) == 0 else {
                    throw failure(errno)
                }
            }
        }
        let folder = PathText.parent(of: path)
        let folderDescriptor = Foundation.open(folder.isEmpty ? "." : folder, O_RDONLY | O_DIRECTORY)
        if folderDescriptor >= 0 {
            _ = fsync(folderDescriptor)
            close(folderDescriptor)
        }
    }

    public func discard() {
        unlink(temporary)
    }

    private func failure(_ code: Int32) -> ExportError {
        let reason = String(cString: strerror(code)).lowercased()
        discard()
        return ExportError(message: "cannot write \(path) (\(reason)); nothing was written there")
    }
}
