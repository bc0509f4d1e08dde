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

extension SettingKey where Value == String {
    /// The database's own id, made by the schema (version 4): page tokens carry it.
    public static let databaseID = SettingKey("database.id", default: "")
}

extension SettingKey where Value == ConversationOrder {
    /// The order of the conversation list.
    public static let listSort = SettingKey("list.sort", default: .updated)
}
