import CLibPQ
import Foundation
import TerminalText

/// A parameter of a query: text (sent as text), bytes (sent binary, for `bytea`), or NULL.
enum PostgresValue {
    case text(String)
    case bytes([UInt8])
    case null
}

/// One libpq connection, used from one thread. Every query is `PQexecParams` (or `PQexec`
/// for a script without parameters): unnamed statements only, never a server-side
/// prepared one, so that a transaction pooler (Supabase's, PgBouncer's) may hand each
/// statement to another backend.
final class PostgresConnection {
    private let handle: OpaquePointer

    /// Connects with `conninfo` (a URI or key=value words). libpq takes `sslmode` from it
    /// (`require` is honoured over TCP); a connect timeout of 10 s applies unless it names
    /// one. The connection string never appears in an error.
    init(conninfo: String, connectTimeout: Int = 10) throws {
        let keywords = ["connect_timeout", "fallback_application_name", "dbname"]
        let values = [String(connectTimeout), "scrollback", conninfo]
        let connection: OpaquePointer? = withCStrings(keywords) { keywordPointers in
            withCStrings(values) { valuePointers in
                PQconnectdbParams(keywordPointers, valuePointers, 1)
            }
        }
        guard let connection else { throw SyncError.unreachable("libpq could not allocate a connection") }
        guard PQstatus(connection) == CONNECTION_OK else {
            let said = Self.firstLine(PQerrorMessage(connection))
            PQfinish(connection)
            let kind = Self.classify(connectionMessage: said)
            let message = Self.redacted(said, conninfo: conninfo, unread: kind == .malformed)
            switch kind {
            case .refused: throw SyncError.refused(message)
            case .malformed: throw SyncError.badConnectionString(message)
            case .unreachable: throw SyncError.unreachable(message)
            }
        }
        handle = connection
        // Each query's notices (e.g. "schema exists, skipping") would go to stderr.
        PQsetNoticeProcessor(handle, { _, _ in }, nil)
    }

    deinit { PQfinish(handle) }

    /// `message` without the password of `conninfo`, nor a quoted piece of it that could
    /// hold one (a URI, key=value words): libpq's parse errors quote the token they stumble
    /// on, which may be the password or the whole connection string. When libpq could not
    /// read the string (`unread`), every quoted word of it goes but the names of libpq's
    /// options: a word out of place may be a password typed without its `password=`.
    static func redacted(_ message: String, conninfo: String, unread: Bool = false) -> String {
        var secrets: [String] = []
        for pattern in [#"password\s*=\s*'((?:[^'\\]|\\.)*)'"#, #"password\s*=\s*([^\s']+)"#, #"://[^:/@\s]*:([^@]*)@"#, #"[?&]password=([^&]*)"#] {
            guard let expression = try? NSRegularExpression(pattern: pattern, options: [.caseInsensitive]) else { continue }
            let range = NSRange(conninfo.startIndex..., in: conninfo)
            for match in expression.matches(in: conninfo, range: range) where match.numberOfRanges > 1 {
                if let found = Range(match.range(at: 1), in: conninfo), !conninfo[found].isEmpty {
                    let secret = String(conninfo[found])
                    secrets.append(secret)
                    if let decoded = secret.removingPercentEncoding { secrets.append(decoded) }
                }
            }
        }
        var text = message
        // Quoted parts that come from the connection string go whole.
        if let quoted = try? NSRegularExpression(pattern: #""[^"]*""#) {
            let range = NSRange(text.startIndex..., in: text)
            for match in quoted.matches(in: text, range: range).reversed() {
                guard let found = Range(match.range, in: text) else { continue }
                let inner = text[found].dropFirst().dropLast()
                let wholeOrPart = inner.contains("://") || inner.contains("=") || inner.contains("@")
                let aWord = unread && !optionNames.contains(String(inner))
                if !inner.isEmpty && inner != "="
                    && ((conninfo.contains(inner) && (wholeOrPart || aWord)) || secrets.contains(where: { inner.contains($0) }))
                {
                    text.replaceSubrange(found, with: "(part of the connection string)")
                }
            }
        }
        for secret in secrets.sorted(by: { $0.count > $1.count }) where !secret.isEmpty {
            text = text.replacingOccurrences(of: secret, with: "(password)")
        }
        return text
    }

