import Foundation
import Testing

import TestSupport

/// The benchmark program keeps working: its quick mode runs here on tiny data. No test
/// asserts a time; the figures are for `scrollback-bench` run by hand in release mode.
@Suite("scrollback-bench")
struct BenchmarkTests {
    @Test("--quick measures every section and writes its JSON")
    func quick() throws {
        let folder = try TemporaryDirectory()
        let bench = Bundle.main.bundleURL.appendingPathComponent("scrollback-bench").path
        let result = try ChildProcess.run(bench, ["--quick", "--work", folder.path, "--binary", BinaryRunner.binary.path])
        #expect(result.status == 0, "\(result.errorText)")
        let data = try Data(contentsOf: URL(fileURLWithPath: folder.file("results.json")))
        let report = try JSONSerialization.jsonObject(with: data) as? [String: Any]
        #expect(report?["quick"] as? Bool == true)
        let rows = report?["results"] as? [[String: Any]] ?? []
        let sections = Set(rows.compactMap { $0["section"] as? String })
        #expect(sections == ["page", "filter", "frame", "memory", "key", "keyframe", "overview", "import", "delete", "search", "sync", "agents", "attachments", "backup", "mcp"])
        for row in rows {
            #expect((row["ours"] as? Double ?? -1) >= 0, "\(row)")
            #expect((row["baseline"] as? Double ?? -1) >= 0, "\(row)")
        }
        // The batch delete leaves a healthy database behind.
        #expect(rows.first { $0["figureName"] as? String == "clean" }?["passed"] as? Bool == true)
    }
}
