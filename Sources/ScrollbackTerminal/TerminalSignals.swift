import CNcursesw
import TerminalSignalState
import Foundation

/// The signals the browser catches: each one that would end the program is recorded by a
/// process-wide handler and acted on by the event loop, which restores the terminal first
/// and then exits with 128 + the signal's number. SIGTSTP (and Ctrl-Z) suspend instead.
///
/// The state is in the `TerminalSignalState` C target, one for the whole program.
@MainActor
enum TerminalSignals {
    /// Every signal whose default action ends the process and that can come from outside
    /// (a crash inside the program, such as SIGSEGV, is left to the runtime). SIGQUIT is
    /// one of them: the runtime would otherwise print a crash report and wait.
    static var terminating: [Int32] {
        [SIGHUP, SIGINT, SIGQUIT, SIGPIPE, SIGALRM, SIGTERM, SIGUSR1, SIGUSR2, SIGVTALRM, SIGPROF, SIGIO, SIGPWR,
         SIGXCPU, SIGXFSZ, SIGSTKFLT]
            + Array(scrollback_sigrtmin()...scrollback_sigrtmax())
    }

    /// Installs the handlers and makes sure none of these signals is blocked (a parent may
    /// have blocked some). Call before the terminal library starts, so that it keeps them.
    static func install() {
        var mask = sigset_t()
        sigemptyset(&mask)
        for signal in terminating + [SIGTSTP, SIGWINCH] {
            if signal != SIGWINCH { _ = scrollback_catch_signal(signal) }
            sigaddset(&mask, signal)
        }
        sigprocmask(SIG_UNBLOCK, &mask, nil)
    }

    /// A terminating signal that arrived, if any (it stays recorded).
    static var caught: Int32? {
        let signal = scrollback_take_signal()
        return signal == 0 ? nil : signal
    }

    /// True once per SIGTSTP received.
    static func takeStopRequest() -> Bool { scrollback_take_stop_request() != 0 }

    /// Stops the process (and its job) as SIGTSTP's default action does, and returns once
    /// it is continued.
    /// (In an orphaned process group, where nothing could continue it, the kernel does not
    /// stop it and this returns at once.)
    static func stopProcess() {
        _ = scrollback_default_signal(SIGTSTP)
        var mask = sigset_t()
        sigemptyset(&mask)
        sigaddset(&mask, SIGTSTP)
        sigprocmask(SIG_UNBLOCK, &mask, nil)
        // The whole process group, as the terminal's own Ctrl-Z would: the shell sees its job stop.
        kill(0, SIGTSTP)
        _ = scrollback_catch_signal(SIGTSTP)
        _ = takeStopRequest()
    }
}
