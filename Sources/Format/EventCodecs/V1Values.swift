import Foundation
import JSONDocument
import EnsembleModel
import DataModel

extension AttributeType {
    /// Whether a value may be stored in an attribute of this type (Spec/model.md, value types).
    /// Null fits every type; integer ranges are checked separately.
    package func accepts(_ value: AttributeValue) -> Bool {
        switch (self, value) {
        case (_, .null): true
        case (.integer16, .integer), (.integer32, .integer), (.integer64, .integer): true
        case (.double, .double), (.double, .integer), (.float, .double), (.float, .integer): true
        case (.decimal, .decimal), (.decimal, .integer), (.decimal, .double): true
        case (.string, .string), (.boolean, .bool), (.date, .date): true
        case (.binary, .binary), (.transformable, .binary): true
        case (.uuid, .uuid), (.uri, .url): true
        default: false
        }
    }
}

/// Values of the v1 dialect, read by the model's attribute type (Spec/v1-json.md).
enum V1Values {
    static func attribute(_ json: JSONValue, type: AttributeType, at pointer: JSONPointer) throws(FormatError) -> AttributeValue {
        func wrong() -> FormatError {
            FormatError(.modelWrongValueType, "a \(json.typeName) value does not fit an attribute of type \(type.rawValue)", at: pointer)
        }
        let value: AttributeValue
        switch (json, type) {
        case (.null, _):
            return .null
        case (.array(let pair), _):
            guard pair.count == 2, case .string(let tag) = pair[0] else {
                throw FormatError(.v2InvalidValue, "an array value must be a tagged pair [\"<tag>\", <value>]", at: pointer)
            }
            value = try TaggedValue.decode(tag: tag, payload: pair[1], at: pointer)
        case (.number(let number), .integer16), (.number(let number), .integer32), (.number(let number), .integer64):
            guard number.isIntegerLiteral else { throw wrong() }
            guard let int = number.int64Value else {
                throw FormatError(.modelIntegerOutOfRange, "\(number.text) is outside the range of \(type.rawValue)", at: pointer)
            }
            value = .integer(int)
        case (.number(let number), .double), (.number(let number), .float):
            guard number.doubleValue.isFinite else {
                throw FormatError(.v2NumberOutOfRange, "\(number.text) is beyond the range of a double", at: pointer)
            }
            value = .double(number.doubleValue)
        case (.number(let number), .decimal):
            value = .decimal(number.text)
        case (.number(let number), .date):
            value = .date(millisecondsSince1970: try V1Date.milliseconds(fromSecondsText: number.text, at: pointer))
        case (.string(let text), .string):
            value = .string(text)
        case (.string(let text), .uuid):
            guard text.utf8.count == 36, let uuid = UUID(uuidString: text) else {
                throw FormatError(.v2InvalidUUID, "\"\(text)\" is not a UUID in 8-4-4-4-12 hexadecimal form", at: pointer)
            }
            value = .uuid(uuid)
        case (.string(let text), .uri):
            value = .url(text)
        case (.bool(let flag), .boolean):
            value = .bool(flag)
        default:
            throw wrong()
        }
        guard type.accepts(value) else {
            throw FormatError(.modelWrongValueType, "this value does not fit an attribute of type \(type.rawValue)", at: pointer)
        }
        if case .integer(let int) = value, let range = type.integerRange, !range.contains(int) {
            throw FormatError(
                .modelIntegerOutOfRange, "\(int) is outside the range of \(type.rawValue) (\(range.lowerBound)...\(range.upperBound))", at: pointer)
        }
        return value
    }