    /// The names of libpq's connection options (`host`, `port`, `sslmode`, …), from libpq.
    static let optionNames: Set<String> = {
        guard let options = PQconndefaults() else { return [] }
        defer { PQconninfoFree(options) }
        var names: Set<String> = []
        var option = options
        while let keyword = option.pointee.keyword {
            names.insert(String(cString: keyword))
            option += 1
        }
        return names
    }()

    /// What a connect failure means to the user.
    enum ConnectFailure: Equatable { case refused, malformed, unreachable }

    /// A connect failure as the user should read it.
    static func classify(connectionMessage message: String) -> ConnectFailure {
        let lower = message.lowercased()
        if lower.contains("password authentication failed") || lower.contains("no password supplied")
            || lower.contains("authentication failed") || lower.contains("no pg_hba.conf entry")
        {
            return .refused
        }
        if lower.contains("ssl") && (lower.contains("not support") || lower.contains("required")) {
            return .refused
        }
        // The server answered: the database or the user named is not there.
        // (libpq's `FATAL:` is gone from the message by now: its own words stay.)
        if lower.contains("does not exist") && (lower.contains("database \"") || lower.contains("role \"") || lower.contains("fatal:")) {
            return .refused
        }
        // The server answered and will not let this user in: a role without LOGIN, CONNECT
        // revoked, a database closed to connections, a connection limit; or it refused an
        // option the connection string sets (`options=-c …`).
        let refusals = [
            "is not permitted to log in", "permission denied for database", "is not currently accepting connections",
            "too many connections for", "connection slots are reserved", "invalid value for parameter",
            "unrecognized configuration parameter", "must be superuser", "permission denied to set parameter",
        ]
        if refusals.contains(where: lower.contains) {
            return .refused
        }
        if lower.contains("invalid") && (lower.contains("connection option") || lower.contains("uri") || lower.contains("sslmode")) {
            return .malformed
        }
        if lower.contains("missing \"=\"") || lower.contains("unterminated quoted string") || lower.contains("in uri")
            || lower.contains("percent-encoded") || lower.contains("invalid integer value") || lower.contains("invalid connection option")
            || lower.contains("invalid sslmode") || lower.contains("invalid value") || lower.contains("invalid port number")
        {
            return .malformed
        }
        return .unreachable
    }

    /// libpq's message, its first line, made safe to print (a server's words are data).
    static func firstLine(_ pointer: UnsafePointer<CChar>?) -> String {
        guard let pointer else { return "no message" }
        let text = String(decoding: Data(bytes: pointer, count: strlen(pointer)), as: UTF8.self)
        var line = (text.split(whereSeparator: \.isNewline).first.map(String.init) ?? text).trimmingCharacters(in: .whitespaces)
        // The server's severity, as libpq puts it before the words ("FATAL:  terminating…").
        // Also after libpq's own words: `connection to server … failed: FATAL:  role …`.
        for severity in ["FATAL:", "ERROR:", "PANIC:"] {
            if line.hasPrefix(severity) {
                line = String(line.dropFirst(severity.count)).trimmingCharacters(in: .whitespaces)
            }
            while let range = line.range(of: ": " + severity) {
                let rest = line[range.upperBound...].drop { $0 == " " }
                line = String(line[..<range.lowerBound]) + ": " + rest
            }
        }
        return UntrustedText.sanitized(line)
    }

    /// Runs a script of statements without parameters (schema changes, BEGIN/COMMIT).
    @discardableResult
    func execute(_ script: String) throws -> PostgresResult {
        try check(PQexec(handle, script))
    }

