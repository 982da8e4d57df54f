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
        validate(DecodedObjectChanges(changes: changes), document: document, limit: limit)
    }

    /// ``validate(_:v2Document:limit:)`` for a binary event's changes in numbered form, whose
    /// pointers stop at the object change as a binary event's do: the same findings, in the same
    /// order, without making the event's ``ObjectChange``s.
    package func validate(_ changes: NumberedEvent, limit: Int = 100) -> [FormatError] {
        validate(NumberedEventChanges(event: changes), document: nil, limit: limit)
    }

    /// The one check of both forms.
    private func validate<Changes: CheckedChanges>(_ changes: Changes, document: JSONValue?, limit: Int) -> [FormatError] {
        var errors = BoundedErrorList(limit: limit, order: .found)
        var indexInEntity: [ExactString: Int] = [:]
        var unknownEntities = Set<ExactString>()
        // Decoders group changes by entity: the model is asked once per run of one entity, and
        // once per property name within the run (a few names; more are asked each time).
        // (Copying an `Entity` or a `Property` retains all its strings: only what is needed is kept.)
        var run = (entity: "", name: Changes.Name?.none, start: 0, base: 0, isAbstract: Bool?.none)
        var names: [Changes.Name] = [], definitions: [Rule] = []
        for position in 0..<changes.count {
            let entity = changes.entity(of: position), type = changes.type(of: position), properties = changes.properties(of: position)
            if run.name.map({ !changes.same($0, entity) }) ?? true {
                let entityName = changes.string(entity)
                if position > 0 { indexInEntity[ExactString(run.entity)] = run.base + position - run.start }
                run = (entityName, entity, position, indexInEntity[ExactString(entityName), default: 0], model.entities[entityName]?.isAbstract)
                names.removeAll(keepingCapacity: true)
                definitions.removeAll(keepingCapacity: true)
            }
            let entityName = run.entity
            let index = run.base + position - run.start
            // Pointers are built only for an error that is kept: most changes never need one.
            func changePointer() -> JSONPointer { JSONPointer.root / "changesByEntity" / entityName / index }
            guard let isAbstract = run.isAbstract else {
                // One error for the entity, not one per change: they would share code and pointer.
                if unknownEntities.insert(ExactString(entityName)).inserted {
                    errors.append(FormatError(.modelUnknownEntity, model.unknownEntityMessage(entityName), at: .root / "changesByEntity" / entityName))
                }
                continue
            }
            if type == .insert && isAbstract {
                errors.append(FormatError(.modelAbstractEntity, "\(entityName) is abstract: no object of it can be inserted", at: changePointer()))
            }
            if type == .delete && !properties.isEmpty {
                errors.append(FormatError(.modelDeleteWithProperties, "a delete carries no property values", at: changePointer() / "properties"))
            }
            for property in properties {
                let name = changes.name(of: property, in: position)
                let definition: Rule
                // The same string as an earlier change's name, usually, is found without reading bytes.
                if let known = names.firstIndex(where: { changes.identical($0, name) }) ?? names.firstIndex(where: { changes.same($0, name) }) {
                    definition = definitions[known]
                } else {
                    definition = Rule(model.shape(of: changes.string(name), in: entityName))
                    if names.count < 32 {
                        names.append(name)
                        definitions.append(definition)
                    }
                }
                guard let problem = check(changes.value(of: property, in: position), definition, entity: entityName, name: { changes.string(name) }) else {
                    continue
                }
                errors.append(
                    FormatError(
                        problem.code, problem.message,
                        at: problem.pointer(below: propertyPointer(changes.string(name), change: changePointer(), document: document))))
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

    /// What ``check(_:_:entity:name:)`` needs of a property's definition, without its strings
    /// (``DataModel/shape(of:in:)``: a `Property` copy for every change retained and released
    /// all of them).
    private enum Rule {
        case unknown, transient
        case attribute(AttributeType)
        case relationship(PropertyKind)

        init(_ shape: PropertyShape?) {
            switch shape {
            case nil: self = .unknown
            case .transient?: self = .transient
            case .attribute(let type)?: self = .attribute(type)
            case .relationship(let isToMany, let isOrdered)?: self = .relationship(!isToMany ? .toOne : isOrdered ? .orderedToMany : .toMany)
            }
        }
    }

    /// `name` is asked for only when there is a problem to describe: a numbered event holds
    /// its names as bytes.
    private func check(_ value: CheckedValue, _ definition: Rule, entity: String, name: () -> String) -> Problem? {
        switch definition {
        case .unknown:
            return Problem(code: .modelUnknownProperty, message: model.unknownPropertyMessage(name(), of: entity))
        case .transient:
            return Problem(code: .modelTransientProperty, message: "\(entity).\(name()) is transient and never synced")
        case .attribute(let type):
            switch value {
            case .attribute(let attribute):
                guard type.accepts(attribute) else {
                    return Problem(
                        code: .modelWrongValueType, message: "this value does not fit \(entity).\(name()), of type \(type.rawValue)",
                        member: "value")
                }
                if case .integer(let int) = attribute, let range = type.integerRange, !range.contains(int) {
                    return Problem(
                        code: .modelIntegerOutOfRange,
                        message: "\(int) is outside the range of \(type.rawValue) (\(range.lowerBound)...\(range.upperBound))", member: "value")
                }
                return nil
            case .dataFile:
                guard type == .binary || type == .transformable else {
                    return Problem(
                        code: .modelWrongValueType,
                        message: "only Binary and Transformable values live in data files; \(entity).\(name()) is \(type.rawValue)",
                        member: "filename")
                }
                return nil
            case .relationship(let kind):
                return Problem(
                    code: .modelWrongKind, message: "\(entity).\(name()) is an attribute (type 0), not \(kindName(kind))", member: "type")
            }
        case .relationship(let expected):
            guard value.kind == expected else {
                return Problem(
                    code: .modelWrongKind,
                    message: "\(entity).\(name()) is \(kindName(expected)) (type \(expected.rawValue)), not type \(value.kind.rawValue)",
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

/// What the check reads of a property change's value: an attribute's value, and otherwise only
/// its kind.
private enum CheckedValue {
    case attribute(AttributeValue)
    case dataFile
    case relationship(PropertyKind)

    var kind: PropertyKind {
        switch self {
        case .attribute, .dataFile: .attribute
        case .relationship(let kind): kind
        }
    }
}

/// An event's object changes as ``ModelValidator`` reads them, in either form: change by change
/// (by position), each property change by its position in ``properties(of:)``.
private protocol CheckedChanges {
    /// An entity or property name as the form holds it.
    associatedtype Name
    var count: Int { get }
    func entity(of change: Int) -> Name
    func type(of change: Int) -> ChangeType
    func properties(of change: Int) -> Range<Int>
    func name(of property: Int, in change: Int) -> Name
    func value(of property: Int, in change: Int) -> CheckedValue
    func string(_ name: Name) -> String
    /// Whether two names are the same string, byte for byte.
    func same(_ a: Name, _ b: Name) -> Bool
    /// Whether two names are one value; false may still be ``same(_:_:)``.
    func identical(_ a: Name, _ b: Name) -> Bool
}

/// Decoded changes, read in place: copying each change retains all its parts.
private struct DecodedObjectChanges: CheckedChanges {
    let changes: [ObjectChange]

    var count: Int { changes.count }
    func entity(of change: Int) -> String { changes[change].entity }
    func type(of change: Int) -> ChangeType { changes[change].type }
    func properties(of change: Int) -> Range<Int> { changes[change].propertyChanges.indices }
    func name(of property: Int, in change: Int) -> String { changes[change].propertyChanges[property].name }
    func value(of property: Int, in change: Int) -> CheckedValue {
        switch changes[change].propertyChanges[property].value {
        case .attribute(let value): .attribute(value)
        case .attributeInDataFile: .dataFile
        case .toOne: .relationship(.toOne)
        case .toMany: .relationship(.toMany)
        case .orderedToMany: .relationship(.orderedToMany)
        }
    }
    func string(_ name: String) -> String { name }
    func same(_ a: String, _ b: String) -> Bool { exactlyEqual(a, b) }
    func identical(_ a: String, _ b: String) -> Bool { ExactString.identical(a, b) }
}

/// Numbered changes: names are string numbers, compared by number and then by bytes.
private struct NumberedEventChanges: CheckedChanges {
    let event: NumberedEvent

    var count: Int { event.changes.count }
    func entity(of change: Int) -> Int32 { event.changes[change].entity }
    func type(of change: Int) -> ChangeType { event.changes[change].type }
    func properties(of change: Int) -> Range<Int> { Int(event.changes[change].firstProperty)..<Int(event.changes[change].endProperty) }
    func name(of property: Int, in change: Int) -> Int32 { event.properties[property].name }
    func value(of property: Int, in change: Int) -> CheckedValue {
        let property = event.properties[property]
        switch property.kind {
        case .attribute: return .attribute(event.attributes[Int(property.value)])
        case .dataFile: return .dataFile
        case .toOne: return .relationship(.toOne)
        case .toMany: return .relationship(.toMany)
        case .orderedToMany: return .relationship(.orderedToMany)
        }
    }
    func string(_ name: Int32) -> String { event.string(name) }
    func same(_ a: Int32, _ b: Int32) -> Bool { a == b || event.same(a, b) }
    func identical(_ a: Int32, _ b: Int32) -> Bool { a == b }
}
