import Foundation
import JSONDocument
import EnsembleModel
import ParallelWork

/// Writes events in the v2 JSON dialect, canonically: one logical event always gives the same
/// bytes (Spec/v2-json.md, "Canonical output").
public struct V2JSONEncoder: Sendable {
    /// Split an event into parts when it has more object changes than this; 0 never splits.
    public var maximumObjectChangesPerFile: Int

    public init(maximumObjectChangesPerFile: Int = 0) {
        self.maximumObjectChangesPerFile = maximumObjectChangesPerFile
    }

    /// The canonical bytes of the whole event as one file (never split).
    public func encode(_ event: Event) throws(FormatError) -> [UInt8] {
        JSONWriter().bytes(try jsonValue(event, changes: event.objectChanges[...], withHeader: true))
    }

    /// The bytes of ``encode(_:)`` for the event `header` with the object changes `changes` (its
    /// own are not read), handed to `emit` in pieces of about `pieceBytes` (or of the 2,048 object
    /// changes written together, when those are more) as they are written: a rebase's baseline
    /// (Spec/merge.md 13.7) is written as its changes are made, without the whole event, its
    /// JSON value or its bytes held at once. Neither the header nor a change may have unknown
    /// members (a baseline has none). Tested against ``encode(_:)``.
    package func encode(
        header event: Event, changes runs: ChangeRuns, pieceBytes: Int = 1 << 20, emit: ([UInt8]) throws(FormatError) -> Void
    ) throws(FormatError) {
        guard event.unknownFields.isEmpty else {
            throw FormatError(.v2UnencodableValue, "an event with unknown members is not written in pieces")
        }
        guard event.timestamp.isFinite else {
            throw FormatError(.v2UnencodableValue, "the event's timestamp is not finite", at: JSONPointer.root / V2Key.timestamp)
        }
        var output: [UInt8] = []
        output.reserveCapacity(pieceBytes + 65_536)
        func flush(_ force: Bool) throws(FormatError) {
            guard force || output.count >= pieceBytes else { return }
            try emit(output)
            output.removeAll(keepingCapacity: true)
        }
        // Members in UTF-8 byte order, as JSONWriter sorts them (Spec/v2-json.md 6).
        output.append(UInt8(ascii: "{"))
        let entities = runs.entities.filter { $0.count > 0 }
        if !entities.isEmpty {
            Self.key(V2Key.changesByEntity, true, &output)
            // Where each entity's changes start, and last where they all end.
            var starts = [0]
            for entity in entities { starts.append(starts[starts.count - 1] + entity.count) }
            let count = starts[starts.count - 1]
            output.append(UInt8(ascii: "{"))
            // Made and written in pieces on every core, two at a time (as many as this machine's
            // cores, and few bytes held), emitted in order: a large baseline's changes on one
            // thread were most of its encoding (Benchmarks/README.md).
            let piece = 2_048, batch = 2 * piece
            for batchStart in stride(from: 0, to: count, by: batch) {
                let batchEnd = min(count, batchStart + batch)
                let written = try Pieces.map(count: batchEnd - batchStart, size: piece) { [starts] (range) throws(FormatError) -> [UInt8] in
                    let positions = batchStart + range.lowerBound..<batchStart + range.upperBound
                    let changes = runs.changes(positions)
                    guard changes.count == positions.count else {
                        throw FormatError(.v2UnencodableValue, "\(changes.count) object changes were made for \(positions.count) places")
                    }
                    // The entity of the piece's first change: the last whose start is not after it.
                    var entity = 0
                    while starts[entity + 1] <= positions.lowerBound { entity += 1 }
                    var bytes: [UInt8] = []
                    for (position, change) in zip(positions, changes) {
                        if position == starts[entity + 1] { entity += 1 }
                        if position == starts[entity] {
                            if entity > 0 { bytes.append(UInt8(ascii: "]")) }
                            Self.key(entities[entity].name, entity == 0, &bytes)
                            bytes.append(UInt8(ascii: "["))
                        } else {
                            bytes.append(UInt8(ascii: ","))
                        }
                        guard change.unknownFields.isEmpty, change.propertyChanges.allSatisfy(\.unknownFields.isEmpty) else {
                            throw FormatError(.v2UnencodableValue, "an object change with unknown members is not written in pieces")
                        }
                        try Self.writeChange(change, into: &bytes)
                    }
                    return bytes
                }
                for bytes in written {
                    output += bytes
                    try flush(false)
                }
            }
            output.append(contentsOf: "]}".utf8)
        }
        Self.key(V2Key.globalCount, entities.isEmpty, &output)
        output.append(contentsOf: String(event.globalCount).utf8)
        if let modelVersion = event.modelVersion {
            Self.key(V2Key.modelVersion, false, &output)
            JSONWriter.writeString(modelVersion, into: &output)
        }
        Self.key(V2Key.revisionsByStoreIdentifier, false, &output)
        output.append(UInt8(ascii: "{"))
        for (i, pair) in event.revisionSet.revisions.enumerated() {
            Self.key(pair.store, i == 0, &output)
            output.append(contentsOf: String(pair.revision).utf8)
        }
        output.append(UInt8(ascii: "}"))
        Self.key(V2Key.storeIdentifier, false, &output)
        JSONWriter.writeString(event.storeIdentifier, into: &output)
        Self.key(V2Key.timestamp, false, &output)
        JSONWriter.writeString(CanonicalNumberFormat.double(event.timestamp), into: &output)
        Self.key(V2Key.type, false, &output)
        output.append(contentsOf: String(event.type.rawValue).utf8)
        Self.key(V2Key.uniqueIdentifier, false, &output)
        JSONWriter.writeString(event.uniqueIdentifier, into: &output)
        output.append(UInt8(ascii: "}"))
        try flush(true)
    }

