import JSONDocument

/// One version of a Core Data model: entities with inheritance resolved (Spec/model.md).
///
/// Entities and properties are found by the UTF-8 bytes of their names (Spec/README.md section 4):
/// `Café` in NFC and in NFD are two entities, and an event naming one does not find the other.
public struct DataModel: Hashable, Sendable {
    /// The version's name (`Model_2` for `Model_2.xcdatamodel`), or nil for a bare `contents` file.
    public var versionName: String?
    /// By name.
    package let entities: [ExactString: Entity]
    /// Every entity's properties with the inherited ones, and its ancestors: a merge asks for
    /// them once per property change, so they are resolved once here.
    private let propertiesByEntity: [ExactString: [ExactString: Property]]
    /// ``shape(of:in:)`` of every property, by entity.
    private let shapesByEntity: [ExactString: [ExactString: PropertyShape]]
    private let kinds: [ExactString: Set<ExactString>]

    package init(versionName: String?, entities: [ExactString: Entity]) {
        self.versionName = versionName
        self.entities = entities
        var properties: [ExactString: [ExactString: Property]] = [:]
        var kinds: [ExactString: Set<ExactString>] = [:]
        for name in entities.keys {
            var table: [ExactString: Property] = [:]
            let lineage = Self.lineage(of: name, in: entities)
            // Nearest first: a property redefined lower in the lineage wins, attributes before
            // relationships of the same entity.
            for ancestor in lineage.reversed() {
                for (key, relationship) in ancestor.relationships { table[key] = .relationship(relationship) }
                for (key, attribute) in ancestor.attributes { table[key] = .attribute(attribute) }
            }
            properties[name] = table
            kinds[name] = Set(lineage.map { ExactString($0.name) })
        }
        propertiesByEntity = properties
        shapesByEntity = properties.mapValues { $0.mapValues(PropertyShape.init) }
        self.kinds = kinds
    }

    /// Entity names in UTF-8 byte order.
    public var entityNames: [String] { entities.keys.map(\.value).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) } }

    /// The entity and its ancestors, nearest first. Safe on any model the reader accepted
    /// (cycles are rejected when reading).
    package func lineage(of name: String) -> [Entity] { Self.lineage(of: ExactString(name), in: entities) }

    /// The lineage of `name` in `entities`, stopping at a name seen before (a cycle, which the
    /// reader reports).
    private static func lineage(of name: ExactString, in entities: [ExactString: Entity]) -> [Entity] {
        var result: [Entity] = []
        var seen: Set<ExactString> = []
        var next: ExactString? = name
        while let current = next, let entity = entities[current], seen.insert(current).inserted {
            result.append(entity)
            next = entity.parentName.map(ExactString.init)
        }
        return result
    }

    /// A property of the entity or one of its ancestors.
    package func property(_ name: String, of entity: String) -> Property? {
        propertiesByEntity[entity]?[name]
    }

    /// ``PropertyShape`` of ``property(_:of:)``: what the checks of every change read, without a
    /// copy of the property (which retains and releases each of its strings).
    package func shape(of name: String, in entity: String) -> PropertyShape? {
        shapesByEntity[entity]?[name]
    }

    /// The message of `model.unknown-entity` for `name`.
    package func unknownEntityMessage(_ name: String) -> String {
        "the model has no entity \"\(name)\"" + Self.normalisationNote(name, among: entities.keys)
    }

    /// The message of `model.unknown-property` for `name` in `entity`.
    package func unknownPropertyMessage(_ name: String, of entity: String) -> String {
        "\(entity) has no property \"\(name)\" in the model" + Self.normalisationNote(name, among: propertiesByEntity[entity]?.keys.map(\.self) ?? [])
    }

    /// Names that differ only in Unicode normalisation look alike in a message: one the model has
    /// is named beside the one it lacks, or the message would say the model lacks what it shows.
    private static func normalisationNote(_ name: String, among names: some Sequence<ExactString>) -> String {
        // Swift's `==` takes canonically equivalent strings for equal: exactly the look-alikes.
        let twins = names.lazy.map(\.value).filter { $0 == name }
        guard let twin = twins.min(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) else { return "" }
        return " (it has \"\(twin)\", which differs only in Unicode normalisation: names are compared by their UTF-8 bytes)"
    }

    /// Whether `entity` is `ancestor` or inherits from it.
    public func entity(_ entity: String, isKindOf ancestor: String) -> Bool {
        kinds[entity]?.contains(ExactString(ancestor)) ?? false
    }
}

/// An attribute or a relationship.
package enum Property: Hashable, Sendable {
    case attribute(Attribute)
    case relationship(Relationship)
}