    /// Runs one statement with parameters; results come in binary.
    @discardableResult
    func query(_ sql: String, _ parameters: [PostgresValue] = []) throws -> PostgresResult {
        var buffers: [[CChar]?] = []
        var lengths: [Int32] = []
        var formats: [Int32] = []
        // The types are given (text 25, bytea 17): left to the server to infer, thousands of
        // parameters took it 100 ms a statement instead of a few.
        var types: [UInt32] = []
        for parameter in parameters {
            switch parameter {
            case .text(let text):
                buffers.append(Array(text.utf8CString))
                lengths.append(0)
                formats.append(0)
                types.append(25)
            case .bytes(let bytes):
                buffers.append(bytes.map { CChar(bitPattern: $0) })
                lengths.append(Int32(clamping: bytes.count))
                formats.append(1)
                types.append(17)
            case .null:
                buffers.append(nil)
                lengths.append(0)
                formats.append(0)
                types.append(0)
            }
        }
        let result: OpaquePointer? = withPointers(buffers) { pointers in
            PQexecParams(handle, sql, Int32(parameters.count), types, pointers, lengths, formats, 1)
        }
        return try check(result)
    }

    /// Runs one statement whose parameters are `texts` and then `bytes` (a bytea, sent in
    /// binary from where it is: a snapshot's chunk is not copied on its way).
    @discardableResult
    func query(_ sql: String, texts: [String], bytes: UnsafeRawBufferPointer) throws -> PostgresResult {
        let strings = texts.map { strdup($0) }
        defer { strings.forEach { free($0) } }
        let pointers: [UnsafePointer<CChar>?] = strings.map { $0.map { UnsafePointer($0) } } + [bytes.baseAddress?.assumingMemoryBound(to: CChar.self)]
        let lengths = texts.map { _ in Int32(0) } + [Int32(clamping: bytes.count)]
        let formats = texts.map { _ in Int32(0) } + [Int32(1)]
        let types = texts.map { _ in UInt32(25) } + [UInt32(17)]
        let result = pointers.withUnsafeBufferPointer { pointer in
            PQexecParams(handle, sql, Int32(pointers.count), types, pointer.baseAddress, lengths, formats, 1)
        }
        return try check(result)
    }

    private func check(_ result: OpaquePointer?) throws -> PostgresResult {
        guard let result else {
            throw SyncError.connectionLost(Self.firstLine(PQerrorMessage(handle)))
        }
        let status = PQresultStatus(result)
        guard status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK else {
            let error = failure(of: result)
            PQclear(result)
            throw error
        }
        return PostgresResult(result)
    }

    /// What a failed result says: a refused statement, or a connection that ended (closed,
    /// or class 57P and 08: the server shutting down or ending this session).
    private func failure(of result: OpaquePointer) -> SyncError {
        let state = PQresultErrorField(result, scrollback_pg_diag_sqlstate).map { String(cString: $0) } ?? ""
        let primary = PQresultErrorField(result, scrollback_pg_diag_message_primary)
        let message = primary.map { Self.firstLine($0) } ?? Self.firstLine(PQerrorMessage(handle))
        // No SQLSTATE: libpq's own failure, not the server's answer (the server went away).
        if !isOpen || state.isEmpty || state.hasPrefix("57P") || state.hasPrefix("08") { return .connectionLost(message) }
        return .server(state: state, message: message)
    }

    var isOpen: Bool { PQstatus(handle) == CONNECTION_OK }

    /// Runs `sql` (a `COPY … FROM STDIN`) and sends `data` as its input, a megabyte at a time.
    func copyIn(_ sql: String, data: [UInt8]) throws {
        guard let started = PQexec(handle, sql) else { throw SyncError.connectionLost(Self.firstLine(PQerrorMessage(handle))) }
        guard PQresultStatus(started) == PGRES_COPY_IN else {
            let error = failure(of: started)
            PQclear(started)
            throw error
        }
        PQclear(started)
        var offset = 0
        while offset < data.count {
            let end = min(offset + (1 << 20), data.count)
            let sent = data[offset..<end].withUnsafeBufferPointer { pointer in
                pointer.withMemoryRebound(to: CChar.self) { PQputCopyData(handle, $0.baseAddress, Int32(pointer.count)) }
            }
            guard sent == 1 else { throw SyncError.connectionLost(Self.firstLine(PQerrorMessage(handle))) }
            offset = end
        }
        guard PQputCopyEnd(handle, nil) == 1 else { throw SyncError.connectionLost(Self.firstLine(PQerrorMessage(handle))) }
        var failed: SyncError?
        while let result = PQgetResult(handle) {
            if PQresultStatus(result) != PGRES_COMMAND_OK, failed == nil { failed = failure(of: result) }
            PQclear(result)
        }
        if let failed { throw failed }
    }
}

