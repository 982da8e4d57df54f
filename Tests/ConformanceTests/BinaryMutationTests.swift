import Foundation
import Testing
import JSONDocument
import EnsembleModel
import EventCodecs
import TestSupport

/// Every binary fixture, damaged systematically: each bit of the header and of a sample of the
/// body flipped, and (for small files) cut at every position. Each result must be rejected with
/// a code or decode to an event that encodes again; nothing may crash or hang.
@Suite("Binary bit flips and truncations")
struct BinaryMutationTests {
    static let files: [String] = ["valid", "noncanonical"].flatMap { folder in
        Fixtures.files(in: "v2-binary/\(folder)", suffix: ".bin").map { "v2-binary/\(folder)/\($0)" }
    }

    static func check(_ bytes: [UInt8]) {
        do throws(FormatError) {
            let event = try V2BinaryDecoder().decode(bytes)
            // A decoded event is a valid event: it encodes in both encodings.
            #expect((try? V2BinaryEncoder().encode(event)) != nil)
            _ = try? V2JSONEncoder().encode(event)
        } catch {
            #expect(!error.code.rawValue.isEmpty)
            #expect(error.location.offset != nil, "\(error) has no offset")
        }
    }

    @Test("flipping bits and truncating never crashes", arguments: files)
    func mutations(file: String) throws {
        let original = try Fixtures.bytes(file)
        #expect(!original.isEmpty)
        var random = SplitMix64(seed: UInt64(original.count))
        let headerBits = min(original.count, 16) * 8
        var positions = Array(0..<headerBits)
        for _ in 0..<400 { positions.append(Int.random(in: 0..<(original.count * 8), using: &random)) }
        for bit in positions {
            var bytes = original
            bytes[bit / 8] ^= UInt8(1 << (bit % 8))
            Self.check(bytes)
        }
        if original.count <= 4_096 {
            for length in 0..<original.count { Self.check(Array(original.prefix(length))) }
        }
    }
}
