import Foundation
import JSONDocument
import EnsembleModel

/// Which file of a (possibly multipart) event is being read.
package enum EventPartPosition: Hashable, Sendable {
    /// A whole event in one file.
    case single
    /// Part `index` of `count` (1-based); only part 1 carries the header.
    case part(index: Int, count: Int)

    var carriesHeader: Bool {
        switch self {
        case .single: true
        case .part(let index, _): index == 1
        }
    }
}

/// The header keys of a v2 event: everything but the object changes.
package struct EventHeader: Hashable, Sendable {
    package var uniqueIdentifier: String
    package var type: EventType
    package var globalCount: Int64
    package var timestamp: Double
    package var storeIdentifier: String
    package var modelVersion: String?
    package var revisionSet: RevisionSet

    package init(
        uniqueIdentifier: String, type: EventType, globalCount: Int64, timestamp: Double, storeIdentifier: String,
        modelVersion: String?, revisionSet: RevisionSet
    ) {
        self.uniqueIdentifier = uniqueIdentifier
        self.type = type
        self.globalCount = globalCount
        self.timestamp = timestamp
        self.storeIdentifier = storeIdentifier
        self.modelVersion = modelVersion
        self.revisionSet = revisionSet
    }

    /// The header of an event.
    package init(of event: Event) {
        self.init(
            uniqueIdentifier: event.uniqueIdentifier, type: event.type, globalCount: event.globalCount,
            timestamp: event.timestamp, storeIdentifier: event.storeIdentifier,
            modelVersion: event.modelVersion, revisionSet: event.revisionSet)
    }
}

/// One decoded file of a v2 event.
package struct EventPart: Hashable, Sendable {
    package var position: EventPartPosition
    /// Present for a single file and part 1, absent for continuation parts.
    package var header: EventHeader?
    package var objectChanges: [ObjectChange]
    /// Top-level keys this toolkit does not know, kept for the joined event.
    package var unknownFields: JSONObject
    /// Every unknown key at any level, as pointers into this file.
    package var unknownKeys: [JSONPointer]

    package init(
        position: EventPartPosition, header: EventHeader?, objectChanges: [ObjectChange],
        unknownFields: JSONObject, unknownKeys: [JSONPointer]
    ) {
        self.position = position
        self.header = header
        self.objectChanges = objectChanges
        self.unknownFields = unknownFields
        self.unknownKeys = unknownKeys
    }
}

/// Reads the v2 JSON dialect (Spec/v2-json.md) from a parsed JSON document.
///
/// The decoder checks every shape it relies on, so it is safe on any input; in the toolkit's
/// reading pipeline the schema has already reported structural problems with better codes.
public struct V2JSONDecoder: Sendable {
    public init() {}

    /// Decodes a single-file event.
    public func decodeEvent(_ json: JSONValue) throws(FormatError) -> (event: Event, unknownKeys: [JSONPointer]) {
        let part = try decodePart(json, position: .single)
        let event = try Self.join([part])
        return (event, part.unknownKeys)
    }

    /// Decodes one file of an event: a single file, part 1 or a continuation part.
    package func decodePart(_ json: JSONValue, position: EventPartPosition) throws(FormatError) -> EventPart {
        var context = Context()
        let object = try context.object(json, at: .root)
        let header: EventHeader?
        if position.carriesHeader {
            header = try context.header(object)
        } else if let key = V2Key.header.first(where: { object.contains($0) }) {
            // The role is the whole document's, so the pointer is "" (Spec/v2-json.md 9).
            throw FormatError(
                .v2HeaderInContinuation, "continuation part \(position) carries the header key \"\(key)\"; only part 1 may", at: .root)
        } else if !object.contains(V2Key.changesByEntity) {
            throw FormatError(.v2Structure, "a continuation part must have \"changesByEntity\"", at: .root)
        } else {
            header = nil
        }
        var changes: [ObjectChange] = []
        if let byEntity = object[V2Key.changesByEntity] {
            changes = try context.changesByEntity(byEntity, at: JSONPointer.root / V2Key.changesByEntity)
        }
        let unknown = context.unknownMembers(of: object, known: V2Key.event, at: .root)
        return EventPart(
            position: position, header: header, objectChanges: changes,
            unknownFields: unknown, unknownKeys: context.unknownKeys)
    }

