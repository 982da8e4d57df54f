/// A JSON number as the exact text that was read (or the canonical text of a value we write).
///
/// Keeping the text is what makes int64 values above 2^53 and 30-digit numbers survive a
/// read-write cycle; conversions are explicit and fail instead of rounding.
public struct JSONNumber: Hashable, Sendable, CustomStringConvertible {
    /// RFC 8259 number text, e.g. `-12`, `1.50`, `6.02e23`.
    public let text: String

    /// Trusts the caller that `text` follows the RFC 8259 number grammar; the parser checks it.
    public init(text: String) { self.text = text }

    public init(_ int: Int64) { text = String(int) }

    /// A double in the toolkit's canonical form (ECMAScript shortest form, with `.0` added to
    /// integral values so the number still reads back as a double). Must be finite.
    public init(_ double: Double) { text = CanonicalNumberFormat.double(double) }

    public var description: String { text }

    /// True when the text has no fraction and no exponent: the v2 dialect's integer form.
    public var isIntegerLiteral: Bool { !text.utf8.contains { $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") } }

    /// The exact int64 value of an integer literal, or nil when the text has a fraction or
    /// exponent or does not fit in int64.
    public var int64Value: Int64? { isIntegerLiteral ? Int64(text) : nil }

    /// The exact int64 value of any number that is mathematically an integer (`200`, `200.0`,
    /// `2e2`), or nil when it has a fraction or does not fit. Computed from the text, never
    /// through a double.
    public var integerValue: Int64? {
        if let literal = int64Value { return literal }
        let decimal = ExactDecimal(text)
        guard decimal.isInteger else { return nil }
        if decimal.digits.isEmpty { return 0 }
        guard decimal.digits.count + decimal.exponent <= 19 else { return nil }
        let digits =
            String(decoding: decimal.digits.map { $0 + UInt8(ascii: "0") }, as: UTF8.self)
            + String(repeating: "0", count: decimal.exponent)
        return Int64((decimal.negative ? "-" : "") + digits)
    }

    /// The nearest double (correctly rounded); may be infinite for huge exponents.
    public var doubleValue: Double {
        text.utf8.withContiguousStorageIfAvailable(Self.exactDouble).flatMap { $0 } ?? Double(text) ?? .nan
    }

    /// The double that the number text `bytes` (valid by the JSON grammar) writes, when one IEEE
    /// operation computes it exactly rounded: its significant digits make an integer of at most
    /// 2^53, and its scale is a power of ten up to 10^22, both doubles exactly, so the one product
    /// or quotient is the correctly rounded value that ``doubleValue`` gives (Clinger's fast
    /// path). Nil otherwise. A decoder reads most numbers so, without making text or calling
    /// `strtod` (Benchmarks/README.md).
    package static func exactDouble(_ bytes: UnsafeBufferPointer<UInt8>) -> Double? {
        var index = 0
        let negative = !bytes.isEmpty && bytes[0] == UInt8(ascii: "-")
        if negative { index += 1 }
        var significand: UInt64 = 0, digits = 0, scale = 0
        func digit(_ position: Int) -> UInt64? {
            position < bytes.count && bytes[position] >= UInt8(ascii: "0") && bytes[position] <= UInt8(ascii: "9")
                ? UInt64(bytes[position] - UInt8(ascii: "0")) : nil
        }
        // Leading zeros count for nothing; more than 19 digits might not fit.
        func add(_ value: UInt64) -> Bool {
            guard significand != 0 || value != 0 else { return true }
            guard digits < 19 else { return false }
            significand = significand * 10 + value
            digits += 1
            return true
        }
        let start = index
        while let value = digit(index) {
            guard add(value) else { return nil }
            index += 1
        }
        // Text that is not a number (no digit before the point) is left to the full conversion.
        guard index > start else { return nil }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            while let value = digit(index) {
                guard add(value) else { return nil }
                scale -= 1
                index += 1
            }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            let negativeExponent = index < bytes.count && bytes[index] == UInt8(ascii: "-")
            if index < bytes.count, bytes[index] == UInt8(ascii: "-") || bytes[index] == UInt8(ascii: "+") { index += 1 }
            var exponent = 0
            guard digit(index) != nil else { return nil }
            while let value = digit(index) {
                // Far beyond the fast path's range already: left to the full conversion.
                guard exponent < 1_000 else { return nil }
                exponent = exponent * 10 + Int(value)
                index += 1
            }
            scale += negativeExponent ? -exponent : exponent
        }
        guard index == bytes.count, significand <= 1 << 53 else { return nil }
        let magnitude: Double
        if significand == 0 {
            magnitude = 0
        } else if scale >= 0, scale < powersOfTen.count {
            magnitude = Double(significand) * powersOfTen[scale]
        } else if scale < 0, -scale < powersOfTen.count {
            magnitude = Double(significand) / powersOfTen[-scale]
        } else {
            return nil
        }
        return negative ? -magnitude : magnitude
    }

    /// 10^0 through 10^22: the powers of ten a double holds exactly.
    private static let powersOfTen: [Double] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
    ]

