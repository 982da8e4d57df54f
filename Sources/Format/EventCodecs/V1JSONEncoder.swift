import Foundation
import JSONDocument
import EnsembleModel

/// Writes events in the 1.x-style JSON dialect, canonically (Spec/v1-json.md). Writing needs
/// no model: every logical value says its own kind.
package struct V1JSONEncoder: Sendable {
    package init() {}

    /// One event as an object, or several as a log (an array).
    package func encode(_ events: [Event], asLog: Bool) throws(FormatError) -> [UInt8] {
        if !asLog, events.count == 1 { return JSONWriter().bytes(try jsonValue(events[0], at: .root)) }
        var list: [JSONValue] = []
        for (i, event) in events.enumerated() { list.append(try jsonValue(event, at: .root / i)) }
        return JSONWriter().bytes(.array(list))
    }

    func jsonValue(_ event: Event, at pointer: JSONPointer) throws(FormatError) -> JSONValue {
        try checkNoClash(event.unknownFields, with: V1Key.event, at: pointer, code: .v1UnencodableValue, dialect: "v1")
        var object = event.unknownFields
        object[V1Key.store] = .string(event.storeIdentifier)
        object[V1Key.revision] = JSONValue(event.revision)
        object[V1Key.globalCount] = JSONValue(event.globalCount)
        guard event.timestamp.isFinite else {
            throw FormatError(.v1UnencodableValue, "the event's timestamp is not finite", at: pointer / V1Key.timestamp)
        }
        object[V1Key.timestamp] = JSONValue(event.timestamp)
        object[V1Key.otherStores] = .array(
            event.revisionSet.stores.filter { $0 != event.storeIdentifier }.map { store in
                .object(JSONObject([(V1Key.store, .string(store)), (V1Key.revision, JSONValue(event.revisionSet[store] ?? 0))]))
            })
        if event.type != .save, let name = V1Key.eventTypes.first(where: { $0.value == event.type })?.key {
            object[V1Key.type] = .string(name)
        }
        if event.uniqueIdentifier != V1Key.derivedIdentifier(store: event.storeIdentifier, revision: event.revision, globalCount: event.globalCount) {
            object[V1Key.uniqueIdentifier] = .string(event.uniqueIdentifier)
        }
        object[V1Key.modelVersion] = event.modelVersion.map(JSONValue.string)
        var changes: [JSONValue] = []
        for (k, change) in event.objectChanges.enumerated() {
            changes.append(try changeValue(change, at: pointer / V1Key.changes / k))
        }
        object[V1Key.changes] = .array(changes)
        return .object(object)
    }

    private func changeValue(_ change: ObjectChange, at pointer: JSONPointer) throws(FormatError) -> JSONValue {
        try checkNoClash(change.unknownFields, with: V1Key.change, at: pointer, code: .v1UnencodableValue, dialect: "v1")
        var object = change.unknownFields
        object[V1Key.entity] = .string(change.entity)
        object[V1Key.id] = .string(change.globalIdentifier)
        object[V1Key.type] = .string(V1Key.changeTypes.first { $0.value == change.type }?.key ?? "update")
        if !change.dataFiles.isEmpty { object[V1Key.dataFiles] = .array(change.dataFiles.map(JSONValue.string)) }
        var properties = JSONObject()
        for property in change.propertyChanges {
            let propertyPointer = pointer / V1Key.properties / property.name
            if let key = property.unknownFields.keys.first {
                throw FormatError(
                    .v1UnencodableValue, "the property change carries the unknown member \"\(key)\", which the v1 dialect has no place for", at: propertyPointer
                )
            }
            properties[property.name] = try propertyValue(property.value, at: propertyPointer)
        }
        if !properties.isEmpty { object[V1Key.properties] = .object(properties) }
        return .object(object)
    }

    private func propertyValue(_ value: PropertyChange.Value, at pointer: JSONPointer) throws(FormatError) -> JSONValue {
        func ids(_ list: [String]) -> JSONValue { .array(sortedUnique(list).map(JSONValue.string)) }
        switch value {
        case .attribute(.date(let milliseconds)):
            guard let seconds = V1Date.secondsText(milliseconds: milliseconds) else {
                throw FormatError(
                    .v1UnencodableValue, "the date \(milliseconds) ms since 1970 has no seconds-since-2001 text that reads back to the same value", at: pointer)
            }
            return .number(JSONNumber(text: seconds))
        case .attribute(let attribute):
            do {
                return try V2JSONEncoder.attributeJSON(attribute, at: pointer)
            } catch {
                throw FormatError(.v1UnencodableValue, error.message, at: pointer)
            }
        case .attributeInDataFile(let filename):
            return .object(JSONObject([(V1Key.dataFile, .string(filename))]))
        case .toOne(let related):
            return related.map(JSONValue.string) ?? .null
        case .toMany(let added, let removed):
            return .object(JSONObject([(V1Key.add, ids(added)), (V1Key.remove, ids(removed))]))
        case .orderedToMany(let added, let removed, let moved):
            return .object(
                JSONObject([
                    (V1Key.add, ids(added)), (V1Key.remove, ids(removed)),
                    (V1Key.moved, .object(JSONObject(moved.map { (String($0.key), .string($0.value)) }))),
                ]))
        }
    }
}

/// Which unknown members of one dialect have no place when writing the other (Spec/convert.md,
/// "Lossy conversions"): those named like a key the other dialect uses at that level, and, for
/// v1, every unknown member of a property change.
package enum DialectKeys {
    /// `pointer` names an unknown member in a source file of the other dialect.
    package static func unknownMemberIsLost(at pointer: JSONPointer, writingV1: Bool) -> Bool {
        let tokens = pointer.tokens
        guard let key = tokens.last else { return false }
        if writingV1 {
            if tokens.count == 1 { return V1Key.event.contains(key) }
            if tokens.count == 4 && tokens[0] == V2Key.changesByEntity { return V1Key.change.contains(key) }
            return tokens.count >= 6 && tokens[tokens.count - 3] == V2Key.properties
        }
        // A v1 log's pointers start with the event's index.
        let inEvent = tokens.count >= 2 && Int(tokens[0]) != nil ? Array(tokens.dropFirst()) : tokens
        if inEvent.count == 1 { return V2Key.event.contains(key) }
        if inEvent.count == 3 && inEvent[0] == V1Key.changes { return V2Key.objectChange.contains(key) }
        return false
    }
}
