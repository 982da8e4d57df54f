import Crypto
import Foundation
import JSONDocument

extension DataModel {
    /// The model description document of Spec/model.md: the schema-relevant parts of the
    /// model, own properties per entity, as a JSON value.
    public var descriptionDocument: JSONValue {
        func optional(_ text: String?) -> JSONValue { text.map(JSONValue.string) ?? .null }
        var entityMembers: [(String, JSONValue)] = []
        for name in entityNames {
            guard let entity = entities[name] else { continue }
            let attributes = entity.attributes.values.map { attribute in
                (
                    attribute.name,
                    JSONValue.object(
                        JSONObject([
                            ("type", .string(attribute.type.rawValue)),
                            ("optional", .bool(attribute.isOptional)),
                            ("transient", .bool(attribute.isTransient)),
                            ("default", optional(attribute.defaultValue)),
                            ("min", optional(attribute.minimumValue)),
                            ("max", optional(attribute.maximumValue)),
                            ("externalStorage", .bool(attribute.allowsExternalBinaryDataStorage)),
                            ("versionHashModifier", optional(attribute.versionHashModifier)),
                        ]))
                )
            }
            let relationships = entity.relationships.values.map { relationship in
                (
                    relationship.name,
                    JSONValue.object(
                        JSONObject([
                            ("destination", .string(relationship.destinationEntity)),
                            ("inverse", optional(relationship.inverseName)),
                            ("inverseEntity", optional(relationship.inverseEntity)),
                            ("toMany", .bool(relationship.isToMany)),
                            ("ordered", .bool(relationship.isOrdered)),
                            ("minCount", relationship.minimumCount.map(JSONValue.init) ?? .null),
                            ("maxCount", relationship.maximumCount.map(JSONValue.init) ?? .null),
                            ("optional", .bool(relationship.isOptional)),
                            ("deletionRule", .string(relationship.deletionRule)),
                            ("transient", .bool(relationship.isTransient)),
                            ("versionHashModifier", optional(relationship.versionHashModifier)),
                        ]))
                )
            }
            entityMembers.append(
                (
                    name,
                    .object(
                        JSONObject([
                            ("parent", optional(entity.parentName)),
                            ("abstract", .bool(entity.isAbstract)),
                            ("versionHashModifier", optional(entity.versionHashModifier)),
                            ("attributes", .object(JSONObject(attributes))),
                            ("relationships", .object(JSONObject(relationships))),
                        ]))
                ))
        }
        return .object(JSONObject([("entities", .object(JSONObject(entityMembers)))]))
    }

    /// `sha256:` and the lowercase hex SHA-256 of the canonical bytes of ``descriptionDocument``.
    /// This toolkit's writers put it in an event's `modelVersion`.
    public var modelHash: String {
        let digest = SHA256.hash(data: JSONWriter().bytes(descriptionDocument))
        return "sha256:" + lowercaseHex(digest)
    }
}
