import Foundation
import ScrollbackModel
import ScrollbackTerminal
import TerminalText

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
    /// The first failed write to standard output, else to standard error (what the system
    /// said), if any.
    public var outputFailure: () -> String?
    /// JSON on one line (`OutputFormat.json`): for the MCP server, which runs commands to a
    /// buffer and sends their JSON as one message a line.
    public var compactJSON = false

    public init(
        write: @escaping (String) -> Void, writeError: @escaping (String) -> Void, readLine: @escaping () -> String?,
        inputIsTerminal: Bool, outputIsTerminal: Bool, errorIsTerminal: Bool, flush: @escaping () -> Void = {},
        outputFailure: @escaping () -> String? = { nil }
    ) {
        self.flush = flush
        self.outputFailure = outputFailure
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
                let line = Swift.readLine(strippingNewline: true)
                // What was typed or pasted after the answer is dropped, not left for the
                // shell to run once the command ends.
                if isatty(STDIN_FILENO) == 1 { tcflush(STDIN_FILENO, TCIFLUSH) }
                return line
            },
            inputIsTerminal: isatty(STDIN_FILENO) == 1, outputIsTerminal: isatty(STDOUT_FILENO) == 1,
            errorIsTerminal: isatty(STDERR_FILENO) == 1, flush: { output.flush() },
            outputFailure: {
                // Standard error failing counts too: the exit status is then all that can say so.
                if let code = output.failure { return String(cString: strerror(code)) }
                return error.failure.map { "standard error: " + String(cString: strerror($0)) }
            })
    }

    func line(_ text: String = "") { write(text + "\n") }

    /// One line on standard error. Errors quote paths, ids and titles, so the whole line is
    /// sanitized: nothing in it can act on the terminal.
    func errorLine(_ text: String) { writeError(UntrustedText.sanitized(text) + "\n") }

    /// Throws once a write to standard output has failed (a full disk, a closed pipe), so
    /// that a long command stops instead of producing a silently cut result.
    func checkOutput() throws {
        flush()
        if let reason = outputFailure() {
            throw CommandFailure(message: "cannot write to standard output (\(reason.lowercased())); the output is incomplete")
        }
    }
}

/// Buffers text and writes it to a file descriptor in large pieces.
final class DescriptorWriter {
    private let descriptor: Int32
    private var buffer: [UInt8] = []
    /// `errno` of the first failed write; later output is dropped.
    private(set) var failure: Int32?

    init(descriptor: Int32) {
        self.descriptor = descriptor
        buffer.reserveCapacity(1 << 16)
    }

    deinit { flush() }

    func append(_ text: String) {
        guard failure == nil else { return }
        buffer.append(contentsOf: text.utf8)
        if buffer.count >= 1 << 16 { flush() }
    }

    func flush() {
        if failure == nil { failure = Self.writeAll(buffer, to: descriptor) }
        buffer.removeAll(keepingCapacity: true)
    }

    /// Writes every byte, retrying after signals; the `errno` of a failure, nil on success.
    static func writeAll(_ bytes: [UInt8], to descriptor: Int32) -> Int32? { DescriptorWrite.all(bytes, to: descriptor) }
}
