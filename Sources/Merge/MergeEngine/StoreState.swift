import JSONDocument
import EnsembleModel
import DataModel
import EventCodecs

/// The state of the store being rebuilt: live objects and the properties set on them.
public struct StoreState: Sendable {
    /// A property's current value.
    enum Value: Sendable, Equatable {
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