    /// One object change without unknown members, keys in UTF-8 byte order.
    private static func writeChange(_ change: ObjectChange, into output: inout [UInt8]) throws(FormatError) {
        output.append(UInt8(ascii: "{"))
        var first = true
        if !change.dataFiles.isEmpty {
            key(V2Key.dataFiles, true, &output)
            strings(sortedUnique(change.dataFiles), &output)
            first = false
        }
        key(V2Key.globalIdentifier, first, &output)
        JSONWriter.writeString(change.globalIdentifier, into: &output)
        if !change.propertyChanges.isEmpty {
            key(V2Key.properties, false, &output)
            output.append(UInt8(ascii: "["))
            for (i, property) in change.propertyChanges.sorted(by: { utf8Precedes($0.name, $1.name) }).enumerated() {
                if i > 0 { output.append(UInt8(ascii: ",")) }
                try writeProperty(property, into: &output)
            }
            output.append(UInt8(ascii: "]"))
        }
        key(V2Key.type, false, &output)
        output.append(contentsOf: String(change.type.rawValue).utf8)
        output.append(UInt8(ascii: "}"))
    }

    /// One property change, keys in UTF-8 byte order: addedIdentifiers, filename,
    /// movedIdentifiersByIndex, propertyName, relatedIdentifier, removedIdentifiers, type, value.
    private static func writeProperty(_ property: PropertyChange, into output: inout [UInt8]) throws(FormatError) {
        output.append(UInt8(ascii: "{"))
        switch property.value {
        case .attribute(let value):
            Self.key(V2Key.propertyName, true, &output)
            JSONWriter.writeString(property.name, into: &output)
            Self.key(V2Key.type, false, &output)
            output.append(contentsOf: String(property.kind.rawValue).utf8)
            Self.key(V2Key.value, false, &output)
            try writeAttribute(value, into: &output)
        case .attributeInDataFile(let filename):
            Self.key(V2Key.filename, true, &output)
            JSONWriter.writeString(filename, into: &output)
            Self.key(V2Key.propertyName, false, &output)
            JSONWriter.writeString(property.name, into: &output)
            Self.key(V2Key.type, false, &output)
            output.append(contentsOf: String(property.kind.rawValue).utf8)
        case .toOne(let related):
            Self.key(V2Key.propertyName, true, &output)
            JSONWriter.writeString(property.name, into: &output)
            Self.key(V2Key.relatedIdentifier, false, &output)
            if let related { JSONWriter.writeString(related, into: &output) } else { output.append(contentsOf: "null".utf8) }
            Self.key(V2Key.type, false, &output)
            output.append(contentsOf: String(property.kind.rawValue).utf8)
        case .toMany(let added, let removed):
            Self.key(V2Key.addedIdentifiers, true, &output)
            Self.strings(sortedUnique(added), &output)
            Self.toManyTail(property, removed: removed, into: &output)
        case .orderedToMany(let added, let removed, let moved):
            Self.key(V2Key.addedIdentifiers, true, &output)
            Self.strings(sortedUnique(added), &output)
            Self.key(V2Key.movedIdentifiersByIndex, false, &output)
            var members: [(key: String, id: String)] = []
            members.reserveCapacity(moved.count)
            for (index, id) in moved {
                guard index >= 0 && index <= 999_999_999 else {
                    throw FormatError(.v2UnencodableValue, "ordered index \(index) is outside 0...999999999")
                }
                members.append((String(index), id))
            }
            members.sort { utf8Precedes($0.key, $1.key) }
            output.append(UInt8(ascii: "{"))
            for (i, member) in members.enumerated() {
                Self.key(member.key, i == 0, &output)
                JSONWriter.writeString(member.id, into: &output)
            }
            output.append(UInt8(ascii: "}"))
            Self.toManyTail(property, removed: removed, into: &output)
        }
        output.append(UInt8(ascii: "}"))
    }

