/// An error a person meets at the command line: the one line that says what went wrong and
/// what to do, what `--verbose` adds to it, and the exit status. Every error type that can
/// reach the top of a command adopts it, so that the top has one way to report any of them
/// (`Scrollback.report`); an error that does not is a bug shown as Swift describes it.
public protocol UserFacingError: Error {
    /// The line after `scrollback: `: what went wrong and what to do about it.
    var userLine: String { get }
    /// The line under `--verbose` (SQLite's own words, the SQL): the line by default.
    var verboseLine: String { get }
    /// 1 for a failure (the default), 2 for a mistake in the command line, 130 when stopped by
    /// Ctrl-C with nothing lost.
    var exitStatus: Int32 { get }
}

extension UserFacingError {
    public var verboseLine: String { userLine }
    public var exitStatus: Int32 { 1 }
}

extension StorageError: UserFacingError {
    public var userLine: String { description }
    public var verboseLine: String { verboseDescription }
}

extension FilterError: UserFacingError {
    public var userLine: String { message }
}

extension SQLiteError: UserFacingError {
    public var userLine: String { summary }
    public var verboseLine: String { description }
}
