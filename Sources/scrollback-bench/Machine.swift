import Foundation

enum Machine {
    static func describe() -> [String: String] {
        var facts: [String: String] = [:]
        facts["cores"] = "\(ProcessInfo.processInfo.activeProcessorCount)"
        facts["memory"] = "\(ProcessInfo.processInfo.physicalMemory / 1_048_576) MiB"
        if let cpu = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8),
           let model = cpu.split(separator: "\n").first(where: { $0.hasPrefix("model name") })
        {
            facts["cpu"] = model.split(separator: ":", maxSplits: 1).last.map { $0.trimmingCharacters(in: .whitespaces) }
        }
        facts["os"] = ProcessInfo.processInfo.operatingSystemVersionString
        return facts
    }
}
