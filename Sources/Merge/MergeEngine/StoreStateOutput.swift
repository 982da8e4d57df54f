import ParallelWork
import Foundation
import JSONDocument
import EnsembleModel
import DataModel
import EventCodecs

/// What a replayed state gives back: its objects and properties, the state document of
/// Spec/merge.md 9 and a baseline event of it (Spec/merge.md 13). The replay itself, and the
/// storage both read, are in StoreState.swift.
extension StoreState {
    private func value(_ stored: Stored) -> Value {
        // Loops, not `map`: a closure calling `key(of:)` captured a copy of the whole state (a
        // retain and a release of each of its lists) for every relationship a baseline writes,
        // as `map(key(of:))` did.
        switch stored {
        case .attribute(let attribute): return .attribute(attribute)
        case .dataFile(let name): return .dataFile(name)
        case .toOne(let target?): return .toOne(key(of: target))
        case .toOne(nil): return .toOne(nil)
        case .toMany(let members):
            var keys = Set<ObjectKey>(minimumCapacity: members.count)
            for (member, _) in members { keys.insert(key(of: member)) }
            return .toMany(keys)
        case .ordered(let order):
            var keys: [ObjectKey] = []
            keys.reserveCapacity(order.count)
            for member in order { keys.append(key(of: member)) }
            return .ordered(keys)
        }
    }

    /// Whether (entity, id) is live.
    public func isLive(entity: String, id: String) -> Bool { liveObject(entity, id) != nil }

    private func liveObject(_ entity: String, _ id: String) -> Int32? {
        guard let number = entities.existing(entity) else { return nil }
        return object(number, id)
    }

    private func sortedProperties(of object: Int32) -> [(name: String, value: Value)] {
        slots[Int(object)].properties.map { (propertyNames[$0.key], value($0.value)) }.sorted { utf8Precedes($0.name, $1.name) }
    }

    /// The set properties of a live object as state-document values, by name in UTF-8 order.
    public func properties(entity: String, id: String) throws(FormatError) -> [(name: String, value: JSONValue)]? {
        guard let object = liveObject(entity, id) else { return nil }
        var result: [(name: String, value: JSONValue)] = []
        for property in sortedProperties(of: object) { result.append((property.name, try Self.json(property.value))) }
        return result
    }

    /// Every live object: entity name, global identifier and its set properties by name, all
    /// in UTF-8 byte order.
    package var objectsInOrder: [(entity: String, id: String, properties: [(name: String, value: Value)])] {
        liveObjectsInOrder.map { object in (entities[slots[Int(object)].entity], identifier(of: object), sortedProperties(of: object)) }
    }

    /// The live objects in the state document's order (entity, then global identifier, each in
    /// UTF-8 byte order), as numbers for ``orderedObject(_:)``: 4 bytes an object, so that two
    /// states can be walked side by side without building either document (Spec/diff.md 5).
    package func objectOrder() -> [Int32] { liveObjectsInOrder }

    /// One object of ``objectOrder()``: its entity, global identifier and set properties as the
    /// state document gives them, by name in UTF-8 byte order.
    package func orderedObject(_ object: Int32) throws(FormatError) -> (entity: String, id: String, properties: [(name: String, value: JSONValue)]) {
        var properties: [(name: String, value: JSONValue)] = []
        for property in sortedProperties(of: object) { properties.append((property.name, try Self.json(property.value))) }
        return (entities[slots[Int(object)].entity], identifier(of: object), properties)
    }

    /// The live objects by entity name, then global identifier (UTF-8 bytes). Sorted by keys laid
    /// out side by side (the entity's rank by name, then the identifier's first 8 bytes as a
    /// big-endian number) so that comparing two objects reads neither slot unless both keys tie:
    /// the sort of a large state no longer waits on a cache miss per comparison.
    private var liveObjectsInOrder: [Int32] {
        let ranking = (0..<Int32(entities.count)).sorted { utf8Precedes(entities[$0], entities[$1]) }
        var rank = [Int32](repeating: 0, count: entities.count)
        for (position, entity) in ranking.enumerated() { rank[Int(entity)] = Int32(position) }
        var keys: [(rank: Int32, object: Int32, prefix: UInt64)] = []
        keys.reserveCapacity(liveCount)
        let texts = textIdentifiers
        slots.withUnsafeBufferPointer { slots in
            for index in slots.indices where slots[index].isLive {
                keys.append((rank[Int(slots[index].entity)], Int32(index), slots[index].idPrefix))
            }
            let identifiers = Identifiers(slots: slots, texts: texts)
            keys.sort { a, b in a.rank != b.rank ? a.rank < b.rank : identifiers.precedes((a.prefix, a.object), (b.prefix, b.object)) }
        }
        return keys.map(\.object)
    }

