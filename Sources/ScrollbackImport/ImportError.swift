import Foundation

/// Why a file could not be imported: shown as `PATH: what is wrong (where)`.
public struct ImportError: Error, Equatable, Sendable, CustomStringConvertible {
    public let path: String
    public let problem: String
    /// Where in the file, when known: "byte 1234", "line 7".
    public let location: String?

    public init(path: String, problem: String, location: String? = nil) {
        self.path = path
        self.problem = problem
        self.location = location
    }

    public var description: String {
        "\(path): \(problem)" + (location.map { " (\($0))" } ?? "")
    }
}

/// A record inside a good file that was left out, and why.
public struct SkippedRecord: Equatable, Sendable {
    public let path: String
    public let record: String
    public let reason: String
}

/// A file's bytes, memory-mapped: a large export is paged in as it is read, not copied.
func mappedContents(of path: String) throws -> Data {
    // An empty file is not mapped: Foundation leaks a page reading one (seen by the fuzzer).
    var status = stat()
    if stat(path, &status) == 0, status.st_size == 0, status.st_mode & S_IFMT == S_IFREG { return Data() }
    do {
        return try Data(contentsOf: URL(fileURLWithPath: path), options: .alwaysMapped)
    } catch {
        throw ImportError(path: path, problem: "cannot read the file")
    }
}

/// The user asked to stop (Ctrl-C): the file being read is left out.
struct ImportInterrupted: Error {}
