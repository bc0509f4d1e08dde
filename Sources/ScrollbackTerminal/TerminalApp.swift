import CNcursesw
import TerminalSignalState
import Foundation
import ScrollbackModel
import ScrollbackViewModels
import TerminalText

/// Why the browser could not run on this terminal.
public struct TerminalError: UserFacingError, CustomStringConvertible {
    public let description: String
    public var userLine: String { description }
}

/// The event loop: draws the browser, waits for input with a short timeout (so that the
/// browser can notice other processes' changes while idle), and restores the terminal on
/// every way out: quitting, a terminating signal, suspending (Ctrl-Z or SIGTSTP).
@MainActor
public final class TerminalApp {
    private let browser: BrowserViewModel
    private let exitAfterFirstFrame: Bool
    private let environment: [String: String]
    private let config: BrowserConfig
    /// Writes conversations to a file (`x`): the composition root gives it the store.
    public var exporter: ((_ ids: [Int64], _ path: String, _ showingHidden: Bool) -> String)?
    /// Writes a stored file's bytes to a new file at `path` (never over one that is there),
    /// hashed again as they go: nil when done, else what went wrong in a line. The
    /// composition root gives it the store.
    public var attachmentWriter: ((_ sha256: String, _ path: String) -> String?)?
    /// The private folder of the copies `O` opens, made at the first, removed at the end.
    private var openedFolder: String?

    /// Turns xterm's bracketed paste on and off; terminals that do not know it ignore it.
    static let bracketedPasteOn = "\u{1B}[?2004h"
    static let bracketedPasteOff = "\u{1B}[?2004l"

    public init(browser: BrowserViewModel, environment: [String: String], config: BrowserConfig = BrowserConfig(), exitAfterFirstFrame: Bool = false) {
        self.browser = browser
        self.environment = environment
        self.config = config
        self.exitAfterFirstFrame = exitAfterFirstFrame
    }

    /// Checks, before anything is opened or created, that the browser can run here: both
    /// ends are a terminal, TERM names one that can address the cursor, and COLUMNS and
    /// LINES, when set, are a size a terminal can have.
    public static func checkTerminal(environment: [String: String]) throws {
        guard isatty(STDIN_FILENO) == 1, isatty(STDOUT_FILENO) == 1 else {
            throw TerminalError(description: "the browser needs a terminal; use `scrollback list` in scripts")
        }
        let commands = "or use the commands (`scrollback list`, `scrollback show ID`, `scrollback --help`)"
        // ncurses takes the size from these when they are set; an absurd one would make it
        // fail (or allocate gigabytes) after the database was opened.
        let unset = "unset COLUMNS and LINES (the terminal reports its own size), \(commands)"
        var cells = 1
        for name in ["COLUMNS", "LINES"] {
            guard let text = environment[name] else { continue }
            guard let value = Int(text), (1...10_000).contains(value) else {
                throw TerminalError(description: "\(name)=\(UntrustedText.sanitized(text)) is not a terminal size: \(unset)")
            }
            cells *= value
        }
        guard cells <= 4096 * 4096 else {
            throw TerminalError(description: "COLUMNS × LINES is too large for a terminal: \(unset)")
        }
        guard let term = environment["TERM"], !term.isEmpty else {
            throw TerminalError(description: "TERM is not set: run with TERM=xterm-256color (or your terminal's name), \(commands)")
        }
        switch scrollback_check_terminal(term) {
        case 1: return
        case 2:
            throw TerminalError(
                description: "this terminal (TERM=\(UntrustedText.sanitized(term))) cannot show a full-screen program: run with TERM=xterm-256color in a terminal emulator, \(commands)")
        default:
            throw TerminalError(
                description: "unknown terminal type TERM=\(UntrustedText.sanitized(term)): run with TERM=xterm-256color (or install its terminfo entry), \(commands)")
        }
    }

