import JSONDocument
import EnsembleModel
import DataModel
import EventCodecs

/// The state of the store being rebuilt: live objects and the properties set on them
/// (Spec/merge.md sections 7 and 8).
public struct StoreState: Sendable {
    /// An object: its entity and global identifier. (Base, x) and (Sub, x) are two objects.
    public struct ObjectKey: Hashable, Sendable {
        public var entity: ExactString
        public var id: ExactString
    }

    /// A property's current value. Relationships hold objects, not bare identifiers, so a
    /// delete detaches exactly the object deleted.
    public enum Value: Sendable, Equatable {
        case attribute(AttributeValue)
        case dataFile(String)
        case toOne(ObjectKey?)
        case toMany(Set<ObjectKey>)
        case ordered([ObjectKey])
    }

    private var objects: [ObjectKey: [ExactString: (name: String, value: Value)]] = [:]
    /// Live entities per global identifier, for resolving related identifiers.
    private var entitiesByID: [ExactString: Set<ExactString>] = [:]
    /// Which (object, relationship) holds each object: a delete detaches exactly these, in time
    /// proportional to the object's links instead of to the number of live objects.
    private var referrers: [ObjectKey: Set<Referrer>] = [:]

    private struct Referrer: Hashable {
        var holder: ObjectKey
        var relationship: ExactString
    }
    let model: DataModel?

    /// For `history`: one object whose properties' provenance is recorded.
    private var watched: ObjectKey?
    /// The file of the event being applied, for provenance.
    public var currentSource: String?
    /// For the watched object: property name -> the file of the change that set it last, or
    /// nil when an inverse relationship set it.
    public private(set) var provenance: [String: String?] = [:]

    /// An empty store; with a model, inverse relationships are kept consistent.
    public init(model: DataModel?) { self.model = model }

    /// Records, for one object, who set each property (Spec/verify.md, history).
    public mutating func watch(entity: String, id: String) { watched = Self.key(entity, id) }

    /// Applies one event with its three phases: create, set, delete (Spec/merge.md section 8).
    public mutating func apply(_ event: Event) {
        for change in event.objectChanges where change.type == .insert {
            let key = Self.key(change.entity, change.globalIdentifier)
            if objects[key] == nil {
                objects[key] = [:]
                entitiesByID[key.id, default: []].insert(key.entity)
                if key == watched { provenance = [:] }
            }
        }
        for change in event.objectChanges where change.type != .delete {
            let key = Self.key(change.entity, change.globalIdentifier)
            guard objects[key] != nil else { continue }
            for property in change.propertyChanges {
                set(property, of: key, isInsert: change.type == .insert)
            }
        }
        for change in event.objectChanges where change.type == .delete {
            delete(Self.key(change.entity, change.globalIdentifier))
        }
    }

    private static func key(_ entity: String, _ id: String) -> ObjectKey {
        ObjectKey(entity: ExactString(entity), id: ExactString(id))
    }

    private mutating func set(_ property: PropertyChange, of key: ObjectKey, isInsert: Bool) {
        let name = ExactString(property.name)
        let current = objects[key]?[name]?.value
        let value: Value
        switch property.value {
        case .attribute(let attribute):
            value = .attribute(attribute)
        case .attributeInDataFile(let file):
            value = .dataFile(file)
        case .toOne(let related):
            guard let related else {
                value = .toOne(nil)
                break
            }
            guard let target = resolve(related, from: key.entity.value, relationship: property.name) else { return }
            value = .toOne(target)
        case .toMany(let added, let removed):
            var members: Set<ObjectKey> = []
            if !isInsert, case .toMany(let existing)? = current {
                let removedIDs = Set(removed.map(ExactString.init))
                members = existing.filter { !removedIDs.contains($0.id) }
            }
            for id in added {
                guard !members.contains(where: { $0.id == ExactString(id) }),
                      let target = resolve(id, from: key.entity.value, relationship: property.name) else { continue }
                members.insert(target)
            }
            value = .toMany(members)
        case .orderedToMany(let added, let removed, let moved):
            var order: [ObjectKey] = []
            if !isInsert, case .ordered(let existing)? = current { order = existing }
            let removedIDs = Set(removed.map(ExactString.init))
            order.removeAll { removedIDs.contains($0.id) }
            for id in added.sorted(by: utf8Precedes) where !order.contains(where: { $0.id == ExactString(id) }) {
                if let target = resolve(id, from: key.entity.value, relationship: property.name) { order.append(target) }
            }
            if !moved.isEmpty {
                var front: [ObjectKey] = []
                for index in moved.keys.sorted() {
                    guard let id = moved[index], let member = order.first(where: { $0.id == ExactString(id) }),
                          !front.contains(member) else { continue }
                    front.append(member)
                }
                order = front + order.filter { !front.contains($0) }
            }
            value = .ordered(order)
        }
        store(value, as: property.name, of: key)
        if key == watched { provenance[property.name] = .some(currentSource) }
        maintainInverse(of: property.name, on: key, from: current, to: value)
    }

