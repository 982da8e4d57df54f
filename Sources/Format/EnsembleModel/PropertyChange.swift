import JSONDocument

/// The four kinds of property a change can set (the `type` key of a v2 property change).
package enum PropertyKind: Int64, Sendable, Hashable, CaseIterable {
    case attribute = 0
    case toOne = 1
    case toMany = 2
    case orderedToMany = 3
}

/// One property of an object change.
public struct PropertyChange: Hashable, Sendable {
    public enum Value: Hashable, Sendable {
        /// An attribute value held in the event itself.
        case attribute(AttributeValue)
        /// An attribute value held in `data/<filename>`.
        case attributeInDataFile(filename: String)
        /// The related object's global identifier, or nil for no object.
        case toOne(relatedIdentifier: String?)
        /// Ids added to and removed from the relationship; both sorted and unique.
        case toMany(added: [String], removed: [String])
        /// As `toMany`, plus the full new order: index to global identifier.
        case orderedToMany(added: [String], removed: [String], movedByIndex: [Int: String])

        /// Identifiers and file names compared by their exact bytes.
        public static func == (lhs: Value, rhs: Value) -> Bool {
            switch (lhs, rhs) {
            case let (.attribute(a), .attribute(b)): a == b
            case let (.attributeInDataFile(a), .attributeInDataFile(b)): exactlyEqual(a, b)
            case let (.toOne(a), .toOne(b)): a.map { x in b.map { exactlyEqual(x, $0) } ?? false } ?? (b == nil)
            case let (.toMany(a1, r1), .toMany(a2, r2)): exactlyEqual(a1, a2) && exactlyEqual(r1, r2)
            case let (.orderedToMany(a1, r1, m1), .orderedToMany(a2, r2, m2)):
                exactlyEqual(a1, a2) && exactlyEqual(r1, r2) && m1.count == m2.count
                    && m1.allSatisfy { entry in m2[entry.key].map { exactlyEqual($0, entry.value) } ?? false }
            default: false
            }
        }

        public func hash(into hasher: inout Hasher) {
            hasher.combine(kind)
            switch self {
            case .attribute(let value): hasher.combine(value)
            case .attributeInDataFile(let name): hasher.combine(ExactString(name))
            case .toOne(let related): hasher.combine(related.map(ExactString.init))
            case .toMany(let added, let removed), .orderedToMany(let added, let removed, _):
                hasher.combine(added.count)
                hasher.combine(removed.count)
            }
        }

        package var kind: PropertyKind {
            switch self {
            case .attribute, .attributeInDataFile: .attribute
            case .toOne: .toOne
            case .toMany: .toMany
            case .orderedToMany: .orderedToMany
            }
        }
    }

    public var name: String
    public var value: Value
    public var unknownFields: JSONObject

    /// Normalises to-many id lists to sorted, unique form so equal sets compare equal.
    public init(name: String, value: Value, unknownFields: JSONObject = JSONObject()) {
        switch value {
        case .toMany(let added, let removed):
            self.init(name: name, sortedValue: .toMany(added: sortedUnique(added), removed: sortedUnique(removed)))
        case .orderedToMany(let added, let removed, let moved):
            self.init(name: name, sortedValue: .orderedToMany(added: sortedUnique(added), removed: sortedUnique(removed), movedByIndex: moved))
        default:
            self.init(name: name, sortedValue: value)
        }
        self.unknownFields = unknownFields
    }

    /// Takes the value as it is: for a decoder that has checked that its id lists are sorted and
    /// unique while reading. Inlinable, so that a decoder builds the change in place.
    @inlinable
    package init(name: String, sortedValue: Value) {
        self.name = name
        value = sortedValue
        unknownFields = JSONObject()
    }

    package var kind: PropertyKind { value.kind }

    public static func == (lhs: PropertyChange, rhs: PropertyChange) -> Bool {
        exactlyEqual(lhs.name, rhs.name) && lhs.value == rhs.value && lhs.unknownFields == rhs.unknownFields
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(ExactString(name))
        hasher.combine(value)
    }
}
