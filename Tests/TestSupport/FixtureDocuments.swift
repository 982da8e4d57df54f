import Foundation
import JSONDocument

/// Every JSON document of `Fixtures/` (expected outputs left out), parsed, for tests that compare
/// two readers on real inputs.
public enum FixtureDocuments {
    public static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures")

    /// `.json` and `.cdeevent` files that parse, with their bytes.
    public static func files() -> [(name: String, bytes: [UInt8], value: JSONValue)] {
        var result: [(String, [UInt8], JSONValue)] = []
        guard let walker = FileManager.default.enumerator(atPath: root.path) else { return result }
        while let relative = walker.nextObject() as? String {
            guard relative.hasSuffix(".json") || relative.hasSuffix(".cdeevent"), !relative.contains("expected"),
                let data = FileManager.default.contents(atPath: root.appendingPathComponent(relative).path),
                let value = try? JSONParser.parse(Array(data))
            else { continue }
            result.append((relative, Array(data), value))
        }
        return result
    }

    public static func json() -> [(name: String, value: JSONValue)] { files().map { ($0.name, $0.value) } }
}

/// Seeded random edits of JSON documents, for differential tests of readers.
public enum JSONMutation {
    /// Small random edits of a valid event: replace a value, drop or add a member, at any depth.
    public static func mutate(_ value: JSONValue, using random: inout some RandomNumberGenerator) -> JSONValue {
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

}
