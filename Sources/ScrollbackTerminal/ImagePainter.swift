import CNcursesw
import Foundation
import ScrollbackModel
import ScrollbackViewModels
import TerminalText

/// What the terminal can show of images, found by asking it before the screen starts:
/// kitty's graphics (it answers kitty's query), sixel (its device attributes say 4),
/// iTerm2's inline images (`TERM_PROGRAM`), else block art in colour where there are 256
/// colours or more, else nothing. `SCROLLBACK_IMAGES` (kitty, sixel, iterm, symbols, none)
/// decides instead, for tests and terminals that answer wrongly.
public struct ImageSupport: Sendable, Equatable {
    public var kind: ImageProtocol
    public var cell: ImageCell
    /// Inside tmux: pixels only through its passthrough (`allow-passthrough on`), each
    /// sequence wrapped.
    public var insideTmux: Bool
    public var colors: ImageColors

    /// The cell assumed when the terminal does not say: 10 × 20 pixels.
    public static let usualCell = ImageCell(width: 10, height: 20)

    /// How long the terminal is given to answer: it answers in a few milliseconds, or not.
    static let answerTime = 0.3
    /// How long tmux is given to say whether it passes sequences on.
    static let tmuxAnswerTime = 1.0

    public static func detect(environment: [String: String], input: Int32 = STDIN_FILENO, output: Int32 = STDOUT_FILENO) -> ImageSupport {
        let insideTmux = !(environment["TMUX"] ?? "").isEmpty
        let term = environment["TERM"] ?? ""
        let colorterm = environment["COLORTERM"] ?? ""
        let colors: ImageColors =
            colorterm == "truecolor" || colorterm == "24bit" ? .truecolor : term.contains("256color") || term.contains("kitty") ? .indexed256 : .sixteen
        var support = ImageSupport(kind: .none, cell: Self.windowCell(output) ?? Self.usualCell, insideTmux: insideTmux, colors: colors)
        if let chosen = environment["SCROLLBACK_IMAGES"].flatMap({ ImageProtocol(rawValue: $0.lowercased()) }) {
            support.kind = chosen
            // Chosen by hand under NO_COLOR: block art without colour.
            if !(environment["NO_COLOR"] ?? "").isEmpty { support.colors = .none }
            return support
        }
        if !(environment["NO_COLOR"] ?? "").isEmpty || term == "dumb" { return support }
        // Inside a tmux that does not pass them on (passthrough off, or a tmux before 3.3,
        // which has no such option), pixels never reach the terminal: block art, and no
        // query is sent for tmux to swallow.
        if insideTmux && !Self.tmuxPassesThrough(environment: environment) {
            support.kind = colors == .sixteen ? .none : .symbols
            return support
        }
        let answer = Self.ask(input: input, output: output, insideTmux: insideTmux)
        if let cell = answer.cell { support.cell = cell }
        if answer.kitty {
            support.kind = .kitty
        } else if answer.sixel && !insideTmux {
            support.kind = .sixel
        } else if ["iTerm.app", "WezTerm"].contains(environment["TERM_PROGRAM"] ?? "") && !insideTmux {
            support.kind = .iterm
        } else {
            support.kind = colors == .sixteen ? .none : .symbols
        }
        return support
    }