/// A query's rows, in binary format.
final class PostgresResult {
    private let handle: OpaquePointer

    init(_ handle: OpaquePointer) { self.handle = handle }
    deinit { PQclear(handle) }

    var rows: Int { Int(PQntuples(handle)) }

    /// The type of `column`'s values (`pg_type.oid`: 20 bigint, 25 text, 17 bytea).
    func type(_ column: Int) -> UInt32 { PQftype(handle, Int32(column)) }

    func isNull(_ row: Int, _ column: Int) -> Bool {
        PQgetisnull(handle, Int32(row), Int32(column)) == 1
    }

    func bytes(_ row: Int, _ column: Int) -> [UInt8]? {
        guard !isNull(row, column), let value = PQgetvalue(handle, Int32(row), Int32(column)) else { return nil }
        let length = Int(PQgetlength(handle, Int32(row), Int32(column)))
        return value.withMemoryRebound(to: UInt8.self, capacity: max(length, 1)) { Array(UnsafeBufferPointer(start: $0, count: length)) }
    }

    /// `body` with the bytes of a value where libpq holds them (no copy); nil for NULL.
    func withBytes<T>(_ row: Int, _ column: Int, _ body: (UnsafeRawBufferPointer) throws -> T) rethrows -> T? {
        guard !isNull(row, column), let value = PQgetvalue(handle, Int32(row), Int32(column)) else { return nil }
        let length = Int(PQgetlength(handle, Int32(row), Int32(column)))
        return try body(UnsafeRawBufferPointer(start: UnsafeRawPointer(value), count: length))
    }

    /// A text column (binary format is its UTF-8).
    func text(_ row: Int, _ column: Int) -> String? {
        bytes(row, column).map { String(decoding: $0, as: UTF8.self) }
    }

    /// An `int8` (or `int4`) column; nil for NULL or another width.
    func integer(_ row: Int, _ column: Int) -> Int64? {
        guard let bytes = bytes(row, column), bytes.count == 8 || bytes.count == 4 else { return nil }
        let value = bytes.reduce(Int64(0)) { $0 << 8 | Int64($1) }
        return bytes.count == 4 ? Int64(Int32(truncatingIfNeeded: value)) : value
    }
}

/// `body` with `strings` as a NULL-terminated array of C strings.
private func withCStrings<T>(_ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> T) -> T {
    let buffers = strings.map { Array($0.utf8CString) }
    return withPointers(buffers + [nil]) { body($0) }
}

/// `body` with a pointer to each buffer (nil for nil), all alive for the call.
private func withPointers<T>(_ buffers: [[CChar]?], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> T) -> T {
    var pointers: [UnsafePointer<CChar>?] = []
    var allocations: [UnsafeMutablePointer<CChar>] = []
    for buffer in buffers {
        guard let buffer else {
            pointers.append(nil)
            continue
        }
        let copy = UnsafeMutablePointer<CChar>.allocate(capacity: max(buffer.count, 1))
        copy.initialize(from: buffer, count: buffer.count)
        allocations.append(copy)
        pointers.append(UnsafePointer(copy))
    }
    defer { allocations.forEach { $0.deallocate() } }
    return pointers.withUnsafeBufferPointer { pointer in
        guard let base = pointer.baseAddress else {
            var empty: UnsafePointer<CChar>? = nil
            return withUnsafePointer(to: &empty) { body($0) }
        }
        return body(base)
    }
}