    /// Runs the browser; returns the exit status: 0 when the user quit, 128 + the signal's
    /// number when a signal ended it.
    public func run() throws -> Int32 {
        try Self.checkTerminal(environment: environment)
        setlocale(LC_ALL, "")
        if String(cString: nl_langinfo(nl_item(CODESET))) != "UTF-8" {
            // Wide characters need a UTF-8 locale; C.UTF-8 is always there on this system.
            setlocale(LC_CTYPE, "C.UTF-8")
        }
        // Before the terminal library starts, so that it leaves these to us.
        TerminalSignals.install()
        // Asked before the screen starts: the answers come on the input curses will read.
        // (Not for a first frame measured alone: a terminal that never answers costs the wait.)
        let images =
            exitAfterFirstFrame
            ? ImageSupport(kind: .none, cell: ImageSupport.usualCell, insideTmux: false, colors: .sixteen)
            : ImageSupport.detect(environment: environment)
        let painter = ImagePainter(support: images)

        guard let terminal = scrollback_newterm() else {
            throw TerminalError(description: "cannot start the terminal (TERM=\(UntrustedText.sanitized(environment["TERM"] ?? "unset"))): run with TERM=xterm-256color")
        }
        // After the terminal is given back (the defer below runs first): the library's
        // screen is freed, not left for the process's end.
        defer { delscreen(terminal) }
        raw()
        noecho()
        nonl()
        keypad(scrollback_stdscr(), true)
        set_escdelay(25)
        let input = TerminalInput()
        enterProgramMode()
        defer { leaveProgramMode() }
        defer { removeOpenedCopies() }
        // Kitty's images stay in the terminal's own layer: taken away at the end.
        defer { if images.kind == .kitty { painter.removeKittyImages() } }
        browser.imageCell = images.kind == .none ? nil : images.cell
        let noColor = environment["NO_COLOR"].map { !$0.isEmpty } ?? false
        BrowserRenderer.palette = Palette(config.colors)
        let screen = CursesScreen(useColor: has_colors() && !noColor)

        browser.resize(width: screen.width, height: screen.height)
        // `dirty`: the screen no longer shows the state. Input that is already there is
        // all handled before drawing, so that a burst (an unbracketed paste, a held key)
        // costs one frame, not one per key.
        var dirty = true
        var idleTicks = 0
        while true {
            if let signal = TerminalSignals.caught { return 128 + signal }
            if TerminalSignals.takeStopRequest() {
                suspend()
                painter.forget()
                dirty = true
                continue
            }
            // A search waiting for typing to pause wakes the loop in time to start it.
            let wait = browser.millisecondsUntilSearch.map { Int32(min($0, 100)) } ?? 100
            let event = input.next(waiting: dirty ? 0 : wait)
            // Background work that finished is taken in at every turn of the loop.
            if browser.poll() { dirty = true }
            guard let event else {
                if dirty {
                    BrowserRenderer.render(browser, on: screen)
                    // Images over the rows the reader keeps for them, after the frame.
                    let placements = painter.placements(for: browser, screenHeight: screen.height)
                    painter.prepare(placements)
                    screen.present()
                    painter.paint(placements, browser: browser)
                    dirty = false
                    if browser.promptShown() {
                        // A question is on screen now: only what is typed from here on
                        // answers it, never keys that were queued before it was drawn.
                        flushinp()
                    }
                    if exitAfterFirstFrame { return 0 }
                    continue
                }
                if terminalHungUp() { return 128 + SIGHUP }
                idleTicks += 1
                if idleTicks % 5 == 0 {
                    do {
                        dirty = try browser.idle() || dirty
                    } catch {
                        browser.report(error)
                        dirty = true
                    }
                }
                continue
            }
            idleTicks = 0
            dirty = true
            let key: Key
            switch event {
            case .ignored: continue
            case .unknownKey:
                browser.unknownKey()
                continue
            case .resize:
                browser.resize(width: screen.width, height: screen.height)
                painter.forget()
                continue
            case .key(let decoded): key = decoded
            }
            // Suspending is the front end's: it owns the terminal. It works in editors and
            // questions too, which keep their state.
            if browser.keymap.command(for: key, on: browser.screen) == .suspend {
                suspend()
                painter.forget()
                continue
            }
            do {
                if try !browser.handle(key) { return 0 }
            } catch {
                browser.report(error)
            }
            if let effect = browser.takeEffect() {
                perform(effect)
                // A program had the terminal: the screen is drawn whole again.
                painter.forget()
            }
        }
    }

