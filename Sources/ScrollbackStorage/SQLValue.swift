import ScrollbackModel
/// A value bound to a statement parameter.
public enum SQLValue: Sendable, Hashable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])
}

extension SQLValue: ExpressibleByIntegerLiteral, ExpressibleByStringLiteral, ExpressibleByNilLiteral {
    public init(integerLiteral value: Int64) { self = .integer(value) }
    public init(stringLiteral value: String) { self = .text(value) }
    public init(nilLiteral: ()) { self = .null }
}

extension SQLValue {
    public init(_ value: Int) { self = .integer(Int64(value)) }
    public init(_ value: Int64) { self = .integer(value) }
    public init(_ value: Bool) { self = .integer(value ? 1 : 0) }
    public init(_ value: String) { self = .text(value) }
    public init(_ value: String?) { self = value.map { .text($0) } ?? .null }
    public init(_ value: Int64?) { self = value.map { .integer($0) } ?? .null }
}
