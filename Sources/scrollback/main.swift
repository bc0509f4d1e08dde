import Foundation
import ScrollbackCLI

// The composition root: the real arguments, environment and standard streams.
exit(Scrollback.run(
    arguments: Array(CommandLine.arguments.dropFirst()), environment: ProcessInfo.processInfo.environment,
    console: .standard()))
