import Foundation

/// Runs `body` with Ctrl-C (SIGINT) and SIGTERM held back; `body` looks for them between
/// its steps with the function it is given, so that a step in hand finishes or rolls back
/// cleanly instead of being cut off. The signal mask is put back afterwards.
func withInterruptsHeld<T>(_ body: (_ interrupted: () -> Bool) throws -> T) rethrows -> T {
    var interrupt = sigset_t()
    sigemptyset(&interrupt)
    sigaddset(&interrupt, SIGINT)
    sigaddset(&interrupt, SIGTERM)
    var previous = sigset_t()
    sigprocmask(SIG_BLOCK, &interrupt, &previous)
    defer { sigprocmask(SIG_SETMASK, &previous, nil) }
    return try body {
        var pending = sigset_t()
        sigpending(&pending)
        return sigismember(&pending, SIGINT) == 1 || sigismember(&pending, SIGTERM) == 1
    }
}
