import Foundation

/// A throwaway PostgreSQL server (Debian's `postgresql` package): `initdb` in a temporary
/// folder, `pg_ctl start` listening on a Unix socket in that folder (and, when asked, on
/// 127.0.0.1 with TLS), stopped and removed when released. As root, the server runs as the
/// `postgres` user, which owns the folder.
public final class PostgresServer: @unchecked Sendable {
    public let folder: String
    public let port: Int
    private let binaries: String
    private var databases = 0
    private let lock = NSLock()

    public enum Failure: Error, CustomStringConvertible {
        case notInstalled
        case failed(String)
        public var description: String {
            switch self {
            case .notInstalled: "PostgreSQL's server programs are not installed (apt-get install postgresql)"
            case .failed(let message): message
            }
        }
    }

    /// The newest installed server's programs.
    static func findBinaries() throws -> String {
        let root = "/usr/lib/postgresql"
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []).compactMap(Int.init).sorted()
        guard let newest = versions.last, FileManager.default.isExecutableFile(atPath: "\(root)/\(newest)/bin/pg_ctl") else {
            throw Failure.notInstalled
        }
        return "\(root)/\(newest)/bin"
    }

    /// Starts a server; with `tls`, it also listens on 127.0.0.1:`port` with `ssl = on` and a
    /// self-signed certificate made here.
    public init(tls: Bool = false) throws {
        binaries = try Self.findBinaries()
        var template = Array("/tmp/scrollback-pg-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw Failure.failed("mkdtemp failed") }
        folder = String(cString: made)
        port = tls ? Self.freePort() : 0
        chmod(folder, 0o755)
        if geteuid() == 0 { try Self.run("/bin/chown", ["postgres", folder]) }
        try runAsServer("\(binaries)/initdb", ["-A", "trust", "--no-sync", "-U", "postgres", "-D", "\(folder)/data"])
        var options = "-k \(folder) -c fsync=off -c max_connections=200 -c listen_addresses=\(tls ? "127.0.0.1" : "''")"
        if tls {
            try runAsServer(
                "/usr/bin/openssl",
                ["req", "-new", "-x509", "-days", "2", "-nodes", "-subj", "/CN=127.0.0.1", "-newkey", "rsa:2048",
                 "-keyout", "\(folder)/data/server.key", "-out", "\(folder)/data/server.crt"])
            chmod("\(folder)/data/server.key", 0o600)
            options += " -p \(port) -c ssl=on -c ssl_cert_file=server.crt -c ssl_key_file=server.key"
            // Over TCP only TLS, and only with the password; the socket stays open for the test.
            try "local all all trust\nhostssl all all 127.0.0.1/32 scram-sha-256\n".write(
                toFile: "\(folder)/data/pg_hba.conf", atomically: false, encoding: .utf8)
        }
        try start(options: options)
        self.options = options
        if tls {
            _ = try psql(socket + " dbname=postgres", "ALTER USER postgres PASSWORD '\(Self.password)'")
        }
    }

    /// The password of `postgres` over TCP (on a TLS server).
    public static let password = "correct-horse-7319"

    private var options = ""

    private func start(options: String) throws {
        try runAsServer("\(binaries)/pg_ctl", ["-D", "\(folder)/data", "-o", options, "-l", "\(folder)/log", "-w", "start"])
    }

    /// Stops the server at once (as a crash would).
    public func stop() throws {
        try runAsServer("\(binaries)/pg_ctl", ["-D", "\(folder)/data", "-m", "immediate", "-w", "stop"])
    }

    /// Sends `signal` to the server and every process it started (SIGSTOP: a server that
    /// stalls, as behind a dead link; SIGCONT: it goes on).
    public func signalAll(_ signal: Int32) throws {
        let pidFile = try String(contentsOfFile: "\(folder)/data/postmaster.pid", encoding: .utf8)
        guard let first = pidFile.split(separator: "\n").first, let postmaster = Int32(first) else {
            throw Failure.failed("no postmaster.pid")
        }
        let children = try Self.run("/usr/bin/pgrep", ["-P", String(postmaster)]).split(separator: "\n").compactMap { Int32($0) }
        for pid in [postmaster] + children { kill(pid, signal) }
    }

    /// Starts it again after `stop`.
    public func restart() throws {
        try start(options: options)
    }

    deinit {
        _ = try? runAsServer("\(binaries)/pg_ctl", ["-D", "\(folder)/data", "-m", "immediate", "-w", "stop"])
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// The server's Unix socket as connection words (no database).
    public var socket: String { "host=\(folder) user=postgres" + (port == 0 ? "" : " port=\(port)") }

    /// A new, empty database on this server; its connection string (key=value words).
    public func newDatabase() throws -> String {
        let name: String = lock.withLock {
            databases += 1
            return "sync\(databases)"
        }
        try Self.run("\(binaries)/createdb", ["-h", folder, "-U", "postgres"] + (port == 0 ? [] : ["-p", String(port)]) + [name])
        return socket + " dbname=\(name)"
    }

    /// Runs SQL through psql on `conninfo`; its output, rows as `a|b` lines.
    public func psql(_ conninfo: String, _ sql: String) throws -> String {
        try Self.run("/usr/bin/psql", ["-X", "-A", "-t", "-q", "-v", "ON_ERROR_STOP=1", "-d", conninfo, "-c", sql])
    }

    private func runAsServer(_ program: String, _ arguments: [String]) throws {
        if geteuid() == 0 {
            try Self.run("/usr/sbin/runuser", ["-u", "postgres", "--", program] + arguments)
        } else {
            try Self.run(program, arguments)
        }
    }

    /// Runs `program` to its end (`ChildProcess`): its output; its error output thrown when
    /// it fails.
    @discardableResult
    static func run(_ program: String, _ arguments: [String]) throws -> String {
        let outcome = try ChildProcess.run(program, arguments)
        guard outcome.ending == .exited(0) else {
            throw Failure.failed("\(program) \(arguments.joined(separator: " ")): \(outcome.errorText)")
        }
        return outcome.outputText
    }

    /// A TCP port nobody listens on now.
    static func freePort() -> Int {
        for _ in 0..<50 {
            let port = Int.random(in: 20_000..<60_000)
            let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            defer { close(socket) }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            if bound == 0 { return port }
        }
        return 54_329
    }
}
