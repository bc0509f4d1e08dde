import Foundation
import ScrollbackModel
import ScrollbackStorage
import TerminalText

/// `scrollback mcp`: the Model Context Protocol server (`MCPServer`) on this database.
/// Read-only by default, as `--readonly` opens it; `--allow-writes` adds rename and pin.
struct MCPCommand {
    let context: CommandContext

    @MainActor
    func run() throws -> Int32 {
        let allowWrites = context.parsed.has(.allowWrites)
        if allowWrites && context.readOnly {
            throw UsageError(message: "--allow-writes and --readonly cannot be used together", command: "mcp")
        }
        if context.parsed.has(.printConfig) {
            context.console.write(configuration())
            return 0
        }
        let store: Store
        if allowWrites {
            store = try context.openStore()
        } else {
            // As --readonly: nothing is created or changed, not even an upgrade.
            try DatabaseUsers.shared.register(context.databasePath, as: .agentServer, readOnly: true)
            do {
                store = try Store.open(path: context.databasePath, readOnly: true)
            } catch {
                DatabaseUsers.shared.forget(context.databasePath)
                throw error
            }
        }
        MCPServer(context: context, store: store, allowWrites: allowWrites).run()
        return 0
    }

    /// This binary, as the system names it.
    static func binaryPath() -> String {
        var buffer = [CChar](repeating: 0, count: 4_096)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard count > 0 else { return CommandLine.arguments.first ?? "scrollback" }
        return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The entry for Claude Code, Codex and the clients configured in JSON.
    func configuration() -> String {
        let binary = Self.binaryPath()
        var arguments = ["mcp"]
        if let database = context.parsed.value(.db) { arguments = ["--db", Self.absolute(database)] + arguments }
        if context.parsed.has(.demo) { arguments = ["--demo"] + arguments }
        if context.parsed.has(.allowWrites) { arguments.append("--allow-writes") }
        let json = JSONValue.object(["scrollback": .object(["command": .string(binary), "args": .array(arguments.map(JSONValue.string))])])
        let toml = "[\(arguments.map(Self.tomlString).joined(separator: ", "))]"
        return """
            # Claude Code:
            claude mcp add scrollback -- \(ShellWords.line([binary] + arguments))
            # Codex, in ~/.codex/config.toml:
            [mcp_servers.scrollback]
            command = \(Self.tomlString(binary))
            args = \(toml)
            # Clients configured in JSON (Claude Desktop, Cursor, VS Code…), in "mcpServers":
            \(json.text)

            """
    }

    static func absolute(_ path: String) -> String {
        path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
    }

    /// A TOML basic string: quotes, backslashes and controls escaped.
    static func tomlString(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F || (0x80..<0xA0).contains(scalar.value) {
                    let digits = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - digits.count) + digits
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }
}
