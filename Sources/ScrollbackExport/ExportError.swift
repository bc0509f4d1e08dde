import ScrollbackModel

/// An export that cannot be written where asked, or not whole: what to do, exit status 1.
public struct ExportError: UserFacingError {
    public let message: String
    public var userLine: String { message }

    public init(message: String) { self.message = message }
}
