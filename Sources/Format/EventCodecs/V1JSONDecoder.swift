import Foundation
import JSONDocument
import EnsembleModel
import DataModel

extension FormatError.Code {
    public static let v1ModelRequired = Self("v1.model-required")
    public static let v1DuplicateStore = Self("v1.duplicate-store")
    public static let v1Structure = Self("v1.structure")
    public static let v1InvalidTimestamp = Self("v1.invalid-timestamp")
    public static let v1UnencodableValue = Self("v1.unencodable-value")
}

/// Key names of the 1.x-style JSON dialect (Spec/v1-json.md).
enum V1Key {
    static let store = "store", revision = "revision", otherStores = "otherstores", timestamp = "timestamp"
    static let globalCount = "globalCount", changes = "changes", type = "type"
    static let uniqueIdentifier = "uniqueIdentifier", modelVersion = "modelVersion"
    static let entity = "entity", id = "id", properties = "properties", dataFiles = "dataFiles"
    static let add = "add", remove = "remove", moved = "moved", dataFile = "dataFile"

    static let event: Set<String> = [store, revision, otherStores, timestamp, globalCount, changes, type, uniqueIdentifier, modelVersion]
    static let change: Set<String> = [entity, id, type, properties, dataFiles]

    static let eventTypes: [String: EventType] = ["save": .save, "merge": .merge, "baseline": .baseline, "incomplete": .incomplete]
    static let changeTypes: [String: ChangeType] = ["insert": .insert, "update": .update, "delete": .delete]

    /// The identifier a v1 event without `uniqueIdentifier` gets: `<store>-<revision>-<globalCount>`.
    static func derivedIdentifier(store: String, revision: Int64, globalCount: Int64) -> String {
        "\(store)-\(revision)-\(globalCount)"
    }
}

/// The events of one v1 file: a single event object or a log (an array of them).
package struct V1Document: Sendable {
    package var events: [Event]
    /// True when the file is an array.
    package var isLog: Bool
    /// Unknown keys at event and change level, as pointers into the file.
    package var unknownKeys: [JSONPointer]
}