    static func relationship(_ json: JSONValue, _ relationship: Relationship, at pointer: JSONPointer) throws(FormatError) -> PropertyChange.Value {
        guard relationship.isToMany else {
            switch json {
            case .null: return .toOne(relatedIdentifier: nil)
            case .string(let id): return .toOne(relatedIdentifier: id)
            default:
                throw FormatError(.modelWrongKind, "\(relationship.name) is a to-one relationship: its value is a global identifier or null", at: pointer)
            }
        }
        guard case .object(let object) = json else {
            let what = json.stringValue != nil ? "a to-many given as a single id" : "a \(json.typeName)"
            throw FormatError(
                .modelWrongKind, "\(relationship.name) is a to-many relationship: its value is {\"add\": [...], \"remove\": [...]}, not \(what)", at: pointer)
        }
        let allowed: Set<String> = relationship.isOrdered ? [V1Key.add, V1Key.remove, V1Key.moved] : [V1Key.add, V1Key.remove]
        if let extra = object.keys.first(where: { !allowed.contains($0) }) {
            throw FormatError(
                .modelWrongKind, "\"\(extra)\" does not belong to the value of \(relationship.isOrdered ? "an ordered" : "an unordered") to-many relationship",
                at: pointer / extra)
        }
        func ids(_ key: String) throws(FormatError) -> [String] {
            guard let list = object[key] else { return [] }
            guard case .array(let elements) = list else {
                throw FormatError(.modelWrongKind, "\"\(key)\" of a to-many value is an array of global identifiers", at: pointer / key)
            }
            var seen = Set<ExactString>()
            var result: [String] = []
            for (i, element) in elements.enumerated() {
                guard case .string(let id) = element else {
                    throw FormatError(.modelWrongKind, "\"\(key)\" of a to-many value holds global identifiers (strings)", at: pointer / key / i)
                }
                guard seen.insert(ExactString(id)).inserted else {
                    throw FormatError(.v2DuplicateIdentifier, "\"\(id)\" appears twice in the set", at: pointer / key / i)
                }
                result.append(id)
            }
            return result
        }
        guard relationship.isOrdered else { return .toMany(added: try ids(V1Key.add), removed: try ids(V1Key.remove)) }
        var moved: [Int: String] = [:]
        if let movedValue = object[V1Key.moved] {
            guard case .object(let movedObject) = movedValue else {
                throw FormatError(.modelWrongKind, "\"moved\" of an ordered to-many value maps positions to global identifiers", at: pointer / V1Key.moved)
            }
            for (key, id) in movedObject {
                guard let index = OrderedIndex.parse(key) else {
                    throw FormatError(
                        .v2InvalidIndex, "\"\(key)\" is not a position (0 or a decimal number without leading zeros, at most 9 digits)",
                        at: pointer / V1Key.moved / key)
                }
                guard case .string(let movedID) = id else {
                    throw FormatError(.modelWrongKind, "\"moved\" maps positions to global identifiers (strings)", at: pointer / V1Key.moved / key)
                }
                moved[index] = movedID
            }
        }
        return .orderedToMany(added: try ids(V1Key.add), removed: try ids(V1Key.remove), movedByIndex: moved)
    }
}

/// Names of data files as events may reference them (Spec/v2-json.md section 5.6): never a path.
package enum DataFileName {
    package static func isValid(_ name: String) -> Bool { V2TextPatterns.isDataFileName(name) }
}

/// Positions of an ordered to-many: `0` or up to 9 digits without a leading zero.
enum OrderedIndex {
    static func parse(_ key: String) -> Int? { V2TextPatterns.orderedIndex(key.utf8) }
}

/// v1 dates are seconds since 2001; the logical date is milliseconds since 1970. The
/// conversion is exact decimal arithmetic on the number text, rounded once (Spec/v1-json.md).
enum V1Date {
    /// 2001-01-01 minus 1970-01-01, in milliseconds.
    static let referenceOffset = ExactDecimal("978307200000")
    static let negativeReferenceOffset = ExactDecimal("-978307200000")

    static func milliseconds(fromSecondsText text: String, at pointer: JSONPointer) throws(FormatError) -> Double {
        let seconds = ExactDecimal(text)
        // Beyond these magnitudes no double is near; checking first keeps the digits bounded.
        guard (-400...400).contains(seconds.magnitude), (-800...800).contains(seconds.exponent) else {
            throw FormatError(.v2NumberOutOfRange, "the date \(text) is beyond the range of a double", at: pointer)
        }
        let milliseconds = seconds.shifted(byPowerOfTen: 3).adding(referenceOffset)
        guard let double = Double(milliseconds.plainText), double.isFinite else {
            throw FormatError(.v2NumberOutOfRange, "the date \(text) is beyond the range of a double", at: pointer)
        }
        return double
    }

    /// The exact seconds-since-2001 text of a date, or nil when that text would not read back
    /// to the same double.
    static func secondsText(milliseconds: Double) -> String? {
        guard milliseconds.isFinite else { return nil }
        let exact = ExactDecimal(CanonicalNumberFormat.ecmaScript(milliseconds))
        var text = exact.adding(negativeReferenceOffset).shifted(byPowerOfTen: -3).plainText
        if !text.contains(".") { text += ".0" }
        guard let back = try? self.milliseconds(fromSecondsText: text, at: .root), back == milliseconds else { return nil }
        return text
    }
}
