import JSONDocument

/// A hand-written check of `Spec/schemas/v2-event.schema.json` that only ever says "valid" for an
/// event the generic validator accepts, without the generic validator's walk over every keyword
/// and its regular expressions (ICU, the largest cost of reading a v2 JSON file).
///
/// It answers `true` or "ask the validator": anything unusual (a number written `200.0`, a string
/// outside ASCII where a pattern applies, any violation) returns `false`, and the reader then runs
/// ``SchemaValidator`` for the exact errors of Spec/v2-json.md 4. So verdicts, codes and pointers
/// never depend on it; `Tests/SchemaValidationTests` checks it against the validator on every
/// fixture and on thousands of mutations, in both directions.
package enum V2EventFastCheck {
    private static let headerKeys = ["uniqueIdentifier", "type", "globalCount", "timestamp", "storeIdentifier", "revisionsByStoreIdentifier"]

    /// Whether `instance` certainly satisfies the v2 event schema.
    package static func accepts(_ instance: JSONValue) -> Bool {
        guard case .object(let event) = instance else { return false }
        // dependentRequired: one header member needs all six; anyOf: type or changesByEntity.
        let present = headerKeys.filter { event.contains($0) }.count
        guard present == 0 || present == headerKeys.count, present > 0 || !event.contains("modelVersion") else { return false }
        guard event.contains("type") || event.contains("changesByEntity") else { return false }
        for (key, value) in event {
            switch key {
            case "uniqueIdentifier":
                guard case .string(let text) = value, !text.isEmpty else { return false }
            case "type":
                guard let type = integer(value), [0, 100, 200, 300].contains(type) else { return false }
            case "globalCount":
                guard let count = integer(value), count >= 0 else { return false }
            case "timestamp":
                guard case .string(let text) = value, isDecimalText(text) else { return false }
            case "storeIdentifier":
                guard case .string(let text) = value, V2TextPatterns.isStoreIdentifier(text) else { return false }
            case "modelVersion":
                switch value {
                case .string, .null: break
                default: return false
                }
            case "revisionsByStoreIdentifier":
                guard case .object(let revisions) = value else { return false }
                for (_, revision) in revisions {
                    guard let number = integer(revision), number >= 0 else { return false }
                }
            case "changesByEntity":
                guard case .object(let entities) = value else { return false }
                for (_, changes) in entities {
                    guard case .array(let list) = changes, list.allSatisfy(objectChange) else { return false }
                }
            default:
                continue
            }
        }
        return true
    }

    private static func objectChange(_ value: JSONValue) -> Bool {
        guard case .object(let change) = value, change.contains("type"), change.contains("globalIdentifier") else { return false }
        for (key, member) in change {
            switch key {
            case "type":
                guard let type = integer(member), [100, 200, 300].contains(type) else { return false }
            case "globalIdentifier":
                guard case .string(let text) = member, !text.isEmpty else { return false }
            case "properties":
                guard case .array(let list) = member, list.allSatisfy(propertyChange) else { return false }
            case "dataFiles":
                guard case .array(let names) = member, uniqueStrings(names, each: V2TextPatterns.isDataFileName) else { return false }
            default:
                continue
            }
        }
        return true
    }

    /// The members a property change of each kind must not have (the schema's `allOf`).
    private static let forbidden: [Int64: [String]] = [
        0: ["relatedIdentifier", "addedIdentifiers", "removedIdentifiers", "movedIdentifiersByIndex"],
        1: ["value", "filename", "addedIdentifiers", "removedIdentifiers", "movedIdentifiersByIndex"],
        2: ["value", "filename", "relatedIdentifier", "movedIdentifiersByIndex"],
        3: ["value", "filename", "relatedIdentifier"],
    ]

    private static func propertyChange(_ value: JSONValue) -> Bool {
        guard case .object(let change) = value, let typeValue = change["type"], let type = integer(typeValue),
            let excluded = forbidden[type], change.contains("propertyName") != change.contains("name"),
            !excluded.contains(where: change.contains)
        else { return false }
        for (key, member) in change {
            switch key {
            case "propertyName", "name":
                guard case .string = member else { return false }
            case "value":
                guard attributeValue(member) else { return false }
            case "filename":
                guard case .string(let text) = member, V2TextPatterns.isDataFileName(text) else { return false }
            case "relatedIdentifier":
                switch member {
                case .string, .null: break
                default: return false
                }
            case "addedIdentifiers", "removedIdentifiers":
                guard case .array(let identifiers) = member, uniqueStrings(identifiers, each: { _ in true }) else { return false }
            case "movedIdentifiersByIndex":
                guard case .object(let moves) = member else { return false }
                for (index, identifier) in moves {
                    guard V2TextPatterns.orderedIndex(index.utf8) != nil, case .string = identifier else { return false }
                }
            default:
                continue
            }
        }
        return true
    }

    private static func attributeValue(_ value: JSONValue) -> Bool {
        switch value {
        case .null, .bool, .number, .string: return true
        case .array(let pair):
            guard pair.count == 2, case .string(let tag) = pair[0] else { return false }
            switch (tag, pair[1]) {
            case ("decimal", .string), ("data", .string), ("number", .string), ("uuid", .string), ("url", .string), ("date", .number): return true
            case ("decimal", _), ("data", _), ("number", _), ("uuid", _), ("url", _), ("date", _): return false
            // Unknown tags pass the schema; the decoder rejects them.
            default: return true
            }
        default: return false
        }
    }

    /// A number written as an integer literal that fits Int64 (`200.0` and `2e2` are left to the
    /// validator, which accepts them as integers too).
    private static func integer(_ value: JSONValue) -> Int64? {
        guard case .number(let number) = value else { return nil }
        return number.int64Value
    }

    /// Strings, each passing `check`, all different by code points (as `uniqueItems` compares
    /// JSON strings: `é` and `e` + U+0301 differ).
    private static func uniqueStrings(_ items: [JSONValue], each check: (String) -> Bool) -> Bool {
        var seen = Set<ExactString>()
        for item in items {
            guard case .string(let text) = item, check(text), seen.insert(ExactString(text)).inserted else { return false }
        }
        return true
    }
}