/// Reads the 1.x-style JSON dialect. Property kinds and value types come from the data model,
/// so every value is checked against it while it is read (Spec/v1-json.md).
package struct V1JSONDecoder: Sendable {
    package var model: DataModel

    package init(model: DataModel) { self.model = model }

    package func decode(_ json: JSONValue) throws(FormatError) -> V1Document {
        var unknown: [JSONPointer] = []
        switch json {
        case .array(let elements):
            var events: [Event] = []
            for (i, element) in elements.enumerated() {
                events.append(try decodeEvent(element, at: .root / i, unknownKeys: &unknown))
            }
            return V1Document(events: events, isLog: true, unknownKeys: unknown)
        default:
            let event = try decodeEvent(json, at: .root, unknownKeys: &unknown)
            return V1Document(events: [event], isLog: false, unknownKeys: unknown)
        }
    }

    private func decodeEvent(_ json: JSONValue, at pointer: JSONPointer, unknownKeys: inout [JSONPointer]) throws(FormatError) -> Event {
        let object = try V1Read.object(json, at: pointer)
        let store = try V1Read.string(object[V1Key.store], at: pointer / V1Key.store)
        let revision = try V1Read.counter(object[V1Key.revision], at: pointer / V1Key.revision)
        let globalCount =
            try object[V1Key.globalCount].map { value throws(FormatError) in
                try V1Read.counter(value, at: pointer / V1Key.globalCount)
            } ?? 0
        guard case .number(let timestampNumber)? = object[V1Key.timestamp] else {
            throw FormatError(.v1Structure, "the event needs a number \"timestamp\" (seconds since 2001)", at: pointer / V1Key.timestamp)
        }
        guard timestampNumber.doubleValue.isFinite else {
            throw FormatError(.v1InvalidTimestamp, "the timestamp \(timestampNumber.text) is beyond the range of a double", at: pointer / V1Key.timestamp)
        }
        var revisions = RevisionSet(pairs: [(store, revision)])
        if let others = object[V1Key.otherStores] {
            for (i, entry) in try V1Read.array(others, at: pointer / V1Key.otherStores).enumerated() {
                let entryPointer = pointer / V1Key.otherStores / i
                let entryObject = try V1Read.object(entry, at: entryPointer)
                let otherStore = try V1Read.string(entryObject[V1Key.store], at: entryPointer / V1Key.store)
                guard revisions[otherStore] == nil else {
                    throw FormatError(.v1DuplicateStore, "the store \"\(otherStore)\" appears twice in the revision set", at: entryPointer / V1Key.store)
                }
                revisions[otherStore] = try V1Read.counter(entryObject[V1Key.revision], at: entryPointer / V1Key.revision)
            }
        }
        var type = EventType.save
        if let typeValue = object[V1Key.type] {
            let text = try V1Read.string(typeValue, at: pointer / V1Key.type)
            guard let known = V1Key.eventTypes[text] else {
                throw FormatError(.v1Structure, "event type \"\(text)\" is not save, merge, baseline or incomplete", at: pointer / V1Key.type)
            }
            type = known
        }
        let uniqueIdentifier =
            try object[V1Key.uniqueIdentifier].map { value throws(FormatError) in
                try V1Read.string(value, at: pointer / V1Key.uniqueIdentifier)
            } ?? V1Key.derivedIdentifier(store: store, revision: revision, globalCount: globalCount)
        var modelVersion: String?
        if let value = object[V1Key.modelVersion], value != .null {
            modelVersion = try V1Read.string(value, at: pointer / V1Key.modelVersion)
        }
        var changes: [ObjectChange] = []
        if let list = object[V1Key.changes] {
            for (k, element) in try V1Read.array(list, at: pointer / V1Key.changes).enumerated() {
                changes.append(try decodeChange(element, at: pointer / V1Key.changes / k, unknownKeys: &unknownKeys))
            }
        }
        var unknown = JSONObject()
        for (key, value) in object where !V1Key.event.contains(key) {
            unknown[key] = value
            unknownKeys.append(pointer / key)
        }
        return Event(
            uniqueIdentifier: uniqueIdentifier, type: type, storeIdentifier: store, globalCount: globalCount,
            timestamp: timestampNumber.doubleValue, modelVersion: modelVersion, revisionSet: revisions,
            objectChanges: changes, unknownFields: unknown)
    }

    private func decodeChange(_ json: JSONValue, at pointer: JSONPointer, unknownKeys: inout [JSONPointer]) throws(FormatError) -> ObjectChange {
        let object = try V1Read.object(json, at: pointer)
        let entityName = try V1Read.string(object[V1Key.entity], at: pointer / V1Key.entity)
        let id = try V1Read.string(object[V1Key.id], at: pointer / V1Key.id)
        let typeText = try V1Read.string(object[V1Key.type], at: pointer / V1Key.type)
        guard let type = V1Key.changeTypes[typeText] else {
            throw FormatError(.v1Structure, "change type \"\(typeText)\" is not insert, update or delete", at: pointer / V1Key.type)
        }
        guard let entity = model.entities[entityName] else {
            throw FormatError(.modelUnknownEntity, model.unknownEntityMessage(entityName), at: pointer / V1Key.entity)
        }
        if type == .insert && entity.isAbstract {
            throw FormatError(.modelAbstractEntity, "\(entityName) is abstract: no object of it can be inserted", at: pointer / V1Key.entity)
        }
        var properties: [PropertyChange] = []
        if let list = object[V1Key.properties] {
            let members = try V1Read.object(list, at: pointer / V1Key.properties)
            if type == .delete && !members.isEmpty {
                throw FormatError(.modelDeleteWithProperties, "a delete carries no property values", at: pointer / V1Key.properties)
            }
            for (name, value) in members {
                properties.append(try decodeProperty(name, value, entity: entityName, at: pointer / V1Key.properties / name))
            }
        }
        var dataFiles: [String] = []
        if let list = object[V1Key.dataFiles] {
            for (i, element) in try V1Read.array(list, at: pointer / V1Key.dataFiles).enumerated() {
                dataFiles.append(try V1Read.string(element, at: pointer / V1Key.dataFiles / i))
            }
        }
        var unknown = JSONObject()
        for (key, value) in object where !V1Key.change.contains(key) {
            unknown[key] = value
            unknownKeys.append(pointer / key)
        }
        return ObjectChange(
            entity: entityName, globalIdentifier: id, type: type, propertyChanges: properties,
            dataFiles: dataFiles, unknownFields: unknown)
    }

    private func decodeProperty(_ name: String, _ value: JSONValue, entity: String, at pointer: JSONPointer) throws(FormatError) -> PropertyChange {
        switch model.property(name, of: entity) {
        case nil:
            throw FormatError(.modelUnknownProperty, model.unknownPropertyMessage(name, of: entity), at: pointer)
        case .attribute(let attribute)?:
            if attribute.isTransient {
                throw FormatError(.modelTransientProperty, "\(entity).\(name) is transient and never synced", at: pointer)
            }
            if case .object(let object) = value, object.keys == [V1Key.dataFile],
                attribute.type == .binary || attribute.type == .transformable
            {
                guard let filename = object[V1Key.dataFile]?.stringValue, DataFileName.isValid(filename) else {
                    throw FormatError(
                        .modelWrongValueType, "a data file reference names a file in data/: 1 to 255 characters, no '/', '\\' or NUL, not '.' or '..'",
                        at: pointer / V1Key.dataFile)
                }
                return PropertyChange(name: name, value: .attributeInDataFile(filename: filename))
            }
            return PropertyChange(name: name, value: .attribute(try V1Values.attribute(value, type: attribute.type, at: pointer)))
        case .relationship(let relationship)?:
            if relationship.isTransient {
                throw FormatError(.modelTransientProperty, "\(entity).\(name) is transient and never synced", at: pointer)
            }
            return PropertyChange(name: name, value: try V1Values.relationship(value, relationship, at: pointer))
        }
    }
}

/// Shape checks that name the v1 pointer. The schema has normally caught these already.
enum V1Read {
    static func object(_ value: JSONValue?, at pointer: JSONPointer) throws(FormatError) -> JSONObject {
        guard case .object(let object)? = value else {
            throw FormatError(.v1Structure, "expected an object", at: pointer)
        }
        return object
    }

    static func array(_ value: JSONValue?, at pointer: JSONPointer) throws(FormatError) -> [JSONValue] {
        guard case .array(let array)? = value else {
            throw FormatError(.v1Structure, "expected an array", at: pointer)
        }
        return array
    }

    static func string(_ value: JSONValue?, at pointer: JSONPointer) throws(FormatError) -> String {
        guard case .string(let string)? = value else {
            throw FormatError(.v1Structure, "expected a string", at: pointer)
        }
        return string
    }

    /// A revision or global count: an integer 0...2^63-1, exact.
    static func counter(_ value: JSONValue?, at pointer: JSONPointer) throws(FormatError) -> Int64 {
        guard case .number(let number)? = value, let int = number.integerValue, int >= 0 else {
            throw FormatError(.v1Structure, "expected an integer from 0 to 9223372036854775807", at: pointer)
        }
        return int
    }
}
