import Foundation

/// Runs `body` with Ctrl-C (SIGINT), SIGTERM and SIGHUP (the terminal closed) held back; `body` looks for them between
/// its steps with the function it is given, so that a step in hand finishes or rolls back
/// cleanly instead of being cut off. The signal mask is put back afterwards. Threads that
/// `body` starts hold them too (see `RecordReader`), so that only this thread acts on them.
func withInterruptsHeld<T>(_ body: (_ interrupted: () -> Bool) throws -> T) rethrows -> T {
    var interrupt = sigset_t()
    sigemptyset(&interrupt)
    sigaddset(&interrupt, SIGINT)
    sigaddset(&interrupt, SIGTERM)
    sigaddset(&interrupt, SIGHUP)
    var previous = sigset_t()
    sigprocmask(SIG_BLOCK, &interrupt, &previous)
    defer {
        // One that came too late to be looked for (after the last step) is dropped, not
        // delivered when the mask is put back: that would end the process after its work
        // was kept, saying nothing, with the status of an interrupted one.
        var none = timespec(tv_sec: 0, tv_nsec: 0)
        while sigtimedwait(&interrupt, nil, &none) > 0 {}
        sigprocmask(SIG_SETMASK, &previous, nil)
    }
    return try body {
        var pending = sigset_t()
        sigpending(&pending)
        return sigismember(&pending, SIGINT) == 1 || sigismember(&pending, SIGTERM) == 1 || sigismember(&pending, SIGHUP) == 1
    }
}