/// A property as a change's value is checked against it (Spec/model.md, "Validation"): whether it
/// is transient, an attribute's type, a relationship's cardinality.
package enum PropertyShape: Hashable, Sendable {
    case transient
    case attribute(AttributeType)
    case relationship(isToMany: Bool, isOrdered: Bool)

    init(_ property: Property) {
        switch property {
        case .attribute(let attribute): self = attribute.isTransient ? .transient : .attribute(attribute.type)
        case .relationship(let relationship):
            self = relationship.isTransient ? .transient : .relationship(isToMany: relationship.isToMany, isOrdered: relationship.isOrdered)
        }
    }
}

package struct Entity: Hashable, Sendable {
    package var name: String
    package var parentName: String?
    package var isAbstract: Bool
    package var representedClassName: String?
    package var versionHashModifier: String?
    /// Own attributes only, by name; inherited ones are found through ``DataModel/property(_:of:)``.
    package var attributes: [ExactString: Attribute]
    package var relationships: [ExactString: Relationship]
}

/// Core Data attribute types, spelled as `attributeType` in the model XML.
package enum AttributeType: String, Sendable, Hashable, CaseIterable {
    case integer16 = "Integer 16"
    case integer32 = "Integer 32"
    case integer64 = "Integer 64"
    case decimal = "Decimal"
    case double = "Double"
    case float = "Float"
    case string = "String"
    case boolean = "Boolean"
    case date = "Date"
    case binary = "Binary"
    case transformable = "Transformable"
    case uuid = "UUID"
    case uri = "URI"
    case undefined = "Undefined"
    case objectID = "ObjectID"

    /// The closed range of an integer type, nil for other types.
    package var integerRange: ClosedRange<Int64>? {
        switch self {
        case .integer16: Int64(Int16.min)...Int64(Int16.max)
        case .integer32: Int64(Int32.min)...Int64(Int32.max)
        case .integer64: Int64.min...Int64.max
        default: nil
        }
    }
}

package struct Attribute: Hashable, Sendable {
    package var name: String
    package var type: AttributeType
    package var isOptional: Bool
    package var isTransient: Bool
    package var defaultValue: String?
    package var minimumValue: String?
    package var maximumValue: String?
    package var allowsExternalBinaryDataStorage: Bool
    package var versionHashModifier: String?
}

package struct Relationship: Hashable, Sendable {
    package var name: String
    package var destinationEntity: String
    package var inverseName: String?
    package var inverseEntity: String?
    package var isToMany: Bool
    /// Only to-many relationships can be ordered.
    package var isOrdered: Bool
    package var minimumCount: Int64?
    package var maximumCount: Int64?
    package var isOptional: Bool
    package var deletionRule: String
    package var isTransient: Bool
    package var versionHashModifier: String?
}

extension FormatError.Code {
    public static let dataModelXMLSyntax = Self("datamodel.xml-syntax")
    public static let dataModelNotAModel = Self("datamodel.not-a-model")
    public static let dataModelMissingXMLAttribute = Self("datamodel.missing-xml-attribute")
    public static let dataModelUnknownAttributeType = Self("datamodel.unknown-attribute-type")
    public static let dataModelDuplicateEntity = Self("datamodel.duplicate-entity")
    public static let dataModelDuplicateProperty = Self("datamodel.duplicate-property")
    public static let dataModelUnknownEntity = Self("datamodel.unknown-entity")
    public static let dataModelUnknownInverse = Self("datamodel.unknown-inverse")
    public static let dataModelInheritanceCycle = Self("datamodel.inheritance-cycle")
    public static let dataModelUnreadable = Self("datamodel.unreadable")
    public static let dataModelTooLarge = Self("datamodel.too-large")
    public static let dataModelNoCurrentVersion = Self("datamodel.no-current-version")
    public static let dataModelVersionNotFound = Self("datamodel.version-not-found")
}

extension FormatError.Code {
    // Validation of event content against a model (Spec/model.md). Raised by the v1 decoder,
    // which needs the model to read at all, and by model validation of any event.
    public static let modelUnknownEntity = Self("model.unknown-entity")
    public static let modelAbstractEntity = Self("model.abstract-entity")
    public static let modelUnknownProperty = Self("model.unknown-property")
    public static let modelTransientProperty = Self("model.transient-property")
    public static let modelWrongKind = Self("model.wrong-kind")
    public static let modelWrongValueType = Self("model.wrong-value-type")
    public static let modelIntegerOutOfRange = Self("model.integer-out-of-range")
    public static let modelDeleteWithProperties = Self("model.delete-with-properties")
}
