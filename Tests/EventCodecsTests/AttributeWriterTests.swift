import Foundation
import Testing
import JSONDocument
import EnsembleModel
import EventCodecs
import SyntheticHistory
import TestSupport

/// `V2JSONEncoder.writeAttribute` writes the usual attribute values without building a JSON value;
/// its bytes must be exactly those of the JSON value `attributeJSON` builds, as `JSONWriter`
/// writes it, the form every other writer uses (Spec/v2-json.md, "Canonical output").
@Suite("Attribute values written directly: the same bytes as through their JSON form")
struct AttributeWriterTests {
    static func throughJSON(_ value: AttributeValue) throws -> [UInt8] {
        var bytes: [UInt8] = []
        JSONWriter().append(try V2JSONEncoder.attributeJSON(value), to: &bytes)
        return bytes
    }

    static func direct(_ value: AttributeValue) throws -> [UInt8] {
        var bytes: [UInt8] = []
        try V2JSONEncoder.writeAttribute(value, into: &bytes)
        return bytes
    }

    static let doubles: [Double] = [
        0, -0.0, 1, -1, 0.5, 123.45, 1e21, 1e-7, 1e-6, 123_456_789_012_345_683_968, 9_007_199_254_740_992, 9_007_199_254_740_994,
        .leastNonzeroMagnitude, .greatestFiniteMagnitude, -.greatestFiniteMagnitude, .leastNormalMagnitude, 0.1 + 0.2, 1.7e12 + 0.25,
        .nan, .infinity, -.infinity,
    ]

    @Test("every kind of value, with the edges of the number layouts, strings that need escapes and values only the JSON form writes")
    func edges() throws {
        var values: [AttributeValue] = [
            .null, .bool(false), .bool(true), .integer(0), .integer(-1), .integer(.max), .integer(.min),
            .string(""), .string("plain"), .string("quote \" backslash \\ tab \t nul \u{0} é 😀"), .decimal("12.50"),
            .binary(Data([0, 1, 2, 255])), .uuid(UUID(uuid: (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16))), .url("https://example.com/a?b=c"),
        ]
        values += Self.doubles.map { .double($0) } + Self.doubles.map { .date(millisecondsSince1970: $0) }
        for value in values {
            let expected = Result { try Self.throughJSON(value) }
            let written = Result { try Self.direct(value) }
            switch (expected, written) {
            case (.success(let expected), .success(let written)):
                #expect(written == expected, "\(value): \(String(decoding: written, as: UTF8.self)) against \(String(decoding: expected, as: UTF8.self))")
            case (.failure(let expected as FormatError), .failure(let written as FormatError)):
                #expect(written.code == expected.code, "\(value)")
            default:
                Issue.record("\(value): \(expected) against \(written)")
            }
        }
    }

    @Test("25,000 doubles and dates drawn from every exponent (100,000 in the long run)")
    func randomNumbers() throws {
        var generator = SplitMix64(seed: 18)
        for _ in 0..<LongRun.count(25_000, long: 100_000) {
            let value = Double(bitPattern: generator.next())
            guard value.isFinite else { continue }
            for attribute in [AttributeValue.double(value), .date(millisecondsSince1970: value)] {
                #expect(try Self.direct(attribute) == Self.throughJSON(attribute), "\(attribute)")
            }
        }
    }
}
