import ScrollbackModel

/// `SettingsRepository` over one SQLite connection. A stored value that does not parse as
/// its type reads as the default rather than failing.
public final class SQLiteSettingsRepository: SettingsRepository {
    let database: Database

    init(database: Database) {
        self.database = database
    }

    public func value<Value>(_ key: SettingKey<Value>) throws -> Value {
        let text = try database.queryFirst("SELECT value FROM settings WHERE key = ?", [.text(key.name)]) { $0.text(0) }
        return text.flatMap(Value.init(settingText:)) ?? key.defaultValue
    }

    public func set<Value>(_ value: Value, for key: SettingKey<Value>) throws {
        try database.write {
            try database.run(
                "INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                [.text(key.name), .text(value.settingText)])
        }
    }

    public func reset<Value>(_ key: SettingKey<Value>) throws {
        try database.write {
            try database.run("DELETE FROM settings WHERE key = ?", [.text(key.name)])
        }
    }
}
