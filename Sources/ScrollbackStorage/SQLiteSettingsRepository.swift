import ScrollbackModel

/// `SettingsRepository` over one SQLite connection. A stored value that does not parse as
/// its type reads as the default rather than failing.
public final class SQLiteSettingsRepository: SettingsRepository {
    let database: Database

    init(database: Database) {
        self.database = database
    }

    public func value<Value>(_ key: SettingKey<Value>) throws -> Value {
        try SettingsTable(database: database).value(key)
    }

    public func set<Value>(_ value: Value, for key: SettingKey<Value>) throws {
        try database.write { try SettingsTable(database: database).set(value, for: key) }
    }

    public func reset<Value>(_ key: SettingKey<Value>) throws {
        try database.write { try SettingsTable(database: database).remove(key) }
    }
}
