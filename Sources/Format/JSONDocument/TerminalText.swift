/// The one escaping rule of `logtool`'s text output (Spec/README.md 4.1): names and other
/// values read from a folder are written so that no byte of them can act on a terminal (ESC and
/// BEL sequences, C1 controls) or forge a line (CR, LF), and so that the escaped text is
/// unambiguous. Here, low enough for every text renderer: finding lines, reports, messages.
package enum TerminalText {
    /// `value` as text output shows it: `\` as `\\`; U+0000..U+001F and U+007F as `\xHH`;
    /// U+0080..U+009F, U+2028 and U+2029 as `\uHHHH` (lowercase hexadecimal). Everything else
    /// is kept. The result holds no control character, not even a line feed or a tab.
    package static func escape(_ value: String) -> String {
        guard value.utf8.contains(where: { $0 == 0x5C || needsEscape(byte: $0) }) || hasWideControl(value) else { return value }
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
        let kept: (UInt8) -> Bool = { keepingLineBreaks && ($0 == 0x0A || $0 == 0x09) }
        guard text.utf8.contains(where: { needsEscape(byte: $0) && !kept($0) }) || hasWideControl(text) else { return text }
        var shown = ""
        for scalar in text.unicodeScalars {
            if scalar.isASCII && kept(UInt8(scalar.value)) {
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

    /// A byte that is a C0 control or DEL, or the lead byte of U+0080..U+009F (0xC2).
    private static func needsEscape(byte: UInt8) -> Bool {
        byte < 0x20 || byte == 0x7F || byte == 0xC2
    }

    /// Whether `text` holds U+2028 or U+2029 (UTF-8 E2 80 A8 / A9); checked only where E2 occurs.
    private static func hasWideControl(_ text: String) -> Bool {
        text.utf8.contains(0xE2) && text.unicodeScalars.contains { $0.value == 0x2028 || $0.value == 0x2029 }
    }

    private static func hex(_ value: some BinaryInteger, digits: Int, prefix: String) -> String {
        let text = String(value, radix: 16)
        return prefix + String(repeating: "0", count: max(0, digits - text.count)) + text
    }
}
