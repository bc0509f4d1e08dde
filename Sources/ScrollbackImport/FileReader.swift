import Foundation

/// A file read forward into a buffer, a chunk at a time, with `read(2)`, or at any offset
/// with `pread(2)`. Never memory-mapped: a mapped file that another program truncates while
/// it is read ends the process with SIGBUS (seen: `import` of an export being re-downloaded
/// crashed with "Bus error"); read, it ends early, which the readers report as a file that
/// ended or changed while it was read.
///
/// Memory is the chunk plus whatever the caller keeps (a reader of records keeps one record),
/// not the file.
final class FileReader {
    let path: String
    /// The size when the file was opened.
    let size: Int
    /// The bytes from file offset `base` on, read so far and not yet discarded.
    private(set) var buffer: [UInt8] = []
    private(set) var base = 0
    /// Whether `fill` found the end of the file.
    private(set) var atEnd = false
    private let descriptor: Int32
    /// When the file was last written, as it was opened: a rewrite in place (same size, as
    /// `dd conv=notrunc` or `rsync --inplace` do) changes it.
    private let modified: timespec
    static let chunk = 1 << 20
    private static let zeros = [UInt8](repeating: 0, count: chunk)

    /// - Throws: `ImportError` when the file cannot be opened or is not a regular file.
    init(path: String) throws {
        self.path = path
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw ImportError(path: path, problem: "cannot read the file (\(String(cString: strerror(errno))))")
        }
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
            close(descriptor)
            throw ImportError(path: path, problem: "not a regular file; import an export file or folder")
        }
        self.descriptor = descriptor
        size = Int(status.st_size)
        modified = status.st_mtim
    }

    deinit { close(descriptor) }

    /// The file offset just after the bytes in the buffer.
    var end: Int { base + buffer.count }

    /// Reads the next chunk onto the end of the buffer; false at the end of the file.
    func fill() throws -> Bool {
        if atEnd { return false }
        let old = buffer.count
        // Appended from an array (a copy), not `repeatElement`: element by element, that
        // took 0.2 s a chunk in a debug build.
        buffer.append(contentsOf: Self.zeros)
        let count = try buffer.withUnsafeMutableBytes { bytes in
            try read(into: UnsafeMutableRawBufferPointer(rebasing: bytes[old...]), at: nil)
        }
        buffer.removeLast(Self.chunk - count)
        if count == 0 { atEnd = true }
        return count > 0
    }

    /// Forgets the bytes before file offset `offset` (which must be in the buffer or at its end).
    func discard(before offset: Int) {
        let count = min(max(0, offset - base), buffer.count)
        guard count > 0 else { return }
        buffer.removeFirst(count)
        base += count
    }

    /// The byte at file offset `offset`, reading on as needed; nil past the end of the file.
    func byte(at offset: Int) throws -> UInt8? {
        while offset >= end {
            guard try fill() else { return nil }
        }
        guard offset >= base else { return nil }
        return buffer[offset - base]
    }

    /// Reads up to `bytes.count` bytes at file offset `offset`, or where the last read ended
    /// when nil; how many were read (0 at the end of the file).
    func read(into bytes: UnsafeMutableRawBufferPointer, at offset: Int?) throws -> Int {
        guard let start = bytes.baseAddress, bytes.count > 0 else { return 0 }
        while true {
            let count = if let offset { pread(descriptor, start, bytes.count, off_t(offset)) } else { Foundation.read(descriptor, start, bytes.count) }
            if count >= 0 { return count }
            if errno == EINTR { continue }
            throw ImportError(path: path, problem: "cannot read the file (\(String(cString: strerror(errno))))")
        }
    }

    /// Exactly `count` bytes at file offset `offset`.
    ///
    /// - Throws: `ImportError` when the file ends first (it is shorter than it said, or
    ///   another program shortened it while it was read).
    func bytes(at offset: Int, count: Int) throws -> [UInt8] {
        var result = [UInt8](repeating: 0, count: count)
        try result.withUnsafeMutableBytes { try read(exactly: $0, at: offset) }
        return result
    }

    /// Fills `bytes` from file offset `offset`.
    ///
    /// - Throws: `ImportError` when the file ends first, as `bytes(at:count:)`.
    func read(exactly bytes: UnsafeMutableRawBufferPointer, at offset: Int) throws {
        var done = 0
        while done < bytes.count {
            let got = try read(into: UnsafeMutableRawBufferPointer(rebasing: bytes[done...]), at: offset + done)
            if got == 0 { throw endedEarly(at: offset + done) }
            done += got
        }
    }

    /// What another program has done to the file since it was opened, as the error to
    /// report; nil when it is as it was.
    var change: ImportError? {
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { return nil }
        let now = Int(status.st_size)
        if now < size {
            return ImportError(
                path: path,
                problem: "the file became shorter while it was read (\(size) bytes, now \(now)): another program changed it; nothing of it was imported, import it again when it is complete")
        }
        // Written again in place (`dd conv=notrunc`, `rsync --inplace`), or cut and written
        // again as `cp` over it does: what was read may mix old and new content.
        if now != size || status.st_mtim.tv_sec != modified.tv_sec || status.st_mtim.tv_nsec != modified.tv_nsec {
            return ImportError(
                path: path,
                problem: "the file changed while it was read (another program wrote to it); nothing of it was imported, import it again when it is complete")
        }
        return nil
    }

    /// Called when a reader has read all it reads of the file: throws `change`, since what
    /// was read may not be what the file holds.
    func checkUnchanged() throws {
        if let change { throw change }
    }

    /// The error for a file that ends before `offset`, which the reader was told is in it.
    func endedEarly(at offset: Int) -> ImportError {
        change ?? ImportError(path: path, problem: "the file ends early", location: "byte \(offset)")
    }
}
