import JSONDocument

/// Whether an object change creates, modifies or removes its object.
public enum ChangeType: Int64, Sendable, Hashable, CaseIterable, Comparable {
    case insert = 100
    case update = 200
    case delete = 300

    public static func < (lhs: ChangeType, rhs: ChangeType) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// The change of one object, identified by (entity, global identifier), inside an event.
public struct ObjectChange: Hashable, Sendable {
    public var entity: String
    public var globalIdentifier: String
    public var type: ChangeType
    /// Sorted by property name (UTF-8 bytes); names are unique.
    public var propertyChanges: [PropertyChange]
    /// Names of the data files (in `data/`) that this change's values live in; sorted, unique.
    public var dataFiles: [String]
    public var unknownFields: JSONObject

    public init(
        entity: String, globalIdentifier: String, type: ChangeType,
        propertyChanges: [PropertyChange] = [], dataFiles: [String] = [],
        unknownFields: JSONObject = JSONObject()
    ) {
        self.init(
            entity: entity, globalIdentifier: globalIdentifier, type: type, sortedPropertyChanges: Self.sortedByName(propertyChanges),
            sortedDataFiles: sortedUnique(dataFiles))
        self.unknownFields = unknownFields
    }

    /// Takes the lists as they are: for a decoder that has checked their order while reading.
    /// Inlinable, so that a decoder builds the change in place.
    @inlinable
    package init(entity: String, globalIdentifier: String, type: ChangeType, sortedPropertyChanges: [PropertyChange], sortedDataFiles: [String]) {
        self.entity = entity
        self.globalIdentifier = globalIdentifier
        self.type = type
        propertyChanges = sortedPropertyChanges
        dataFiles = sortedDataFiles
        unknownFields = JSONObject()
    }

    /// Property changes sorted by name (UTF-8 bytes), stably. Decoders already give them sorted,
    /// and checking is cheaper than sorting again; by index, since zipping copied every element.
    package static func sortedByName(_ properties: [PropertyChange]) -> [PropertyChange] {
        let isSorted = properties.indices.dropFirst().allSatisfy { utf8Precedes(properties[$0 - 1].name, properties[$0].name) }
        return isSorted ? properties : properties.sorted { utf8Precedes($0.name, $1.name) }
    }

    /// Field by field; identifiers and names by their exact bytes (Spec/merge.md 4.2).
    public static func == (lhs: ObjectChange, rhs: ObjectChange) -> Bool {
        lhs.type == rhs.type && exactlyEqual(lhs.entity, rhs.entity) && exactlyEqual(lhs.globalIdentifier, rhs.globalIdentifier)
            && exactlyEqual(lhs.dataFiles, rhs.dataFiles) && lhs.propertyChanges == rhs.propertyChanges && lhs.unknownFields == rhs.unknownFields
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(ExactString(entity))
        hasher.combine(ExactString(globalIdentifier))
        hasher.combine(type)
        hasher.combine(propertyChanges.count)
    }

    /// Groups changes by entity in UTF-8 byte order, keeping the given order inside an entity.
    public static func canonicallyOrdered(_ changes: [ObjectChange]) -> [ObjectChange] {
        // By index: zipping copied every change (all its strings and lists retained and released).
        let isOrdered = changes.indices.dropFirst().allSatisfy { !utf8Precedes(changes[$0].entity, changes[$0 - 1].entity) }
        if isOrdered { return changes }
        // Each change's entity numbered, the few distinct entities sorted, then the changes
        // placed by their entity's rank in one stable pass: sorting the changes themselves
        // compared names at every step and moved every change (its strings and lists retained)
        // many times; it was a sixth of a binary `generate` (Benchmarks/README.md, stop 68).
        var numberOf: [ExactString: Int] = [:]
        var entities: [String] = []
        let entityOf = changes.indices.map { index in
            let key = ExactString(changes[index].entity)
            if let number = numberOf[key] { return number }
            numberOf[key] = entities.count
            entities.append(changes[index].entity)
            return entities.count - 1
        }
        var rank = [Int](repeating: 0, count: entities.count)
        for (position, entity) in entities.indices.sorted(by: { utf8Precedes(entities[$0], entities[$1]) }).enumerated() { rank[entity] = position }
        // Where each rank's changes start, then each change's place.
        var next = [Int](repeating: 0, count: entities.count + 1)
        for entity in entityOf { next[rank[entity] + 1] += 1 }
        for position in next.indices.dropFirst() { next[position] += next[position - 1] }
        var order = [Int](repeating: 0, count: changes.count)
        for index in changes.indices {
            order[next[rank[entityOf[index]]]] = index
            next[rank[entityOf[index]]] += 1
        }
        return order.map { changes[$0] }
    }
}

/// Whether two strings have the same code points (Swift's `==` also equates canonically
/// equivalent spellings, which are different identifiers here).
@inlinable
public func exactlyEqual(_ a: String, _ b: String) -> Bool { ExactString(a) == ExactString(b) }

/// Whether two lists of strings are equal element by element, by exact bytes.
public func exactlyEqual(_ a: [String], _ b: [String]) -> Bool {
    a.count == b.count && zip(a, b).allSatisfy { exactlyEqual($0, $1) }
}

/// The sorted (UTF-8 byte order), duplicate-free form of a set of identifiers.
public func sortedUnique(_ strings: [String]) -> [String] {
    if zip(strings, strings.dropFirst()).allSatisfy({ utf8Precedes($0, $1) }) { return strings }
    var result = strings.sorted(by: utf8Precedes)
    var write = 0
    for read in result.indices where write == 0 || !result[read].utf8.elementsEqual(result[write - 1].utf8) {
        result[write] = result[read]
        write += 1
    }
    result.removeLast(result.count - write)
    return result
}
