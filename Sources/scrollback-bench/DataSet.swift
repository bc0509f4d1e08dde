import Foundation
import ScrollbackDemo
import ScrollbackModel
import ScrollbackStorage

/// What the benchmark measures on, made once in the work folder and reused while it fits.
struct DataSet {
    let work: String
    let sizes: Sizes

    static let rareWord = "quetzalcoatl"
    static let rareCJK = "鰻丼"

    func path(_ name: String) -> String { (work as NSString).appendingPathComponent(name) }

    /// A demo database of `count` conversations (seed 1); with `rare`, three conversations
    /// hold a word found nowhere else.
    func demo(_ count: Int, name: String, rare: Bool = false) throws -> String {
        let file = path("\(name)-\(count).sqlite")
        if FileManager.default.fileExists(atPath: file), let store = try? Store.open(path: file),
           let stored = try? store.conversations.count(), stored == count || stored == count + (rare ? 3 : 0)
        {
            if rare { try addRare(to: store) }
            return file
        }
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: file + suffix) }
        print("making \(name): \(count) conversations…")
        let store = try Store.open(path: file)
        _ = try DemoGenerator(seed: 1).fill(store, count: count)
        if rare { try addRare(to: store) }
        return file
    }

    /// Three conversations holding a word and a CJK word found nowhere else, unless there.
    private func addRare(to store: Store) throws {
        for index in 0..<3 {
            let time = Timestamp(milliseconds: 1_600_000_000_000 + Int64(index) * 86_400_000)
            _ = try store.add(
                ImportedConversation(
                    source: "bench", sourceID: "rare-\(index)", title: "Rare \(index)", model: nil, createdAt: time,
                    updatedAt: time,
                    messages: [ImportedMessage(role: .user, content: "Tell me about \(Self.rareWord) number \(index), and \(Self.rareCJK)", createdAt: time)]))
        }
    }

    /// A ChatGPT-format export of `exportConversations` × `exportMessages`, written as a
    /// stream. Returns its path.
    func chatGPTExport() throws -> String {
        let file = path("export-\(sizes.exportConversations)x\(sizes.exportMessages).json")
        if FileManager.default.fileExists(atPath: file) { return file }
        print("making a ChatGPT export…")
        guard FileManager.default.createFile(atPath: file, contents: nil), let handle = FileHandle(forWritingAtPath: file) else {
            throw BenchError("cannot write \(file)")
        }
        defer { try? handle.close() }
        var random = SplitMix64(seed: 9)
        let words = ["the", "index", "query", "plan", "東京", "ラーメン", "café", "résumé", "swift", "python", "table", "fox", "👩‍💻"]
        handle.write(Data("[".utf8))
        for conversation in 0..<sizes.exportConversations {
            var mapping: [String: Any] = ["root": ["id": "root", "message": NSNull(), "parent": NSNull(), "children": ["m0"]]]
            let start = 1_700_000_000.0 + Double(conversation) * 60
            for index in 0..<sizes.exportMessages {
                let role = index % 2 == 0 ? "user" : "assistant"
                let length = 20 + Int(random.next() % 40)
                let text = (0..<length).map { _ in words[Int(random.next() % UInt64(words.count))] }.joined(separator: " ")
                var message: [String: Any] = [
                    "id": "m\(index)", "author": ["role": role], "create_time": start + Double(index),
                    "content": ["content_type": "text", "parts": [text]],
                ]
                if role == "assistant" { message["metadata"] = ["model_slug": "gpt-4o"] }
                mapping["m\(index)"] = [
                    "id": "m\(index)", "parent": index == 0 ? "root" : "m\(index - 1)",
                    "children": index + 1 < sizes.exportMessages ? ["m\(index + 1)"] : [], "message": message,
                ]
            }
            let record: [String: Any] = [
                "title": "Conversation \(conversation)", "create_time": start, "update_time": start + 100,
                "conversation_id": String(format: "conv-%08d", conversation), "current_node": "m\(sizes.exportMessages - 1)",
                "default_model_slug": "gpt-4o", "mapping": mapping,
            ]
            if conversation > 0 { handle.write(Data(",".utf8)) }
            handle.write(try JSONSerialization.data(withJSONObject: record))
        }
        handle.write(Data("]".utf8))
        return file
    }
}