    /// The changes of the state as one baseline event (Spec/merge.md 13.4): an insert per live
    /// object, in entity then identifier order, with one property change per set property,
    /// made as they are asked for. Applied to an empty state as a baseline, they rebuild this
    /// state. (The runs hold a copy of the state: changing the state while they are kept
    /// copies its storage.)
    package func baselineChanges() -> ChangeRuns {
        let objects = liveObjectsInOrder
        let rank = propertyRanks
        // Objects of one entity are side by side in that order: each entity is one run.
        var runs: [(name: String, count: Int)] = []
        var entity: Int32 = -1
        for object in objects {
            if slots[Int(object)].entity != entity {
                entity = slots[Int(object)].entity
                runs.append((entities[entity], 0))
            }
            runs[runs.count - 1].count += 1
        }
        let state = self
        var changes = ChangeRuns(entities: runs) { range in
            var positions: [Int64] = []
            return objects[range].map { state.insert(of: $0, rank: rank, positions: &positions) }
        }
        changes.numbered = { state.baselineEvent(objects, rank: rank) }
        return changes
    }

    /// The changes of ``baselineChanges()`` as one numbered event, made from the slots: one
    /// string per live object, entity, property name and data file, and numbers for the rest
    /// (made as `ObjectChange`s, a large baseline's changes were a `String` per reference, which
    /// the v2 binary encoder then hashed into its table; measured: Benchmarks/README.md).
    /// `objects` are the live objects in baseline order, `rank` the property ranks.
    private func baselineEvent(_ objects: [Int32], rank: [Int32]) -> NumberedEvent {
        var event = NumberedEvent()
        event.reserve(changes: objects.count, properties: 0)
        var entityStrings = [Int32](repeating: -1, count: entities.count)
        var propertyStrings = [Int32](repeating: -1, count: propertyNames.count)
        var objectStrings = [Int32](repeating: -1, count: slots.count)
        var fileStrings: [ExactString: Int32] = [:]
        let texts = textIdentifiers
        slots.withUnsafeBufferPointer { slots in
            let identifiers = Identifiers(slots: slots, texts: texts)
            func string(of object: Int32) -> Int32 {
                if objectStrings[Int(object)] < 0 {
                    objectStrings[Int(object)] =
                        slots[Int(object)].isUUID ? event.append(uuid: slots[Int(object)].uuid) : identifiers.with(object) { event.append($0) }
                }
                return objectStrings[Int(object)]
            }
            // Sorted by identifier and each identifier once, as a relationship list is: two
            // members of two entities may have one identifier.
            func listed(_ members: [Int32]) -> [Int32] {
                func precedes(_ a: Int32, _ b: Int32) -> Bool { identifiers.precedes((slots[Int(a)].idPrefix, a), (slots[Int(b)].idPrefix, b)) }
                var sorted = members.sorted(by: precedes)
                var write = 0
                for read in sorted.indices where write == 0 || precedes(sorted[write - 1], sorted[read]) {
                    sorted[write] = sorted[read]
                    write += 1
                }
                return sorted[..<write].map(string(of:))
            }
            var positions: [Int64] = []
            for object in objects {
                slots[Int(object)].properties.positions(byRank: rank, into: &positions)
                var files: [Int32] = []
                for position in positions {
                    let property = slots[Int(object)].properties.key(at: Int(position))
                    if propertyStrings[Int(property)] < 0 {
                        propertyStrings[Int(property)] = ExactString.withUTF8(of: propertyNames[property]) { event.append($0) }
                    }
                    let name = propertyStrings[Int(property)]
                    switch slots[Int(object)].properties.value(at: Int(position)) {
                    case .attribute(let value):
                        event.addAttribute(name: name, value)
                    case .dataFile(let file):
                        let number = fileStrings[ExactString(file)] ?? ExactString.withUTF8(of: file) { event.append($0) }
                        fileStrings[ExactString(file)] = number
                        files.append(number)
                        event.addDataFile(name: name, number)
                    case .toOne(let target):
                        event.addToOne(name: name, target.map(string(of:)))
                    case .toMany(let members):
                        var list: [Int32] = []
                        list.reserveCapacity(members.count)
                        for (member, _) in members { list.append(member) }
                        event.addRelationship(name: name, ordered: false, added: listed(list), removed: [], moved: [])
                    case .ordered(let order):
                        var moves: [NumberedEvent.Move] = []
                        moves.reserveCapacity(order.count)
                        for (index, member) in order.enumerated() {
                            moves.append(NumberedEvent.Move(position: Int32(truncatingIfNeeded: index), identifier: string(of: member)))
                        }
                        event.addRelationship(name: name, ordered: true, added: listed(order), removed: [], moved: moves)
                    }
                }
                let entity = slots[Int(object)].entity
                if entityStrings[Int(entity)] < 0 { entityStrings[Int(entity)] = ExactString.withUTF8(of: entities[entity]) { event.append($0) } }
                event.addChange(entity: entityStrings[Int(entity)], identifier: string(of: object), type: .insert, dataFiles: files)
            }
        }
        return event
    }

