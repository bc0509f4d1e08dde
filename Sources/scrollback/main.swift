import Foundation
import ScrollbackCLI

// The composition root: the real arguments, environment and standard streams.
exit(Scrollback.runProcess(environment: ProcessInfo.processInfo.environment, console: .standard()))
