/// Tests on the 8 bytes of a 64-bit word at once, each byte a lane: the few bit operations that
/// replace a loop with a branch per byte, which random identifiers mispredict half of the time.
/// Written once for the readers of UUID text, identifiers and JSON strings.
///
/// Other modules call these out of line: `@inlinable`, `@inline(__always)`,
/// `@_alwaysEmitIntoClient` and `@_transparent` on a `package` declaration all left a call (Swift
/// 6.3.1), and only what a library user calls is public. A loop over many words therefore stands
/// here whole (``plainStringEnd(in:from:)``), one call for all its words (measured:
/// Benchmarks/README.md).
package enum ByteLanes {
    /// 0x80 in each byte of `word` whose value lies in `first..<end`, 0 in the others, when
    /// every byte of `word` is below 0x80 (test `word & 0x8080_8080_8080_8080` first): adding
    /// up to 0x80 to such a byte carries into no other; `first <= end <= 0x80`. A byte above
    /// 0x7F carries into the bytes after it (the higher lanes), so with one the lanes before the
    /// first such byte are still exact, and only those (``plainStringEnd(in:from:)``).
    @inlinable
    package static func inRange(_ word: UInt64, _ first: UInt8, _ end: UInt8) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101
        return (word &+ ones &* UInt64(0x80 - first)) & ~(word &+ ones &* UInt64(0x80 - end)) & 0x8080_8080_8080_8080
    }

    /// Where the bytes of `text` from `start` on stop being bytes a JSON string holds as they
    /// are (ASCII, and neither a quote, a backslash nor a control character), read 8 at a time:
    /// the first byte that is not one, or where fewer than 8 are left, for the caller's
    /// byte-by-byte loop, which decides. The first such byte of a word is found from its lanes:
    /// a lane's sums carry only into higher lanes, so every lane below the first flagged one is
    /// exact even when a later byte is not ASCII (stopping at the word cost each string's last
    /// few bytes a turn of the caller's loop: Benchmarks/README.md).
    package static func plainStringEnd(in text: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        guard let base = text.baseAddress.map(UnsafeRawPointer.init) else { return start }
        var index = start
        while text.count - index >= 8 {
            let word = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: index, as: UInt64.self))
            let flagged = word & 0x8080_8080_8080_8080 | escapedLanes(word)
            // Read little-endian: the lowest flagged lane is the first byte.
            guard flagged == 0 else { return index + flagged.trailingZeroBitCount >> 3 }
            index += 8
        }
        return index
    }

    /// 0x80 in each lane of `word` that holds a quote, a backslash or a control character
    /// (exact as far as ``inRange(_:_:_:)`` says, for a word holding bytes above 0x7F).
    private static func escapedLanes(_ word: UInt64) -> UInt64 {
        inRange(word, 0, 0x20) | inRange(word, UInt8(ascii: "\""), UInt8(ascii: "\"") + 1) | inRange(word, UInt8(ascii: "\\"), UInt8(ascii: "\\") + 1)
    }

    /// The first byte of `text` from `start` on that a JSON string must escape (a quote, a
    /// backslash or a control character), or `text.count`; every other byte, non-ASCII ones
    /// included, is written as it is. Read 8 at a time: each byte's top bit is cleared before the
    /// lanes are tested, so that no sum carries into another lane, and a lane whose byte had it
    /// set is dropped from the answer (writing a state document checked its strings a byte at a
    /// time: Benchmarks/README.md).
    package static func escapeEnd(in text: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        guard let base = text.baseAddress.map(UnsafeRawPointer.init) else { return start }
        var index = start
        while text.count - index >= 8 {
            let word = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: index, as: UInt64.self))
            let flagged = escapedLanes(word & 0x7F7F_7F7F_7F7F_7F7F) & ~word
            guard flagged == 0 else { return index + flagged.trailingZeroBitCount >> 3 }
            index += 8
        }
        while index < text.count {
            let byte = text[index]
            if byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { return index }
            index += 1
        }
        return index
    }

    /// The eight ASCII characters of `word`, one a byte, read as hexadecimal digits: the number
    /// they write (the highest byte's digit in the highest 4 bits), and the letter cases they
    /// fit, bit 0 set when each is a digit or an upper case letter, bit 1 when each is a digit
    /// or a lower case letter; `cases` is 0 when they are not all hexadecimal digits of one
    /// case. A whole word in one call, for the readers of UUID text (see the note above; they
    /// called four functions a word).
    package static func hexDigits(_ word: UInt64) -> (value: UInt32, cases: UInt32) {
        let ones: UInt64 = 0x0101_0101_0101_0101, all: UInt64 = 0x8080_8080_8080_8080
        guard word & all == 0 else { return (0, 0) }
        let digit = inRange(word, 0x30, 0x3A)
        let upper: UInt32 = (digit | inRange(word, 0x41, 0x47)) == all ? 1 : 0
        let lower: UInt32 = (digit | inRange(word, 0x61, 0x67)) == all ? 2 : 0
        // A digit's value is its low four bits; a letter's is those plus 9 (bit 6 set).
        return (packNibbles((word & (ones &* 0x0F)) &+ ((word >> 6) & ones) &* 9), upper | lower)
    }

    /// The low 4 bits of each byte of `nibbles` (the high 4 must be 0), packed into 32 bits: the
    /// highest byte's in the highest 4 bits.
    private static func packNibbles(_ nibbles: UInt64) -> UInt32 {
        var packed = (nibbles | nibbles >> 4) & 0x00FF_00FF_00FF_00FF
        packed = (packed | packed >> 8) & 0x0000_FFFF_0000_FFFF
        return UInt32(truncatingIfNeeded: packed | packed >> 16)
    }
}
