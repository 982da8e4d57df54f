/// The toolkit's one way of writing a double as text (Spec/v2-json.md, "Canonical output").
///
/// Written by hand because canonical bytes must be identical across implementations: the
/// rule is ECMAScript's Number::toString (as RFC 8785 uses it) applied to the shortest
/// round-tripping digits. Swift's own `description` already finds those digits (shortest,
/// closest), so only the layout is ours.
package enum CanonicalNumberFormat {
    /// ECMAScript layout, plus `.0` for integral values so the text stays a double in the
    /// v2 dialect (`1.0`, `-0.0`, `1e+21`, `1e-7`). Precondition: finite.
    package static func double(_ value: Double) -> String {
        // Most doubles a document holds are plain decimals: from 1e-6 to 1e21 and not integral,
        // Swift's shortest round-trip text ("12.34", "0.0123") is ECMAScript's layout already
        // whenever it has no exponent. (Laid out again, it cost a state document's writer a
        // quarter of its time: Benchmarks/README.md.)
        if value.magnitude >= 1e-6, value.magnitude < 1e21, value.rounded(.towardZero) != value {
            let text = value.description
            if !text.utf8.contains(where: { $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") }) { return text }
        }
        let text = ecmaScript(value)
        // Looked for as bytes: walking the text as characters cost several times the layout.
        if text.utf8.contains(where: { $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "e") }) { return text }
        if value == 0 && value.sign == .minus { return "-0.0" }
        return text + ".0"
    }

    /// Plain ECMAScript Number::toString layout (`1000`, `0.5`, `1e+21`). Negative zero is `0`.
    /// Precondition: finite.
    ///
    /// Laid out in bytes: a state document writes a double per attribute, and building the
    /// text from substrings cost more than the rest of writing it.
    package static func ecmaScript(_ value: Double) -> String {
        if value == 0 { return "0" }
        // Below 2^53 every integer is a double, and its shortest round-trip digits are its own:
        // the layout is the integer written out.
        if value.rounded(.towardZero) == value, value.magnitude < 9_007_199_254_740_992 { return String(Int64(value)) }
        var text: [UInt8] = []
        text.reserveCapacity(32)
        if value < 0 { text.append(UInt8(ascii: "-")) }
        var digits: [UInt8] = []
        digits.reserveCapacity(17)
        let n = shortestDigits(value.magnitude, into: &digits)
        let k = digits.count
        if k <= n && n <= 21 {
            text += digits
            text += repeatElement(UInt8(ascii: "0"), count: n - k)
        } else if 0 < n && n <= 21 {
            text += digits[..<n]
            text.append(UInt8(ascii: "."))
            text += digits[n...]
        } else if -6 < n && n <= 0 {
            text += [UInt8(ascii: "0"), UInt8(ascii: ".")]
            text += repeatElement(UInt8(ascii: "0"), count: -n)
            text += digits
        } else {
            text.append(digits[0])
            if k > 1 {
                text.append(UInt8(ascii: "."))
                text += digits[1...]
            }
            let exponent = n - 1
            text.append(UInt8(ascii: "e"))
            text.append(UInt8(ascii: exponent >= 0 ? "+" : "-"))
            text += String(exponent.magnitude).utf8
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// The shortest round-trip significant digits of a positive finite value (into `digits`,
    /// ASCII) and the position of the decimal point: value = 0.DIGITS × 10^position.
    private static func shortestDigits(_ value: Double, into digits: inout [UInt8]) -> Int {
        // Swift's description: "1.2345e-07", "123.0", "5e-324", "0.001".
        var position = 0
        var exponent = 0
        var exponentSign = 1
        var inExponent = false
        var seenPoint = false
        for byte in value.description.utf8 {
            switch byte {
            case UInt8(ascii: "e"), UInt8(ascii: "E"):
                inExponent = true
            case UInt8(ascii: "-") where inExponent:
                exponentSign = -1
            case UInt8(ascii: "0")...UInt8(ascii: "9") where inExponent:
                exponent = exponent * 10 + Int(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                if !seenPoint { position += 1 }
                // A leading zero is not a significant digit: the point moves one place left.
                if digits.isEmpty && byte == UInt8(ascii: "0") {
                    position -= 1
                    continue
                }
                digits.append(byte)
            case UInt8(ascii: "."):
                seenPoint = true
            default:
                break
            }
        }
        while digits.last == UInt8(ascii: "0") { digits.removeLast() }
        return position + exponentSign * exponent
    }
}
