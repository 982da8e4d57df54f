import Foundation
import JSONDocument

/// Strings that start with an uppercase UUID (Apple's `UUID().uuidString` and
/// `ProcessInfo.globallyUniqueString`, the usual global and store identifiers) are stored in the
/// string table as 16 bytes plus the rest of the text (Spec/v2-binary.md section 6).
package enum UUIDPrefix {
    package static let textLength = 36

    /// Where the text's hyphens are, each checked or written by itself.
    private static let hyphens = (8, 13, 18, 23)

    /// The 16 bytes of the uppercase UUID that `text` starts with, or nil; eight digits at a
    /// time, as ``write(_:to:)`` writes them (a loop over the digits was a tenth of encoding).
    package static func uuid(_ text: UnsafeBufferPointer<UInt8>) -> uuid_t? {
        guard text.count >= textLength else { return nil }
        let characters = UnsafeRawBufferPointer(text)
        func load<Digits: FixedWidthInteger>(_ offset: Int, as: Digits.Type) -> UInt64 {
            UInt64(Digits(bigEndian: characters.loadUnaligned(fromByteOffset: offset, as: Digits.self)))
        }
        let hyphen = UInt8(ascii: "-")
        guard text[hyphens.0] == hyphen, text[hyphens.1] == hyphen, text[hyphens.2] == hyphen, text[hyphens.3] == hyphen,
            let first = value(ofDigits: load(0, as: UInt64.self)),
            let second = value(ofDigits: load(9, as: UInt32.self) << 32 | load(14, as: UInt32.self)),
            let third = value(ofDigits: load(19, as: UInt32.self) << 32 | load(24, as: UInt32.self)),
            let fourth = value(ofDigits: load(28, as: UInt64.self))
        else { return nil }
        var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &uuid) { bytes in
            for (offset, value) in [(0, first), (4, second), (8, third), (12, fourth)] {
                bytes.storeBytes(of: value.bigEndian, toByteOffset: offset, as: UInt32.self)
            }
        }
        return uuid
    }

    /// The number that 8 uppercase hexadecimal digits, the bytes of a big-endian integer, write;
    /// nil if one is not such a digit. Without a branch per digit, which random identifiers
    /// mispredict half of the time.
    private static func value(ofDigits characters: UInt64) -> UInt32? {
        let digits = ByteLanes.hexDigits(characters)
        return digits.cases & 1 != 0 ? digits.value : nil
    }

    /// Appends the 36 characters of the uppercase text of the UUID with these big-endian halves
    /// to `bytes`, with `around` before and after them if given. Written on the stack, then
    /// copied: appending placeholders to overwrite took as long as writing the digits.
    package static func append(high: UInt64, low: UInt64, to bytes: inout [UInt8], around: UInt8? = nil) {
        let extra = around == nil ? 0 : 2
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: textLength + extra) { text in
            if let around {
                text[0] = around
                text[textLength + 1] = around
            }
            write(high: high, low: low, to: UnsafeMutableBufferPointer(rebasing: text[(extra / 2)...]))
            bytes.append(contentsOf: UnsafeBufferPointer(text))
        }
    }

    /// Calls `body` with the 36 characters of the uppercase text of the UUID with these
    /// big-endian halves, written on the stack.
    @inlinable
    package static func withText<R>(high: UInt64, low: UInt64, _ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: textLength) { text in
            write(high: high, low: low, to: text)
            return try body(UnsafeBufferPointer(text))
        }
    }

    /// ``ExactString/prefixKey(_:)`` of the uppercase text of a UUID whose high half is `high`:
    /// its first eight digits.
    package static func prefixKey(high: UInt64) -> UInt64 { hex(UInt32(truncatingIfNeeded: high >> 32)) }

    /// The uppercase text of the UUID with these big-endian halves.
    package static func text(high: UInt64, low: UInt64) -> String {
        String(unsafeUninitializedCapacity: textLength) { text in
            write(high: high, low: low, to: text)
            return textLength
        }
    }

    /// Writes the 36 characters of the uppercase text of the 16 bytes of `uuid` to the start of
    /// `text`.
    package static func write(_ uuid: UnsafeBufferPointer<UInt8>, to text: UnsafeMutableBufferPointer<UInt8>) {
        let halves = halves(of: UnsafeRawBufferPointer(uuid))
        write(high: halves.high, low: halves.low, to: text)
    }

    /// The big-endian halves of the UUID with these 16 bytes.
    package static func halves(of uuid: UnsafeRawBufferPointer) -> (high: UInt64, low: UInt64) {
        (UInt64(bigEndian: uuid.loadUnaligned(fromByteOffset: 0, as: UInt64.self)), UInt64(bigEndian: uuid.loadUnaligned(fromByteOffset: 8, as: UInt64.self)))
    }

    /// Writes the 36 characters of the uppercase text of the UUID with these big-endian halves
    /// to the start of `text`, eight digits at a time: a loop over the digits was a tenth of
    /// decoding.
    package static func write(high: UInt64, low: UInt64, to text: UnsafeMutableBufferPointer<UInt8>) {
        let output = UnsafeMutableRawBufferPointer(text)
        func store<Digits: FixedWidthInteger>(_ digits: Digits, at offset: Int) {
            output.storeBytes(of: digits.bigEndian, toByteOffset: offset, as: Digits.self)
        }
        let second = hex(UInt32(truncatingIfNeeded: high)), third = hex(UInt32(truncatingIfNeeded: low >> 32))
        store(hex(UInt32(truncatingIfNeeded: high >> 32)), at: 0)
        store(UInt32(truncatingIfNeeded: second >> 32), at: 9)
        store(UInt32(truncatingIfNeeded: second), at: 14)
        store(UInt32(truncatingIfNeeded: third >> 32), at: 19)
        store(UInt32(truncatingIfNeeded: third), at: 24)
        store(hex(UInt32(truncatingIfNeeded: low)), at: 28)
        let hyphen = UInt8(ascii: "-")
        (output[hyphens.0], output[hyphens.1], output[hyphens.2], output[hyphens.3]) = (hyphen, hyphen, hyphen, hyphen)
    }

    /// The big-endian halves of the UUID whose canonical uppercase text is exactly `text`; nil
    /// for any other text.
    package static func halves(ofText text: UnsafeBufferPointer<UInt8>) -> (high: UInt64, low: UInt64)? {
        guard text.count == textLength, let uuid = uuid(text) else { return nil }
        return withUnsafeBytes(of: uuid) { halves(of: $0) }
    }

    /// The 8 uppercase hexadecimal digits of `value`, most significant first, as the bytes of a
    /// big-endian integer; without a branch per digit, which random identifiers mispredict.
    private static func hex(_ value: UInt32) -> UInt64 {
        // One nibble per byte, the most significant in the highest byte.
        var nibbles = UInt64(value)
        nibbles = (nibbles | nibbles << 16) & 0x0000_FFFF_0000_FFFF
        nibbles = (nibbles | nibbles << 8) & 0x00FF_00FF_00FF_00FF
        nibbles = (nibbles | nibbles << 4) & 0x0F0F_0F0F_0F0F_0F0F
        // 1 in each byte whose nibble is 10 or more: the letters start 7 after "9" + 1.
        let letters = ((nibbles &+ 0x0606_0606_0606_0606) >> 4) & 0x0101_0101_0101_0101
        return nibbles &+ 0x3030_3030_3030_3030 &+ letters &* 7
    }
}