    /// Joins the parts of one event, given in any order; all of 1...n must be present.
    package static func join(_ parts: [EventPart]) throws(FormatError) -> Event {
        // The usual event is one file: nothing to sort, check or copy (a concatenation copies
        // every change, retaining all its parts).
        if parts.count == 1, let part = parts.first, part.position == .single, let header = part.header {
            return Event(
                uniqueIdentifier: header.uniqueIdentifier, type: header.type, storeIdentifier: header.storeIdentifier,
                globalCount: header.globalCount, timestamp: header.timestamp, modelVersion: header.modelVersion,
                revisionSet: header.revisionSet, objectChanges: part.objectChanges, unknownFields: part.unknownFields)
        }
        let sorted = parts.sorted { $0.index < $1.index }
        let expected = sorted.first?.count ?? 1
        guard sorted.map(\.index) == Array(1...max(1, expected)), sorted.allSatisfy({ $0.count == expected }),
            let header = sorted.first?.header
        else {
            let present = sorted.map { String($0.index) }.joined(separator: ", ")
            throw FormatError(.v2IncompleteParts, "the event has parts [\(present)] of \(expected); all parts are needed to join it")
        }
        // Unknown top-level keys of any part are kept; part 1's value wins a clash.
        var unknown = JSONObject()
        for part in sorted {
            for (key, value) in part.unknownFields where !unknown.contains(key) { unknown[key] = value }
        }
        return Event(
            uniqueIdentifier: header.uniqueIdentifier, type: header.type, storeIdentifier: header.storeIdentifier,
            globalCount: header.globalCount, timestamp: header.timestamp, modelVersion: header.modelVersion,
            revisionSet: header.revisionSet, objectChanges: sorted.flatMap(\.objectChanges), unknownFields: unknown)
    }
}

extension V2JSONDecoder {
    /// A number as an attribute value: an integer literal is an int64, anything else a double
    /// (Spec/v2-json.md 5.5).
    static func attributeNumber(_ number: JSONNumber, at pointer: JSONPointer) throws(FormatError) -> AttributeValue {
        if number.isIntegerLiteral {
            guard let int = number.int64Value else {
                throw FormatError(
                    .v2IntegerOutOfRange, "integer \(number.text) does not fit in 64 bits; write it as [\"decimal\", \"\(number.text)\"]", at: pointer)
            }
            return .integer(int)
        }
        let double = number.doubleValue
        guard double.isFinite else {
            throw FormatError(.v2NumberOutOfRange, "\(number.text) is beyond the range of a double", at: pointer)
        }
        return .double(double)
    }
}

extension EventPart {
    var index: Int {
        switch position {
        case .single: 1
        case .part(let index, _): index
        }
    }

    var count: Int {
        switch position {
        case .single: 1
        case .part(_, let count): count
        }
    }
}

/// Decoding state: collects the pointers of unknown keys while walking the document.
private struct Context {
    var unknownKeys: [JSONPointer] = []

    mutating func unknownMembers(of object: JSONObject, known: Set<String>, at pointer: JSONPointer) -> JSONObject {
        var unknown = JSONObject()
        for (key, value) in object where !known.contains(key) {
            unknown[key] = value
            unknownKeys.append(pointer / key)
        }
        return unknown
    }

    func object(_ value: JSONValue, at pointer: JSONPointer) throws(FormatError) -> JSONObject {
        guard case .object(let object) = value else {
            throw FormatError(.v2Structure, "expected an object, found \(value.typeName)", at: pointer)
        }
        return object
    }

    func array(_ value: JSONValue, at pointer: JSONPointer) throws(FormatError) -> [JSONValue] {
        guard case .array(let array) = value else {
            throw FormatError(.v2Structure, "expected an array, found \(value.typeName)", at: pointer)
        }
        return array
    }

