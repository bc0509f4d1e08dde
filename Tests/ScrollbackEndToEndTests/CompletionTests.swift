import Foundation
import ScrollbackModel
import Testing
import TestSupport

/// Each shell's completion run against command lines, as the shell runs it on Tab: bash's
/// function with `COMP_WORDS`, fish's own engine (`complete -C`), and zsh's function with
/// `words` and `CURRENT` (its `compadd`, `_files` and `_describe` stood in by functions
/// that print what they are given). `.ci/run` installs zsh and fish.
@Suite("Shell completion, run by each shell against command lines", .serialized)
struct CompletionTests {
    static let binaryFolder = BinaryRunner.binary.deletingLastPathComponent().path

    /// What `shell` offers at the end of `line` (its last word is being typed; "" is a new word).
    /// `line`: the command line bash's `COMP_LINE` holds (by default the words, `=` joined
    /// to its neighbours as bash split it).
    static func offered(_ shell: String, _ words: [String], line: String? = nil, in runner: BinaryRunner) throws -> [String] {
        let script = runner.folder.file("completion.\(shell)")
        if !FileManager.default.fileExists(atPath: script) {
            let printed = try runner.run(["completions", shell], withDatabase: false)
            try printed.output.write(toFile: script, atomically: false, encoding: .utf8)
        }
        func quoted(_ word: String) -> String { "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'" }
        let program: String, arguments: [String]
        switch shell {
        case "bash":
            program = "/bin/bash"
            arguments = [
                "--norc", "-c",
                "source \(quoted(script)); COMP_WORDS=(\(words.map(quoted).joined(separator: " "))); COMP_CWORD=\(words.count - 1); "
                    + "COMP_LINE=\(quoted(line ?? Self.line(words))); _scrollback; printf '%s\\n' \"${COMPREPLY[@]}\"",
            ]
        case "fish":
            program = "/usr/bin/fish"
            // fish's single quotes take \\ and \' as escapes (POSIX's do not).
            func fishQuoted(_ word: String) -> String {
                "'" + word.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'") + "'"
            }
            arguments = ["--no-config", "-c", "source \(fishQuoted(script)); complete -C \(fishQuoted(words.joined(separator: " ")))"]
        default:
            program = "/usr/bin/zsh"
            let stubs = """
                compadd() { while (( $# )); do if [[ $1 == -- ]]; then shift; print -l -- "$@"; return; fi; shift; done; }
                _files() { print '<files>'; }
                _directories() { print '<folders>'; }
                _describe() { local -a list; list=("${(@P)2}"); print -l -- "${list[@]%%:*}"; }
                """
            arguments = ["-f", "-c", stubs + "\nwords=(\(words.map(quoted).joined(separator: " "))); CURRENT=${#words}; source \(quoted(script))"]
        }
        let result = try runner.run(
            arguments, withDatabase: false, environment: ["PATH": "\(binaryFolder):/usr/bin:/bin"], program: program)
        #expect(result.error.isEmpty, "\(shell) \(words): \(result.error)")
        var offered = result.output.split(separator: "\n").map { String($0.split(separator: "\t").first ?? "") }
        // zsh's stand-in for _describe does not filter by what is typed; the shell does.
        if shell == "zsh", let typed = words.last { offered = offered.filter { $0.hasPrefix(typed) || $0.hasPrefix("<") } }
        return offered.filter { !$0.isEmpty }
    }

    /// Words as bash's line: spaces between them, none around an `=` it split off.
    static func line(_ words: [String]) -> String {
        var line = ""
        for (index, word) in words.enumerated() {
            if index > 0 && word != "=" && words[index - 1] != "=" { line += " " }
            line += word
        }
        return line
    }

    @Test("a --db path typed quoted or with an escaped space is the file the shell will pass; `--db= list` is an empty path, then the command", arguments: ["bash", "zsh", "fish"])
    func quotedDatabase(_ shell: String) throws {
        let runner = try BinaryRunner()
        let folder = runner.folder.file("my dir")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let db = folder + "/it's.sqlite"
        #expect(try runner.run(["--db", db, "import", runner.recordExport(titles: ["One"])], withDatabase: false).status == 0)
        func offered(_ words: [String], line: String? = nil) throws -> Set<String> {
            Set(try Self.offered(shell, ["scrollback"] + words, line: line.map { "scrollback " + $0 }, in: runner))
        }
        // As typed: in double quotes, with backslashes, and half in single quotes.
        let doubleQuoted = "\"" + db.replacingOccurrences(of: "\"", with: "\\\"") + "\""
        let escaped = db.replacingOccurrences(of: " ", with: "\\ ").replacingOccurrences(of: "'", with: "\\'")
        let mixed = "'" + folder + "'/it\\'s.sqlite"
        for typed in [doubleQuoted, escaped, mixed] {
            #expect(try offered(["--db", typed, "list", "--source", ""]) == ["chatgpt"], "\(shell) \(typed)")
            if shell == "bash" {
                #expect(try offered(["--db", "=", typed, "list", "--source", ""]) == ["chatgpt"], "\(typed)")
            } else {
                #expect(try offered(["--db=" + typed, "list", "--source", ""]) == ["chatgpt"], "\(shell) \(typed)")
            }
        }
        // `--db= list`: the path is empty (the default database), `list` the command.
        if shell == "bash" {
            #expect(try offered(["--db", "=", "list", "--sort", ""], line: "--db= list --sort ") == ["updated", "created", "title"])
            #expect(try offered(["--db", "=", "list", "li"], line: "--db=list li") == ["list"])
        } else if shell == "zsh" {
            #expect(try offered(["--db=", "list", "--sort", ""]) == ["updated", "created", "title"])
        }
    }

