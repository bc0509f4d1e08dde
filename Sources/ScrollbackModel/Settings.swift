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

extension Int64: SettingValue {
    public init?(settingText: String) { self.init(settingText) }
    public var settingText: String { String(self) }
}

extension HybridClock: SettingValue {
    public init?(settingText: String) { self.init(text: settingText) }
    public var settingText: String { text }
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

// Every setting the `settings` table holds, in one list: the browser's and the commands'
// (public: `SettingsRepository`), and those storage keeps for sync and edits (`package`:
// only the storage layer reads and writes them, through `SettingsTable`).

extension SettingKey where Value == String {
    /// The database's own id, made by the schema (version 4): page tokens carry it.
    public static let databaseID = SettingKey("database.id", default: "")
    /// This machine's id while sync is on (or paused): 32 hex digits.
    package static let syncMachine = SettingKey("sync.machine", default: "")
    /// The last sync's failure, one line (`SyncFailure`).
    package static let syncFailure = SettingKey("sync.failure", default: "")
    /// A snapshot whose upload was cut: its id, a space, the path of its image.
    package static let syncSnapshotPending = SettingKey("sync.snapshot_pending", default: "")
}

extension SettingKey where Value == ConversationOrder {
    /// The order of the conversation list.
    public static let listSort = SettingKey("list.sort", default: .updated)
}

extension SettingKey where Value == Int64 {
    /// The number of this machine's next op.
    package static let syncNextSeq = SettingKey("sync.next_seq", default: 1)
    /// The last op known to be on the server: the outbox's rows up to it are sent, and stay
    /// until the outbox can be emptied whole (`Outbox.markSent`).
    package static let syncSentThrough = SettingKey("sync.sent_through", default: 0)
    /// When the last sync completed, in milliseconds.
    package static let syncLast = SettingKey("sync.last", default: 0)
    /// When the failures since the last sync that completed began, and the last one.
    package static let syncFailingSince = SettingKey("sync.failing_since", default: 0)
    package static let syncFailedAt = SettingKey("sync.failed_at", default: 0)
}

extension SettingKey where Value == HybridClock {
    /// This machine's clock.
    package static let syncClock = SettingKey("sync.clock", default: .origin(of: ""))
    /// The clock of what this machine held when sync was turned on and has no clock of its
    /// own (see `Store.turnSyncOn`); none on a machine that turned sync on before it was kept.
    package static let syncBase = SettingKey("sync.base", default: .origin(of: ""))
    /// The last reading of the clock of edits made while sync is off (not a `sync.` setting:
    /// it outlives `sync off --force`).
    package static let editsClock = SettingKey("edits.clock", default: .origin(of: ""))
}

extension SettingKey where Value == Bool {
    /// Set while sync is off but the machine kept (`turnSyncOff(forget: false)`); read as
    /// set or not (an earlier version stored `1`).
    package static let syncPaused = SettingKey("sync.paused", default: false)
}
