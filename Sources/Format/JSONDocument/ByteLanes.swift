/// Tests on the 8 bytes of a 64-bit word at once, each byte a lane: the few bit operations that
/// replace a loop with a branch per byte, which random identifiers mispredict half of the time.
/// Written once for the readers of UUID text, identifiers and JSON strings.
///
/// Public only so that other modules inline it: `@inlinable` on a `package` declaration left a
/// call per word (also with `@inline(__always)` or `@_alwaysEmitIntoClient`, Swift 6.3), which
/// cost a tenth of JSON decoding and part of every identifier's parse (measured:
/// Benchmarks/README.md).
public enum ByteLanes {
    /// 0x80 in each byte of `word` whose value lies in `first..<end`, 0 in the others. Every
    /// byte of `word` must be below 0x80 (test `word & 0x8080_8080_8080_8080` first), so that
    /// adding up to 0x80 to a byte carries into no other; `first <= end <= 0x80`.
    @inlinable
    public static func inRange(_ word: UInt64, _ first: UInt8, _ end: UInt8) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101
        return (word &+ ones &* UInt64(0x80 - first)) & ~(word &+ ones &* UInt64(0x80 - end)) & 0x8080_8080_8080_8080
    }

    /// The low 4 bits of each byte of `nibbles` (the high 4 must be 0), packed into 32 bits: the
    /// highest byte's in the highest 4 bits.
    @inlinable
    public static func packNibbles(_ nibbles: UInt64) -> UInt32 {
        var packed = (nibbles | nibbles >> 4) & 0x00FF_00FF_00FF_00FF
        packed = (packed | packed >> 8) & 0x0000_FFFF_0000_FFFF
        return UInt32(truncatingIfNeeded: packed | packed >> 16)
    }
}
