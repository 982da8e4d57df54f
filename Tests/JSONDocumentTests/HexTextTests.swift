import Testing
import JSONDocument

/// Lowercase hexadecimal text of bytes, with expectations written by hand (and FIPS 180-2's
/// SHA-256 of "abc", a published digest).
@Suite("Hexadecimal text")
struct HexTextTests {
    @Test("two lowercase digits per byte, most significant first")
    func digits() {
        #expect(lowercaseHex([]) == "")
        #expect(lowercaseHex([0x00]) == "00")
        #expect(lowercaseHex([0x0F, 0xF0, 0x09, 0x90]) == "0ff00990")
        #expect(lowercaseHex([0xAB, 0xCD, 0xEF, 0x12, 0x34]) == "abcdef1234")
        #expect(lowercaseHex(AnySequence([UInt8(0xFF), 0x7F, 0x80])) == "ff7f80")
    }

    @Test("every byte value, in order")
    func everyByte() {
        let text = lowercaseHex((0...255).map(UInt8.init))
        let digits = Array("0123456789abcdef")
        #expect(text.count == 512)
        for (index, pair) in Array(text).chunked(2).enumerated() {
            #expect(pair == [digits[index / 16], digits[index % 16]], "byte \(index)")
        }
    }

    @Test("a published digest")
    func publishedDigest() {
        let abc: [UInt8] = [
            0xBA, 0x78, 0x16, 0xBF, 0x8F, 0x01, 0xCF, 0xEA, 0x41, 0x41, 0x40, 0xDE, 0x5D, 0xAE, 0x22, 0x23,
            0xB0, 0x03, 0x61, 0xA3, 0x96, 0x17, 0x7A, 0x9C, 0xB4, 0x10, 0xFF, 0x61, 0xF2, 0x00, 0x15, 0xAD,
        ]
        #expect(lowercaseHex(abc) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }
}

extension Array {
    fileprivate func chunked(_ size: Int) -> [[Element]] {
        stride(from: 0, to: count, by: size).map { Array(self[$0..<Swift.min($0 + size, count)]) }
    }
}
