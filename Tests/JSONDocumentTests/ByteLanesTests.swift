import Testing
import JSONDocument

/// ``ByteLanes/plainStringEnd(in:from:)`` against a byte-by-byte reading of its rule: whole
/// words of 8 from `start`; the first byte that is not plain string text (non-ASCII, a quote, a
/// backslash, a control character) in the first word that holds one; else where fewer than 8
/// are left.
@Suite("Byte lanes")
struct ByteLanesTests {
    private static func isPlain(_ byte: UInt8) -> Bool {
        byte < 0x80 && byte >= 0x20 && byte != UInt8(ascii: "\"") && byte != UInt8(ascii: "\\")
    }

    private static func expectedEnd(_ bytes: [UInt8], from start: Int) -> Int {
        var index = start
        while bytes.count - index >= 8 {
            if let first = (index..<index + 8).first(where: { !isPlain(bytes[$0]) }) { return first }
            index += 8
        }
        return index
    }

    private static func end(_ bytes: [UInt8], from start: Int) -> Int {
        bytes.withUnsafeBufferPointer { ByteLanes.plainStringEnd(in: $0, from: start) }
    }

    @Test(
        "the first byte that is not plain, at every offset of the words and after them",
        arguments: [0x22, 0x5C, 0x00, 0x1F, 0x0A, 0x7F, 0x80, 0xC3, 0xFF] as [UInt8])
    func firstByte(special: UInt8) {
        for start in 0..<8 {
            for offset in start..<40 {
                var bytes = [UInt8](repeating: UInt8(ascii: "a"), count: 40)
                bytes[offset] = special
                #expect(Self.end(bytes, from: start) == Self.expectedEnd(bytes, from: start), "start \(start), byte \(special) at \(offset)")
            }
        }
    }

    @Test("a byte above 0x7F later in the word does not move the first byte found, nor makes one up before it")
    func highByteLater() {
        // A lane's sums carry into the lanes above it: a quote after 0xFF is flagged wrongly
        // or not at all, and the answer must still be the 0xFF; a quote before it, the quote.
        for first in 0..<7 {
            for second in (first + 1)..<8 {
                for (a, b) in [(UInt8(ascii: "\""), 0xFF), (0xFF, UInt8(ascii: "\"")), (0x1F, 0x80), (0x80, 0x5C), (0xFF, 0xFF)] as [(UInt8, UInt8)] {
                    var bytes = [UInt8](repeating: UInt8(ascii: "!"), count: 16)
                    bytes[first] = a
                    bytes[second] = b
                    #expect(Self.end(bytes, from: 0) == first, "\(a) at \(first), \(b) at \(second)")
                }
            }
            var bytes = [UInt8](repeating: UInt8(ascii: "~"), count: 16)
            bytes[first + 1] = 0xFF
            #expect(Self.end(bytes, from: 0) == first + 1, "0xFF at \(first + 1) after plain bytes")
        }
    }

    private static func expectedEscape(_ bytes: [UInt8], from start: Int) -> Int {
        (start..<bytes.count).first { bytes[$0] < 0x20 || bytes[$0] == UInt8(ascii: "\"") || bytes[$0] == UInt8(ascii: "\\") } ?? bytes.count
    }

    private static func escape(_ bytes: [UInt8], from start: Int) -> Int {
        bytes.withUnsafeBufferPointer { ByteLanes.escapeEnd(in: $0, from: start) }
    }

    @Test("the first byte to escape; bytes above 0x7F, even those whose low 7 bits are a quote, a backslash or a control character, are not")
    func escapes() {
        // 0xA2, 0xDC and 0x80...0x9F are a quote, a backslash and control characters with the
        // top bit set.
        for start in 0..<8 {
            for offset in start..<40 {
                for special in [0x22, 0x5C, 0x00, 0x1F, 0x0A] as [UInt8] {
                    var bytes = [UInt8](repeating: 0xA2, count: 40)
                    for index in stride(from: 1, to: 40, by: 3) { bytes[index] = 0xDC }
                    for index in stride(from: 2, to: 40, by: 5) { bytes[index] = 0x8A }
                    bytes[offset] = special
                    #expect(Self.escape(bytes, from: start) == offset, "start \(start), byte \(special) at \(offset)")
                }
            }
            #expect(Self.escape([UInt8](repeating: 0x9F, count: 40), from: start) == 40)
            #expect(Self.escape(Array("plain text, é and ü".utf8), from: start) == Array("plain text, é and ü".utf8).count)
        }
    }

    @Test("random bytes: the same ends as the byte-by-byte readings")
    func randomBytes() {
        // A fixed linear congruential sequence: the same cases on every run.
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next() -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state >> 33
        }
        let alphabet: [UInt8] = [
            UInt8(ascii: "A"), UInt8(ascii: "-"), UInt8(ascii: " "), 0x22, 0x5C, 0x00, 0x1F, 0x20, 0x7E, 0x7F, 0x80, 0x9F, 0xA2, 0xBF, 0xC3, 0xDC, 0xFF,
        ]
        for _ in 0..<5_000 {
            let count = Int(next() % 48)
            // Mostly plain, so that runs of whole words occur.
            let bytes = (0..<count).map { _ in next() % 16 < 13 ? UInt8(ascii: "x") : alphabet[Int(next() % UInt64(alphabet.count))] }
            let start = count == 0 ? 0 : Int(next() % UInt64(count))
            #expect(Self.end(bytes, from: start) == Self.expectedEnd(bytes, from: start), "\(bytes) from \(start)")
            #expect(Self.escape(bytes, from: start) == Self.expectedEscape(bytes, from: start), "escape: \(bytes) from \(start)")
        }
    }
}
