import JSONDocument
import EnsembleModel
import DataModel
import EventCodecs

/// The state of the store being rebuilt: live objects and the properties set on them.
public struct StoreState: Sendable {
    /// A property's current value.
    public enum Value: Sendable, Equatable {
        case attribute(AttributeValue)
        case dataFile(String)
        case toOne(String?)
        case toMany(Set<ExactString>)
        case ordered([String])
    }

    struct ObjectKey: Hashable, Sendable {
        var entity: ExactString
        var id: ExactString
    }

    private var objects: [ObjectKey: [ExactString: (name: String, value: Value)]] = [:]
    /// Live entities per global identifier, for resolving related ids.
    private var entitiesByID: [ExactString: Set<ExactString>] = [:]
    let model: DataModel?

    init(model: DataModel?) { self.model = model }

    /// Applies one event with its three phases: create, set, delete (Spec/merge.md).
    mutating func apply(_ event: Event) {
        for change in event.objectChanges where change.type == .insert {
            let key = ObjectKey(entity: ExactString(change.entity), id: ExactString(change.globalIdentifier))
            if objects[key] == nil {
                objects[key] = [:]
                entitiesByID[key.id, default: []].insert(key.entity)
            }
        }
        for change in event.objectChanges where change.type != .delete {
            let key = ObjectKey(entity: ExactString(change.entity), id: ExactString(change.globalIdentifier))
            guard objects[key] != nil else { continue }
            for property in change.propertyChanges {
                set(property, of: key, isInsert: change.type == .insert)
            }
        }
        for change in event.objectChanges where change.type == .delete {
            delete(ObjectKey(entity: ExactString(change.entity), id: ExactString(change.globalIdentifier)))
        }
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
            guard let target = resolve(related, entity: key.entity.value, relationship: property.name) else { return }
            value = .toOne(target)
        case .toMany(let added, let removed):
            var members: Set<ExactString> = []
            if !isInsert, case .toMany(let existing)? = current { members = existing }
            if !isInsert { members.subtract(removed.map(ExactString.init)) }
            for id in added where resolve(id, entity: key.entity.value, relationship: property.name) != nil {
                members.insert(ExactString(id))
            }
            value = .toMany(members)
        case .orderedToMany(let added, let removed, let moved):
            var order: [String] = []
            if !isInsert, case .ordered(let existing)? = current { order = existing }
            let removedSet = Set(removed.map(ExactString.init))
            order.removeAll { removedSet.contains(ExactString($0)) }
            var members = Set(order.map(ExactString.init))
            for id in added.sorted(by: utf8Precedes) where !members.contains(ExactString(id))
                && resolve(id, entity: key.entity.value, relationship: property.name) != nil {
                order.append(id)
                members.insert(ExactString(id))
            }
            if !moved.isEmpty {
                var placed = Set<ExactString>()
                var front: [String] = []
                for index in moved.keys.sorted() {
                    guard let id = moved[index], members.contains(ExactString(id)), placed.insert(ExactString(id)).inserted else { continue }
                    front.append(id)
                }
                order = front + order.filter { !placed.contains(ExactString($0)) }
            }
            value = .ordered(order)
        }
        objects[key]?[name] = (property.name, value)
        maintainInverse(of: property.name, on: key, from: current, to: value)
    }

    /// The ids a relationship value holds.
    private static func targets(_ value: Value?) -> [String] {
        switch value {
        case .toOne(let target?)?: [target]
        case .toMany(let members)?: members.map(\.value)
        case .ordered(let order)?: order
        default: []
        }
    }

    /// With a model, keeps the other side of a relationship consistent, as Core Data does
    /// (Spec/merge.md, "Inverse relationships").
    private mutating func maintainInverse(of relationship: String, on key: ObjectKey, from old: Value?, to new: Value) {
        guard let model, case .relationship(let definition)? = model.property(relationship, of: key.entity.value),
              let inverseName = definition.inverseName else { return }
        let before = Set(Self.targets(old).map(ExactString.init)), after = Set(Self.targets(new).map(ExactString.init))
        for removed in before.subtracting(after).sorted(by: { $0.value.utf8.lexicographicallyPrecedes($1.value.utf8) }) {
            guard let target = liveKey(removed.value, kindOf: definition.destinationEntity) else { continue }
            detach(key.id, from: inverseName, of: target)
        }
        for added in after.subtracting(before).sorted(by: { $0.value.utf8.lexicographicallyPrecedes($1.value.utf8) }) {
            guard let target = liveKey(added.value, kindOf: definition.destinationEntity),
                  case .relationship(let inverse)? = model.property(inverseName, of: target.entity.value) else { continue }
            let existing = objects[target]?[ExactString(inverseName)]?.value
            if !inverse.isToMany {
                // A to-one inverse holds one object: its previous partner loses the target.
                if case .toOne(let previous?)? = existing, ExactString(previous) != key.id,
                   let partner = liveKey(previous, kindOf: key.entity.value, lineageOf: inverse.destinationEntity) {
                    detach(target.id, from: relationship, of: partner)
                }
                objects[target]?[ExactString(inverseName)] = (inverseName, .toOne(key.id.value))
            } else if inverse.isOrdered {
                var order: [String] = []
                if case .ordered(let current)? = existing { order = current }
                if !order.contains(where: { ExactString($0) == key.id }) { order.append(key.id.value) }
                objects[target]?[ExactString(inverseName)] = (inverseName, .ordered(order))
            } else {
                var members: Set<ExactString> = []
                if case .toMany(let current)? = existing { members = current }
                members.insert(key.id)
                objects[target]?[ExactString(inverseName)] = (inverseName, .toMany(members))
            }
        }
    }

    /// Removes `id` from one relationship of one object (a to-one holding it becomes null).
    private mutating func detach(_ id: ExactString, from relationship: String, of key: ObjectKey) {
        let name = ExactString(relationship)
        switch objects[key]?[name]?.value {
        case .toOne(let target?)? where ExactString(target) == id:
            objects[key]?[name] = (relationship, .toOne(nil))
        case .toMany(var members)? where members.contains(id):
            members.remove(id)
            objects[key]?[name] = (relationship, .toMany(members))
        case .ordered(let order)?:
            objects[key]?[name] = (relationship, .ordered(order.filter { ExactString($0) != id }))
        default:
            break
        }
    }

    /// The live object with global identifier `id` whose entity is `entity` or inherits from it
    /// (the first such entity by name in UTF-8 byte order).
    private func liveKey(_ id: String, kindOf entity: String, lineageOf other: String? = nil) -> ObjectKey? {
        guard let candidates = entitiesByID[ExactString(id)] else { return nil }
        let matching = candidates.filter { candidate in
            guard let model else { return true }
            if model.entity(candidate.value, isKindOf: entity) { return true }
            return other.map { model.entity(candidate.value, isKindOf: $0) } ?? false
        }
        guard let first = matching.min(by: { $0.value.utf8.lexicographicallyPrecedes($1.value.utf8) }) else { return nil }
        return ObjectKey(entity: first, id: ExactString(id))
    }

    /// The related object's global identifier when one is live (Spec/merge.md, "Resolution").
    private func resolve(_ id: String, entity: String, relationship: String) -> String? {
        guard var candidates = entitiesByID[ExactString(id)], !candidates.isEmpty else { return nil }
        if let model, case .relationship(let definition)? = model.property(relationship, of: entity) {
            candidates = candidates.filter { model.entity($0.value, isKindOf: definition.destinationEntity) }
        }
        return candidates.isEmpty ? nil : id
    }

    /// Detaches the object from every relationship of every live object, then removes it.
    private mutating func delete(_ key: ObjectKey) {
        guard objects[key] != nil else { return }
        objects[key] = nil
        entitiesByID[key.id]?.remove(key.entity)
        if entitiesByID[key.id]?.isEmpty == true { entitiesByID[key.id] = nil }
        // Without entity-qualified references, a reference to the id goes only when no other
        // live object has that id (Spec/merge.md, "Delete").
        guard entitiesByID[key.id] == nil else { return }
        for (objectKey, properties) in objects {
            for (name, property) in properties {
                switch property.value {
                case .toOne(let target?) where ExactString(target) == key.id:
                    objects[objectKey]?[name] = (property.name, .toOne(nil))
                case .toMany(var members) where members.contains(key.id):
                    members.remove(key.id)
                    objects[objectKey]?[name] = (property.name, .toMany(members))
                case .ordered(let order) where order.contains(where: { ExactString($0) == key.id }):
                    objects[objectKey]?[name] = (property.name, .ordered(order.filter { ExactString($0) != key.id }))
                default:
                    continue
                }
            }
        }
    }

    /// Every live object: entity name, global identifier and its set properties by name, all
    /// in UTF-8 byte order.
    public var objectsInOrder: [(entity: String, id: String, properties: [(name: String, value: Value)])] {
        objects.map { key, properties in
            (key.entity.value, key.id.value, properties.values.map { ($0.name, $0.value) }.sorted { utf8Precedes($0.name, $1.name) })
        }.sorted { $0.entity != $1.entity ? utf8Precedes($0.entity, $1.entity) : utf8Precedes($0.id, $1.id) }
    }

    /// The model the state was merged with, if any.
    public var dataModel: DataModel? { model }

    /// The state document of Spec/merge.md: `{"entities": {entity: {id: {property: value}}}}`.
    public func document() throws(FormatError) -> JSONValue {
        var entities: [ExactString: [(String, JSONValue)]] = [:]
        var names: [ExactString: String] = [:]
        for (key, properties) in objects {
            var members: [(String, JSONValue)] = []
            for (_, property) in properties {
                members.append((property.name, try Self.json(property.value)))
            }
            entities[key.entity, default: []].append((key.id.value, .object(JSONObject(members))))
            names[key.entity] = key.entity.value
        }
        return .object(JSONObject([("entities", .object(JSONObject(entities.map { entity, objects in
            (names[entity] ?? entity.value, JSONValue.object(JSONObject(objects)))
        })))]))
    }

    private static func json(_ value: Value) throws(FormatError) -> JSONValue {
        switch value {
        case .attribute(let attribute): return try V2JSONEncoder.attributeJSON(attribute)
        case .dataFile(let name): return .array([.string("dataFile"), .string(name)])
        case .toOne(let target): return target.map(JSONValue.string) ?? .null
        case .toMany(let members): return .array(members.map(\.value).sorted(by: utf8Precedes).map(JSONValue.string))
        case .ordered(let order): return .array(order.map(JSONValue.string))
        }
    }
}
