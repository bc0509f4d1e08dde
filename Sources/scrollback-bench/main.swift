import Foundation
import ScrollbackDemo
import ScrollbackImport
import ScrollbackModel
import ScrollbackStorage
import ScrollbackTerminal
import ScrollbackViewModels

// scrollback-bench: makes its own data, measures, prints a table and writes JSON. Every
// figure stands beside a baseline measured in the same run (these machines are shared and
// noisy: ratios, not absolute times). Build and run in release mode:
//
//     swift build -c release && .build/release/scrollback-bench [--quick] [--work DIR]
//
// --child MODE --db PATH runs one measured part in a process of its own (peak memory).

struct Options {
    var quick = false
    var work = (NSTemporaryDirectory() as NSString).appendingPathComponent("scrollback-bench")
    var json: String?
    var binary = (CommandLine.arguments[0] as NSString).deletingLastPathComponent + "/scrollback"
    var child: String?
    var database: String?
    var file: String?
    /// Run only these sections (page, filter, frame, memory, key, keyframe, import, delete, search, agents, mcp, backup, attachments, sync).
    var only: Set<String> = []

    init(_ arguments: [String]) throws {
        var index = 0
        func value() throws -> String {
            index += 1
            guard index < arguments.count else { throw BenchError("\(arguments[index - 1]) needs a value") }
            return arguments[index]
        }
        while index < arguments.count {
            switch arguments[index] {
            case "--quick": quick = true
            case "--work": work = try value()
            case "--json": json = try value()
            case "--binary": binary = try value()
            case "--child": child = try value()
            case "--db": database = try value()
            case "--file": file = try value()
            case "--only": only.insert(try value())
            case "--help":
                print("usage: scrollback-bench [--quick] [--work DIR] [--json PATH] [--binary PATH] [--only SECTION]...")
                exit(0)
            default: throw BenchError("unknown argument \(arguments[index]); see --help")
            }
            index += 1
        }
    }
}

struct Sizes {
    let big: Int, small: Int, tiny: Int, medium: Int, deleted: Int, exportConversations: Int, exportMessages: Int, sync: Int
    static let full = Sizes(
        big: 1_000_000, small: 10_000, tiny: 1_000, medium: 150_000, deleted: 100_000, exportConversations: 10_000, exportMessages: 50,
        sync: 100_000)
    static let quick = Sizes(
        big: 3_000, small: 300, tiny: 100, medium: 1_500, deleted: 1_000, exportConversations: 100, exportMessages: 10, sync: 300)
}

@MainActor
func main() throws {
    let options = try Options(Array(CommandLine.arguments.dropFirst()))
    if let child = options.child {
        guard let database = options.database else { throw BenchError("--child needs --db") }
        try Child.run(child, database: database, file: options.file)
        return
    }
    try FileManager.default.createDirectory(atPath: options.work, withIntermediateDirectories: true)
    let sizes = options.quick ? Sizes.quick : Sizes.full
    var report = Report(
        machine: Machine.describe(), quick: options.quick,
        sizes: ["big": sizes.big, "small": sizes.small, "tiny": sizes.tiny, "medium": sizes.medium, "deleted": sizes.deleted,
                "exportConversations": sizes.exportConversations, "exportMessages": sizes.exportConversations * sizes.exportMessages])
    let data = DataSet(work: options.work, sizes: sizes)
    func wanted(_ section: String) -> Bool { options.only.isEmpty || options.only.contains(section) }
    // The demo databases, made (or found) only when a section wanted needs them.
    let needsDemo = ["page", "filter", "frame", "memory", "key", "keyframe", "search", "overview", "backup", "mcp"].contains(where: wanted)
    let big = needsDemo ? try data.demo(sizes.big, name: "big", rare: true) : ""
    let small = needsDemo ? try data.demo(sizes.small, name: "small") : ""
    let tiny = needsDemo ? try data.demo(sizes.tiny, name: "tiny") : ""
    print(Report.header)
    if wanted("page") { try Sections.pageCost(big: big, total: sizes.big, report: &report) }
    if wanted("filter") {
        try Sections.filteredPages(big: big, report: &report)
        try Sections.narrowedPages(big: big, report: &report)
    }
    if wanted("frame") { try Sections.firstFrame(big: big, binary: options.binary, report: &report) }
    if wanted("memory") { try Sections.memory(big: big, small: small, tiny: tiny, sizes: sizes, report: &report) }
    if wanted("key") { try Sections.perKey(big: big, report: &report) }
    if wanted("keyframe") { try KeyToFrame.run(big: big, quick: options.quick, report: &report) }
    if wanted("overview") { try OverviewBench.run(big: big, quick: options.quick, report: &report) }
    if wanted("import") { try Sections.importSpeed(data: data, sizes: sizes, report: &report) }
    if wanted("delete") { try Sections.batchDelete(data: data, sizes: sizes, report: &report) }
    if wanted("search") { try Sections.search(big: big, report: &report) }
    if wanted("agents") { try AgentBench.run(work: options.work, quick: options.quick, report: &report) }
    if wanted("mcp") { try MCPBench.run(big: big, binary: options.binary, quick: options.quick, report: &report) }
    if wanted("backup") { try BackupBench.run(big: big, binary: options.binary, work: options.work, report: &report) }
    if wanted("attachments") { try AttachmentBench.run(work: options.work, binary: options.binary, quick: options.quick, report: &report) }
    if wanted("sync") {
        // SCROLLBACK_BENCH_SYNC_COUNT: another size, for a quicker look while working on sync.
        let count = ProcessInfo.processInfo.environment["SCROLLBACK_BENCH_SYNC_COUNT"].flatMap { Int($0) }.flatMap { $0 > 0 ? $0 : nil }
        try SyncBench.run(work: options.work, count: count ?? sizes.sync, report: &report)
    }
    let failed = report.results.filter { !$0.passed }.count
    print("\n\(report.results.count - failed) passed, \(failed) failed")
    let jsonPath = options.json ?? (options.work as NSString).appendingPathComponent("results.json")
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
    try encoder.encode(report).write(to: URL(fileURLWithPath: jsonPath))
    print("results written to \(jsonPath)")
}

do {
    try MainActor.assumeIsolated { try main() }
} catch {
    FileHandle.standardError.write(Data("scrollback-bench: \(error)\n".utf8))
    exit(1)
}