    /// The members both to-many kinds end with, after `addedIdentifiers` (and the moves):
    /// propertyName, removedIdentifiers, type.
    private static func toManyTail(_ property: PropertyChange, removed: [String], into output: inout [UInt8]) {
        Self.key(V2Key.propertyName, false, &output)
        JSONWriter.writeString(property.name, into: &output)
        Self.key(V2Key.removedIdentifiers, false, &output)
        Self.strings(sortedUnique(removed), &output)
        Self.key(V2Key.type, false, &output)
        output.append(contentsOf: String(property.kind.rawValue).utf8)
    }

    private static func key(_ name: String, _ first: Bool, _ output: inout [UInt8]) {
        if !first { output.append(UInt8(ascii: ",")) }
        JSONWriter.writeString(name, into: &output)
        output.append(UInt8(ascii: ":"))
    }

    private static func strings(_ list: [String], _ output: inout [UInt8]) {
        output.append(UInt8(ascii: "["))
        for (i, string) in list.enumerated() {
            if i > 0 { output.append(UInt8(ascii: ",")) }
            JSONWriter.writeString(string, into: &output)
        }
        output.append(UInt8(ascii: "]"))
    }

    /// The canonical bytes of each file of the event: one file, or parts 1...n when the event
    /// exceeds ``maximumObjectChangesPerFile``.
    public func encodeParts(_ event: Event) throws(FormatError) -> [[UInt8]] {
        let limit = maximumObjectChangesPerFile
        guard limit > 0, event.objectChanges.count > limit else { return [try encode(event)] }
        var parts: [[UInt8]] = []
        var start = event.objectChanges.startIndex
        while start < event.objectChanges.endIndex {
            let end = min(start + limit, event.objectChanges.endIndex)
            let value = try jsonValue(event, changes: event.objectChanges[start..<end], withHeader: parts.isEmpty)
            parts.append(JSONWriter().bytes(value))
            start = end
        }
        return parts
    }

    /// The event as a JSON value (for embedding in other documents, such as inspect output).
    public func jsonValue(_ event: Event) throws(FormatError) -> JSONValue {
        try jsonValue(event, changes: event.objectChanges[...], withHeader: true)
    }

    /// One decoded file of a multipart event as a JSON value: part 1 with its header,
    /// a continuation part with only its changes.
    package func jsonValue(_ part: EventPart) throws(FormatError) -> JSONValue {
        try jsonValue(header: part.header, unknownFields: part.unknownFields, changes: part.objectChanges[...])
    }