    /// Whether the tmux this runs in passes escape sequences on to the terminal:
    /// `allow-passthrough` on (or `all`) for this pane, as `tmux show-options` says.
    static func tmuxPassesThrough(environment: [String: String]) -> Bool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        var arguments = ["tmux", "show-options", "-Apqv"]
        if let pane = environment["TMUX_PANE"], pane.hasPrefix("%"), pane.dropFirst().allSatisfy(\.isNumber) {
            arguments += ["-t", pane]
        }
        process.arguments = arguments + ["allow-passthrough"]
        process.environment = environment
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            return false
        }
        // A tmux that does not answer (a wedged server, something else by that name) is
        // given a moment, then stopped: the browser starts all the same, with block art.
        let deadline = Date().addingTimeInterval(tmuxAnswerTime)
        while process.isRunning && Date() < deadline { usleep(5_000) }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            return false
        }
        process.waitUntilExit()
        // A line or two: it fits in the pipe, so it is all there once tmux has ended.
        let said = try? pipe.fileHandleForReading.read(upToCount: 4_096)
        guard process.terminationStatus == 0, let said else { return false }
        let value = String(decoding: said.prefix(64), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return value == "on" || value == "all"
    }

    /// The cell from the window size the terminal gives the kernel, when it gives pixels.
    static func windowCell(_ descriptor: Int32) -> ImageCell? {
        var size = winsize()
        guard ioctl(descriptor, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0, size.ws_row > 0, size.ws_xpixel > 0, size.ws_ypixel > 0 else {
            return nil
        }
        return ImageCell(width: Int(size.ws_xpixel) / Int(size.ws_col), height: Int(size.ws_ypixel) / Int(size.ws_row))
    }

    /// Asks the terminal (kitty's graphics query, the cell size, the device attributes last,
    /// which every terminal answers) and reads the answers until those attributes come.
    static func ask(input: Int32, output: Int32, insideTmux: Bool) -> (kitty: Bool, sixel: Bool, cell: ImageCell?) {
        guard isatty(input) == 1, isatty(output) == 1 else { return (false, false, nil) }
        var saved = termios()
        guard tcgetattr(input, &saved) == 0 else { return (false, false, nil) }
        var raw = saved
        raw.c_lflag &= ~tcflag_t(ICANON | ECHO)
        defer { tcsetattr(input, TCSANOW, &saved) }
        guard tcsetattr(input, TCSANOW, &raw) == 0 else { return (false, false, nil) }
        let kittyQuery = "\u{1B}_Gi=31,s=1,v=1,a=q,t=d,f=24;AAAA\u{1B}\\"
        let cellQuery = "\u{1B}[16t"
        func wrapped(_ query: String) -> String {
            insideTmux ? "\u{1B}Ptmux;" + query.replacingOccurrences(of: "\u{1B}", with: "\u{1B}\u{1B}") + "\u{1B}\\" : query
        }
        let query = wrapped(kittyQuery) + wrapped(cellQuery) + "\u{1B}[c"
        guard DescriptorWrite.all(Array(query.utf8), to: output) == nil else { return (false, false, nil) }
        var answer: [UInt8] = []
        let deadline = Date().addingTimeInterval(answerTime)
        var buffer = [UInt8](repeating: 0, count: 512)
        while Date() < deadline, answer.count < 4096 {
            var poller = pollfd(fd: input, events: Int16(POLLIN), revents: 0)
            let waited = Int32(max(1, deadline.timeIntervalSinceNow * 1000))
            guard poll(&poller, 1, waited) > 0 else { break }
            let count = read(input, &buffer, buffer.count)
            guard count > 0 else { break }
            answer += buffer[0..<count]
            if Self.attributes(in: answer) != nil { break }
        }
        let text = String(decoding: answer, as: UTF8.self)
        let kitty = text.contains("\u{1B}_Gi=31;OK")
        let sixel = Self.attributes(in: answer)?.contains(4) ?? false
        var cell: ImageCell?
        if let range = text.range(of: "\u{1B}[6;") {
            let fields = text[range.upperBound...].prefix { $0 != "t" }.split(separator: ";").compactMap { Int($0) }
            if fields.count == 2, (1...1000).contains(fields[0]), (1...1000).contains(fields[1]) {
                cell = ImageCell(width: fields[1], height: fields[0])
            }
        }
        return (kitty, sixel, cell)
    }

    /// The parameters of a device attributes answer (`ESC [ ? 62 ; 4 ; 22 c`), when one is there.
    static func attributes(in bytes: [UInt8]) -> [Int]? {
        let text = String(decoding: bytes, as: UTF8.self)
        guard let start = text.range(of: "\u{1B}[?") else { return nil }
        let rest = text[start.upperBound...]
        guard let end = rest.firstIndex(of: "c") else { return nil }
        let body = rest[..<end]
        guard body.allSatisfy({ $0.isNumber || $0 == ";" }) else { return nil }
        return body.split(separator: ";").compactMap { Int($0) }
    }
}

/// Draws the reader's images over the rows it keeps for them, after the screen's frame: the
/// bytes written straight to the terminal (curses knows nothing of pixels). Rows that held
/// an image are written again by curses when the images change (a scroll, a resize,
/// another screen), so that no stale pixels stay; kitty's placements are deleted instead.
@MainActor
final class ImagePainter {
    let support: ImageSupport
    private let output: Int32
    /// What was drawn, where: drawn again only when this changes.
    private var shown: [Placement] = []
    /// What each image looks like at a size (or why it cannot be shown), the last few.
    private var cache: [String: Result<RenderedImage, DecodedImage.Problem>] = [:]
    private var order: [String] = []
    static let cached = 16

    struct Placement: Hashable {
        let hash: String
        let row: Int
        let column: Int
        let columns: Int
        let rows: Int
        /// Drawn in pixels (the focused message's images, where the terminal shows pixels);
        /// else as block art, a thumbnail in the same cells.
        var pixels = false
    }

    init(support: ImageSupport, output: Int32 = STDOUT_FILENO) {
        self.support = support
        self.output = output
    }

