import CCrypto
import Foundation

/// The 256-bit key that seals everything sync sends (AES-256-GCM): made on the first
/// machine, carried to the others by the user (`sync key show`, `sync key import`); the
/// server never sees it.
public struct SyncKey: Sendable, Equatable {
    let bytes: [UInt8]

    public static let byteCount = 32
    static let nonceCount = 12
    static let tagCount = 16

    init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// A new random key from the system's generator (through OpenSSL).
    public static func generate() throws -> SyncKey {
        SyncKey(bytes: try randomBytes(byteCount))
    }

    static func randomBytes(_ count: Int) throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        let ok = bytes.withUnsafeMutableBufferPointer { RAND_bytes($0.baseAddress, Int32(count)) }
        guard ok == 1 else { throw SyncError.crypto("the system's random generator failed") }
        return bytes
    }

    /// The key as the text `sync key show` prints and `sync key import` reads: base64, 44
    /// characters.
    public var text: String { Data(bytes).base64EncodedString() }

    /// Reads `text` (base64; spaces and line breaks anywhere are ignored); nil when it is
    /// not 32 bytes of base64.
    public init?(text: String) {
        let compact = String(text.unicodeScalars.filter { !CharacterSet.whitespacesAndNewlines.contains($0) })
        guard compact.utf8.count == 44, let data = Data(base64Encoded: compact), data.count == Self.byteCount else { return nil }
        // No key made here is 32 equal bytes: such text is a placeholder, not a key.
        guard let first = data.first, data.contains(where: { $0 != first }) else { return nil }
        self.bytes = Array(data)
    }

    /// Why `text` is not a key (nil when it is one), in words that say what is wrong with it.
    public static func problem(with text: String) -> String? {
        guard SyncKey(text: text) == nil else { return nil }
        let compact = String(text.unicodeScalars.filter { !CharacterSet.whitespacesAndNewlines.contains($0) })
        let shape = "a key is 44 characters of base64, as `scrollback sync key show` prints it"
        guard compact.utf8.count == 44 else { return "it is \(compact.count) characters long; \(shape)" }
        guard let data = Data(base64Encoded: compact), data.count == byteCount else {
            return "it is not base64 (letters, digits, + and /, ending in =); \(shape)"
        }
        return "it is 32 equal bytes (a placeholder such as all zeros), not a key scrollback made; use the key `scrollback sync key show` prints on a machine that syncs"
    }

    /// `plaintext` sealed with a fresh random nonce, bound to `aad`: nonce, ciphertext, tag.
    public func seal(_ plaintext: [UInt8], aad: [UInt8]) throws -> [UInt8] {
        let nonce = try Self.randomBytes(Self.nonceCount)
        guard plaintext.count < Int(Int32.max) - 64, aad.count < Int(Int32.max) else {
            throw SyncError.crypto("a change is too large to seal (\(plaintext.count) bytes)")
        }
        var cipher = [UInt8](repeating: 0, count: max(plaintext.count, 1))
        var tag = [UInt8](repeating: 0, count: Self.tagCount)
        let ok = bytes.withUnsafeBufferPointer { key in
            nonce.withUnsafeBufferPointer { nonce in
                aad.withUnsafeBufferPointer { aadBytes in
                    plaintext.withUnsafeBufferPointer { plain in
                        cipher.withUnsafeMutableBufferPointer { out in
                            tag.withUnsafeMutableBufferPointer { tagOut in
                                scrollback_aes256gcm_seal(
                                    key.baseAddress, nonce.baseAddress, aadBytes.baseAddress, Int32(aad.count), plain.baseAddress,
                                    Int32(plaintext.count), out.baseAddress, tagOut.baseAddress)
                            }
                        }
                    }
                }
            }
        }
        guard ok == 1 else { throw SyncError.crypto("OpenSSL could not seal a change") }
        return nonce + cipher.prefix(plaintext.count) + tag
    }

    /// The plaintext of `sealed`, or nil when it was not sealed with this key and `aad`
    /// (another key, or bytes changed on the way).
    func open(_ sealed: [UInt8], aad: [UInt8]) -> [UInt8]? {
        guard sealed.count >= Self.nonceCount + Self.tagCount, sealed.count < Int(Int32.max), aad.count < Int(Int32.max) else {
            return nil
        }
        let length = sealed.count - Self.nonceCount - Self.tagCount
        var plain = [UInt8](repeating: 0, count: max(length, 1))
        let ok = bytes.withUnsafeBufferPointer { key in
            sealed.withUnsafeBufferPointer { all in
                aad.withUnsafeBufferPointer { aadBytes in
                    plain.withUnsafeMutableBufferPointer { out in
                        guard let base = all.baseAddress else { return Int32(0) }
                        return scrollback_aes256gcm_open(
                            key.baseAddress, base, aadBytes.baseAddress, Int32(aad.count), base + Self.nonceCount, Int32(length),
                            base + Self.nonceCount + length, out.baseAddress)
                    }
                }
            }
        }
        guard ok == 1 else { return nil }
        return Array(plain.prefix(length))
    }
}