    private func jsonValue(_ event: Event, changes: ArraySlice<ObjectChange>, withHeader: Bool) throws(FormatError) -> JSONValue {
        return try jsonValue(
            header: withHeader ? EventHeader(of: event) : nil, unknownFields: withHeader ? event.unknownFields : JSONObject(),
            changes: changes)
    }

    private func jsonValue(header: EventHeader?, unknownFields: JSONObject, changes: ArraySlice<ObjectChange>) throws(FormatError) -> JSONValue {
        try checkNoClash(unknownFields, with: V2Key.event, at: .root, code: .v2UnencodableValue, dialect: "v2")
        var object = unknownFields
        if let header {
            object[V2Key.uniqueIdentifier] = .string(header.uniqueIdentifier)
            object[V2Key.type] = JSONValue(header.type.rawValue)
            object[V2Key.globalCount] = JSONValue(header.globalCount)
            guard header.timestamp.isFinite else {
                throw FormatError(.v2UnencodableValue, "the event's timestamp is not finite", at: JSONPointer.root / V2Key.timestamp)
            }
            object[V2Key.timestamp] = .string(CanonicalNumberFormat.double(header.timestamp))
            object[V2Key.storeIdentifier] = .string(header.storeIdentifier)
            object[V2Key.modelVersion] = header.modelVersion.map(JSONValue.string)
            var revisions = JSONObject()
            for (store, revision) in header.revisionSet.revisions { revisions[store] = JSONValue(revision) }
            object[V2Key.revisionsByStoreIdentifier] = .object(revisions)
        }
        if !changes.isEmpty || header == nil {
            var lists: [ExactString: [JSONValue]] = [:]
            var entities: [String] = []
            for change in changes {
                let pointer = JSONPointer.root / V2Key.changesByEntity / change.entity
                let index = lists[ExactString(change.entity)]?.count ?? 0
                if index == 0 { entities.append(change.entity) }
                lists[ExactString(change.entity), default: []].append(try objectChangeValue(change, at: pointer / index))
            }
            object[V2Key.changesByEntity] = .object(JSONObject(entities.map { ($0, .array(lists[ExactString($0)] ?? [])) }))
        }
        return .object(object)
    }

    private func objectChangeValue(_ change: ObjectChange, at pointer: JSONPointer) throws(FormatError) -> JSONValue {
        try checkNoClash(change.unknownFields, with: V2Key.objectChange, at: pointer, code: .v2UnencodableValue, dialect: "v2")
        var object = change.unknownFields
        object[V2Key.type] = JSONValue(change.type.rawValue)
        object[V2Key.globalIdentifier] = .string(change.globalIdentifier)
        if !change.dataFiles.isEmpty {
            object[V2Key.dataFiles] = .array(sortedUnique(change.dataFiles).map(JSONValue.string))
        }
        let properties = change.propertyChanges.sorted { utf8Precedes($0.name, $1.name) }
        if !properties.isEmpty {
            var list: [JSONValue] = []
            for (i, property) in properties.enumerated() {
                list.append(try propertyValue(property, at: pointer / V2Key.properties / i))
            }
            object[V2Key.properties] = .array(list)
        }
        return .object(object)
    }

