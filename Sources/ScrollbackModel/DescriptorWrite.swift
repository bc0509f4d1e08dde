import Foundation

/// Set once, from one thread, seen from another.
public final class StopFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var stopped = false

    public init() {}

    public func stop() {
        lock.lock()
        stopped = true
        lock.unlock()
    }

    public var isStopped: Bool {
        lock.lock()
        defer { lock.unlock() }
        return stopped
    }
}

/// Writing every byte to a descriptor, through EINTR and short writes (the CLI's output
/// and export files too).
public enum DescriptorWrite {
    /// nil when everything was written, else the error. To a non-blocking descriptor it
    /// waits for room in slices of 50 ms, and gives up when `flag` is stopped (EPIPE when
    /// the reader closed it, EAGAIN when stopped with bytes left).
    public static func all(_ bytes: [UInt8], to descriptor: Int32, until flag: StopFlag? = nil) -> Int32? {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { buffer in
                Glibc.write(descriptor, buffer.baseAddress.map { $0 + offset }, bytes.count - offset)
            }
            if written >= 0 {
                offset += written
                continue
            }
            switch errno {
            case EINTR: continue
            case EAGAIN:
                if flag?.isStopped ?? true { return EAGAIN }
                var ready = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
                _ = poll(&ready, 1, 50)
            default: return errno
            }
        }
        return nil
    }
}
