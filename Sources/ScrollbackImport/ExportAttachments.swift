import Foundation
import ScrollbackModel

/// The files an export holds beside its conversations (a ChatGPT ZIP's or folder's images
/// and recordings), found by the file id their names start with: `file-Ab12-photo.jpg` at
/// the top, `dalle-generations/file-…webp`, `user-…/file_….png`, `<conversation>/audio/file_….wav`.
/// Only the names are read when the export is opened; a file's bytes are inflated straight
/// into the store when its message is stored.
final class ExportAttachments {
    private enum Place {
        case entry(ZipArchive.Entry)
        case file(String)
    }

    private let archive: ZipArchive?
    private let limit: UnzipLimit
    private var byFile: [String: (place: Place, name: String, size: Int)] = [:]

    /// The files of a ZIP archive.
    init(archive: ZipArchive, limit: UnzipLimit) {
        self.archive = archive
        self.limit = limit
        for entry in archive.entries where !entry.name.hasSuffix("/") {
            guard let id = ChatGPTAttachments.fileID(ofEntryName: entry.name), byFile[id] == nil else { continue }
            byFile[id] = (.entry(entry), entry.name, entry.size)
        }
    }

    /// The files of an export folder, looked for three folders down (symbolic links are not
    /// followed out of it).
    init(folder: String) {
        archive = nil
        limit = UnzipLimit()
        func walk(_ path: String, depth: Int) {
            let names = ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).filter { !$0.hasPrefix(".") }.sorted()
            for name in names {
                let child = PathText.appending(to: path, name)
                var status = stat()
                guard lstat(child, &status) == 0 else { continue }
                switch status.st_mode & S_IFMT {
                case S_IFREG:
                    guard let id = ChatGPTAttachments.fileID(ofEntryName: name), byFile[id] == nil, status.st_size >= 0 else { continue }
                    byFile[id] = (.file(child), name, Int(status.st_size))
                case S_IFDIR where depth > 0:
                    walk(child, depth: depth - 1)
                default:
                    continue
                }
            }
        }
        walk(folder, depth: 3)
    }

    var isEmpty: Bool { byFile.isEmpty }

    /// `attachment` with the name its file has in the export, when the source named it only
    /// by its id.
    func named(_ attachment: ImportedAttachment) -> ImportedAttachment {
        guard let reference = attachment.reference, let id = ChatGPTAttachments.fileID(of: reference), let found = byFile[id],
            attachment.name == id
        else { return attachment }
        var renamed = attachment
        renamed.name = ChatGPTAttachments.shownName(ofEntry: found.name, fileID: id)
        return renamed
    }

    /// The bytes of the file `attachment` points to, when the export holds it.
    func source(for attachment: ImportedAttachment) -> (any AttachmentSource)? {
        guard let reference = attachment.reference, let id = ChatGPTAttachments.fileID(of: reference), let found = byFile[id] else {
            return nil
        }
        switch found.place {
        case .entry(let entry):
            guard let archive else { return nil }
            return ZipEntrySource(archive: archive, entry: entry, limit: limit)
        case .file(let path):
            return FileSource(path: path, size: found.size)
        }
    }
}

/// An entry of a ZIP archive, inflated as it is read.
struct ZipEntrySource: AttachmentSource {
    let archive: ZipArchive
    let entry: ZipArchive.Entry
    let limit: UnzipLimit
    var size: Int { entry.size }
    func read(_ sink: (UnsafeRawBufferPointer) throws -> Void) throws {
        try archive.stream(entry, limit: limit, into: sink)
    }
}

/// A file in an export folder, read a megabyte at a time; one that changes size while it
/// is read is refused (its bytes would not be the ones counted).
struct FileSource: AttachmentSource {
    let path: String
    let size: Int

    /// The regular file at `path` (not a symlink, a FIFO or a device); nil when there is none.
    static func regularFile(_ path: String) -> FileSource? {
        var status = stat()
        guard lstat(path, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG, let size = Int(exactly: status.st_size) else { return nil }
        return FileSource(path: path, size: size)
    }

    func read(_ sink: (UnsafeRawBufferPointer) throws -> Void) throws {
        let reader = try FileReader(path: path)
        guard reader.size == size else {
            throw ImportError(path: path, problem: "the file changed while the export was read; import it again")
        }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: FileReader.chunk, alignment: 16)
        defer { buffer.deallocate() }
        var at = 0
        while at < size {
            let piece = UnsafeMutableRawBufferPointer(rebasing: buffer[0..<min(FileReader.chunk, size - at)])
            try reader.read(exactly: piece, at: at)
            try sink(UnsafeRawBufferPointer(piece))
            at += piece.count
        }
        try reader.checkUnchanged()
    }
}
