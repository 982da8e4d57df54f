import Testing
import TestSupport
import JSONDocument

@Suite("JSON numbers")
struct JSONNumberTests {
    /// `exactDouble` against the full conversion (`Double(String)`, correctly rounded): every
    /// answer it gives has the same bits, and it answers for the numbers decoders meet most.
    @Test("the fast path to a double gives the correctly rounded value, bit for bit, or nothing")
    func exactDouble() {
        func fast(_ text: String) -> Double? {
            Array(text.utf8).withUnsafeBufferPointer { JSONNumber.exactDouble($0) }
        }
        // Answered: up to 2^53 with a power of ten up to 10^22; signs, zeros, exponents.
        for text in [
            "1.5", "-0.25", "0.1", "12345.678", "-0.0", "0.0", "0e7", "-0E-3", "1e22", "1E+22", "9007199254740992e0", "4.35",
            "0.000000000000000000001", "1234567890123456e-4", "9007199254740992e-22", "1.797693134862315",
        ] {
            let value = fast(text)
            #expect(value != nil && value?.bitPattern == Double(text)?.bitPattern, "\(text)")
        }
        // Left to the full conversion: beyond 2^53, beyond 10^22 either way, 20 digits.
        for text in [
            "9007199254740993.0", "1e23", "1e-23", "12345678901234567890.0", "1.7976931348623157", "123456789012345678e-4", "5e-324", "1e1000",
        ] {
            #expect(fast(text) == nil, "\(text)")
        }
        // Text that is no number is never answered (`JSONNumber(text:)` trusts its caller).
        for text in ["", "-", "e5", ".5", "1e", "1e+", "+1", "1x", "--1"] {
            #expect(fast(text) == nil && JSONNumber(text: text).doubleValue.bitPattern == (Double(text) ?? .nan).bitPattern, "\(text)")
        }
        var random = SplitMix64(seed: 3)
        var answered = 0
        for _ in 0..<50_000 {
            let integer = String(UInt64.random(in: 0..<1_000_000_000_000, using: &random) >> UInt64.random(in: 0..<40, using: &random))
            let fraction = String((0..<Int.random(in: 0..<12, using: &random)).map { _ in Character(String(Int.random(in: 0..<10, using: &random))) })
            var text = (Bool.random(using: &random) ? "-" : "") + integer
            if !fraction.isEmpty || Bool.random(using: &random) { text += "." + (fraction.isEmpty ? "0" : fraction) }
            if Int.random(in: 0..<3, using: &random) == 0 { text += "e" + String(Int.random(in: -30...30, using: &random)) }
            guard let value = fast(text) else { continue }
            answered += 1
            #expect(value.bitPattern == Double(text)?.bitPattern, "\(text)")
        }
        #expect(answered > 25_000)
    }
}
