import Foundation

/// Where the database lives when `--db` is not given.
enum DatabaseLocation {
    /// `$SCROLLBACK_DB`, else `$XDG_DATA_HOME/scrollback/history.sqlite`, else
    /// `~/.local/share/scrollback/history.sqlite`.
    static func defaultPath(environment: [String: String]) -> String {
        if let path = environment["SCROLLBACK_DB"], !path.isEmpty { return path }
        if let data = environment["XDG_DATA_HOME"], data.hasPrefix("/") {
            return data + "/scrollback/history.sqlite"
        }
        return home(environment) + "/.local/share/scrollback/history.sqlite"
    }

    /// `$XDG_CACHE_HOME/scrollback/demo.sqlite`, else `~/.cache/scrollback/demo.sqlite`.
    static func demoPath(environment: [String: String]) -> String {
        if let cache = environment["XDG_CACHE_HOME"], cache.hasPrefix("/") {
            return cache + "/scrollback/demo.sqlite"
        }
        return home(environment) + "/.cache/scrollback/demo.sqlite"
    }

    private static func home(_ environment: [String: String]) -> String {
        if let home = environment["HOME"], !home.isEmpty { return home }
        return NSHomeDirectory()
    }
}
