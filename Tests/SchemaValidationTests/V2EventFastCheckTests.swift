import Foundation
import Testing
import JSONDocument
import SchemaValidation
import TestSupport

/// The fast check may only say "valid" where the v2 event schema's generic validator finds
/// nothing (otherwise the reader would skip a violation); it should say so for every ordinary
/// event (otherwise it saves nothing). Checked on every JSON file of the fixtures and on seeded
/// mutations of the valid ones.
@Suite("v2 event fast check")
struct V2EventFastCheckTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures")

    static func documents() -> [(name: String, value: JSONValue)] {
        var result: [(String, JSONValue)] = []
        guard let walker = FileManager.default.enumerator(atPath: fixtures.path) else { return result }
        while let relative = walker.nextObject() as? String {
            guard relative.hasSuffix(".json") || relative.hasSuffix(".cdeevent"), !relative.contains("expected"),
                let data = FileManager.default.contents(atPath: fixtures.appendingPathComponent(relative).path),
                let value = try? JSONParser.parse(Array(data))
            else { continue }
            result.append((relative, value))
        }
        return result
    }

    @Test("on every fixture: the same verdict as the validator")
    func fixturesAgree() throws {
        let validator = try BundledSchema.v2Event.validator()
        let documents = Self.documents()
        #expect(documents.count > 300)
        var accepted = 0
        for (name, value) in documents {
            let valid = validator.validate(value).isEmpty
            let fast = V2EventFastCheck.accepts(value)
            #expect(fast == valid, "\(name): fast \(fast), validator \(valid)")
            if fast { accepted += 1 }
        }
        #expect(accepted > 200)
    }

    /// Small random edits of a valid event: replace a value, drop or add a member, at any depth.
    static func mutate(_ value: JSONValue, using random: inout some RandomNumberGenerator) -> JSONValue {
        let replacements: [JSONValue] = [
            .null, .bool(true), .number(JSONNumber(text: "200")), .number(JSONNumber(text: "200.0")), .number(JSONNumber(text: "-1")),
            .number(JSONNumber(text: "2")), .number(JSONNumber(text: "9223372036854775808")), .string(""), .string("a_b"), .string("."),
            .string("..\n"), .string("x/y"), .string("1.5e3"), .string("-0"), .string("01"), .string("123456789"), .string("1234567890"),
            .string(String(repeating: "é", count: 200)), .string(String(repeating: "é", count: 256)), .string("😀"), .array([]),
            .array([.string("date"), .string("1")]), .array([.string("date"), .number(JSONNumber(text: "1"))]), .array([.string("x"), .null]),
            .array([.string("a"), .string("a")]), .array([.string("e\u{301}"), .string("\u{e9}")]), .object(JSONObject()),
        ]
        switch value {
        case .object(var members):
            let keys = members.keys
            switch Int.random(in: 0..<4, using: &random) {
            case 0 where !keys.isEmpty:
                members[keys[Int.random(in: 0..<keys.count, using: &random)]] = nil
            case 1:
                let names = ["type", "name", "propertyName", "value", "filename", "relatedIdentifier", "addedIdentifiers", "modelVersion", "extra", "0"]
                members[names[Int.random(in: 0..<names.count, using: &random)]] = replacements[Int.random(in: 0..<replacements.count, using: &random)]
            case 2 where !keys.isEmpty:
                let key = keys[Int.random(in: 0..<keys.count, using: &random)]
                members[key] = replacements[Int.random(in: 0..<replacements.count, using: &random)]
            default:
                guard !keys.isEmpty else { return value }
                let key = keys[Int.random(in: 0..<keys.count, using: &random)]
                if let inner = members[key] { members[key] = mutate(inner, using: &random) }
            }
            return .object(members)
        case .array(var items):
            guard !items.isEmpty else { return .array([replacements[Int.random(in: 0..<replacements.count, using: &random)]]) }
            let index = Int.random(in: 0..<items.count, using: &random)
            switch Int.random(in: 0..<3, using: &random) {
            case 0: items[index] = replacements[Int.random(in: 0..<replacements.count, using: &random)]
            case 1: items.append(items[index])
            default: items[index] = mutate(items[index], using: &random)
            }
            return .array(items)
        default:
            return replacements[Int.random(in: 0..<replacements.count, using: &random)]
        }
    }

    @Test("on 20,000 mutations: never valid where the validator finds a violation")
    func mutationsAreSound() throws {
        let validator = try BundledSchema.v2Event.validator()
        let valid = Self.documents().map(\.value).filter { validator.validate($0).isEmpty }
        #expect(!valid.isEmpty)
        var random = SplitMix64(seed: 2026)
        var disagreements = (unsound: 0, cautious: 0, invalid: 0)
        for round in 0..<20_000 {
            var value = valid[round % valid.count]
            for _ in 0...Int.random(in: 0..<3, using: &random) { value = Self.mutate(value, using: &random) }
            let generic = validator.validate(value).isEmpty
            let fast = V2EventFastCheck.accepts(value)
            if fast && !generic { disagreements.unsound += 1 }
            if !fast && generic { disagreements.cautious += 1 }
            if !generic { disagreements.invalid += 1 }
            #expect(!(fast && !generic), "round \(round): the fast check accepts \(JSONWriter().string(value))")
        }
        // Enough of the mutations must break the schema for the test to mean something.
        #expect(disagreements.invalid > 5_000)
        #expect(disagreements.unsound == 0)
    }
}
