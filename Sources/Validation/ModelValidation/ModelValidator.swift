import JSONDocument
import EnsembleModel
import DataModel
import EventCodecs

/// Checks decoded object changes against a data model (Spec/model.md, "Validation").
///
/// The v1 reader applies the same rules while it reads, because it needs the model to read at
/// all; this validator serves v2 events, whose kinds and values are self-describing.
package struct ModelValidator: Sendable {
    package var model: DataModel

    package init(model: DataModel) { self.model = model }

    /// Every violation in the changes of one v2 file, in the order of Spec/model.md 9.3, within
    /// the report bound of Spec/README.md section 6.2 (the first `limit`, then a count).
    /// `document` is that file's JSON, used to point at the offending member exactly; without it
    /// pointers stop at the object change.
    package func validate(_ changes: [ObjectChange], v2Document document: JSONValue? = nil, limit: Int = 100) -> [FormatError] {
        var errors = BoundedErrorList(limit: limit, order: .found)
        var indexInEntity: [ExactString: Int] = [:]
        var unknownEntities = Set<ExactString>()
        // Decoders group changes by entity: the model is asked once per run of one entity, and
        // once per property name within the run (a few names; more are asked each time).
        // (Copying an `Entity` or a `Property` retains all its strings: only what is needed is kept.)
        var run = (entity: "", start: 0, base: 0, isAbstract: Bool?.none)
        var names: [String] = [], definitions: [Rule] = []
        // Fields are read in place: copying each change retains all its parts.
        for position in changes.indices {
            let entityName = changes[position].entity, type = changes[position].type, properties = changes[position].propertyChanges
            if position == 0 || !exactlyEqual(run.entity, entityName) {
                if position > 0 { indexInEntity[ExactString(run.entity)] = run.base + position - run.start }
                run = (entityName, position, indexInEntity[ExactString(entityName), default: 0], model.entities[entityName]?.isAbstract)
                names.removeAll(keepingCapacity: true)
                definitions.removeAll(keepingCapacity: true)
            }
            let index = run.base + position - run.start
            // Pointers are built only for an error that is kept: most changes never need one.
            func changePointer() -> JSONPointer { JSONPointer.root / "changesByEntity" / entityName / index }
            guard let isAbstract = run.isAbstract else {
                // One error for the entity, not one per change: they would share code and pointer.
                if unknownEntities.insert(ExactString(entityName)).inserted {
                    errors.append(FormatError(.modelUnknownEntity, "the model has no entity \"\(entityName)\"", at: .root / "changesByEntity" / entityName))
                }
                continue
            }
            if type == .insert && isAbstract {
                errors.append(FormatError(.modelAbstractEntity, "\(entityName) is abstract: no object of it can be inserted", at: changePointer()))
            }
            if type == .delete && !properties.isEmpty {
                errors.append(FormatError(.modelDeleteWithProperties, "a delete carries no property values", at: changePointer() / "properties"))
            }
            // Each change's name and value are read, not the change: copying a whole change
            // retained and released its unknown members too.
            for property in properties.indices {
                let name = properties[property].name
                let definition: Rule
                // The same string as an earlier change's name, usually, is found without reading bytes.
                if let known = names.firstIndex(where: { ExactString.identical($0, name) }) ?? names.firstIndex(where: { exactlyEqual($0, name) }) {
                    definition = definitions[known]
                } else {
                    definition = Rule(model.property(name, of: entityName))
                    if names.count < 32 {
                        names.append(name)
                        definitions.append(definition)
                    }
                }
                guard let problem = check(name, properties[property].value, definition, entity: entityName) else { continue }
                errors.append(
                    FormatError(problem.code, problem.message, at: problem.pointer(below: propertyPointer(name, change: changePointer(), document: document))))
            }
        }
        return errors.finish()
    }

    /// What is wrong with one property change, and the member of it the pointer ends at (none:
    /// the property change itself).
    private struct Problem {
        var code: FormatError.Code
        var message: String
        var member: String?

        func pointer(below propertyChange: JSONPointer) -> JSONPointer { member.map { propertyChange / $0 } ?? propertyChange }
    }

    /// What ``check(_:_:entity:)`` needs of a property's definition, without its strings:
    /// copying a `Property` for every change retained and released all of them.
    private enum Rule {
        case unknown, transient
        case attribute(AttributeType)
        case relationship(PropertyKind)

        init(_ definition: Property?) {
            switch definition {
            case nil: self = .unknown
            case .attribute(let attribute)?: self = attribute.isTransient ? .transient : .attribute(attribute.type)
            case .relationship(let relationship)?:
                self =
                    relationship.isTransient
                    ? .transient : .relationship(!relationship.isToMany ? .toOne : relationship.isOrdered ? .orderedToMany : .toMany)
            }
        }
    }

    private func check(_ name: String, _ value: PropertyChange.Value, _ definition: Rule, entity: String) -> Problem? {
        switch definition {
        case .unknown:
            return Problem(code: .modelUnknownProperty, message: "\(entity) has no property \"\(name)\" in the model")
        case .transient:
            return Problem(code: .modelTransientProperty, message: "\(entity).\(name) is transient and never synced")
        case .attribute(let type):
            switch value {
            case .attribute(let attribute):
                guard type.accepts(attribute) else {
                    return Problem(
                        code: .modelWrongValueType, message: "this value does not fit \(entity).\(name), of type \(type.rawValue)",
                        member: "value")
                }
                if case .integer(let int) = attribute, let range = type.integerRange, !range.contains(int) {
                    return Problem(
                        code: .modelIntegerOutOfRange,
                        message: "\(int) is outside the range of \(type.rawValue) (\(range.lowerBound)...\(range.upperBound))", member: "value")
                }
                return nil
            case .attributeInDataFile:
                guard type == .binary || type == .transformable else {
                    return Problem(
                        code: .modelWrongValueType,
                        message: "only Binary and Transformable values live in data files; \(entity).\(name) is \(type.rawValue)",
                        member: "filename")
                }
                return nil
            default:
                return Problem(
                    code: .modelWrongKind, message: "\(entity).\(name) is an attribute (type 0), not \(kindName(value.kind))", member: "type")
            }
        case .relationship(let expected):
            guard value.kind == expected else {
                return Problem(
                    code: .modelWrongKind,
                    message: "\(entity).\(name) is \(kindName(expected)) (type \(expected.rawValue)), not type \(value.kind.rawValue)",
                    member: "type")
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
