/// The toolkit's one way of writing a double as text (Spec/v2-json.md, "Canonical output").
///
/// Written by hand because canonical bytes must be identical across implementations: the
/// rule is ECMAScript's Number::toString (as RFC 8785 uses it) applied to the shortest
/// round-tripping digits. Swift's own `description` already finds those digits (shortest,
/// closest), so only the layout is ours.
package enum CanonicalNumberFormat {
    /// ECMAScript layout, plus `.0` for integral values so the text stays a double in the
    /// v2 dialect (`1.0`, `-0.0`, `1e+21`, `1e-7`). Precondition: finite.
    public static func double(_ value: Double) -> String {
        let text = ecmaScript(value)
        if text.contains(where: { $0 == "." || $0 == "e" }) { return text }
        if value == 0 && value.sign == .minus { return "-0.0" }
        return text + ".0"
    }

    /// Plain ECMAScript Number::toString layout (`1000`, `0.5`, `1e+21`). Negative zero is `0`.
    /// Precondition: finite.
    public static func ecmaScript(_ value: Double) -> String {
        if value == 0 { return "0" }
        let (digits, pointPosition) = shortestDigits(abs(value))
        let sign = value < 0 ? "-" : ""
        let k = digits.count, n = pointPosition
        let body: String
        if k <= n && n <= 21 {
            body = digits + String(repeating: "0", count: n - k)
        } else if 0 < n && n <= 21 {
            body = String(digits.prefix(n)) + "." + String(digits.dropFirst(n))
        } else if -6 < n && n <= 0 {
            body = "0." + String(repeating: "0", count: -n) + digits
        } else {
            let exponent = n - 1
            let exponentText = (exponent >= 0 ? "+" : "-") + String(abs(exponent))
            let mantissa = k == 1 ? digits : String(digits.prefix(1)) + "." + String(digits.dropFirst())
            body = mantissa + "e" + exponentText
        }
        return sign + body
    }

    /// The shortest round-trip significant digits of a positive finite value and the
    /// position of the decimal point: value = 0.DIGITS × 10^position.
    static func shortestDigits(_ value: Double) -> (digits: String, pointPosition: Int) {
        let description = value.description  // e.g. "1.2345e-07", "123.0", "5e-324"
        var mantissa = Substring(description)
        var exponent = 0
        if let e = description.firstIndex(where: { $0 == "e" || $0 == "E" }) {
            mantissa = description[..<e]
            exponent = Int(description[description.index(after: e)...]) ?? 0
        }
        let parts = mantissa.split(separator: ".", omittingEmptySubsequences: false)
        let integerPart = parts.first.map(String.init) ?? ""
        let fractionPart = parts.count > 1 ? String(parts[1]) : ""
        var digits = Substring(integerPart + fractionPart)
        var position = integerPart.count + exponent
        while digits.first == "0" {
            digits = digits.dropFirst()
            position -= 1
        }
        while digits.last == "0" { digits = digits.dropLast() }
        return (String(digits), position)
    }
}
