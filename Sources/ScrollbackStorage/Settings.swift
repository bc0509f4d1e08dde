/// A value that can be kept in the settings table as text.
public protocol SettingValue: Sendable {
    init?(settingText: String)
    var settingText: String { get }
}

extension String: SettingValue {
    public init?(settingText: String) { self = settingText }
    public var settingText: String { self }
}

extension Int: SettingValue {
    public init?(settingText: String) { self.init(settingText) }
    public var settingText: String { String(self) }
}

extension Double: SettingValue {
    public init?(settingText: String) { self.init(settingText) }
    public var settingText: String { String(self) }
}

extension Bool: SettingValue {
    public init?(settingText: String) {
        switch settingText {
        case "true": self = true
        case "false": self = false
        default: return nil
        }
    }
    public var settingText: String { self ? "true" : "false" }
}

extension ConversationOrder: SettingValue {
    public init?(settingText: String) { self.init(rawValue: settingText) }
    public var settingText: String { rawValue }
}

/// A named setting with its type and default.
public struct SettingKey<Value: SettingValue>: Sendable {
    public let name: String
    public let defaultValue: Value

    public init(_ name: String, default defaultValue: Value) {
        self.name = name
        self.defaultValue = defaultValue
    }
}

extension SettingKey where Value == ConversationOrder {
    /// The order of the conversation list.
    public static let listSort = SettingKey("list.sort", default: .updated)
}

/// `SettingsRepository` over one SQLite connection. A stored value that does not parse as
/// its type reads as the default rather than failing.
public final class SQLiteSettingsRepository: SettingsRepository {
    let database: Database

    public init(database: Database) {
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