    /// Does what the browser asked for outside the screen; the footer says how it went.
    private func perform(_ effect: BrowserEffect) {
        let programs = ExternalPrograms(environment: environment, pager: config.pager, editor: config.editor, clipboard: config.clipboard)
        switch effect {
        case .copy(let text, let what):
            browser.effectDone(programs.copy(text, what: what))
        case .pipe(let command, let input):
            handOver { try programs.shell(command, input: input) } after: { status in
                // The command's output stays on screen until Enter, as in tig and vim.
                let note = status == 0 ? "" : " (it exited with status \(status))"
                scrollback_write_control("\n[scrollback: done\(note); press Enter to return] ")
                Self.waitForEnter()
                return "Piped the conversation to \(UntrustedText.sanitized(command))" + note
            }
        case .page(let text):
            handOver { try programs.page(text) } after: { status in
                status == 0 ? "Back from the pager" : "The pager exited with status \(status) (the pager is \(UntrustedText.sanitized(programs.pagerCommand)))"
            }
        case .export(let ids, let path, let showingHidden):
            guard let exporter else {
                browser.effectDone("Exporting is not available here")
                return
            }
            browser.effectDone(exporter(ids, path, showingHidden))
        case .openAttachment(let attachment):
            browser.effectDone(open(attachment, programs: programs))
        case .saveAttachment(let attachment, let path):
            browser.effectDone(save(attachment, to: path))
        case .edit(let text, let name):
            handOver { try programs.edit(text, name: name) } after: { status in
                status == 0 ? "Back from the editor; its copy was removed" : "The editor exited with status \(status); its copy was removed"
            }
        }
    }

    /// `S`: the attachment written to `path` (`~/` the home folder), never over a file.
    private func save(_ attachment: AttachmentDTO, to typed: String) -> String {
        guard let hash = attachment.sha256, let attachmentWriter else { return "Saving is not available here" }
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        let path = typed == "~" ? home : typed.hasPrefix("~/") ? home + typed.dropFirst(1) : typed
        let shown = UntrustedText.sanitized(path)
        if let problem = attachmentWriter(hash, path) { return "Not saved: " + UntrustedText.sanitized(problem) }
        return "Saved \(UntrustedText.sanitized(attachment.name)) (\(AttachmentText.size(attachment.size ?? 0))) to \(shown)"
    }

    /// `O`: a private copy of the attachment (in a folder only this user reads, removed
    /// when the browser exits: the viewer may read it after its opener has returned),
    /// handed to `$SCROLLBACK_OPEN`, else `xdg-open` (`open` on a Mac).
    private func open(_ attachment: AttachmentDTO, programs: ExternalPrograms) -> String {
        guard let hash = attachment.sha256, let attachmentWriter else { return "Opening is not available here" }
        let chosen = environment["SCROLLBACK_OPEN"].flatMap { $0.trimmingCharacters(in: .whitespaces).isEmpty ? nil : $0 }
        guard let opener = chosen.map({ ["/bin/sh", "-c", $0 + " \"$1\"", "sh"] }) ?? (programs.find("xdg-open") ?? programs.find("open")).map({ [$0] })
        else { return "Not opened: no program opens files here (xdg-open); set $SCROLLBACK_OPEN to one" }
        if openedFolder == nil {
            var template = Array((NSTemporaryDirectory() + "/scrollback-open-XXXXXX").utf8CString)
            let made = template.withUnsafeMutableBufferPointer { buffer -> String? in
                guard let base = buffer.baseAddress, let folder = mkdtemp(base) else { return nil }
                return String(cString: folder)
            }
            openedFolder = made
        }
        guard let folder = openedFolder else { return "Not opened: no private folder could be made for its copy" }
        // One folder a file, so that two files of the same name do not meet.
        let place = PathText.appending(to: folder, String(hash.prefix(16)))
        let path = PathText.appending(to: place, AttachmentText.fileName(attachment))
        if access(path, F_OK) != 0 {
            mkdir(place, 0o700)
            if let problem = attachmentWriter(hash, path) { return "Not opened: " + UntrustedText.sanitized(problem) }
        }
        let name = chosen == nil ? PathText.lastComponent(of: opener[0]) : "$SCROLLBACK_OPEN"
        switch Result(catching: { try programs.run(opener + [path], input: nil, quiet: true, timeout: 10_000) }) {
        case .success(0):
            return "Opened \(UntrustedText.sanitized(attachment.name)) with \(name) (its copy goes when you quit; O again opens the next)"
        case .success(ExternalPrograms.timedOut): return "Not opened: \(name) took more than 10 s and was stopped"
        case .success(let status): return "Not opened: \(name) failed (exit status \(status))"
        case .failure(let error): return "Not opened: \(name) did not start (\(UntrustedText.sanitized(String(describing: error))))"
        }
    }