    func string(_ value: JSONValue, at pointer: JSONPointer) throws(FormatError) -> String {
        guard case .string(let string) = value else {
            throw FormatError(.v2Structure, "expected a string, found \(value.typeName)", at: pointer)
        }
        return string
    }

    func nonEmptyString(_ value: JSONValue, at pointer: JSONPointer) throws(FormatError) -> String {
        let text = try string(value, at: pointer)
        guard !text.isEmpty else { throw FormatError(.v2Structure, "the string must not be empty", at: pointer) }
        return text
    }

    func int64(_ value: JSONValue, at pointer: JSONPointer, minimum: Int64 = .min) throws(FormatError) -> Int64 {
        guard case .number(let number) = value else {
            throw FormatError(.v2Structure, "expected an integer, found \(value.typeName)", at: pointer)
        }
        guard number.isMathematicalInteger else {
            throw FormatError(.v2Structure, "expected an integer, found \(number.text)", at: pointer)
        }
        guard let int = number.integerValue, int >= minimum else {
            throw FormatError(.v2IntegerOutOfRange, "\(number.text) is outside \(minimum)...\(Int64.max)", at: pointer)
        }
        return int
    }

    func identifierSet(_ value: JSONValue?, at pointer: JSONPointer) throws(FormatError) -> [String] {
        guard let value, value != .null else { return [] }
        var seen = Set<ExactString>()
        var result: [String] = []
        for (i, element) in try array(value, at: pointer).enumerated() {
            let id = try string(element, at: pointer / i)
            guard seen.insert(ExactString(id)).inserted else {
                throw FormatError(.v2DuplicateIdentifier, "\"\(id)\" appears twice in the set", at: pointer / i)
            }
            result.append(id)
        }
        return result
    }

    func header(_ object: JSONObject) throws(FormatError) -> EventHeader {
        for key in V2Key.requiredHeader where !object.contains(key) {
            throw FormatError(.v2MissingHeader, "the event has no \"\(key)\"; a single-file event and part 1 carry every header key", at: .root)
        }
        func value(_ key: String) -> JSONValue { object[key] ?? .null }
        let typePointer = JSONPointer.root / V2Key.type
        let rawType = try int64(value(V2Key.type), at: typePointer)
        guard let type = EventType(rawValue: rawType) else {
            throw FormatError(.v2UnknownEventType, "event type \(rawType) is not one of 0, 100, 200, 300", at: typePointer)
        }
        let timestampPointer = JSONPointer.root / V2Key.timestamp
        let timestampText = try string(value(V2Key.timestamp), at: timestampPointer)
        guard isDecimalText(timestampText), let timestamp = Double(timestampText), timestamp.isFinite else {
            throw FormatError(.v2InvalidTimestamp, "timestamp \"\(timestampText)\" is not a finite decimal number of seconds", at: timestampPointer)
        }
        let store = try nonEmptyString(value(V2Key.storeIdentifier), at: .root / V2Key.storeIdentifier)
        var modelVersion: String?
        if let model = object[V2Key.modelVersion], model != .null {
            modelVersion = try string(model, at: .root / V2Key.modelVersion)
        }
        let revisionsPointer = JSONPointer.root / V2Key.revisionsByStoreIdentifier
        var revisions = RevisionSet()
        for (storeKey, revision) in try self.object(value(V2Key.revisionsByStoreIdentifier), at: revisionsPointer) {
            revisions[storeKey] = try int64(revision, at: revisionsPointer / storeKey, minimum: 0)
        }
        guard revisions[store] != nil else {
            throw FormatError(.v2MissingOwnRevision, "revisionsByStoreIdentifier has no entry for the event's own store \"\(store)\"", at: revisionsPointer)
        }
        return EventHeader(
            uniqueIdentifier: try nonEmptyString(value(V2Key.uniqueIdentifier), at: .root / V2Key.uniqueIdentifier),
            type: type,
            globalCount: try int64(value(V2Key.globalCount), at: .root / V2Key.globalCount, minimum: 0),
            timestamp: timestamp, storeIdentifier: store, modelVersion: modelVersion,
            revisionSet: revisions)
    }