    @Test("every shell offers the same words at the same places: the format of each command, commands after --db, sync's words by level, the database's sources and models, no hidden option", arguments: ["bash", "zsh", "fish"])
    func lines(_ shell: String) throws {
        let runner = try BinaryRunner()
        #expect(try runner.run(["import", runner.recordExport(titles: ["One", "Two"])]).status == 0)
        _ = try runner.run(["demo", "--count", "20"])
        let db = runner.databasePath
        func offered(_ words: String...) throws -> Set<String> {
            Set(try Self.offered(shell, ["scrollback"] + words, in: runner))
        }
        #expect(try offered("export", "--format", "") == ["md", "json", "jsonl"])
        #expect(try offered("import", "--format", "") == ["chatgpt", "claude", "llm", "jsonl", "claude-code", "codex", "gemini"])
        #expect(try offered("--db", db, "li") == ["list"])
        #expect(try offered("--db", db, "list", "--sort", "") == ["updated", "created", "title"])
        #expect(try offered("--db", db, "list", "-n", "5", "--sort", "c") == ["created"])
        #expect(try offered("sync", "") == ["init", "status", "snapshot", "off", "key"])
        #expect(try offered("--db", db, "sync", "key", "") == ["show", "import"])
        #expect(try offered("completions", "") == ["bash", "zsh", "fish"])
        // `--db=PATH` and `--sort=VALUE`, as each shell hands them over (bash splits at `=`).
        if shell != "bash" {
            #expect(try offered("--db=" + db, "li") == ["list"])
            #expect(try offered("--db=" + db, "list", "--source", "") == ["chatgpt", "demo"])
        } else {
            #expect(try offered("--db", "=", db, "li") == ["list"])
            #expect(try offered("--db", "=", db, "list", "--source", "") == ["chatgpt", "demo"])
            #expect(try offered("list", "--sort", "=", "") == ["updated", "created", "title"])
            #expect(try offered("list", "--sort", "=", "t") == ["title"])
            #expect(try offered("list", "--sort", "=", "title", "--pin") == ["--pinned"])
        }
        // What the database holds, read cheaply: its sources, and the models of recent ones.
        #expect(try offered("--db", db, "list", "--source", "") == ["chatgpt", "demo"])
        #expect(try offered("--db", db, "search", "--source", "d") == ["demo"])
        let models = try offered("--db", db, "list", "--model", "")
        #expect(!models.isEmpty && models.allSatisfy { !$0.hasPrefix("--") }, "\(models)")
        // No database there: nothing, and none is made.
        #expect(try offered("--db", runner.folder.file("none.sqlite"), "list", "--source", "").isEmpty)
        #expect(!FileManager.default.fileExists(atPath: runner.folder.file("none.sqlite")))
        // Options: the command's and the global ones, never a hidden one.
        let options = try offered("list", "--")
        #expect(options.contains("--sort") && options.contains("--db") && !options.contains("--exit-after-first-frame"), "\(options)")
        #expect(try !offered("--").contains("--exit-after-first-frame"))
        #expect(try !offered("completions", "--").contains("--words"))
        #expect(try offered("--").contains("--readonly"))
    }

    @Test("completions --words keeps out what a shell would split or a terminal would act on")
    func hostileWords() throws {
        let runner = try BinaryRunner()
        let path = runner.folder.file("hostile.jsonl")
        var lines: [String] = []
        let hostile = ["plain", "with space", "esc\u{1B}[31m", "quote'd", "tab\there", "ok-2", "/*/*/*/*/*/*/*/*", "~", "*", "$(touch pwned)", "a;b"]
        for (index, source) in hostile.enumerated() {
            let object: [String: Any] = [
                "format": "scrollback", "version": 1, "id": StableID.uuid("hostile", source), "title": "t\(index)", "source": source,
                "sourceID": "s\(index)", "model": source, "createdAt": "2026-01-01T10:00:00.000Z", "updatedAt": "2026-01-01T10:00:00.000Z",
                "pinned": false,
                "messages": [["id": StableID.uuid("m", source), "role": "user", "content": "hi", "createdAt": "2026-01-01T10:00:00.000Z"]],
            ]
            lines.append(String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self))
        }
        try lines.joined(separator: "\n").write(toFile: path, atomically: false, encoding: .utf8)
        #expect(try runner.run(["import", path]).status == 0)
        for kind in ["source", "model"] {
            let words = try runner.run(["completions", "--words", kind])
            #expect(words.status == 0)
            #expect(words.output == "ok-2\nplain\n", "\(kind): \(words.output)")
        }
        #expect(try runner.run(["completions", "--words", "title"]).status == 2)
        // Each shell offers just those, and a typed pattern is a prefix, not a pattern.
        for shell in ["bash", "zsh", "fish"] {
            let offered = Set(try Self.offered(shell, ["scrollback", "--db", runner.databasePath, "list", "--model", ""], in: runner))
            #expect(offered == ["ok-2", "plain"], "\(shell): \(offered)")
            // (fish hands a typed wildcard back as it is.)
            #expect(try Self.offered(shell, ["scrollback", "list", "--sort", "*"], in: runner).allSatisfy { $0 == "*" }, "\(shell)")
        }
        #expect(!FileManager.default.fileExists(atPath: runner.folder.file("pwned")))
    }
}
