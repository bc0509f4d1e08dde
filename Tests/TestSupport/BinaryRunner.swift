import Foundation
import ScrollbackModel

/// The built `scrollback` binary, run as a user would run it.
public struct BinaryRunner {
    public struct Result: Sendable {
        public let status: Int32
        public let output: String
        public let error: String

        public init(status: Int32, output: String, error: String) {
            self.status = status
            self.output = output
            self.error = error
        }
    }

    public let folder: TemporaryDirectory
    /// The folder the database lives in; nothing else is written there.
    public var dataFolder: String { folder.file("data") }
    public var databasePath: String { folder.file("data/history.sqlite") }

    /// The data folder is made here, as a user makes the folder they name with `--db`
    /// (only the default location gets its folders made by scrollback).
    public init() throws {
        folder = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: folder.file("data"), withIntermediateDirectories: true)
    }

    /// The names in the database's folder.
    public func dataFiles() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: dataFolder)) ?? []).sorted()
    }

    public static var binary: URL {
        Bundle.main.bundleURL.appendingPathComponent("scrollback")
    }

    /// Runs `scrollback --db <temp> ARGS` (or with exactly `arguments` when `withDatabase`
    /// is false) in the test environment (`TestEnvironment`, HOME the runner's folder), with
    /// standard input from `input` (never a terminal).
    public func run(
        _ arguments: [String], input: String = "", withDatabase: Bool = true, environment extra: [String: String] = [:],
        directory: String? = nil, program: String? = nil
    ) throws -> Result {
        let outcome = try ChildProcess.run(
            program ?? Self.binary.path, (withDatabase ? ["--db", databasePath] : []) + arguments,
            environment: TestEnvironment.variables(home: folder.path, adding: extra), input: Data(input.utf8), directory: directory)
        return Result(status: outcome.status, output: outcome.outputText, error: outcome.errorText)
    }

    /// Runs a shell command line (the binary is `$0`), for what a plain run cannot express:
    /// a pty through `script`, raw bytes in arguments, /dev/full as standard output (`stdout`).
    public static func shell(_ command: String, stdout: String? = nil) throws -> (status: Int32, output: Data, error: String) {
        let folder = try TemporaryDirectory()
        let outcome = try ChildProcess.run(
            "/bin/sh", ["-c", command, binary.path], environment: TestEnvironment.variables(home: folder.path, terminal: true), output: stdout)
        return (outcome.status, outcome.output, outcome.errorText)
    }

    /// Runs and decodes standard output as JSON.
    public func json(_ arguments: [String]) throws -> [String: Any] {
        let result = try run(arguments + ["--json"])
        guard result.status == 0, let object = try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any] else {
            throw CocoaError(.coderReadCorrupt, userInfo: [NSLocalizedDescriptionKey: "\(arguments): \(result.status) \(result.error)"])
        }
        return object
    }

    /// A fixture export of our own, with a title and a message to look for.
    public func recordExport(titles: [String]) throws -> String {
        let path = folder.file("export-\(titles.count).jsonl")
        var lines: [String] = []
        for (index, title) in titles.enumerated() {
            let object: [String: Any] = [
                "format": "scrollback", "version": 1, "id": StableID.uuid("sync-test", title), "title": title, "source": "chatgpt",
                "sourceID": "conv-\(index)", "createdAt": "2026-01-0\(index % 9 + 1)T10:00:00.000Z",
                "updatedAt": "2026-01-0\(index % 9 + 1)T10:00:00.000Z",
                "pinned": false,
                "messages": [
                    [
                        "id": StableID.uuid("q", title), "role": "user", "content": "question about \(title)",
                        "createdAt": "2026-01-0\(index % 9 + 1)T10:00:00.000Z",
                    ],
                    [
                        "id": StableID.uuid("a", title), "role": "assistant", "content": "answer about \(title)",
                        "createdAt": "2026-01-0\(index % 9 + 1)T10:01:00.000Z", "parentID": StableID.uuid("q", title),
                    ],
                ],
            ]
            lines.append(String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self))
        }
        try lines.joined(separator: "\n").write(toFile: path, atomically: false, encoding: .utf8)
        return path
    }
}
