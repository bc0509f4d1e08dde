import Foundation
import ScrollbackModel
import ScrollbackViewModels
import TerminalText

/// Where the config file is, and reading it.
enum ConfigLocation {
    /// `$XDG_CONFIG_HOME/scrollback/config.toml`, else `~/.config/scrollback/config.toml`.
    static func path(environment: [String: String]) -> String {
        if let config = environment["XDG_CONFIG_HOME"], config.hasPrefix("/") {
            return config + "/scrollback/config.toml"
        }
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        return home + "/.config/scrollback/config.toml"
    }

    /// The config as the file says; the defaults when there is none. A file that cannot be
    /// read is a problem, reported like a bad line.
    static func load(environment: [String: String]) -> BrowserConfig {
        let path = path(environment: environment)
        var status = stat()
        guard stat(path, &status) == 0 else {
            if errno == ENOENT || errno == ENOTDIR { return BrowserConfig() }
            return failed("\(path): cannot read it (\(String(cString: strerror(errno)).lowercased())); the defaults are used")
        }
        guard status.st_mode & S_IFMT == S_IFREG else { return failed("\(path) is not a regular file; the defaults are used") }
        guard status.st_size <= 1 << 20 else { return failed("\(path) is larger than 1 MB; the defaults are used") }
        guard let data = FileManager.default.contents(atPath: path) else {
            return failed("\(path): cannot read it; the defaults are used")
        }
        // Bytes that are not UTF-8 become U+FFFD: the lines holding them are reported and left
        // out, the others still count.
        let text = String(decoding: data, as: UTF8.self)
        return BrowserConfig.parse(text, name: PathText.lastComponent(of: path))
    }

    private static func failed(_ problem: String) -> BrowserConfig {
        var config = BrowserConfig()
        config.problems = [UntrustedText.sanitized(problem)]
        return config
    }
}

/// `scrollback config`: the path of the config file, its problems (`--check`), or the whole
/// default file with comments (`--print-default`).
struct ConfigCommand {
    let context: CommandContext

    func run() throws -> Int32 {
        let console = context.console
        let path = ConfigLocation.path(environment: context.environment)
        if context.parsed.has(.printDefault) {
            // A file for the user's editor: written whole, never sanitized away.
            console.write(BrowserConfig.defaultFile())
            return 0
        }
        if context.parsed.has(.check) {
            let config = ConfigLocation.load(environment: context.environment)
            for problem in config.problems { console.errorLine(problem) }
            guard config.problems.isEmpty else { return 1 }
            console.line("ok: \(OutputFormat.line(path))" + (FileManager.default.fileExists(atPath: path) ? "" : " (not there: the defaults are used)"))
            return 0
        }
        // Exact for a script (`vi "$(scrollback config)"`), made safe for a terminal.
        console.line(console.outputIsTerminal ? OutputFormat.line(path) : path)
        return 0
    }
}