    /// Each property number's place among the property names in UTF-8 order: an object's few
    /// properties are put in name order by these numbers, without comparing the names.
    private var propertyRanks: [Int32] {
        let order = (0..<Int32(propertyNames.count)).sorted { utf8Precedes(propertyNames[$0], propertyNames[$1]) }
        return order.indices.reduce(into: [Int32](repeating: 0, count: order.count)) { $0[Int(order[$1])] = Int32($1) }
    }

    /// The insert of a live object in its baseline: one property change per set property, by
    /// name in UTF-8 order (Spec/merge.md 13.4). `positions` is room for the properties' order.
    private func insert(of object: Int32, rank: [Int32], positions: inout [Int64]) -> ObjectChange {
        var dataFiles: [String] = []
        slots[Int(object)].properties.positions(byRank: rank, into: &positions)
        let properties = positions.map { position -> PropertyChange in
            let name = propertyNames[slots[Int(object)].properties.key(at: Int(position))]
            switch value(slots[Int(object)].properties.value(at: Int(position))) {
            case .attribute(let attribute):
                return PropertyChange(name: name, value: .attribute(attribute))
            case .dataFile(let file):
                dataFiles.append(file)
                return PropertyChange(name: name, value: .attributeInDataFile(filename: file))
            case .toOne(let target):
                return PropertyChange(name: name, value: .toOne(relatedIdentifier: target?.id.value))
            case .toMany(let members):
                return PropertyChange(name: name, value: .toMany(added: sortedUnique(members.map(\.id.value)), removed: []))
            case .ordered(let order):
                let ids = order.map(\.id.value)
                return PropertyChange(
                    name: name,
                    value: .orderedToMany(
                        added: sortedUnique(ids), removed: [],
                        movedByIndex: Dictionary(uniqueKeysWithValues: ids.enumerated().map { ($0.offset, $0.element) })))
            }
        }
        return ObjectChange(
            entity: entities[slots[Int(object)].entity], globalIdentifier: identifier(of: object), type: .insert, propertyChanges: properties,
            dataFiles: dataFiles)
    }

    /// The number of live objects.
    public var liveObjectCount: Int { liveCount }

    /// The model the state was merged with, if any.
    public var dataModel: DataModel? { model }

    /// The state document of Spec/merge.md: `{"entities": {entity: {id: {property: value}}}}`.
    public func document() throws(FormatError) -> JSONValue {
        var options = JSONReadingOptions.strict
        options.maximumBytes = .max
        options.maximumStringBytes = .max
        return try JSONParser.parse(try documentBytes(), options: options)
    }

    /// The canonical compact bytes of ``document()``.
    public func documentBytes() throws(FormatError) -> [UInt8] {
        var bytes: [UInt8] = []
        try writeDocument { bytes += $0 }
        return bytes
    }

