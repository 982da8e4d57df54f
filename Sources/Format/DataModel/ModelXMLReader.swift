import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import JSONDocument
import XMLInput

/// Reads one `contents` file (the XML of one model version) into a ``DataModel``.
///
/// The XML itself is parsed by libxml2 through Foundation's `XMLParser`, which reports line and
/// column numbers; this type only interprets the elements Spec/model.md names.
package enum ModelXMLReader {
    /// The largest `contents` file read (Spec/model.md).
    package static let maximumBytes = 16 * 1024 * 1024

    /// Reads the `contents` file at `url`; a symbolic link only when `followingLink` (the path
    /// the user gave, Spec/model.md 2.1).
    package static func read(contentsOf url: URL, displayPath: String, versionName: String?, followingLink: Bool) throws(FormatError) -> DataModel {
        let location = FormatError.Location(file: displayPath)
        guard let bytes = try ModelFile.contents(of: url, name: "the model file", followingLink: followingLink, limit: maximumBytes, location: location)
        else { throw FormatError(.dataModelUnreadable, "the model file is missing", location: location) }
        return try parse(Data(bytes), displayPath: displayPath, versionName: versionName)
    }

    package static func parse(_ data: Data, displayPath: String, versionName: String?) throws(FormatError) -> DataModel {
        // Before the parser sees it: it stops the process on some documents that are not UTF-8
        // (Spec/model.md 3.1).
        if let problem = XMLInput.problem(data) {
            throw FormatError(
                .dataModelXMLSyntax, "the model XML is not what the toolkit reads: \(problem.reason)",
                location: .init(file: displayPath, offset: problem.offset, in: data))
        }
        let collector = ElementCollector()
        let parser = XMLParser(data: data)
        parser.delegate = collector
        parser.shouldResolveExternalEntities = false
        // On Linux, parse() can return true after libxml2 reported an error, so the delegate's
        // record of the first error decides.
        let succeeded = parser.parse()
        if let failure = collector.failure ?? (succeeded ? nil : (parser.parserError, parser.lineNumber, parser.columnNumber)) {
            let reason = failure.error.map { ($0 as NSError).localizedDescription } ?? "malformed XML"
            throw FormatError(
                .dataModelXMLSyntax, "the model XML is malformed: \(reason)",
                location: .init(file: displayPath, line: failure.line, column: failure.column))
        }
        if collector.doctypeWithEntities {
            throw FormatError(
                .dataModelXMLSyntax, "the model XML declares entities in a DTD, which model files never do",
                location: .init(file: displayPath, line: 1, column: 1))
        }
        return try build(collector.root, displayPath: displayPath, versionName: versionName)
    }

    /// One XML element with the position where the parser met it.
    struct Element {
        var name: String
        var attributes: [String: String]
        var line: Int
        var column: Int
        var children: [Element] = []

        func flag(_ key: String) -> Bool { attributes[key] == "YES" }
    }

    /// Builds the element tree; model files are small (bounded by ``maximumBytes``).
    final class ElementCollector: NSObject, XMLParserDelegate {
        var stack: [Element] = []
        var root = Element(name: "", attributes: [:], line: 0, column: 0)
        var failure: (error: Error?, line: Int, column: Int)?
        var doctypeWithEntities = false

        func parser(_ parser: XMLParser, parseErrorOccurred parseError: Error) {
            if failure == nil { failure = (parseError, parser.lineNumber, parser.columnNumber) }
        }

        func parser(_ parser: XMLParser, validationErrorOccurred validationError: Error) {
            if failure == nil { failure = (validationError, parser.lineNumber, parser.columnNumber) }
        }

        func parser(_ parser: XMLParser, foundInternalEntityDeclarationWithName name: String, value: String?) {
            doctypeWithEntities = true
        }

        func parser(_ parser: XMLParser, foundExternalEntityDeclarationWithName name: String, publicID: String?, systemID: String?) {
            doctypeWithEntities = true
        }

        func parser(
            _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
            qualifiedName qName: String?, attributes attributeDict: [String: String] = [:]
        ) {
            stack.append(Element(name: elementName, attributes: attributeDict, line: parser.lineNumber, column: parser.columnNumber))
        }

        func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName qName: String?) {
            guard let element = stack.popLast() else { return }
            if stack.isEmpty {
                root = element
            } else {
                stack[stack.count - 1].children.append(element)
            }
        }
    }

    static func build(_ root: Element, displayPath: String, versionName: String?) throws(FormatError) -> DataModel {
        func error(_ code: FormatError.Code, _ message: String, _ element: Element) -> FormatError {
            FormatError(code, message, location: .init(file: displayPath, line: element.line, column: element.column))
        }
        func required(_ key: String, _ element: Element) throws(FormatError) -> String {
            guard let value = element.attributes[key], !value.isEmpty else {
                throw error(.dataModelMissingXMLAttribute, "<\(element.name)> has no \(key)=\"...\"", element)
            }
            return value
        }
        guard root.name == "model" else {
            throw error(.dataModelNotAModel, "the root element is <\(root.name)>, not <model>", root)
        }
        // By the names' bytes (Spec/README.md section 4), as the model is read: two entities or
        // properties whose names differ only in Unicode normalisation are two.
        var entities: [ExactString: Entity] = [:]
        var positions: [ExactString: Element] = [:]
        for element in root.children where element.name == "entity" {
            let name = try required("name", element)
            guard entities[name] == nil else {
                throw error(.dataModelDuplicateEntity, "the entity \"\(name)\" is defined twice", element)
            }
            var entity = Entity(
                name: name, parentName: element.attributes["parentEntity"], isAbstract: element.flag("isAbstract"),
                representedClassName: element.attributes["representedClassName"],
                versionHashModifier: element.attributes["versionHashModifier"], attributes: [:], relationships: [:])
            for child in element.children {
                switch child.name {
                case "attribute":
                    let attributeName = try required("name", child)
                    let typeName = try required("attributeType", child)
                    guard let type = AttributeType(rawValue: typeName) else {
                        throw error(.dataModelUnknownAttributeType, "attribute \"\(attributeName)\" of \(name) has the unknown type \"\(typeName)\"", child)
                    }
                    guard entity.attributes[attributeName] == nil, entity.relationships[attributeName] == nil else {
                        throw error(.dataModelDuplicateProperty, "\(name) defines the property \"\(attributeName)\" twice", child)
                    }
                    entity.attributes[attributeName] = Attribute(
                        name: attributeName, type: type, isOptional: child.flag("optional"), isTransient: child.flag("transient"),
                        defaultValue: child.attributes["defaultValueString"], minimumValue: child.attributes["minValueString"],
                        maximumValue: child.attributes["maxValueString"],
                        allowsExternalBinaryDataStorage: child.flag("allowsExternalBinaryDataStorage"),
                        versionHashModifier: child.attributes["versionHashModifier"])
                    positions["\(name).\(attributeName)"] = child
                case "relationship":
                    let relationshipName = try required("name", child)
                    let destination = try required("destinationEntity", child)
                    guard entity.attributes[relationshipName] == nil, entity.relationships[relationshipName] == nil else {
                        throw error(.dataModelDuplicateProperty, "\(name) defines the property \"\(relationshipName)\" twice", child)
                    }
                    let toMany = child.flag("toMany")
                    entity.relationships[relationshipName] = Relationship(
                        name: relationshipName, destinationEntity: destination, inverseName: child.attributes["inverseName"],
                        inverseEntity: child.attributes["inverseEntity"], isToMany: toMany, isOrdered: toMany && child.flag("ordered"),
                        minimumCount: child.attributes["minCount"].flatMap { Int64($0) },
                        maximumCount: child.attributes["maxCount"].flatMap { Int64($0) },
                        isOptional: child.flag("optional"), deletionRule: child.attributes["deletionRule"] ?? "Nullify",
                        isTransient: child.flag("transient"), versionHashModifier: child.attributes["versionHashModifier"])
                    positions["\(name).\(relationshipName)"] = child
                default:
                    continue
                }
            }
            entities[name] = entity
            positions[name] = element
        }
        let model = DataModel(versionName: versionName, entities: entities)
        try checkReferences(model, positions: positions, error: error)
        return model
    }

    /// Parents, destinations and inverses must name what exists; inheritance must not loop;
    /// a sub-entity must not redefine an inherited property.
    private static func checkReferences(
        _ model: DataModel, positions: [ExactString: Element],
        error: (FormatError.Code, String, Element) -> FormatError
    ) throws(FormatError) {
        let fallback = Element(name: "model", attributes: [:], line: 0, column: 0)
        for name in model.entityNames {
            guard let entity = model.entities[name] else { continue }
            let position = positions[name] ?? fallback
            if let parent = entity.parentName {
                guard model.entities[parent] != nil else {
                    throw error(.dataModelUnknownEntity, "\(name) has the parent entity \"\(parent)\", which the model does not define", position)
                }
                var seen: Set<ExactString> = [ExactString(name)]
                var next: String? = parent
                while let current = next {
                    guard seen.insert(ExactString(current)).inserted else {
                        throw error(.dataModelInheritanceCycle, "the parent entities of \(name) form a cycle through \"\(current)\"", position)
                    }
                    next = model.entities[current]?.parentName
                }
                let inherited = model.lineage(of: parent)
                let own = (entity.attributes.keys.map(\.value) + entity.relationships.keys.map(\.value)).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
                for property in own {
                    if let owner = inherited.first(where: { $0.attributes[property] != nil || $0.relationships[property] != nil }) {
                        throw error(
                            .dataModelDuplicateProperty, "\(name) redefines \"\(property)\", which it inherits from \(owner.name)",
                            positions["\(name).\(property)"] ?? position)
                    }
                }
            }
            for relationship in entity.relationships.values.sorted(by: { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }) {
                let place = positions["\(name).\(relationship.name)"] ?? position
                guard model.entities[relationship.destinationEntity] != nil else {
                    throw error(
                        .dataModelUnknownEntity,
                        "relationship \(name).\(relationship.name) points to \"\(relationship.destinationEntity)\", which the model does not define", place)
                }
                if let inverseEntity = relationship.inverseEntity, model.entities[inverseEntity] == nil {
                    throw error(
                        .dataModelUnknownEntity,
                        "relationship \(name).\(relationship.name) names the inverse entity \"\(inverseEntity)\", which the model does not define", place)
                }
                if let inverse = relationship.inverseName {
                    let owner = relationship.inverseEntity ?? relationship.destinationEntity
                    guard case .relationship? = model.property(inverse, of: owner) else {
                        throw error(
                            .dataModelUnknownInverse,
                            "relationship \(name).\(relationship.name) names the inverse \"\(inverse)\", which is not a relationship of \(owner)", place)
                    }
                }
            }
        }
    }
}
