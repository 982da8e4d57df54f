import Foundation
import Testing
import JSONDocument
import TestSupport

@Suite("Canonical JSON writer")
struct JSONWriterTests {
    @Test("keys sort by UTF-8 bytes at every level")
    func keyOrder() throws {
        let value = try JSONParser.parse(#"{"apple":1,"Zebra":{"b":1,"a":2},"é":3,"z":4,"10":5,"2":6}"#)
        #expect(JSONWriter().string(value) == #"{"10":5,"2":6,"Zebra":{"a":2,"b":1},"apple":1,"z":4,"é":3}"#)
    }

    @Test("strings escape exactly quote, backslash and control characters")
    func escaping() {
        let value = JSONValue.string("q\"b\\/\u{08}\u{09}\u{0A}\u{0C}\u{0D}\u{01}\u{1F}\u{7F}é\u{2028}")
        #expect(JSONWriter().string(value) == "\"q\\\"b\\\\/\\b\\t\\n\\f\\r\\u0001\\u001f\u{7F}é\u{2028}\"")
        // Escapes first, last and side by side, and nothing to escape at all.
        #expect(JSONWriter().string(.string("\"\"\u{0}")) == #""\"\"\u0000""#)
        #expect(JSONWriter().string(.string("")) == #""""#)
        #expect(JSONWriter().string(.string("plain text")) == #""plain text""#)
    }

    @Test("pretty layout keeps the canonical key order")
    func pretty() throws {
        let value = try JSONParser.parse(#"{"b":[1,{}],"a":[]}"#)
        #expect(JSONWriter(layout: .pretty).string(value) == "{\n  \"a\": [],\n  \"b\": [\n    1,\n    {}\n  ]\n}")
    }

    /// Expected texts are what ECMAScript's Number.prototype.toString prints (checked with
    /// node), the independent reference RFC 8785 also uses.
    @Test(
        "doubles use the ECMAScript layout of the shortest round-trip digits",
        arguments: [
            (1.0, "1"), (0.1, "0.1"), (-0.5, "-0.5"), (1e21, "1e+21"), (1e-7, "1e-7"),
            (123456789012345680000.0, "123456789012345680000"), (Double.leastNonzeroMagnitude, "5e-324"),
            (1.7976931348623157e308, "1.7976931348623157e+308"), (0.000001, "0.000001"), (100.0, "100"),
            (1234.5678, "1234.5678"), (-1e-300, "-1e-300"), (9007199254740994.0, "9007199254740994"),
            (1.0 / 3.0, "0.3333333333333333"), (4.35, "4.35"), (0.3 + 0.6, "0.8999999999999999"),
            (1e20, "100000000000000000000"), (123e-20, "1.23e-18"), (0.0, "0"), (-0.0, "0"),
        ])
    func ecmaScriptLayout(value: Double, expected: String) {
        #expect(CanonicalNumberFormat.ecmaScript(value) == expected)
    }

    /// Seeded random doubles of every magnitude: the text reads back as the same double, its
    /// significant digits are those of Swift's shortest `description`, and it takes the
    /// exponent form exactly where ECMAScript does (below 1e-6 or from 1e21 on).
    @Test("the layout of random doubles keeps their shortest digits")
    func ecmaScriptRandomLayout() {
        var generator = SplitMix64(seed: 21)
        func significant(_ text: String) -> String {
            let mantissa = text.prefix { $0 != "e" && $0 != "E" }.filter(\.isNumber)
            return String(mantissa.drop { $0 == "0" }.reversed().drop { $0 == "0" }.reversed())
        }
        var checked = 0
        while checked < 20_000 {
            // Integers around 2^53, where integers stop being written directly.
            let sample = Self.randomDouble(checked % 3, &generator) {
                Double(Int64.random(in: -(1 << 55)...(1 << 55), using: &$0) >> Int.random(in: 0...50, using: &$0))
            }
            guard sample.isFinite, sample != 0 else { continue }
            checked += 1
            let text = CanonicalNumberFormat.ecmaScript(sample)
            #expect(Double(text) == sample, "\(sample.description) -> \(text)")
            #expect(significant(text) == significant(sample.description), "\(sample.description) -> \(text)")
            #expect(text.contains("e") == (sample.magnitude < 1e-6 || sample.magnitude >= 1e21), "\(sample.description) -> \(text)")
        }
    }

    /// A seeded random double of one of three kinds: any bit pattern (0), a value between 1e-30
    /// and 1e30, where the layouts change (1), or one that `other` makes (2).
    static func randomDouble(_ kind: Int, _ generator: inout SplitMix64, other: (inout SplitMix64) -> Double) -> Double {
        switch kind {
        case 0: Double(bitPattern: generator.next())
        case 1: Double.random(in: -10...10, using: &generator) * pow(10, Double(Int.random(in: -30...30, using: &generator)))
        default: other(&generator)
        }
    }

    /// ``CanonicalNumberFormat/double(_:)`` takes Swift's own text for plain decimals: for
    /// every value that is not integral it must be exactly the ECMAScript layout checked above.
    @Test("a canonical double that is not integral is its ECMAScript layout, for random doubles of every magnitude")
    func canonicalDoubleIsLayout() {
        var generator = SplitMix64(seed: 22)
        var checked = 0
        while checked < 20_000 {
            // Hundredths, as documents hold them.
            let sample = Self.randomDouble(checked % 3, &generator) { Double(Int.random(in: -99_999...99_999, using: &$0)) / 100 }
            guard sample.isFinite, sample.rounded(.towardZero) != sample else { continue }
            checked += 1
            #expect(CanonicalNumberFormat.double(sample) == CanonicalNumberFormat.ecmaScript(sample), "\(sample.description)")
        }
        // At the bounds of the plain layout.
        for sample in [1e-6, 1.5e-6, 9.99e-7, 1.0000000000000002e-6, 0.000123, 1e21 - 65536, 123456789.123, -0.000001, 0.1 + 0.2] {
            #expect(CanonicalNumberFormat.double(sample) == CanonicalNumberFormat.ecmaScript(sample), "\(sample.description)")
        }
    }

    @Test(
        "a canonical double always reads back as a double and round-trips",
        arguments: [
            (1.0, "1.0"), (-0.0, "-0.0"), (1e21, "1e+21"), (100.0, "100.0"), (0.5, "0.5"), (1e-7, "1e-7"),
        ])
    func canonicalDouble(value: Double, expected: String) {
        let text = CanonicalNumberFormat.double(value)
        #expect(text == expected)
        #expect(Double(text) == value)
        #expect(!JSONNumber(text: text).isIntegerLiteral)
    }

    @Test("pointers escape ~ and / and parse back")
    func pointers() {
        let pointer = JSONPointer(["a/b", "c~d", "0", ""])
        #expect(pointer.description == "/a~1b/c~0d/0/")
        #expect(JSONPointer(parsing: pointer.description) == pointer)
        #expect(JSONPointer(parsing: "a") == nil)
        #expect(JSONPointer(parsing: "/~2") == nil)
        #expect(JSONPointer.root.description == "")
    }
}