    /// The canonical compact bytes of ``document()``, handed to `emit` in pieces of 2,048 objects:
    /// a large state is never held twice as a document. Written directly from the stored values
    /// (keys in UTF-8 byte order, as ``JSONWriter`` orders them), which was six times faster than
    /// building a document per object, and eight pieces at a time on every core, emitted in
    /// order (measured: Benchmarks/README.md).
    public func writeDocument(_ emit: ([UInt8]) -> Void) throws(FormatError) {
        _ = try writeDocument(resumingAt: 0) { bytes in
            emit(bytes)
            return true
        }
    }

    /// ``writeDocument(_:)`` from the object at `start` in document order (0: from the
    /// document's opening), stopping once `emit` has returned false, at the end of the batch of
    /// 16,384 objects it was given part of. Returns the object to resume at, or nil when the
    /// document is complete: a caller that holds the first part back while something else runs
    /// (the merge command, during the integrity checks) bounds what it holds.
    package func writeDocument(resumingAt start: Int, _ emit: ([UInt8]) -> Bool) throws(FormatError) -> Int? {
        // Property numbers ranked by name once, so that each object sorts its few numbers.
        let rank = propertyRanks
        let names = WrittenNames(entities: entities, properties: propertyNames)
        defer { names.deallocate() }
        let objects = liveObjectsInOrder
        var going = true
        if start == 0 { _ = emit(Array(#"{"entities":{"#.utf8)) }
        let piece = 2_048, batch = 8 * piece
        for batchStart in stride(from: start, to: objects.count, by: batch) {
            if !going { return batchStart }
            let batchEnd = min(objects.count, batchStart + batch)
            let written = try Pieces.map(count: batchEnd - batchStart, size: piece) { (range) throws(FormatError) -> [UInt8] in
                let lower = batchStart + range.lowerBound
                let previous = lower > 0 ? slots[Int(objects[lower - 1])].entity : nil
                return try write(objects[lower..<batchStart + range.upperBound], after: previous, rank: rank, names: names)
            }
            for bytes in written where !emit(bytes) { going = false }
        }
        _ = emit(Array((objects.isEmpty ? "}}" : "}}}").utf8))
        return nil
    }

    /// Entity and property names as the document writes them (quoted and escaped), end to end
    /// in one buffer that the threads writing pieces copy from, instead of writing the shared
    /// name strings (which retained and released them for every property written). Unchecked
    /// `Sendable`: the buffer is only read once made, and freed after the last piece is written.
    private struct WrittenNames: @unchecked Sendable {
        private let bytes: UnsafeBufferPointer<UInt8>
        /// Where each name starts (entity `e` at `starts[e]`, property `p` at
        /// `starts[entityCount + p]`), and last where the last name ends.
        private let starts: [Int]
        private let entityCount: Int

        init(entities: Numbering, properties: Numbering) {
            var written: [UInt8] = []
            var starts: [Int] = []
            for name in (0..<Int32(entities.count)).map({ entities[$0] }) + (0..<Int32(properties.count)).map({ properties[$0] }) {
                starts.append(written.count)
                JSONWriter.writeString(name, into: &written)
            }
            starts.append(written.count)
            // At least one byte: a state without names still allocates (and frees) a buffer.
            let buffer = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: max(1, written.count))
            _ = buffer.initialize(fromContentsOf: written)
            bytes = UnsafeBufferPointer(buffer)
            self.starts = starts
            entityCount = entities.count
        }

        func deallocate() { bytes.deallocate() }

        func append(entity: Int32, to buffer: inout [UInt8]) { append(Int(entity), to: &buffer) }

        func append(property: Int32, to buffer: inout [UInt8]) { append(entityCount + Int(property), to: &buffer) }

        private func append(_ name: Int, to buffer: inout [UInt8]) {
            buffer.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[starts[name]..<starts[name + 1]]))
        }
    }