    /// The live object a related identifier names (Spec/merge.md 8.5): without a model any
    /// entity, with one the destination entity or its sub-entities; the first entity by name
    /// in UTF-8 byte order when several match.
    private func resolve(_ id: String, from entity: String, relationship: String) -> ObjectKey? {
        guard let candidates = entitiesByID[ExactString(id)] else { return nil }
        var destination: String?
        if let model, case .relationship(let definition)? = model.property(relationship, of: entity) {
            destination = definition.destinationEntity
        }
        let matching = candidates.filter { candidate in
            guard let model, let destination else { return true }
            return model.entity(candidate.value, isKindOf: destination)
        }
        return matching.min { $0.value.utf8.lexicographicallyPrecedes($1.value.utf8) }.map { ObjectKey(entity: $0, id: ExactString(id)) }
    }

    // MARK: - Inverse relationships

    private static func isRelationship(_ value: Value?) -> Bool {
        switch value {
        case .toOne?, .toMany?, .ordered?: true
        default: false
        }
    }

    /// The objects a relationship value holds.
    private static func targets(_ value: Value?) -> Set<ObjectKey> {
        switch value {
        case .toOne(let target?)?: [target]
        case .toMany(let members)?: members
        case .ordered(let order)?: Set(order)
        default: []
        }
    }

    /// With a model, keeps the other side of a relationship consistent, as Core Data does
    /// (Spec/merge.md 8.8).
    private mutating func maintainInverse(of relationship: String, on key: ObjectKey, from old: Value?, to new: Value) {
        guard let model, case .relationship(let definition)? = model.property(relationship, of: key.entity.value),
              let inverseName = definition.inverseName else { return }
        let before = Self.targets(old), after = Self.targets(new)
        let byKey: (ObjectKey, ObjectKey) -> Bool = { a, b in
            a.entity != b.entity ? a.entity.value.utf8.lexicographicallyPrecedes(b.entity.value.utf8) : a.id.value.utf8.lexicographicallyPrecedes(b.id.value.utf8)
        }
        for target in before.subtracting(after).sorted(by: byKey) where objects[target] != nil {
            detach(key, from: inverseName, of: target)
        }
        for target in after.subtracting(before).sorted(by: byKey) where objects[target] != nil {
            guard case .relationship(let inverse)? = model.property(inverseName, of: target.entity.value) else { continue }
            if !inverse.isToMany {
                // A to-one holds one object: its previous partner loses the target.
                if case .toOne(let previous?)? = objects[target]?[ExactString(inverseName)]?.value, previous != key, objects[previous] != nil {
                    detach(target, from: relationship, of: previous)
                }
                store(.toOne(key), as: inverseName, of: target)
            } else if inverse.isOrdered {
                modifyRelationship(inverseName, of: target, adding: key) { value in
                    guard case .ordered(var order)? = value else { return .ordered([key]) }
                    value = nil
                    if !order.contains(key) { order.append(key) }
                    return .ordered(order)
                }
            } else {
                modifyRelationship(inverseName, of: target, adding: key) { value in
                    guard case .toMany(var members)? = value else { return .toMany([key]) }
                    value = nil
                    members.insert(key)
                    return .toMany(members)
                }
            }
            if target == watched { provenance[inverseName] = .some(nil) }
        }
    }

