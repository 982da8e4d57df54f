import Foundation

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
    package var members: [String: ArchivedValue]

    package init(className: String, classes: [String], members: [String: ArchivedValue]) {
        self.className = className
        self.classes = classes
        self.members = members
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

    /// The value under the string key `key` of a dictionary, or nil.
    package func value(forKey key: String) -> ArchivedValue? {
        pairs?.first { $0.key == .string(key) }?.value
    }
}
