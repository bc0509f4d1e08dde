import ScrollbackModel

/// The one reader and writer of the `settings` table, by the keys of `SettingKey` (the one
/// list of what it holds). The repository, the outbox and sync all go through it, inside
/// the transaction they run in.
struct SettingsTable {
    let database: Database

    /// The stored value, or nil when there is none or it does not parse as its type.
    func stored<Value>(_ key: SettingKey<Value>) throws -> Value? {
        try database.queryFirst("SELECT value FROM settings WHERE key = ?", [.text(key.name)]) { $0.text(0) }
            .flatMap(Value.init(settingText:))
    }

    /// The stored value, else the key's default.
    func value<Value>(_ key: SettingKey<Value>) throws -> Value {
        try stored(key) ?? key.defaultValue
    }

    /// Whether the key is set at all (whatever its value).
    func isSet<Value>(_ key: SettingKey<Value>) throws -> Bool {
        try database.queryFirst("SELECT 1 FROM settings WHERE key = ?", [.text(key.name)]) { _ in true } ?? false
    }

    func set<Value>(_ value: Value, for key: SettingKey<Value>) throws {
        try database.run(
            "INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            [.text(key.name), .text(value.settingText)])
    }

    /// Sets the key unless it is set already.
    func setIfUnset<Value>(_ value: Value, for key: SettingKey<Value>) throws {
        try database.run("INSERT OR IGNORE INTO settings (key, value) VALUES (?, ?)", [.text(key.name), .text(value.settingText)])
    }

    func remove<Value>(_ key: SettingKey<Value>) throws {
        try database.run("DELETE FROM settings WHERE key = ?", [.text(key.name)])
    }

    /// Removes every `sync.` setting (what `sync off --force` forgets), those of a newer
    /// version too.
    func removeSync() throws {
        try database.run("DELETE FROM settings WHERE key LIKE 'sync.%'")
    }
}