    mutating func changesByEntity(_ value: JSONValue, at pointer: JSONPointer) throws(FormatError) -> [ObjectChange] {
        var changes: [ObjectChange] = []
        let byEntity = try object(value, at: pointer)
        for entity in byEntity.keys.sorted(by: utf8Precedes) {
            let entityPointer = pointer / entity
            guard !entity.isEmpty else { throw FormatError(.v2Structure, "an entity name must not be empty", at: entityPointer) }
            for (i, element) in try array(byEntity[entity] ?? .null, at: entityPointer).enumerated() {
                changes.append(try objectChange(element, entity: entity, at: entityPointer / i))
            }
        }
        return changes
    }

    mutating func objectChange(_ value: JSONValue, entity: String, at pointer: JSONPointer) throws(FormatError) -> ObjectChange {
        let object = try self.object(value, at: pointer)
        guard let typeValue = object[V2Key.type] else {
            throw FormatError(.v2Structure, "the object change has no \"type\"", at: pointer)
        }
        let rawType = try int64(typeValue, at: pointer / V2Key.type)
        guard let type = ChangeType(rawValue: rawType) else {
            throw FormatError(.v2UnknownChangeType, "change type \(rawType) is not one of 100, 200, 300", at: pointer / V2Key.type)
        }
        guard let idValue = object[V2Key.globalIdentifier] else {
            throw FormatError(.v2Structure, "the object change has no \"globalIdentifier\"", at: pointer)
        }
        let globalIdentifier = try nonEmptyString(idValue, at: pointer / V2Key.globalIdentifier)
        let dataFiles = try identifierSet(object[V2Key.dataFiles], at: pointer / V2Key.dataFiles)
        var properties: [PropertyChange] = []
        var names: [ExactString: Int] = [:]
        if let list = object[V2Key.properties], list != .null {
            for (i, element) in try array(list, at: pointer / V2Key.properties).enumerated() {
                let propertyPointer = pointer / V2Key.properties / i
                let name = try propertyName(try self.object(element, at: propertyPointer), at: propertyPointer)
                if let first = names[ExactString(name)] {
                    throw FormatError(
                        .v2DuplicateProperty, "property \"\(name)\" is changed twice in one object change (also at index \(first))", at: propertyPointer)
                }
                names[ExactString(name)] = i
                properties.append(try propertyChange(element, at: propertyPointer))
            }
        }
        let unknown = unknownMembers(of: object, known: V2Key.objectChange, at: pointer)
        return ObjectChange(
            entity: entity, globalIdentifier: globalIdentifier, type: type,
            propertyChanges: properties, dataFiles: dataFiles, unknownFields: unknown)
    }

    func propertyName(_ object: JSONObject, at pointer: JSONPointer) throws(FormatError) -> String {
        let nameValue: JSONValue
        switch (object[V2Key.propertyName], object[V2Key.nameAlias]) {
        case (let name?, nil), (nil, let name?): nameValue = name
        case (_?, _?):
            throw FormatError(.v2Structure, "a property change has both \"propertyName\" and its alias \"name\"", at: pointer)
        case (nil, nil):
            throw FormatError(.v2Structure, "a property change has no \"propertyName\"", at: pointer)
        }
        let namePointer = pointer / (object.contains(V2Key.propertyName) ? V2Key.propertyName : V2Key.nameAlias)
        return try nonEmptyString(nameValue, at: namePointer)
    }

