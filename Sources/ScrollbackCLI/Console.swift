import Foundation

/// Where a command reads and writes; the real one is the process's standard streams.
public struct Console {
    public var write: (String) -> Void
    public var writeError: (String) -> Void
    public var readLine: () -> String?
    public var inputIsTerminal: Bool
    public var outputIsTerminal: Bool
    public var errorIsTerminal: Bool
    /// Pushes out anything `write` buffered.
    public var flush: () -> Void

    public init(
        write: @escaping (String) -> Void, writeError: @escaping (String) -> Void, readLine: @escaping () -> String?,
        inputIsTerminal: Bool, outputIsTerminal: Bool, errorIsTerminal: Bool, flush: @escaping () -> Void = {}
    ) {
        self.flush = flush
        self.write = write
        self.writeError = writeError
        self.readLine = readLine
        self.inputIsTerminal = inputIsTerminal
        self.outputIsTerminal = outputIsTerminal
        self.errorIsTerminal = errorIsTerminal
    }

    public static func standard() -> Console {
        let output = DescriptorWriter(descriptor: STDOUT_FILENO)
        let error = DescriptorWriter(descriptor: STDERR_FILENO)
        return Console(
            write: { output.append($0) },
            writeError: { text in
                output.flush()
                error.append(text)
                error.flush()
            },
            readLine: {
                output.flush()
                return Swift.readLine(strippingNewline: true)
            },
            inputIsTerminal: isatty(STDIN_FILENO) == 1, outputIsTerminal: isatty(STDOUT_FILENO) == 1,
            errorIsTerminal: isatty(STDERR_FILENO) == 1, flush: { output.flush() })
    }

    func line(_ text: String = "") { write(text + "\n") }
    func errorLine(_ text: String) { writeError(text + "\n") }
}

/// Buffers text and writes it to a file descriptor in large pieces.
final class DescriptorWriter {
    private let descriptor: Int32
    private var buffer: [UInt8] = []

    init(descriptor: Int32) {
        self.descriptor = descriptor
        buffer.reserveCapacity(1 << 16)
    }

    deinit { flush() }

    func append(_ text: String) {
        buffer.append(contentsOf: text.utf8)
        if buffer.count >= 1 << 16 { flush() }
    }

    func flush() {
        var offset = 0
        while offset < buffer.count {
            let written = buffer[offset...].withUnsafeBytes { Foundation.write(descriptor, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EINTR { continue }
                break
            }
            offset += written
        }
        buffer.removeAll(keepingCapacity: true)
    }
}