extension SyncKey {
    /// Seals `plaintext` into `out` as `seal` does (nonce, ciphertext, tag), `out` holding
    /// 28 bytes more than it; returns how many bytes it wrote.
    func seal(_ plaintext: UnsafeRawBufferPointer, aad: [UInt8], into out: UnsafeMutableRawBufferPointer) throws -> Int {
        let length = plaintext.count
        guard length < Int(Int32.max) - 64, aad.count < Int(Int32.max), out.count >= length + Self.nonceCount + Self.tagCount,
            let target = out.baseAddress?.assumingMemoryBound(to: UInt8.self)
        else { throw SyncError.crypto("a chunk is too large to seal (\(length) bytes)") }
        guard RAND_bytes(target, Int32(Self.nonceCount)) == 1 else { throw SyncError.crypto("the system's random generator failed") }
        var empty: UInt8 = 0
        let source = plaintext.baseAddress?.assumingMemoryBound(to: UInt8.self)
        let ok = bytes.withUnsafeBufferPointer { key in
            aad.withUnsafeBufferPointer { aadBytes in
                withUnsafeMutablePointer(to: &empty) { nothing in
                    scrollback_aes256gcm_seal(
                        key.baseAddress, target, aadBytes.baseAddress, Int32(aad.count), source ?? UnsafePointer(nothing), Int32(length),
                        target + Self.nonceCount, target + Self.nonceCount + length)
                }
            }
        }
        guard ok == 1 else { throw SyncError.crypto("OpenSSL could not seal a chunk") }
        return Self.nonceCount + length + Self.tagCount
    }

    /// Opens `sealed` (nonce, ciphertext, tag) into `out`, which must hold its plaintext;
    /// returns the plaintext's length, or nil when it was not sealed with this key and `aad`.
    func open(_ sealed: UnsafeRawBufferPointer, aad: [UInt8], into out: UnsafeMutableRawBufferPointer) -> Int? {
        guard sealed.count >= Self.nonceCount + Self.tagCount, sealed.count < Int(Int32.max), aad.count < Int(Int32.max),
            let base = sealed.baseAddress?.assumingMemoryBound(to: UInt8.self)
        else { return nil }
        let length = sealed.count - Self.nonceCount - Self.tagCount
        guard out.count >= length, let target = out.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return nil }
        let ok = bytes.withUnsafeBufferPointer { key in
            aad.withUnsafeBufferPointer { aadBytes in
                scrollback_aes256gcm_open(
                    key.baseAddress, base, aadBytes.baseAddress, Int32(aad.count), base + Self.nonceCount, Int32(length),
                    base + Self.nonceCount + length, target)
            }
        }
        return ok == 1 ? length : nil
    }

    /// HMAC-SHA-256 of `data` under this key.
    func mac(_ data: [UInt8]) throws -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        let ok = bytes.withUnsafeBufferPointer { key in
            data.withUnsafeBufferPointer { input in
                out.withUnsafeMutableBufferPointer { output in
                    scrollback_hmac_sha256(key.baseAddress, Int32(key.count), input.baseAddress, input.count, output.baseAddress)
                }
            }
        }
        guard ok == 1 else { throw SyncError.crypto("OpenSSL could not compute an HMAC") }
        return out
    }

    /// The name a file goes by on the server: an HMAC of its content (of its SHA-256) under
    /// a key drawn from this one, 64 hex digits. The server cannot test a file it knows
    /// against it without the key, and two machines with the key name the same file alike,
    /// so that it is sent once.
    public func fileName(sha256: String) throws -> String {
        let fileKey = SyncKey(bytes: try mac(Array("scrollback-file-name-v1".utf8)))
        return try fileKey.mac(Array(sha256.utf8)).map { String(format: "%02x", $0) }.joined()
    }
}

