import Testing

import ScrollbackModel

/// Public ids derived from names must never change: a re-import matches stored rows by them.
/// These values were produced by the first implementation (string building per character).
@Suite("Stable ids")
struct StableIDTests {
    @Test("the same names give the same ids as every earlier release")
    func goldens() {
        #expect(StableID.uuid("chatgpt", "conv-00000001") == "801ac731-a2d3-8b0c-a076-c7edb33d1d23")
        #expect(StableID.uuid("scrollback-jsonl-id", "x") == "87f9e7a6-df83-8456-a142-40aa598dce7f")
        #expect(StableID.uuid("3f2a0c1e-0000-4000-8000-000000000000", "0") == "b67cff9b-7e8a-8fb5-aed8-1ca4f4bb51ff")
        #expect(StableID.uuid("claude", "日本語") == "f78415d1-fd9d-8756-ad35-d37cd8db1b58")
        #expect(StableID.uuid("") == "f52a15e9-a9b5-889b-adfd-a0d242ae1209")
    }

    @Test("an id is a 36-character UUID of version 8")
    func shape() {
        for name in ["", "a", "日本語", "x\u{0}y", String(repeating: "long ", count: 1_000)] {
            let id = Array(StableID.uuid(name, "7").utf8)
            #expect(id.count == 36)
            #expect([8, 13, 18, 23].allSatisfy { id[$0] == UInt8(ascii: "-") })
            #expect(id[14] == UInt8(ascii: "8") && id[19] == UInt8(ascii: "a"))
        }
    }
}
