import Foundation
import ScrollbackModel

/// The places where the histories people have live, found without being told: the coding
/// agents' session folders and `llm`'s log database.
public enum KnownSources {
    /// One place that exists: what it is, where, how many files and bytes it holds.
    public struct Place: Sendable, Equatable {
        public var name: String
        public var path: String
        public var files: Int
        public var bytes: Int64
    }

    /// The places that exist, in a fixed order, read from `environment` (`HOME`,
    /// `CLAUDE_CONFIG_DIR`, `LLM_USER_PATH`, `XDG_CONFIG_HOME`).
    public static func find(environment: [String: String]) -> [Place] {
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        var places: [Place] = []
        // Claude Code: each folder of CLAUDE_CONFIG_DIR (comma-separated), else ~/.claude.
        let claudeRoots = environment["CLAUDE_CONFIG_DIR"].map { $0.split(separator: ",").map(String.init) } ?? [home + "/.claude"]
        for root in claudeRoots {
            let projects = PathText.appending(to: root, "projects")
            let files = Importer.sessionFiles(under: projects)
            if !files.isEmpty {
                places.append(Place(name: "Claude Code sessions", path: projects, files: files.count, bytes: size(of: files)))
            }
        }
        // Codex: CODEX_HOME, else ~/.codex.
        let codex = PathText.appending(to: environment["CODEX_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? home + "/.codex", "sessions")
        let rollouts = Importer.sessionFiles(under: codex)
        if !rollouts.isEmpty {
            places.append(Place(name: "Codex sessions", path: codex, files: rollouts.count, bytes: size(of: rollouts)))
        }
        // Gemini CLI: ~/.gemini/tmp/<project>/chats.
        let gemini = home + "/.gemini/tmp"
        let chats = Importer.sessionFiles(under: gemini).filter {
            PathText.lastComponent(of: PathText.parent(of: $0)) == "chats" || PathText.lastComponent(of: $0).hasPrefix("checkpoint-")
        }
        if !chats.isEmpty {
            places.append(Place(name: "Gemini CLI sessions", path: gemini, files: chats.count, bytes: size(of: chats)))
        }
        // llm: LLM_USER_PATH, else its folder under the config home.
        let configHome = environment["XDG_CONFIG_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? home + "/.config"
        let llmFolders = environment["LLM_USER_PATH"].map { [$0] }
            ?? [configHome + "/io.datasette.llm", home + "/Library/Application Support/io.datasette.llm"]
        for folder in llmFolders {
            let logs = PathText.appending(to: folder, "logs.db")
            if (try? Importer.kind(of: logs)) == .file {
                places.append(Place(name: "llm logs", path: logs, files: 1, bytes: size(of: [logs])))
                break
            }
        }
        return places
    }

    /// Where `find` looks, each named, for the line that says nothing was found there.
    public static func lookedIn(environment: [String: String]) -> [String] {
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        let roots = sessionRoots(environment: environment)
        let configHome = environment["XDG_CONFIG_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? home + "/.config"
        let llm = environment["LLM_USER_PATH"] ?? configHome + "/io.datasette.llm"
        return roots.dropLast(2).map { "Claude Code: \($0)" } + ["Codex: \(roots[roots.count - 2])", "Gemini CLI: \(roots[roots.count - 1])"]
            + ["llm: \(PathText.appending(to: llm, "logs.db"))"]
    }

    /// The session folders `find` looks in, whether or not they exist, without listing
    /// them: for the browser's follower, which must not walk them before its first frame.
    public static func sessionRoots(environment: [String: String]) -> [String] {
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        let claude = environment["CLAUDE_CONFIG_DIR"].map { $0.split(separator: ",").map(String.init) } ?? [home + "/.claude"]
        let codex = environment["CODEX_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? home + "/.codex"
        return claude.map { PathText.appending(to: $0, "projects") } + [PathText.appending(to: codex, "sessions"), home + "/.gemini/tmp"]
    }

    static func size(of files: [String]) -> Int64 {
        files.reduce(Int64(0)) { total, file in
            var status = stat()
            return total + (stat(file, &status) == 0 ? Int64(status.st_size) : 0)
        }
    }
}
