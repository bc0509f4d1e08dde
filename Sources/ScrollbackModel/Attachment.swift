import Foundation

/// A file of an imported message (a photo, a generated image, a recording, a document), as
/// the source describes it. Its bytes, when the export holds them, come beside it through
/// `AttachmentSource` at the time it is stored: an export's files are never held in memory.
public struct ImportedAttachment: Sendable, Hashable {
    /// The file's name as the person saw it (or the source's id when it names none).
    public var name: String
    public var mime: String?
    /// The size the source declares (the stored bytes' own size wins once they are stored).
    public var size: Int64?
    public var width: Int?
    public var height: Int?
    /// What the source points at: `file-service://file-…`, `sediment://file_…`, a path or a
    /// URL. The import finds the bytes by it; kept, so that a later import with the files
    /// fills them in.
    public var reference: String?
    /// Text the source drew out of the file (Claude's `extracted_content`).
    public var extracted: String?
    /// Bytes the source carries inline (a session's base64 image), already decoded.
    public var data: [UInt8]?
    /// Why the bytes are not here, when the source says (Claude's export holds no files).
    public var absence: String?
    /// The SHA-256 of its bytes, when the source names it (scrollback's own export): the
    /// file stored under it is used, and bytes found elsewhere must hash to it.
    public var sha256: String?
    /// A file that holds its bytes (scrollback's export with `--attachments-dir`).
    public var file: String?

    public init(
        name: String, mime: String? = nil, size: Int64? = nil, width: Int? = nil, height: Int? = nil, reference: String? = nil,
        extracted: String? = nil, data: [UInt8]? = nil, absence: String? = nil, sha256: String? = nil, file: String? = nil
    ) {
        self.sha256 = sha256
        self.file = file
        self.name = name
        self.mime = mime
        self.size = size
        self.width = width
        self.height = height
        self.reference = reference
        self.extracted = extracted
        self.data = data
        self.absence = absence
    }
}

/// The bytes of one attachment, read once, in pieces, into the store: a 200 MB recording
/// goes through a buffer of a megabyte, never whole.
public protocol AttachmentSource {
    /// How many bytes `read` gives (checked: more or fewer is an error, and nothing is kept).
    var size: Int { get }
    /// Gives the bytes in order to `sink`, each piece valid only during its call.
    func read(_ sink: (UnsafeRawBufferPointer) throws -> Void) throws
}

/// Finds the bytes of an imported message's attachment (in an export's ZIP or folder); nil
/// when the export does not hold them (the attachment is kept as a reference, shown missing).
public typealias AttachmentFinder = (ImportedAttachment) throws -> (any AttachmentSource)?

/// An attachment as stored: what the reader's line, `attachment list` and exports show.
public struct AttachmentDTO: Sendable, Hashable, Identifiable {
    public var id: Int64
    public var messageID: Int64
    /// The message's place in its conversation (its position), for listing.
    public var messagePosition: Int
    /// Its place among the message's attachments.
    public var position: Int
    public var name: String
    public var mime: String?
    /// The stored bytes' size, or the size the source declared when they are missing.
    public var size: Int64?
    public var width: Int?
    public var height: Int?
    public var reference: String?
    /// The SHA-256 of the stored bytes in hex; nil when they are missing.
    public var sha256: String?
    public var extracted: String?
    public var absence: String?
    /// The SHA-256 of bytes another machine holds and sync has not fetched here yet.
    public var awaited: String?

    public var isStored: Bool { sha256 != nil }

    /// Why its bytes are not here, in words (nil when they are): what the source said, the
    /// export not holding them, or another machine holding them and sync not yet here.
    public var missingReason: String? {
        guard !isStored else { return nil }
        if awaited != nil { return Self.notHereYet }
        return absence ?? "the export did not hold it"
    }

    /// The reason of an attachment whose bytes another machine sent and this one has not
    /// fetched.
    public static let notHereYet = "not here yet: another machine holds it; sync fetches it when it is shown or opened"

    public init(
        id: Int64, messageID: Int64, messagePosition: Int, position: Int, name: String, mime: String?, size: Int64?, width: Int?,
        height: Int?, reference: String?, sha256: String?, extracted: String?, absence: String?, awaited: String? = nil
    ) {
        self.awaited = awaited
        self.id = id
        self.messageID = messageID
        self.messagePosition = messagePosition
        self.position = position
        self.name = name
        self.mime = mime
        self.size = size
        self.width = width
        self.height = height
        self.reference = reference
        self.sha256 = sha256
        self.extracted = extracted
        self.absence = absence
    }
}