    /// Changes one relationship of a live object in place (the collection is taken out of the
    /// state first, so adding one member does not copy all the others) and records that it now
    /// holds `added` and no longer holds `removed`.
    private mutating func modifyRelationship(_ name: String, of key: ObjectKey, adding added: ObjectKey? = nil, removing removed: ObjectKey? = nil,
                                             _ change: (inout Value?) -> Value) {
        guard objects[key] != nil else { return }
        let property = ExactString(name)
        var current = objects[key]?.removeValue(forKey: property)?.value
        objects[key]?[property] = (name, change(&current))
        let referrer = Referrer(holder: key, relationship: property)
        if let removed { referrers[removed]?.remove(referrer) }
        if let added { referrers[added, default: []].insert(referrer) }
    }

    /// Sets one property of a live object and keeps `referrers` in step.
    private mutating func store(_ value: Value, as name: String, of key: ObjectKey) {
        guard objects[key] != nil else { return }
        let property = ExactString(name)
        let old = objects[key]?.updateValue((name, value), forKey: property)?.value
        // Attributes hold no objects: only relationships change who refers to whom.
        guard Self.isRelationship(old) || Self.isRelationship(value) else { return }
        let before = Self.targets(old), after = Self.targets(value)
        let referrer = Referrer(holder: key, relationship: property)
        for target in before where !after.contains(target) { referrers[target]?.remove(referrer) }
        for target in after where !before.contains(target) { referrers[target, default: []].insert(referrer) }
    }

    /// Removes `object` from one relationship of one object (a to-one holding it becomes null).
    private mutating func detach(_ object: ObjectKey, from relationship: String, of key: ObjectKey) {
        let name = ExactString(relationship)
        enum Holding { case none, toOne, toMany, ordered }
        // Decided first, so that no reference to the collection is alive while it is changed.
        let holding: Holding = switch objects[key]?[name]?.value {
        case .toOne(let target?)? where target == object: .toOne
        case .toMany(let members)? where members.contains(object): .toMany
        case .ordered(let order)? where order.contains(object): .ordered
        default: .none
        }
        switch holding {
        case .toOne:
            store(.toOne(nil), as: relationship, of: key)
        case .toMany:
            modifyRelationship(relationship, of: key, removing: object) { value in
                guard case .toMany(var members)? = value else { return .toMany([]) }
                value = nil
                members.remove(object)
                return .toMany(members)
            }
        case .ordered:
            modifyRelationship(relationship, of: key, removing: object) { value in
                guard case .ordered(var order)? = value else { return .ordered([]) }
                value = nil
                order.removeAll { $0 == object }
                return .ordered(order)
            }
        case .none:
            break
        }
    }

    // MARK: - Delete

    /// Detaches the object from every relationship of every live object, then removes it.
    private mutating func delete(_ key: ObjectKey) {
        guard let properties = objects[key] else { return }
        for (name, property) in properties {
            for target in Self.targets(property.value) { referrers[target]?.remove(Referrer(holder: key, relationship: name)) }
        }
        objects[key] = nil
        if key == watched { provenance = [:] }
        entitiesByID[key.id]?.remove(key.entity)
        if entitiesByID[key.id]?.isEmpty == true { entitiesByID[key.id] = nil }
        for referrer in referrers.removeValue(forKey: key) ?? [] {
            detach(key, from: referrer.relationship.value, of: referrer.holder)
        }
    }

    // MARK: - Output

    /// Whether (entity, id) is live.
    public func isLive(entity: String, id: String) -> Bool { objects[Self.key(entity, id)] != nil }

    /// The set properties of a live object as state-document values, by name in UTF-8 order.
    public func properties(entity: String, id: String) throws(FormatError) -> [(name: String, value: JSONValue)]? {
        guard let properties = objects[Self.key(entity, id)] else { return nil }
        var result: [(name: String, value: JSONValue)] = []
        for property in properties.values.sorted(by: { utf8Precedes($0.name, $1.name) }) {
            result.append((property.name, try Self.json(property.value)))
        }
        return result
    }

