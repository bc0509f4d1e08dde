import Foundation
import ScrollbackModel
import TerminalText

/// The zone times are shown in: the process's (`TZ`, as localtime(3) reads it), or UTC.
/// The browser is given it as it is given `now`, so that a test picks UTC without
/// changing the environment of a process whose other tests run beside it.
public enum LocalZone: Sendable {
    case process, utc
}

/// Times as the screens show them, in the local time zone (`TZ`) unless told another.
public enum TimeText {
    /// `2026-10-31 14:02`.
    public static func absolute(_ timestamp: Timestamp, zone: LocalZone = .process) -> String {
        let parts = local(timestamp, zone)
        return String(
            format: "%04d-%02d-%02d %02d:%02d", Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1, Int(parts.tm_mday),
            Int(parts.tm_hour), Int(parts.tm_min))
    }

    /// The time as `format` (strftime(3)) writes it, made safe for a terminal; the standard
    /// form when the format gives nothing.
    public static func formatted(_ timestamp: Timestamp, format: String, zone: LocalZone = .process) -> String {
        var parts = local(timestamp, zone)
        var buffer = [CChar](repeating: 0, count: 256)
        let count = buffer.withUnsafeMutableBufferPointer { strftime($0.baseAddress, 255, format, &parts) }
        guard count > 0 else { return absolute(timestamp, zone: zone) }
        let text = String(decoding: buffer.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return UntrustedText.sanitized(text)
    }

    /// `now`, `5m ago`, `3h ago`, `4d ago`, `6w ago`, then the date.
    public static func relative(_ timestamp: Timestamp, now: Timestamp, zone: LocalZone = .process) -> String {
        // A time from a damaged or foreign file can be anything: far apart is a date.
        let (difference, overflow) = now.milliseconds.subtractingReportingOverflow(timestamp.milliseconds)
        let seconds = overflow ? Int64.max : difference / 1000
        switch seconds {
        case ..<60: return "now"
        case ..<3_600: return "\(seconds / 60)m ago"
        case ..<86_400: return "\(seconds / 3_600)h ago"
        case ..<(7 * 86_400): return "\(seconds / 86_400)d ago"
        case ..<(8 * 7 * 86_400): return "\(seconds / (7 * 86_400))w ago"
        default:
            let parts = local(timestamp, zone)
            return String(format: "%04d-%02d-%02d", Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1, Int(parts.tm_mday))
        }
    }

    private static func local(_ timestamp: Timestamp, _ zone: LocalZone) -> tm {
        var seconds = time_t(timestamp.milliseconds / 1000 - (timestamp.milliseconds % 1000 < 0 ? 1 : 0))
        var parts = tm()
        switch zone {
        case .process: localtime_r(&seconds, &parts)
        case .utc: gmtime_r(&seconds, &parts)
        }
        return parts
    }
}
