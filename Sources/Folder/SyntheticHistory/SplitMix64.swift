/// SplitMix64: a small random generator that gives the same sequence on every platform, so a
/// test built on random inputs repeats exactly from its seed.
package struct SplitMix64: RandomNumberGenerator {
    package var state: UInt64

    package init(seed: UInt64) { state = seed }

    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

extension SplitMix64 {
    /// A value in 0..<bound (bound > 0); the slight modulo bias does not matter for test data.
    package mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }

    /// True with probability `p`.
    package mutating func chance(_ p: Double) -> Bool { Double(next() >> 11) / Double(1 << 53) < p }

    /// An uppercase UUID text, as Apple's `UUID().uuidString` writes one. Spelt out digit by
    /// digit: `String(format:)` per byte was most of the time `generate` took to name 100,000
    /// objects.
    package mutating func uuidString() -> String {
        let high = next(), low = next()
        let hex = Array("0123456789ABCDEF".utf8)
        var text = [UInt8](repeating: UInt8(ascii: "-"), count: 36)
        var position = 0
        for index in 0..<16 {
            var byte = UInt8(truncatingIfNeeded: (index < 8 ? high : low) >> UInt64(56 - 8 * (index % 8)))
            if index == 6 { byte = byte & 0x0F | 0x40 }
            if index == 8 { byte = byte & 0x3F | 0x80 }
            if index == 4 || index == 6 || index == 8 || index == 10 { position += 1 }
            text[position] = hex[Int(byte >> 4)]
            text[position + 1] = hex[Int(byte & 0x0F)]
            position += 2
        }
        return String(decoding: text, as: UTF8.self)
    }
}
