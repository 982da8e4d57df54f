import Foundation
import Testing
@testable import MergeEngine

/// The digest of replayed file names is the SHA-256 of each name's bytes then a NUL, however
/// the names are fed to the hash. The expected digests were computed with Python's hashlib:
/// `sha256(b"".join(name.encode() + b"\0" for name in names)).hexdigest()`.
@Suite("File sequence digest")
struct FileSequenceDigestTests {
    static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    @Test("two names, and 3,000 names (103,518 bytes, fed in several blocks), finalized midway and at the end")
    func digest() {
        var digest = FileSequenceDigest()
        digest.record("a")
        digest.record("b")
        #expect(Self.hex(digest.finalize()) == "8fb20ef63ced4145fc2e983ffe597d1dcff39154c3bf21f0fa9dde6a0c50fdc9")
        var many = FileSequenceDigest()
        for index in 0..<3_000 {
            many.record("events/\(index)_STORE-\(index % 7 < 10 ? "0" : "")\(index % 7)_\(index * 3).cdeevent")
            if index == 1_000 { _ = many.finalize() }
        }
        #expect(Self.hex(many.finalize()) == "99dde7b0d96765924c53329465187f743cb4d4f10e09f6d9eb75bd0a8b3719d4")
    }
}
