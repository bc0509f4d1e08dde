import Foundation
import Testing

@testable import ScrollbackCLI
import ScrollbackViewModels
import TestSupport

/// `Resources/` holds the man page and the shell completions as the program makes them from
/// its command and key tables: a change to a table that is not written out again fails here.
/// Run with `SCROLLBACK_RECORD_RESOURCES=1` to write them anew, then read the diff.
@Suite("Resources")
struct ResourcesTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Resources")

    static let files: [(path: String, text: @Sendable () -> String)] = [
        ("scrollback.1", { Documentation.manPage() }),
        ("completions/scrollback.bash", { Documentation.completions(for: .bash) }),
        ("completions/_scrollback", { Documentation.completions(for: .zsh) }),
        ("completions/scrollback.fish", { Documentation.completions(for: .fish) }),
        ("config.toml", { BrowserConfig.defaultFile() }),
    ]

    @Test("the man page and the completions are what the tables make")
    func noDrift() throws {
        for (path, text) in Self.files {
            let url = Self.folder.appendingPathComponent(path)
            if ProcessInfo.processInfo.environment["SCROLLBACK_RECORD_RESOURCES"] == "1" {
                try Data(text().utf8).write(to: url)
            }
            let stored = try String(contentsOf: url, encoding: .utf8)
            #expect(stored == text(), "Resources/\(path) is out of date: run SCROLLBACK_RECORD_RESOURCES=1 swift test --filter Resources")
        }
    }

    @Test("the README's install line names exactly the packages .ci/run installs")
    func installLine() throws {
        let top = Self.folder.deletingLastPathComponent()
        let ci = try String(contentsOf: top.appendingPathComponent(".ci/run"), encoding: .utf8)
        // Every `need+=(package)` of the script.
        let installed = Set(ci.components(separatedBy: "need+=(").dropFirst().compactMap { $0.split(separator: ")").first.map(String.init) })
        let readme = try String(contentsOf: top.appendingPathComponent("README.md"), encoding: .utf8)
        let line = try #require(readme.split(separator: "\n").first { $0.contains("apt-get install -y ") })
        let named = Set(line.components(separatedBy: "apt-get install -y ").last?.split(separator: "`").first?.split(separator: " ").map(String.init) ?? [])
        #expect(!installed.isEmpty && named == installed, "README: \(named.sorted()), .ci/run: \(installed.sorted())")
    }

    @Test("every command, option and key is in the man page; every command and option in each completion")
    func complete() throws {
        let page = Documentation.manPage()
        // Every command that runs, subcommands too (`sync key show`), has its section.
        for command in CommandTable.commands.flatMap(\.family) where command.run != nil {
            #expect(page.contains(".SS \(Documentation.roff(command.name))\n"), "\(command.name)")
            for option in command.options + CommandTable.global {
                #expect(page.contains(Documentation.roff(option.name)))
                // A hidden option (for benchmarks, or for the scripts themselves) is never
                // offered: CompletionTests runs the scripts to see it.
                for shell in Shell.allCases where !option.hidden {
                    let script = Documentation.completions(for: shell)
                    #expect(script.contains(shell == .fish ? "-l \(option.name.dropFirst(2))" : option.name), "\(shell): \(option.name)")
                }
            }
        }
        // Each screen's keys, in the man page and in that screen's help, exactly as the table says.
        for screen in BrowserScreen.allCases {
            #expect(page.contains(".SS \(Documentation.roff(screen.title))\n"))
            let help = KeyBindings.helpLines(for: screen)
            for binding in KeyBindings.keymap(for: screen) {
                let keys = binding.keys.map(\.description).joined(separator: " ")
                #expect(help.contains { $0.hasPrefix(keys + " ") && $0.hasSuffix(binding.help) }, "\(screen): \(binding.help)")
                #expect(page.contains(Documentation.roff(binding.help)), "\(binding.help)")
            }
            // And nothing else: every line of keys is a binding of this screen.
            let keyLines = help.prefix { !$0.isEmpty }
            #expect(keyLines.count == KeyBindings.keymap(for: screen).count)
        }
    }

    @Test("the scripts are valid for their shells, and `scrollback completions` prints them")
    func shells() throws {
        let runner = try BinaryRunner()
        for shell in Shell.allCases.map(\.rawValue) {
            let printed = try runner.run(["completions", shell])
            #expect(printed.status == 0 && printed.output == Shell(rawValue: shell).map(Documentation.completions(for:)))
            // Parsed without running, by the shell itself where it is installed.
            guard let binary = ["/usr/bin/\(shell)", "/bin/\(shell)"].first(where: { FileManager.default.isExecutableFile(atPath: $0) })
            else { continue }
            let file = runner.folder.file("script.\(shell)")
            try Data(printed.output.utf8).write(to: URL(fileURLWithPath: file))
            let check = try ChildProcess.run(binary, ["-n", file])
            #expect(check.status == 0, "\(shell) -n refused the script: \(check.errorText)")
        }
        let wrong = try runner.run(["completions", "tcsh"])
        #expect(wrong.status == 2 && wrong.error.contains("no completions for 'tcsh': bash, zsh or fish"))
    }
}