    /// Where images go in this frame: the reader's whole images, when the reader is the
    /// screen shown and nothing is drawn over it.
    func placements(for browser: BrowserViewModel, screenHeight: Int) -> [Placement] {
        guard support.kind != .none, browser.top === browser.shownScreen, let reader = browser.reader, browser.shownScreen is ReaderScreen
        else { return [] }
        // Pixels for the focused message's images; the others are thumbnails in block art.
        let focused = reader.focusedMessage?.id
        return reader.shownImages.compactMap { image in
            guard let hash = image.attachment.sha256, 1 + image.row + image.rows <= screenHeight - 1 else { return nil }
            return Placement(
                hash: hash, row: 1 + image.row, column: 0, columns: image.columns, rows: image.rows,
                pixels: support.kind.drawsPixels && image.attachment.messageID == focused)
        }
    }

    /// Before the frame goes out: when the images change, the rows of those shown are
    /// written again by curses (blank), and kitty's are deleted.
    func prepare(_ next: [Placement]) {
        guard next != shown else { return }
        if support.kind == .kitty { removeKittyImages() }
        // Thrown away as curses knows them, so that it writes every cell of them again
        // (blanks too): what a sixel, iTerm2 image or block art left there goes.
        for placement in shown {
            wredrawln(scrollback_stdscr(), Int32(placement.row), Int32(placement.rows))
        }
    }

    /// Deletes every kitty image placed (through tmux's passthrough inside tmux, as they were
    /// placed): on a change, and at the end.
    func removeKittyImages() {
        let delete = RenderedImage(bytes: Array("\u{1B}_Ga=d,d=A\u{1B}\\".utf8), columns: 0, rows: 0)
        write(support.insideTmux ? delete.passedThroughTmux().bytes : delete.bytes)
    }

    /// After the frame: draws the images that are new in it (all of them after a change).
    func paint(_ next: [Placement], browser: BrowserViewModel) {
        guard next != shown else { return }
        shown = next
        for placement in next {
            let drawn = rendered(placement, browser: browser)
            var bytes = Array("\u{1B}7\u{1B}[\(placement.row + 1);\(placement.column + 1)H".utf8)
            switch drawn {
            case .success(let image) where !placement.pixels:
                // Block art, a row at a time, each placed: a line feed does not go back to
                // the first column in curses' mode.
                for (index, line) in image.bytes.split(separator: 0x0A, omittingEmptySubsequences: false).enumerated() where index < placement.rows {
                    bytes += Array("\u{1B}[\(placement.row + 1 + index);\(placement.column + 1)H".utf8) + line
                }
                bytes += Array("\u{1B}[0m".utf8)
            case .success(let image):
                bytes += support.insideTmux ? image.passedThroughTmux().bytes : image.bytes
            case .failure(let problem):
                bytes += Array(("(" + problem.text + ")").utf8)
            }
            bytes += Array("\u{1B}8".utf8)
            write(bytes)
        }
    }

    /// After a resize or a screen given back: nothing is taken to be on screen.
    func forget() { shown = [] }

    private func rendered(_ placement: Placement, browser: BrowserViewModel) -> Result<RenderedImage, DecodedImage.Problem> {
        let key = "\(placement.hash) \(placement.columns)x\(placement.rows)\(placement.pixels ? " pixels" : "")"
        if let known = cache[key] { return known }
        let result: Result<RenderedImage, DecodedImage.Problem>
        do {
            if let bytes = try browser.imageBytes(sha256: placement.hash, limit: DecodedImage.largestFile) {
                result = DecodedImage.decode(bytes).flatMap { image in
                    // Block art fills its cells whatever their pixels: the usual cell's shape.
                    let cell = placement.pixels ? support.cell : ImageSupport.usualCell
                    // A thumbnail where the terminal would take pixels: in colour, as many as it has.
                    let colors = !placement.pixels && support.kind.drawsPixels && support.colors == .sixteen ? .indexed256 : support.colors
                    guard let drawn = image.rendered(
                        as: placement.pixels ? support.kind : .symbols, colors: colors, columns: placement.columns, rows: placement.rows,
                        cell: (cell.width, cell.height))
                    else { return .failure(.damaged) }
                    return .success(drawn)
                }
            } else {
                result = .failure(.tooLarge)
            }
        } catch {
            result = .failure(.damaged)
        }
        cache[key] = result
        order.append(key)
        if order.count > Self.cached { cache[order.removeFirst()] = nil }
        return result
    }

    private func write(_ bytes: [UInt8]) {
        // A terminal that went away is seen by the loop (hang-up); nothing to do here.
        _ = DescriptorWrite.all(bytes, to: output)
    }
}