    /// Whether the value is mathematically an integer (JSON Schema's `integer`), e.g. `1.0`, `1e2`.
    public var isMathematicalInteger: Bool { ExactDecimal(text).isInteger }

    /// Numeric equality and order, exact for any length of text (`1.0 == 1`, `1e2 == 100`).
    package func compare(_ other: JSONNumber) -> ComparisonResult3 {
        // Most numbers in event files are plain integers: compare those without decimal parsing.
        if let a = int64Value, let b = other.int64Value {
            return a < b ? .less : a > b ? .greater : .equal
        }
        return ExactDecimal(text).compare(ExactDecimal(other.text))
    }

    /// Two numbers are the same value when they are numerically equal, whatever their text.
    public static func == (lhs: JSONNumber, rhs: JSONNumber) -> Bool { lhs.compare(rhs) == .equal }

    public func hash(into hasher: inout Hasher) {
        let normal = ExactDecimal(text)
        hasher.combine(normal.negative && !normal.digits.isEmpty)
        hasher.combine(normal.digits)
        hasher.combine(normal.exponent)
    }
}

/// Three-way comparison result (Foundation's `ComparisonResult` is not available everywhere
/// without importing Foundation into this module).
package enum ComparisonResult3: Sendable { case less, equal, greater }

/// A decimal number normalised to sign, significant digits without leading or trailing zeros,
/// and a power of ten: value = digits × 10^exponent. Exact comparison, and the exact sums that
/// date conversions need; written by hand because Foundation's `Decimal` keeps only 38 digits.
package struct ExactDecimal: Sendable, Hashable {
    package private(set) var negative: Bool
    /// Decimal digits 0-9, most significant first; empty for zero.
    package private(set) var digits: [UInt8]
    package private(set) var exponent: Int

    /// The power of ten just above the most significant digit (0 for zero): the value's order
    /// of magnitude, for range checks before any digit is expanded.
    package var magnitude: Int { digits.isEmpty ? 0 : digits.count + exponent }

    init(negative: Bool, digits: [UInt8], exponent: Int) {
        var digits = digits
        var exponent = exponent
        while let last = digits.last, last == 0 {
            digits.removeLast()
            exponent += 1
        }
        let leadingZeros = digits.prefix { $0 == 0 }.count
        digits.removeFirst(leadingZeros)
        self.negative = negative && !digits.isEmpty
        self.digits = digits
        self.exponent = digits.isEmpty ? 0 : exponent
    }

    /// The exact value of decimal number text (`-12.5`, `1e3`, `0.001E-2`). Trusts the caller
    /// that the text is decimal number text.
    package init(_ text: String) {
        var bytes = Array(text.utf8)
        negative = bytes.first == UInt8(ascii: "-")
        if negative || bytes.first == UInt8(ascii: "+") { bytes.removeFirst() }
        var exponentPart = 0
        if let e = bytes.firstIndex(where: { $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") }) {
            // Exponents beyond this range cannot come from the parser's length limit in practice;
            // clamping keeps comparison total without overflow.
            let exponentText = String(decoding: bytes[(e + 1)...], as: UTF8.self)
            exponentPart =
                Int(exponentText).map { max(-1_000_000, min(1_000_000, $0)) }
                ?? (exponentText.hasPrefix("-") ? -1_000_000 : 1_000_000)
            bytes = Array(bytes[..<e])
        }
        var integerDigits = bytes
        var fractionDigits: [UInt8] = []
        if let dot = bytes.firstIndex(of: UInt8(ascii: ".")) {
            integerDigits = Array(bytes[..<dot])
            fractionDigits = Array(bytes[(dot + 1)...])
        }
        var all = (integerDigits + fractionDigits).map { $0 &- UInt8(ascii: "0") }
        var power = exponentPart - fractionDigits.count
        while let last = all.last, last == 0 {
            all.removeLast()
            power += 1
        }
        let leadingZeros = all.prefix { $0 == 0 }.count
        all.removeFirst(leadingZeros)
        digits = all
        exponent = all.isEmpty ? 0 : power
    }

    var isInteger: Bool { digits.isEmpty || exponent >= 0 }

    /// The value × 10^power (exact).
    package func shifted(byPowerOfTen power: Int) -> ExactDecimal {
        ExactDecimal(negative: negative, digits: digits, exponent: exponent + power)
    }

    /// The exact sum. Precondition: both magnitudes and exponents are moderate (the caller
    /// range-checks), since the digits are aligned to the smaller exponent.
    package func adding(_ other: ExactDecimal) -> ExactDecimal {
        if digits.isEmpty { return other }
        if other.digits.isEmpty { return self }
        let base = min(exponent, other.exponent)
        let a = digits + Array(repeating: 0, count: exponent - base)
        let b = other.digits + Array(repeating: 0, count: other.exponent - base)
        let width = max(a.count, b.count)
        let left = Array(repeating: UInt8(0), count: width - a.count) + a
        let right = Array(repeating: UInt8(0), count: width - b.count) + b
        if negative == other.negative {
            var result = [UInt8](repeating: 0, count: width + 1)
            var carry: UInt8 = 0
            for i in stride(from: width - 1, through: 0, by: -1) {
                let sum = left[i] + right[i] + carry
                result[i + 1] = sum % 10
                carry = sum / 10
            }
            result[0] = carry
            return ExactDecimal(negative: negative, digits: result, exponent: base)
        }
        // Opposite signs: subtract the smaller magnitude from the larger.
        let leftLarger = !left.lexicographicallyPrecedes(right)
        let (big, small) = leftLarger ? (left, right) : (right, left)
        var result = [UInt8](repeating: 0, count: width)
        var borrow: Int = 0
        for i in stride(from: width - 1, through: 0, by: -1) {
            var difference = Int(big[i]) - Int(small[i]) - borrow
            borrow = difference < 0 ? 1 : 0
            if difference < 0 { difference += 10 }
            result[i] = UInt8(difference)
        }
        return ExactDecimal(negative: leftLarger ? negative : other.negative, digits: result, exponent: base)
    }

    /// Positional decimal text without exponent: `-12.5`, `0.001`, `1500`, `0`.
    package var plainText: String {
        if digits.isEmpty { return "0" }
        let characters = digits.map { Character(Unicode.Scalar($0 + UInt8(ascii: "0"))) }
        var text: String
        if exponent >= 0 {
            text = String(characters) + String(repeating: "0", count: exponent)
        } else if -exponent < characters.count {
            text = String(characters.dropLast(-exponent)) + "." + String(characters.suffix(-exponent))
        } else {
            text = "0." + String(repeating: "0", count: -exponent - characters.count) + String(characters)
        }
        return negative ? "-" + text : text
    }

    func compare(_ other: ExactDecimal) -> ComparisonResult3 {
        let selfZero = digits.isEmpty, otherZero = other.digits.isEmpty
        if selfZero && otherZero { return .equal }
        let selfNegative = negative && !selfZero, otherNegative = other.negative && !otherZero
        if selfNegative != otherNegative { return selfNegative ? .less : .greater }
        let magnitude = compareMagnitude(other)
        if !selfNegative { return magnitude }
        switch magnitude {
        case .less: return .greater
        case .greater: return .less
        case .equal: return .equal
        }
    }

    private func compareMagnitude(_ other: ExactDecimal) -> ComparisonResult3 {
        if digits.isEmpty { return other.digits.isEmpty ? .equal : .less }
        if other.digits.isEmpty { return .greater }
        // Position of the most significant digit decides first.
        let selfTop = digits.count + exponent, otherTop = other.digits.count + other.exponent
        if selfTop != otherTop { return selfTop < otherTop ? .less : .greater }
        for i in 0..<max(digits.count, other.digits.count) {
            let a = i < digits.count ? digits[i] : 0
            let b = i < other.digits.count ? other.digits[i] : 0
            if a != b { return a < b ? .less : .greater }
        }
        return .equal
    }
}
