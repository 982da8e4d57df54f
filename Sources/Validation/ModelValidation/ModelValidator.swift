import JSONDocument
import EnsembleModel
import DataModel
import EventCodecs

/// Checks decoded object changes against a data model (Spec/model.md, "Validation").
///
/// The v1 reader applies the same rules while it reads, because it needs the model to read at
/// all; this validator serves v2 events, whose kinds and values are self-describing.
public struct ModelValidator: Sendable {
    public var model: DataModel

    public init(model: DataModel) { self.model = model }

    /// Every violation in the changes of one v2 file. `document` is that file's JSON, used to
    /// point at the offending member exactly; without it pointers stop at the object change.
    public func validate(_ changes: [ObjectChange], v2Document document: JSONValue? = nil) -> [FormatError] {
        var errors: [FormatError] = []
        var indexInEntity: [ExactString: Int] = [:]
        // Fields are read in place: copying each change retains all its parts.
        for position in changes.indices {
            let entityName = changes[position].entity, type = changes[position].type, properties = changes[position].propertyChanges
            let index = indexInEntity[ExactString(entityName), default: 0]
            indexInEntity[ExactString(entityName)] = index + 1
            // Pointers are built only for an error: most changes never need one.
            func changePointer() -> JSONPointer { JSONPointer.root / "changesByEntity" / entityName / index }
            guard let entity = model.entities[entityName] else {
                errors.append(FormatError(.modelUnknownEntity, "the model has no entity \"\(entityName)\"", at: .root / "changesByEntity" / entityName))
                continue
            }
            if type == .insert && entity.isAbstract {
                errors.append(FormatError(.modelAbstractEntity, "\(entityName) is abstract: no object of it can be inserted", at: changePointer()))
            }
            if type == .delete && !properties.isEmpty {
                errors.append(FormatError(.modelDeleteWithProperties, "a delete carries no property values", at: changePointer() / "properties"))
            }
            for property in properties {
                if let error = check(property, entity: entityName, at: propertyPointer(property.name, change: changePointer(), document: document)) {
                    errors.append(error)
                }
            }
        }
        return errors
    }

    private func check(_ property: PropertyChange, entity: String, at pointer: @autoclosure () -> JSONPointer) -> FormatError? {
        switch model.property(property.name, of: entity) {
        case nil:
            return FormatError(.modelUnknownProperty, "\(entity) has no property \"\(property.name)\" in the model", at: pointer())
        case .attribute(let attribute)?:
            if attribute.isTransient {
                return FormatError(.modelTransientProperty, "\(entity).\(property.name) is transient and never synced", at: pointer())
            }
            switch property.value {
            case .attribute(let value):
                guard attribute.type.accepts(value) else {
                    return FormatError(
                        .modelWrongValueType, "this value does not fit \(entity).\(property.name), of type \(attribute.type.rawValue)", at: pointer() / "value")
                }
                if case .integer(let int) = value, let range = attribute.type.integerRange, !range.contains(int) {
                    return FormatError(
                        .modelIntegerOutOfRange, "\(int) is outside the range of \(attribute.type.rawValue) (\(range.lowerBound)...\(range.upperBound))",
                        at: pointer() / "value")
                }
                return nil
            case .attributeInDataFile:
                guard attribute.type == .binary || attribute.type == .transformable else {
                    return FormatError(
                        .modelWrongValueType,
                        "only Binary and Transformable values live in data files; \(entity).\(property.name) is \(attribute.type.rawValue)",
                        at: pointer() / "filename")
                }
                return nil
            default:
                return FormatError(
                    .modelWrongKind, "\(entity).\(property.name) is an attribute (type 0), not \(kindName(property.kind))", at: pointer() / "type")
            }
        case .relationship(let relationship)?:
            if relationship.isTransient {
                return FormatError(.modelTransientProperty, "\(entity).\(property.name) is transient and never synced", at: pointer())
            }
            let expected: PropertyKind = !relationship.isToMany ? .toOne : relationship.isOrdered ? .orderedToMany : .toMany
            guard property.kind == expected else {
                return FormatError(
                    .modelWrongKind, "\(entity).\(property.name) is \(kindName(expected)) (type \(expected.rawValue)), not type \(property.kind.rawValue)",
                    at: pointer() / "type")
            }
            return nil
        }
    }

    private func kindName(_ kind: PropertyKind) -> String {
        switch kind {
        case .attribute: "an attribute"
        case .toOne: "a to-one relationship"
        case .toMany: "a to-many relationship"
        case .orderedToMany: "an ordered to-many relationship"
        }
    }

    /// The property change's place in the file's `properties` array (decoding sorts them by name).
    private func propertyPointer(_ name: String, change: JSONPointer, document: JSONValue?) -> JSONPointer {
        guard let list = document?[change / "properties"]?.arrayValue,
            let index = list.firstIndex(where: { element in
                let object = element.objectValue
                let elementName = object?["propertyName"]?.stringValue ?? object?["name"]?.stringValue
                return elementName.map { ExactString($0) == ExactString(name) } ?? false
            })
        else { return change }
        return change / "properties" / index
    }
}