    /// The members of `objects` in the state document, after an object of entity `previous`.
    private func write(_ objects: ArraySlice<Int32>, after previous: Int32?, rank: [Int32], names: WrittenNames) throws(FormatError) -> [UInt8] {
        var buffer: [UInt8] = []
        var entity = previous
        var positions: [Int64] = []
        // The slots and their property lists are read in place, through buffer pointers, and
        // the properties put in name order by position, with no closure that captures the
        // state: reading a slot's identifier or a stored value out of an array copies it (a
        // retain and a release, on memory no other step touches), and copying a slot, or the
        // state into a closure, retained and released everything they hold (measured:
        // Benchmarks/README.md).
        let texts = textIdentifiers
        try slots.withUnsafeBufferPointer { (slots) throws(FormatError) in
            let identifiers = Identifiers(slots: slots, texts: texts)
            for index in objects.indices {
                // A slot asked for 16 objects ahead, its property list 12 ahead, the values the
                // list points at 8 ahead, the slots its relationships name 4 ahead (measured:
                // Benchmarks/README.md).
                func ahead(_ distance: Int) -> Int32? { index + distance < objects.endIndex ? objects[index + distance] : nil }
                prefetch(slot: ahead(16), contentsOf: ahead(12))
                prefetchValues(of: ahead(8))
                prefetchRelated(of: ahead(4))
                let object = Int(objects[index])
                if entity != slots[object].entity {
                    if entity != nil { buffer.append(contentsOf: "},".utf8) }
                    names.append(entity: slots[object].entity, to: &buffer)
                    buffer.append(contentsOf: ":{".utf8)
                    entity = slots[object].entity
                } else {
                    buffer.append(UInt8(ascii: ","))
                }
                identifiers.write(Int32(object), into: &buffer)
                buffer.append(contentsOf: ":{".utf8)
                slots[object].properties.positions(byRank: rank, into: &positions)
                try slots[object].properties.withMembers { (members) throws(FormatError) in
                    for (index, position) in positions.enumerated() {
                        if index > 0 { buffer.append(UInt8(ascii: ",")) }
                        names.append(property: members[Int(position)].key, to: &buffer)
                        buffer.append(UInt8(ascii: ":"))
                        try Self.write(members[Int(position)].value, into: &buffer, identifiers: identifiers)
                    }
                }
                buffer.append(UInt8(ascii: "}"))
            }
        }
        return buffer
    }

    /// One value as the state document gives it (Spec/merge.md 9).
    private static func write(_ value: Stored, into buffer: inout [UInt8], identifiers: Identifiers) throws(FormatError) {
        switch value {
        case .attribute(let attribute): try V2JSONEncoder.writeAttribute(attribute, into: &buffer)
        case .dataFile(let name):
            buffer.append(contentsOf: #"["dataFile","#.utf8)
            JSONWriter.writeString(name, into: &buffer)
            buffer.append(UInt8(ascii: "]"))
        case .toOne(let target?): identifiers.write(target, into: &buffer)
        case .toOne(nil): buffer.append(contentsOf: "null".utf8)
        case .toMany(let members): writeIdentifiers(of: inIdentifierOrder(members, identifiers: identifiers), into: &buffer, identifiers: identifiers)
        case .ordered(let order): writeIdentifiers(of: order, into: &buffer, identifiers: identifiers)
        }
    }

    private static func writeIdentifiers(of objects: [Int32], into buffer: inout [UInt8], identifiers: Identifiers) {
        buffer.append(UInt8(ascii: "["))
        for index in objects.indices {
            if index > 0 { buffer.append(UInt8(ascii: ",")) }
            identifiers.write(objects[index], into: &buffer)
        }
        buffer.append(UInt8(ascii: "]"))
    }

    /// A to-many's members in the order the document lists them: by global identifier in UTF-8
    /// byte order (Spec/merge.md 9.2). Sorted by number keys, as ``liveObjectsInOrder``: sorting
    /// the identifier strings themselves retained and released each of them.
    private static func inIdentifierOrder(_ objects: SmallMap<Int32, Void>, identifiers: Identifiers) -> [Int32] {
        var keys: [(prefix: UInt64, object: Int32)] = []
        keys.reserveCapacity(objects.count)
        for (object, _) in objects { keys.append((identifiers.slots[Int(object)].idPrefix, object)) }
        keys.sort { a, b in identifiers.precedes(a, b) }
        return keys.map(\.object)
    }

    private static func json(_ value: Value) throws(FormatError) -> JSONValue {
        switch value {
        case .attribute(let attribute): return try V2JSONEncoder.attributeJSON(attribute)
        case .dataFile(let name): return .array([.string("dataFile"), .string(name)])
        case .toOne(let target): return target.map { .string($0.id.value) } ?? .null
        case .toMany(let members): return .array(members.map(\.id.value).sorted(by: utf8Precedes).map(JSONValue.string))
        case .ordered(let order): return .array(order.map { .string($0.id.value) })
        }
    }
}