    /// Removes the copies `O` made.
    private func removeOpenedCopies() {
        guard let folder = openedFolder else { return }
        try? FileManager.default.removeItem(atPath: folder)
        openedFolder = nil
    }

    /// Gives the terminal to a program until it ends, then takes it back and redraws.
    private func handOver(_ body: () throws -> Int32, after: (Int32) -> String) {
        leaveProgramMode()
        let message: String
        do {
            message = after(try body())
        } catch {
            message = "error: " + UntrustedText.sanitized(String(describing: error))
        }
        enterProgramMode()
        clearok(scrollback_curscr(), true)
        browser.resize(width: Int(scrollback_cols()), height: Int(scrollback_lines()))
        browser.effectDone(message)
    }

    /// Reads the terminal (in its normal, line mode) until Enter, until Ctrl-C (which here
    /// only means "back", not "quit"), or until it is gone.
    private static func waitForEnter() {
        var byte: UInt8 = 0
        while true {
            if TerminalSignals.caught == SIGINT {
                scrollback_forget_signal(SIGINT)
                return
            }
            if TerminalSignals.caught != nil { return }
            var ready = pollfd(fd: STDIN_FILENO, events: Int16(POLLIN), revents: 0)
            let polled = poll(&ready, 1, 100)
            if polled == 0 || (polled < 0 && errno == EINTR) { continue }
            let count = read(STDIN_FILENO, &byte, 1)
            if count < 0 && errno == EINTR { continue }
            if count <= 0 || byte == 10 || byte == 13 { return }
        }
    }

    /// The terminal as the browser wants it, after start-up or a suspension: the screen,
    /// the mouse wheel and bracketed paste.
    private func enterProgramMode() {
        _ = mousemask(scrollback_mouse_mask(), nil)
        wrefresh(scrollback_stdscr())
        scrollback_write_control(Self.bracketedPasteOn)
    }

    /// The terminal as the shell wants it: bracketed paste and mouse tracking off, the
    /// normal screen, the cursor shown, the modes of before.
    private func leaveProgramMode() {
        scrollback_write_control(Self.bracketedPasteOff)
        _ = mousemask(0, nil)
        curs_set(1)
        endwin()
    }

    /// Ctrl-Z or SIGTSTP: gives the terminal back, stops, and on `fg` takes it again and
    /// redraws everything (an open editor or question stays as it was).
    private func suspend() {
        leaveProgramMode()
        TerminalSignals.stopProcess()
        enterProgramMode()
        clearok(scrollback_curscr(), true)
        browser.resize(width: Int(scrollback_cols()), height: Int(scrollback_lines()))
    }

    /// True when the terminal is gone (a closed window whose SIGHUP did not reach us):
    /// reads would fail at once, for ever.
    private func terminalHungUp() -> Bool {
        var descriptor = pollfd(fd: STDIN_FILENO, events: Int16(POLLIN), revents: 0)
        guard poll(&descriptor, 1, 0) > 0 else { return false }
        return descriptor.revents & Int16(POLLHUP | POLLERR | POLLNVAL) != 0
    }
}