extension AttachmentDTO {
    /// What kind of file, in a word or two: `PNG`, `JPEG`, `WAV audio`, `PDF`, from its MIME
    /// type, else its name's extension, else `file`.
    public var typeWord: String {
        if let mime = mime?.lowercased(), let slash = mime.firstIndex(of: "/") {
            let major = mime[..<slash]
            var minor = mime[mime.index(after: slash)...]
            if let cut = minor.firstIndex(where: { $0 == ";" || $0 == "+" }) { minor = minor[..<cut] }
            if minor.hasPrefix("x-") { minor = minor.dropFirst(2) }
            if minor.hasPrefix("vnd.") { minor = "" }
            if major == "text" && minor == "plain" { return "text" }
            let word = minor == "jpg" ? "JPEG" : minor == "mpeg" && major == "audio" ? "MP3" : minor.uppercased()
            if !word.isEmpty, word.count <= 8, word.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "." || $0 == "-" }) {
                return major == "audio" || major == "video" ? "\(word) \(major)" : word
            }
        }
        if let dot = name.lastIndex(of: "."), name.index(after: dot) < name.endIndex {
            let suffix = name[name.index(after: dot)...].uppercased()
            if suffix.count <= 5, suffix.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) {
                return suffix == "JPG" ? "JPEG" : suffix
            }
        }
        return "file"
    }

    /// A file name for the attachment: its own name made safe (letters, digits, `.`, `-`,
    /// `_`; no leading dot, no `/`), or `attachment` with its type's extension.
    public var safeFileName: String {
        var safe = String(
            name.unicodeScalars.map { scalar -> Character in
                let character = Character(scalar)
                return scalar.isASCII && (character.isLetter || character.isNumber || "._-".unicodeScalars.contains(scalar)) ? character : "-"
            }.prefix(80))
        while safe.hasPrefix(".") || safe.hasPrefix("-") { safe.removeFirst() }
        if safe.isEmpty || safe.allSatisfy({ $0 == "-" || $0 == "." }) {
            let word = typeWord.lowercased()
            safe = "attachment" + (word.allSatisfy { $0.isLetter || $0.isNumber } && word != "file" ? "." + word : "")
        }
        return safe
    }

    /// A file's size as file managers say it, in powers of 1,000: `812 B`, `9.4 kB`, `245 kB`,
    /// `1.2 MB`.
    public static func sizeText(_ bytes: Int64) -> String {
        guard bytes >= 1000 else { return "\(max(bytes, 0)) B" }
        let units = ["kB", "MB", "GB", "TB", "PB"]
        var value = Double(bytes) / 1000
        var unit = 0
        while value >= 999.5 && unit < units.count - 1 {
            value /= 1000
            unit += 1
        }
        return String(format: value < 9.95 ? "%.1f %@" : "%.0f %@", value, units[unit])
    }

}

/// What is stored of attachments, for `stats`.
public struct AttachmentTotals: Sendable, Hashable {
    /// Attachments of messages (a file in two messages counts twice).
    public var attachments: Int
    /// Of them, the ones whose bytes are not here.
    public var missing: Int
    /// Distinct files stored, and their bytes (each once).
    public var files: Int
    public var bytes: Int64
    /// Files stored that no conversation uses (their conversations deleted, kept for undo
    /// and freed by a delete after the grace time), and their bytes.
    public var unusedFiles: Int
    public var unusedBytes: Int64

    public init(attachments: Int, missing: Int, files: Int, bytes: Int64, unusedFiles: Int = 0, unusedBytes: Int64 = 0) {
        self.attachments = attachments
        self.missing = missing
        self.files = files
        self.bytes = bytes
        self.unusedFiles = unusedFiles
        self.unusedBytes = unusedBytes
    }
}

/// Bytes already in memory (a session's decoded base64 image, a test's file).
public struct InMemoryAttachmentSource: AttachmentSource {
    public let bytes: [UInt8]
    public init(_ bytes: [UInt8]) { self.bytes = bytes }
    public var size: Int { bytes.count }
    public func read(_ sink: (UnsafeRawBufferPointer) throws -> Void) throws {
        try bytes.withUnsafeBytes { try sink($0) }
    }
}

/// The bytes of an attachment could not be read from where the export keeps them (a
/// damaged ZIP entry, a file that changed): the attachment is kept as missing, saying why.
public struct AttachmentUnreadable: Error, Sendable {
    public let reason: String
    public init(reason: String) { self.reason = reason }
}
