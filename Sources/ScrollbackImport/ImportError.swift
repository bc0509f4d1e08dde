import Foundation
import ScrollbackModel

/// Why a file could not be imported: shown as `PATH: what is wrong (where)`.
public struct ImportError: UserFacingError, Equatable, Sendable, CustomStringConvertible {
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

    public var userLine: String { description }
}

/// A record inside a good file that was left out, and why.
public struct SkippedRecord: Equatable, Sendable {
    public let path: String
    public let record: String
    public let reason: String
}

/// The user asked to stop (Ctrl-C): the file being read is left out.
struct ImportInterrupted: Error {}
