/// The string patterns of the v2 event schema (Spec/schemas/v2-event.schema.json), written once
/// for every reader that checks them without the generic validator's regular expressions.
package enum V2TextPatterns {
    /// A store identifier: 1 to 255 code points, none of `_`, `/`, `\` and NUL.
    package static func isStoreIdentifier(_ text: String) -> Bool {
        lengthBetween1And255(text) && !text.utf8.contains { $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "\\") || $0 == 0 }
    }

    /// A data file name: 1 to 255 code points, not `.` or `..`, none of `/`, `\` and NUL.
    package static func isDataFileName(_ text: String) -> Bool {
        lengthBetween1And255(text) && text != "." && text != ".."
            && !text.utf8.contains { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "\\") || $0 == 0 }
    }

    /// An ordered to-many index, `^(0|[1-9][0-9]{0,8})$`: its value, or nil.
    package static func orderedIndex<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> Int? {
        guard (1...9).contains(bytes.count), bytes.count == 1 || bytes.first != UInt8(ascii: "0") else { return nil }
        var value = 0
        for byte in bytes {
            guard byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") else { return nil }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
        }
        return value
    }

    private static func lengthBetween1And255(_ text: String) -> Bool {
        // Lengths count code points (JSON Schema); UTF-8 bytes bound them from above.
        guard !text.isEmpty else { return false }
        return text.utf8.count <= 255 || text.unicodeScalars.count <= 255
    }
}
