/// The one escaping rule of `logtool`'s text output (Spec/README.md 4.1): names and other
/// values read from a folder are written so that no byte of them can act on a terminal (ESC and
/// BEL sequences, C1 controls) or forge a line (CR, LF), and so that the escaped text is
/// unambiguous. Here, low enough for every text renderer: finding lines, reports, messages.
package enum TerminalText {
    /// `value` as text output shows it: `\` as `\\`; U+0000..U+001F and U+007F as `\xHH`;
    /// U+0080..U+009F, U+2028 and U+2029 as `\uHHHH` (lowercase hexadecimal). Everything else
    /// is kept. The result holds no control character, not even a line feed or a tab.
    package static func escape(_ value: String) -> String {
        guard mayChange(value, backslash: true, keepingLineBreaks: false) else { return value }
        return escape(bytes: value.utf8)
    }

    /// The same for bytes that need not be UTF-8 (a file name as the file system gives it): each
    /// byte outside a well-formed UTF-8 sequence is written `\xHH`, which no character is written as
    /// (those below U+0080 are control characters, whose bytes are all below 0x80).
    package static func escape(bytes: some Collection<UInt8>) -> String {
        var shown = ""
        var parser = Unicode.UTF8.ForwardParser()
        var iterator = bytes.makeIterator()
        var rest = bytes[...]
        while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid(let encoded):
                append(Unicode.UTF8.decode(encoded), to: &shown, backslash: true)
                rest = rest.dropFirst(encoded.count)
            case .error(let length):
                for byte in rest.prefix(length) { shown += hex(byte, digits: 2, prefix: "\\x") }
                rest = rest.dropFirst(length)
            case .emptyInput:
                return shown
            }
        }
    }

    /// Control characters of `text` written as ``escape(_:)`` writes them, its backslashes left
    /// alone, and with `keepingLineBreaks` its line feeds and tabs too. For text whose backslashes
    /// are already escaped (JSON fragments), and as the last guard of standard output and error,
    /// which a value that was not escaped then cannot reach as a control sequence either.
    package static func escapeControls(_ text: String, keepingLineBreaks: Bool = false) -> String {
        guard mayChange(text, backslash: false, keepingLineBreaks: keepingLineBreaks) else { return text }
        var shown = ""
        for scalar in text.unicodeScalars {
            if keepingLineBreaks && (scalar == "\n" || scalar == "\t") {
                shown.unicodeScalars.append(scalar)
            } else {
                append(scalar, to: &shown, backslash: false)
            }
        }
        return shown
    }

    private static func append(_ scalar: Unicode.Scalar, to shown: inout String, backslash: Bool) {
        switch scalar.value {
        case 0x5C where backslash: shown += "\\\\"
        case 0x00...0x1F, 0x7F: shown += hex(UInt8(scalar.value), digits: 2, prefix: "\\x")
        case 0x80...0x9F, 0x2028, 0x2029: shown += hex(scalar.value, digits: 4, prefix: "\\u")
        default: shown.unicodeScalars.append(scalar)
        }
    }

    /// Whether `text` may hold a character the rule changes: a C0 control (but line feeds and
    /// tabs when they are kept), DEL, a backslash when asked, or a byte that starts U+0080..U+009F
    /// (0xC2) or U+2028/U+2029 (0xE2). Eight bytes at a time: text output can be a pretty-printed
    /// event of many megabytes, checked twice (by its renderer and by standard output).
    private static func mayChange(_ text: String, backslash: Bool, keepingLineBreaks: Bool) -> Bool {
        var text = text
        return text.withUTF8 { bytes in
            guard let base = bytes.baseAddress else { return false }
            func changes(_ byte: UInt8) -> Bool {
                switch byte {
                case 0x0A, 0x09: !keepingLineBreaks
                case 0x00...0x1F, 0x7F, 0xC2, 0xE2: true
                case 0x5C: backslash
                default: false
                }
            }
            var index = 0
            while index + 8 <= bytes.count {
                let word = UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self)
                if word & 0x8080_8080_8080_8080 != 0 {
                    for offset in 0..<8 where changes(bytes[index + offset]) { return true }
                } else {
                    var lanes = ByteLanes.inRange(word, 0, 0x20) | ByteLanes.inRange(word, 0x7F, 0x80)
                    if keepingLineBreaks { lanes &= ~ByteLanes.inRange(word, 0x09, 0x0B) }
                    if backslash { lanes |= ByteLanes.inRange(word, 0x5C, 0x5D) }
                    if lanes != 0 { return true }
                }
                index += 8
            }
            while index < bytes.count {
                if changes(bytes[index]) { return true }
                index += 1
            }
            return false
        }
    }

    private static func hex(_ value: some BinaryInteger, digits: Int, prefix: String) -> String {
        let text = String(value, radix: 16)
        return prefix + String(repeating: "0", count: max(0, digits - text.count)) + text
    }
}
