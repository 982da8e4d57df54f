import JSONDocument

/// The four kinds of property a change can set (the `type` key of a v2 property change).
public enum PropertyKind: Int64, Sendable, Hashable, CaseIterable {
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

        public var kind: PropertyKind {
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
        self.name = name
        switch value {
        case .toMany(let added, let removed):
            self.value = .toMany(added: sortedUnique(added), removed: sortedUnique(removed))
        case .orderedToMany(let added, let removed, let moved):
            self.value = .orderedToMany(added: sortedUnique(added), removed: sortedUnique(removed), movedByIndex: moved)
        default:
            self.value = value
        }
        self.unknownFields = unknownFields
    }

    public var kind: PropertyKind { value.kind }
}
