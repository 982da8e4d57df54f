import Foundation
import JSONDocument

/// A value decoded from a keyed archive: Foundation's value classes as themselves, classes the
/// caller allowed as generic keyed objects (Spec/device-state.md 3.3).
package indirect enum ArchivedValue: Hashable, Sendable {
    /// `$null` (a reference to object 0) or an `NSNull`.
    case null
    case bool(Bool)
    case integer(Int64)
    case real(Double)
    case string(String)
    case data([UInt8])
    /// Seconds from 2001-01-01T00:00:00Z (`NSDate`'s `NS.time`, or a property-list date).
    case date(Double)
    case uuid(UUID)
    /// `NSURL`: the relative text and, when it has one, its base URL.
    case url(base: ArchivedValue?, relative: String)
    case array([ArchivedValue])
    case set([ArchivedValue])
    case orderedSet([ArchivedValue])
    /// Pairs in the archive's order.
    case dictionary([ArchivedPair])
    /// An object of a class the caller allowed as a generic keyed object.
    case object(ArchivedObject)
    /// A member the class allow-list names as a link (an owner or a cross-reference): the object
    /// number, not followed; ``KeyedArchive/linked`` holds its value.
    case link(Int)

    package static func == (lhs: ArchivedValue, rhs: ArchivedValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): true
        case let (.bool(a), .bool(b)): a == b
        case let (.integer(a), .integer(b)): a == b
        case let (.real(a), .real(b)), let (.date(a), .date(b)): a == b || (a.isNaN && b.isNaN)
        // By bytes: `String ==` takes canonically equivalent text for equal (Spec/README.md 4).
        case let (.string(a), .string(b)): ExactString(a) == ExactString(b)
        case let (.data(a), .data(b)): a == b
        case let (.uuid(a), .uuid(b)): a == b
        case let (.url(baseA, a), .url(baseB, b)): baseA == baseB && ExactString(a) == ExactString(b)
        case let (.array(a), .array(b)), let (.set(a), .set(b)), let (.orderedSet(a), .orderedSet(b)): a == b
        case let (.dictionary(a), .dictionary(b)): a == b
        case let (.object(a), .object(b)): a == b
        case let (.link(a), .link(b)): a == b
        default: false
        }
    }

    package func hash(into hasher: inout Hasher) {
        switch self {
        case .null: hasher.combine(0)
        case .bool(let value): hasher.combine(1); hasher.combine(value)
        case .integer(let value): hasher.combine(2); hasher.combine(value)
        case .real(let value): hasher.combine(3); hasher.combine(value.isNaN ? Double.nan : value)
        case .string(let value): hasher.combine(4); hasher.combine(ExactString(value))
        case .data(let value): hasher.combine(5); hasher.combine(value)
        case .date(let value): hasher.combine(6); hasher.combine(value.isNaN ? Double.nan : value)
        case .uuid(let value): hasher.combine(7); hasher.combine(value)
        case .url(let base, let relative): hasher.combine(8); hasher.combine(base); hasher.combine(ExactString(relative))
        case .array(let values): hasher.combine(9); hasher.combine(values)
        case .set(let values): hasher.combine(10); hasher.combine(values)
        case .orderedSet(let values): hasher.combine(11); hasher.combine(values)
        case .dictionary(let pairs): hasher.combine(12); hasher.combine(pairs)
        case .object(let object): hasher.combine(13); hasher.combine(object)
        case .link(let number): hasher.combine(14); hasher.combine(number)
        }
    }
}

/// One key and its value in an archived dictionary.
package struct ArchivedPair: Hashable, Sendable {
    package var key: ArchivedValue
    package var value: ArchivedValue

    package init(key: ArchivedValue, value: ArchivedValue) {
        self.key = key
        self.value = value
    }
}

/// An archived object decoded generically: its class and its members by key (without `$class`).
package struct ArchivedObject: Hashable, Sendable {
    package var className: String
    /// `$classes`: the class and its superclasses, most derived first.
    package var classes: [String]
    /// Keys are told apart by their UTF-8 bytes, as the property list's (``PropertyListValue``).
    package var members: [ExactString: ArchivedValue]

    package init(className: String, classes: [String], members: [ExactString: ArchivedValue]) {
        self.className = className
        self.classes = classes
        self.members = members
    }

    package static func == (lhs: ArchivedObject, rhs: ArchivedObject) -> Bool {
        ExactString(lhs.className) == ExactString(rhs.className) && lhs.classes.map(ExactString.init) == rhs.classes.map(ExactString.init)
            && lhs.members == rhs.members
    }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(ExactString(className))
        hasher.combine(members)
    }
}

extension ArchivedValue {
    /// The member `key` of a generic object, or nil.
    package subscript(member key: String) -> ArchivedValue? {
        guard case .object(let object) = self else { return nil }
        return object.members[key]
    }

    /// The text of a string, or nil.
    package var string: String? {
        guard case .string(let text) = self else { return nil }
        return text
    }

    /// The elements of an array, set or ordered set, or nil.
    package var elements: [ArchivedValue]? {
        switch self {
        case .array(let values), .set(let values), .orderedSet(let values): return values
        default: return nil
        }
    }

    /// The pairs of a dictionary, or nil.
    package var pairs: [ArchivedPair]? {
        guard case .dictionary(let pairs) = self else { return nil }
        return pairs
    }

    /// The value under the string key `key` of a dictionary (the key with exactly these bytes), or nil.
    package func value(forKey key: String) -> ArchivedValue? {
        pairs?.first { $0.key == .string(key) }?.value
    }
}

extension ArchivedValue {
    /// As JSON, for values shown to people (a device's backend identity, Spec/device-state.md
    /// 6.2; a TICoreDataSync change's values, Spec/ticds.md 4.3): data as base64 text, dates as
    /// seconds from 2001, UUIDs and URLs as text, objects as their members in byte order.
    package var jsonValue: JSONValue {
        switch self {
        case .null: .null
        case .bool(let value): .bool(value)
        case .integer(let value): JSONValue(value)
        case .real(let value), .date(let value): value.isFinite ? JSONValue(value) : .null
        case .string(let text): .string(text)
        case .data(let bytes): .string(Data(bytes).base64EncodedString())
        case .uuid(let uuid): .string(uuid.uuidString)
        case .url(_, let relative): .string(relative)
        case .array(let values), .set(let values), .orderedSet(let values): .array(values.map(\.jsonValue))
        case .dictionary(let pairs): .object(JSONObject(pairs.map { ($0.key.string ?? "\($0.key)", $0.value.jsonValue) }))
        case .object(let object): .object(JSONObject(object.members.inUTF8Order.map { ($0.key.value, $0.value.jsonValue) }))
        case .link(let number): JSONValue(Int64(number))
        }
    }
}
