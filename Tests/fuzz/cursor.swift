// libFuzzer harness: the page-token decoder (ScrollbackModel's Cursor). Built with the
// model's sources by Tests/fuzz/fuzz-text.sh. Any input must decode or throw, never trap; a
// token that decodes must encode back to a token that decodes to the same cursor.
import Foundation

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCursor(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    guard let cursor = try? Cursor(token: text) else { return 0 }
    guard let again = try? Cursor(token: cursor.token), again == cursor else {
        fatalError("round trip failed for \(text.debugDescription)")
    }
    return 0
}
