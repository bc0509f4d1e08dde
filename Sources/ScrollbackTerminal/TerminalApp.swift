import CNcursesw
import Foundation
import ScrollbackViewModels

/// Why the browser could not run on this terminal.
public struct TerminalError: Error, CustomStringConvertible {
    public let description: String
}

/// The event loop: draws the browser, waits for input with a short timeout (so that the
/// browser can notice other processes' changes while idle), and restores the terminal on
/// every way out.
@MainActor
public final class TerminalApp {
    private let browser: BrowserViewModel
    private let exitAfterFirstFrame: Bool
    private let environment: [String: String]

    public init(browser: BrowserViewModel, environment: [String: String], exitAfterFirstFrame: Bool = false) {
        self.browser = browser
        self.environment = environment
        self.exitAfterFirstFrame = exitAfterFirstFrame
    }

    public func run() throws {
        guard isatty(STDIN_FILENO) == 1, isatty(STDOUT_FILENO) == 1 else {
            throw TerminalError(description: "the browser needs a terminal; use `scrollback list` in scripts")
        }
        setlocale(LC_ALL, "")
        if String(cString: nl_langinfo(nl_item(CODESET))) != "UTF-8" {
            // Wide characters need a UTF-8 locale; C.UTF-8 is always there on this system.
            setlocale(LC_CTYPE, "C.UTF-8")
        }
        // Termination signals wait (blocked) until the loop looks for them, so that the
        // terminal is always restored before exiting.
        var blocked = sigset_t()
        var previous = sigset_t()
        sigemptyset(&blocked)
        for signal in [SIGTERM, SIGHUP, SIGINT, SIGQUIT] { sigaddset(&blocked, signal) }
        sigprocmask(SIG_BLOCK, &blocked, &previous)
        defer { sigprocmask(SIG_SETMASK, &previous, nil) }
        // Resizes arrive as SIGWINCH, which ncurses turns into KEY_RESIZE: make sure a parent
        // did not leave it blocked.
        var resize = sigset_t()
        sigemptyset(&resize)
        sigaddset(&resize, SIGWINCH)
        sigprocmask(SIG_UNBLOCK, &resize, nil)

        guard initscr() != nil else {
            throw TerminalError(description: "cannot start the terminal (TERM=\(environment["TERM"] ?? "unset"))")
        }
        defer { endwin() }
        raw()
        noecho()
        nonl()
        keypad(scrollback_stdscr(), true)
        set_escdelay(25)
        _ = mousemask(scrollback_wheel_mask(), nil)
        wtimeout(scrollback_stdscr(), 100)
        let noColor = environment["NO_COLOR"].map { !$0.isEmpty } ?? false
        let screen = CursesScreen(useColor: has_colors() && !noColor)

        browser.resize(width: screen.width, height: screen.height)
        var dirty = true
        var idleTicks = 0
        while true {
            var pending = sigset_t()
            sigpending(&pending)
            if [SIGTERM, SIGHUP, SIGINT, SIGQUIT].contains(where: { sigismember(&pending, $0) == 1 }) { break }
            if dirty {
                BrowserRenderer.render(browser, on: screen)
                screen.present()
                dirty = false
                if exitAfterFirstFrame { break }
            }
            var value: wint_t = 0
            let result = wget_wch(scrollback_stdscr(), &value)
            // Background work that finished is taken in at every turn of the loop.
            if browser.poll() { dirty = true }
            if result == ERR {
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
            let key: Key?
            if result == KEY_CODE_YES {
                switch Int32(value) {
                case KEY_RESIZE:
                    browser.resize(width: screen.width, height: screen.height)
                    dirty = true
                    continue
                case KEY_MOUSE:
                    var event = MEVENT()
                    guard getmouse(&event) == OK else { continue }
                    key = scrollback_is_wheel_up(event.bstate) != 0 ? .wheelUp : scrollback_is_wheel_down(event.bstate) != 0 ? .wheelDown : nil
                default:
                    key = KeyDecoder.key(code: Int32(value))
                }
            } else {
                key = KeyDecoder.key(character: UInt32(value))
            }
            guard let key else { continue }
            dirty = true
            do {
                if try !browser.handle(key) { break }
            } catch {
                browser.report(error)
            }
        }
    }
}
