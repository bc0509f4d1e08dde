import Foundation
import TestSupport

/// The built `scrollback` binary, run as a user would run it.
struct BinaryRunner {
    struct Result {
        let status: Int32
        let output: String
        let error: String
    }

    let folder: TemporaryDirectory
    /// The folder the database lives in; nothing else is written there.
    var dataFolder: String { folder.file("data") }
    var databasePath: String { folder.file("data/history.sqlite") }

    /// The data folder is made here, as a user makes the folder they name with `--db`
    /// (only the default location gets its folders made by scrollback).
    init() throws {
        folder = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: folder.file("data"), withIntermediateDirectories: true)
    }

    /// The names in the database's folder.
    func dataFiles() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: dataFolder)) ?? []).sorted()
    }

    static var binary: URL {
        Bundle.main.bundleURL.appendingPathComponent("scrollback")
    }

    /// Runs `scrollback --db <temp> ARGS` (or with exactly `arguments` when `withDatabase`
    /// is false), with TZ=UTC and standard input from `input` (never a terminal).
    func run(
        _ arguments: [String], input: String = "", withDatabase: Bool = true, environment extra: [String: String] = [:],
        directory: String? = nil, program: String? = nil
    ) throws -> Result {
        let process = Process()
        process.executableURL = program.map { URL(fileURLWithPath: $0) } ?? Self.binary
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        process.arguments = (withDatabase ? ["--db", databasePath] : []) + arguments
        var environment = ["TZ": "UTC", "LANG": "C.UTF-8", "HOME": folder.path, "PATH": "/usr/bin:/bin"]
        environment.merge(extra) { $1 }
        process.environment = environment
        // Output goes to files, so a large output can never block the child.
        let outputPath = folder.file(".stdout-\(UUID().uuidString)")
        let errorPath = folder.file(".stderr-\(UUID().uuidString)")
        makeEmptyFile(outputPath)
        makeEmptyFile(errorPath)
        defer {
            try? FileManager.default.removeItem(atPath: outputPath)
            try? FileManager.default.removeItem(atPath: errorPath)
        }
        let stdin = Pipe()
        let stdout = try FileHandle(forWritingTo: URL(fileURLWithPath: outputPath))
        let stderr = try FileHandle(forWritingTo: URL(fileURLWithPath: errorPath))
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        stdin.fileHandleForWriting.write(Data(input.utf8))
        try stdin.fileHandleForWriting.close()
        process.waitUntilExit()
        try stdout.close()
        try stderr.close()
        return Result(
            status: process.terminationStatus,
            output: String(decoding: try Data(contentsOf: URL(fileURLWithPath: outputPath)), as: UTF8.self),
            error: String(decoding: try Data(contentsOf: URL(fileURLWithPath: errorPath)), as: UTF8.self))
    }

    /// Runs and decodes standard output as JSON.
    func json(_ arguments: [String]) throws -> [String: Any] {
        let result = try run(arguments + ["--json"])
        guard result.status == 0, let object = try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any] else {
            throw CocoaError(.coderReadCorrupt, userInfo: [NSLocalizedDescriptionKey: "\(arguments): \(result.status) \(result.error)"])
        }
        return object
    }
}
