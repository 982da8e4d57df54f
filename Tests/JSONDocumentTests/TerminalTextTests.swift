import Testing
import JSONDocument

/// The escaping rule of text output (Spec/README.md 4.1), with expectations written by hand
/// from the Spec's table.
@Suite("Text output escaping")
struct TerminalTextTests {
    @Test(
        "values are escaped as the table says",
        arguments: [
            ("plain Store-1 ü 😀", "plain Store-1 ü 😀"),
            ("a\\b", #"a\\b"#),
            ("\u{1B}]0;owned\u{07}", #"\x1b]0;owned\x07"#),
            ("\u{1B}[2J\u{1B}[31mred", #"\x1b[2J\x1b[31mred"#),
            ("x\r\n0 errors", #"x\x0d\x0a0 errors"#),
            ("tab\there", #"tab\x09here"#),
            ("\u{0}\u{1F}\u{7F}", #"\x00\x1f\x7f"#),
            ("\u{80}\u{85}\u{9B}\u{9F}\u{A0}", "\\u0080\\u0085\\u009b\\u009f\u{A0}"),
            ("a\u{2028}b\u{2029}c", #"a\u2028b\u2029c"#),
            (#"literal \x1b"#, #"literal \\x1b"#),
            ("", ""),
        ] as [(String, String)])
    func escape(value: String, expected: String) {
        #expect(TerminalText.escape(value) == expected)
        #expect(TerminalText.escape(bytes: Array(value.utf8)) == expected)
    }

    @Test("a character to escape is found at every offset, in the words of eight bytes and after them")
    func offsets() {
        for offset in 0..<24 {
            let before = String(repeating: "a", count: offset), after = String(repeating: "b", count: 24 - offset)
            for (character, shown) in [("\u{1B}", #"\x1b"#), ("\u{7F}", #"\x7f"#), ("\\", #"\\"#), ("\u{9B}", #"\u009b"#), ("\u{2029}", #"\u2029"#)] {
                #expect(TerminalText.escape(before + character + after) == before + shown + after, "\(offset) \(shown)")
            }
            #expect(TerminalText.escape(before + "\n" + after) == before + #"\x0a"# + after)
            #expect(TerminalText.escapeControls(before + "\n\t\\" + after, keepingLineBreaks: true) == before + "\n\t\\" + after)
            #expect(TerminalText.escapeControls(before + "\u{0B}" + after, keepingLineBreaks: true) == before + #"\x0b"# + after)
        }
    }

    @Test("bytes outside UTF-8 are written \\xHH, the rest as text")
    func bytes() {
        // "a", a lone continuation byte, "é" (C3 A9), a truncated 3-byte sequence, ESC, 0xFF.
        let bytes: [UInt8] = [0x61, 0x85, 0xC3, 0xA9, 0xE2, 0x82, 0x1B, 0xFF]
        #expect(TerminalText.escape(bytes: bytes) == #"a\x85é\xe2\x82\x1b\xff"#)
    }

    @Test("escapeControls leaves backslashes, and with keepingLineBreaks line feeds and tabs")
    func controls() {
        let text = "{\"a\":\"x\\\"\u{7F}\u{9B}\"}\n\tnext\r\u{1B}"
        #expect(TerminalText.escapeControls(text) == #"{"a":"x\"\x7f\u009b"}\x0a\x09next\x0d\x1b"#)
        #expect(TerminalText.escapeControls(text, keepingLineBreaks: true) == "{\"a\":\"x\\\"\\x7f\\u009b\"}\n\tnext\\x0d\\x1b")
    }
}