    mutating func propertyChange(_ value: JSONValue, at pointer: JSONPointer) throws(FormatError) -> PropertyChange {
        let object = try self.object(value, at: pointer)
        let name = try propertyName(object, at: pointer)
        guard let kindValue = object[V2Key.type] else {
            throw FormatError(.v2Structure, "the property change has no \"type\"", at: pointer)
        }
        let rawKind = try int64(kindValue, at: pointer / V2Key.type)
        guard let kind = PropertyKind(rawValue: rawKind) else {
            throw FormatError(.v2UnknownPropertyKind, "property type \(rawKind) is not one of 0, 1, 2, 3", at: pointer / V2Key.type)
        }
        let ownKeys: Set<String>
        switch kind {
        case .attribute: ownKeys = V2Key.attributeKeys
        case .toOne: ownKeys = V2Key.toOneKeys
        case .toMany: ownKeys = V2Key.toManyKeys
        case .orderedToMany: ownKeys = V2Key.orderedToManyKeys
        }
        for key in object.keys where V2Key.allPropertyKeys.contains(key) && !V2Key.propertyCommon.contains(key) && !ownKeys.contains(key) {
            throw FormatError(.v2KeyForOtherKind, "\"\(key)\" does not belong to a property change of type \(rawKind)", at: pointer / key)
        }
        let changeValue: PropertyChange.Value
        switch kind {
        case .attribute:
            if let filename = object[V2Key.filename], filename != .null {
                // A `value` member, even `null`, beside `filename` (Spec/v2-json.md 9).
                guard object[V2Key.value] == nil else {
                    throw FormatError(.v2ValueAndFilename, "an attribute change has both \"value\" and \"filename\"", at: pointer)
                }
                changeValue = .attributeInDataFile(filename: try nonEmptyString(filename, at: pointer / V2Key.filename))
            } else {
                changeValue = .attribute(try attributeValue(object[V2Key.value] ?? .null, at: pointer / V2Key.value))
            }
        case .toOne:
            let related = object[V2Key.relatedIdentifier] ?? .null
            changeValue = .toOne(relatedIdentifier: related == .null ? nil : try string(related, at: pointer / V2Key.relatedIdentifier))
        case .toMany:
            changeValue = .toMany(
                added: try identifierSet(object[V2Key.addedIdentifiers], at: pointer / V2Key.addedIdentifiers),
                removed: try identifierSet(object[V2Key.removedIdentifiers], at: pointer / V2Key.removedIdentifiers))
        case .orderedToMany:
            var moved: [Int: String] = [:]
            let movedPointer = pointer / V2Key.movedIdentifiersByIndex
            if let movedValue = object[V2Key.movedIdentifiersByIndex], movedValue != .null {
                for (key, id) in try self.object(movedValue, at: movedPointer) {
                    guard let index = OrderedIndex.parse(key) else {
                        throw FormatError(
                            .v2InvalidIndex, "\"\(key)\" is not an index (0 or a decimal number without leading zeros, at most 9 digits)",
                            at: movedPointer / key)
                    }
                    moved[index] = try string(id, at: movedPointer / key)
                }
            }
            changeValue = .orderedToMany(
                added: try identifierSet(object[V2Key.addedIdentifiers], at: pointer / V2Key.addedIdentifiers),
                removed: try identifierSet(object[V2Key.removedIdentifiers], at: pointer / V2Key.removedIdentifiers),
                movedByIndex: moved)
        }
        let unknown = unknownMembers(of: object, known: V2Key.allPropertyKeys, at: pointer)
        return PropertyChange(name: name, value: changeValue, unknownFields: unknown)
    }

    func attributeValue(_ value: JSONValue, at pointer: JSONPointer) throws(FormatError) -> AttributeValue {
        switch value {
        case .null: return .null
        case .bool(let flag): return .bool(flag)
        case .string(let text): return .string(text)
        case .number(let number): return try V2JSONDecoder.attributeNumber(number, at: pointer)
        case .object:
            throw FormatError(.v2InvalidValue, "an attribute value cannot be an object", at: pointer)
        case .array(let elements):
            guard elements.count == 2, case .string(let tag) = elements[0] else {
                throw FormatError(.v2InvalidValue, "an array attribute value must be a tagged pair [\"<tag>\", <value>]", at: pointer)
            }
            return try TaggedValue.decode(tag: tag, payload: elements[1], at: pointer)
        }
    }

}