    private func propertyValue(_ property: PropertyChange, at pointer: JSONPointer) throws(FormatError) -> JSONValue {
        try checkNoClash(property.unknownFields, with: V2Key.allPropertyKeys, at: pointer, code: .v2UnencodableValue, dialect: "v2")
        var object = property.unknownFields
        object[V2Key.propertyName] = .string(property.name)
        object[V2Key.type] = JSONValue(property.kind.rawValue)
        func ids(_ list: [String]) -> JSONValue { .array(sortedUnique(list).map(JSONValue.string)) }
        switch property.value {
        case .attribute(let value):
            object[V2Key.value] = try Self.attributeJSON(value, at: pointer / V2Key.value)
        case .attributeInDataFile(let filename):
            object[V2Key.filename] = .string(filename)
        case .toOne(let related):
            object[V2Key.relatedIdentifier] = related.map(JSONValue.string) ?? .null
        case .toMany(let added, let removed):
            object[V2Key.addedIdentifiers] = ids(added)
            object[V2Key.removedIdentifiers] = ids(removed)
        case .orderedToMany(let added, let removed, let moved):
            object[V2Key.addedIdentifiers] = ids(added)
            object[V2Key.removedIdentifiers] = ids(removed)
            var movedObject = JSONObject()
            for (index, id) in moved {
                guard index >= 0 && index <= 999_999_999 else {
                    throw FormatError(.v2UnencodableValue, "ordered index \(index) is outside 0...999999999", at: pointer / V2Key.movedIdentifiersByIndex)
                }
                movedObject[String(index)] = .string(id)
            }
            object[V2Key.movedIdentifiersByIndex] = .object(movedObject)
        }
        return .object(object)
    }

    /// The bytes ``JSONWriter`` writes for ``attributeJSON(_:at:)``, written straight into `output`
    /// for the usual values: a writer of many values (a merged state) spent more on building a
    /// JSON value per attribute than on the rest of writing it. Tested against that pair.
    package static func writeAttribute(_ value: AttributeValue, into output: inout [UInt8]) throws(FormatError) {
        switch value {
        case .null: output.append(contentsOf: "null".utf8)
        case .bool(let flag): output.append(contentsOf: (flag ? "true" : "false").utf8)
        case .integer(let int): append(String(int), to: &output)
        case .string(let text): JSONWriter.writeString(text, into: &output)
        case .double(let double) where double.isFinite: append(CanonicalNumberFormat.double(double), to: &output)
        case .date(let milliseconds) where milliseconds.isFinite:
            output.append(contentsOf: dateOpening)
            append(CanonicalNumberFormat.ecmaScript(milliseconds), to: &output)
            output.append(UInt8(ascii: "]"))
        default: JSONWriter().append(try attributeJSON(value), to: &output)
        }
    }

    /// `["date",`, as a date value starts.
    private static let dateOpening = Array(#"[""#.utf8) + Array(V2ValueTag.date.utf8) + Array(#"","#.utf8)

    /// Appends the UTF-8 bytes of `text` in one copy (through the `String`'s `utf8` view, a
    /// state document's numbers cost a generic call each).
    private static func append(_ text: String, to output: inout [UInt8]) { ExactString.withUTF8(of: text) { output.append(contentsOf: $0) } }

    /// The v2 JSON form of one attribute value (a plain JSON value or a tagged pair).
    public static func attributeJSON(_ value: AttributeValue, at pointer: JSONPointer = .root) throws(FormatError) -> JSONValue {
        func tagged(_ tag: String, _ payload: JSONValue) -> JSONValue { .array([.string(tag), payload]) }
        switch value {
        case .null: return .null
        case .bool(let flag): return .bool(flag)
        case .integer(let int): return JSONValue(int)
        case .double(let double):
            if double.isNaN { return tagged(V2ValueTag.number, .string("nan")) }
            if double.isInfinite { return tagged(V2ValueTag.number, .string(double > 0 ? "+inf" : "-inf")) }
            return JSONValue(double)
        case .decimal(let text):
            guard isDecimalText(text) else {
                throw FormatError(.v2UnencodableValue, "\"\(text)\" is not decimal text", at: pointer)
            }
            return tagged(V2ValueTag.decimal, .string(text))
        case .string(let text): return .string(text)
        case .date(let milliseconds):
            guard milliseconds.isFinite else {
                throw FormatError(.v2UnencodableValue, "a date must be a finite number of milliseconds", at: pointer)
            }
            return tagged(V2ValueTag.date, .number(JSONNumber(text: CanonicalNumberFormat.ecmaScript(milliseconds))))
        case .binary(let data): return tagged(V2ValueTag.data, .string(data.base64EncodedString()))
        case .uuid(let uuid): return tagged(V2ValueTag.uuid, .string(uuid.uuidString.uppercased()))
        case .url(let text): return tagged(V2ValueTag.url, .string(text))
        }
    }
}