    /// Every live object: entity name, global identifier and its set properties by name, all
    /// in UTF-8 byte order.
    public var objectsInOrder: [(entity: String, id: String, properties: [(name: String, value: Value)])] {
        objects.map { key, properties in
            (key.entity.value, key.id.value, properties.values.map { ($0.name, $0.value) }.sorted { utf8Precedes($0.name, $1.name) })
        }.sorted { !$0.entity.utf8.elementsEqual($1.entity.utf8) ? utf8Precedes($0.entity, $1.entity) : utf8Precedes($0.id, $1.id) }
    }

    /// The state as one baseline event (Spec/merge.md 13.4): an insert per live object, in
    /// entity then identifier order, with one property change per set property. Applied to an
    /// empty state as a baseline, it rebuilds this state.
    public func baseline(uniqueIdentifier: String, storeIdentifier: String, globalCount: Int64, timestamp: Double,
                         modelVersion: String?, revisionSet: RevisionSet) -> Event {
        let changes = objectsInOrder.map { object in
            var dataFiles: [String] = []
            let properties = object.properties.map { name, value -> PropertyChange in
                switch value {
                case .attribute(let attribute):
                    return PropertyChange(name: name, value: .attribute(attribute))
                case .dataFile(let file):
                    dataFiles.append(file)
                    return PropertyChange(name: name, value: .attributeInDataFile(filename: file))
                case .toOne(let target):
                    return PropertyChange(name: name, value: .toOne(relatedIdentifier: target?.id.value))
                case .toMany(let members):
                    return PropertyChange(name: name, value: .toMany(added: sortedUnique(members.map(\.id.value)), removed: []))
                case .ordered(let order):
                    let ids = order.map(\.id.value)
                    return PropertyChange(name: name, value: .orderedToMany(added: sortedUnique(ids), removed: [],
                                                                            movedByIndex: Dictionary(uniqueKeysWithValues: ids.enumerated().map { ($0.offset, $0.element) })))
                }
            }
            return ObjectChange(entity: object.entity, globalIdentifier: object.id, type: .insert, propertyChanges: properties, dataFiles: dataFiles)
        }
        return Event(uniqueIdentifier: uniqueIdentifier, type: .baseline, storeIdentifier: storeIdentifier, globalCount: globalCount,
                     timestamp: timestamp, modelVersion: modelVersion, revisionSet: revisionSet, objectChanges: changes)
    }

    /// The number of live objects.
    public var liveObjectCount: Int { objects.count }

    /// The model the state was merged with, if any.
    public var dataModel: DataModel? { model }

    /// The state document of Spec/merge.md: `{"entities": {entity: {id: {property: value}}}}`.
    public func document() throws(FormatError) -> JSONValue {
        var entities: [(String, JSONValue)] = []
        var current: (name: String, objects: [(String, JSONValue)])?
        for object in objectsInOrder {
            var members: [(String, JSONValue)] = []
            for property in object.properties { members.append((property.name, try Self.json(property.value))) }
            if !(current?.name.utf8.elementsEqual(object.entity.utf8) ?? false) {
                if let finished = current { entities.append((finished.name, .object(JSONObject(finished.objects)))) }
                current = (object.entity, [])
            }
            current?.objects.append((object.id, .object(JSONObject(members))))
        }
        if let finished = current { entities.append((finished.name, .object(JSONObject(finished.objects)))) }
        return .object(JSONObject([("entities", .object(JSONObject(entities)))]))
    }

    private static func json(_ value: Value) throws(FormatError) -> JSONValue {
        switch value {
        case .attribute(let attribute): return try V2JSONEncoder.attributeJSON(attribute)
        case .dataFile(let name): return .array([.string("dataFile"), .string(name)])
        case .toOne(let target): return target.map { .string($0.id.value) } ?? .null
        case .toMany(let members): return .array(members.map(\.id.value).sorted(by: utf8Precedes).map(JSONValue.string))
        case .ordered(let order): return .array(order.map { .string($0.id.value) })
        }
    }
}
