import Foundation
import JSONDocument
import EnsembleModel
import EventCodecs
import CloudFolder
import ParallelWork

/// What the draws decided for one object change, without its strings: ``GeneratedNames``
/// spells it out. Fields that the change's entity or type does not use keep their defaults.
struct DrawnChange: Sendable {
    var object: Int32
    var type: ChangeType
    /// Word numbers (0...7), three bits each, the first word in the lowest bits: a note's body,
    /// a folder's or a tag's name.
    var words: UInt32 = 0
    var flagged = false
    var modified: Int32 = 0, rank: Int32 = 0, score: Int32 = 0, title: Int32 = 0
    /// A note's folder, or the note a folder's update adds; -1 for none.
    var related: Int32 = -1
    var tagAdded: Int32 = -1, tagRemoved: Int32 = -1
    /// The note's blob in the batch; -1 for none.
    var blob: Int32 = -1
    /// An update's properties in the order they were drawn, four bits each (the property's place
    /// in ``GeneratedNames/properties(of:entity:blobs:)``), and how many.
    var picked: UInt16 = 0
    var pickedCount: UInt8 = 0

    init(object: Int32, type: ChangeType) {
        self.object = object
        self.type = type
    }

    /// How many properties the entity's changes list: an update picks among them.
    func propertyCount(_ entity: HistoryGenerator.Entity) -> Int {
        switch entity {
        case .Folder: 2
        case .Tag: 1
        case .Note: blob >= 0 ? 9 : 8
        }
    }

    func pickedProperty(_ index: Int) -> Int { Int(picked >> UInt16(4 * index)) & 0xF }

    /// Adds the property to an update's, unless it is picked already.
    mutating func pick(_ property: UInt8) {
        for index in 0..<Int(pickedCount) where pickedProperty(index) == Int(property) { return }
        picked |= UInt16(property) << UInt16(4 * Int(pickedCount))
        pickedCount += 1
    }

    /// Whether the change holds the property (every one for an insert, the picked for an update).
    func has(_ property: Int) -> Bool {
        switch type {
        case .insert: return true
        case .delete: return false
        case .update:
            for index in 0..<Int(pickedCount) where pickedProperty(index) == property { return true }
            return false
        }
    }
}

/// One drawn event; its changes and the revisions it knew of other stores are ranges in the
/// batch's lists.
struct DrawnEvent: Sendable {
    var store: Int32
    var revision: Int64
    var globalCount: Int64
    /// Its place in the history, which sets its timestamp.
    var index: Int64
    var uniqueIdentifier: String
    var changes: Range<Int>
    var known: Range<Int>
}

/// A note's binary attribute: in the event, or in a data file (written once per name).
struct DrawnBlob: Sendable {
    var bytes: [UInt8]
    var fileName: String?
    var isNewFile: Bool
}

/// Events drawn one after the other, to be written together.
struct DrawnBatch: Sendable {
    var events: [DrawnEvent] = []
    var changes: [DrawnChange] = []
    var knownStores: [Int32] = []
    var knownRevisions: [Int64] = []
    var blobs: [DrawnBlob] = []
}

/// The names of a generated history's stores and objects, and how a drawn event reads as an
/// ``Event`` or as v2 JSON.
struct GeneratedNames: Sendable {
    let stores: [String]
    let objects: [String]
    let entities: [HistoryGenerator.Entity]
    /// Every object's identifier as 36 bytes, end to end: the JSON writer copies them from here
    /// rather than from the shared strings (whose reference counts the threads would contend for).
    let objectBytes: [UInt8]
    let storeBytes: [UInt8]
    /// Store numbers in the order of their identifiers' UTF-8 bytes (the order of a revision set).
    let storeOrder: [Int]

    static let words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"]
    private static let wordBytes = words.map { Array($0.utf8) }

    init(stores: [String], objects: [String], entities: [HistoryGenerator.Entity]) {
        self.stores = stores
        self.objects = objects
        self.entities = entities
        objectBytes = objects.flatMap { Array($0.utf8) }
        storeBytes = stores.flatMap { Array($0.utf8) }
        storeOrder = stores.indices.sorted { utf8Precedes(stores[$0], stores[$1]) }
    }

    func text(_ words: UInt32, count: Int) -> String {
        (0..<count).map { Self.words[Int(words >> UInt32(3 * $0)) & 7] }.joined(separator: " ")
    }

    // MARK: - As an Event

    /// The event, as the generator has always built it (for the v1 JSON and v2 binary encoders).
    func event(_ drawn: DrawnEvent, in batch: DrawnBatch, modelHash: String) -> Event {
        var others: [String: Int64] = [:]
        for index in drawn.known { others[stores[Int(batch.knownStores[index])]] = batch.knownRevisions[index] }
        var event = Event(
            uniqueIdentifier: drawn.uniqueIdentifier, type: .save, storeIdentifier: stores[Int(drawn.store)], revision: drawn.revision,
            globalCount: drawn.globalCount, timestamp: 800_000_000 + Double(drawn.index), otherStoreRevisions: others,
            objectChanges: batch.changes[drawn.changes].map { objectChange($0, blobs: batch.blobs) })
        event.modelVersion = modelHash
        return event
    }

    func objectChange(_ change: DrawnChange, blobs: [DrawnBlob]) -> ObjectChange {
        let entity = entities[Int(change.object)]
        let id = objects[Int(change.object)]
        switch change.type {
        case .delete:
            return ObjectChange(entity: entity.rawValue, globalIdentifier: id, type: .delete)
        case .insert:
            let properties = self.properties(of: change, entity: entity, blobs: blobs)
            return ObjectChange(entity: entity.rawValue, globalIdentifier: id, type: .insert, propertyChanges: properties, dataFiles: dataFiles(properties))
        case .update:
            let all = properties(of: change, entity: entity, blobs: blobs)
            let picked = (0..<Int(change.pickedCount)).map { all[change.pickedProperty($0)] }
            return ObjectChange(entity: entity.rawValue, globalIdentifier: id, type: .update, propertyChanges: picked, dataFiles: dataFiles(picked))
        }
    }

    private func dataFiles(_ properties: [PropertyChange]) -> [String] {
        properties.compactMap { property in
            if case .attributeInDataFile(let name) = property.value { return name }
            return nil
        }
    }

    private func identifier(_ object: Int32) -> String? { object >= 0 ? objects[Int(object)] : nil }

    /// Every property the draws gave the change, in the order they were drawn.
    func properties(of change: DrawnChange, entity: HistoryGenerator.Entity, blobs: [DrawnBlob]) -> [PropertyChange] {
        switch entity {
        case .Folder:
            let added = identifier(change.related).map { [$0] } ?? []
            let moved = identifier(change.related).map { [0: $0] } ?? [:]
            return [
                PropertyChange(name: "name", value: .attribute(.string("Folder \(text(change.words, count: 2))"))),
                PropertyChange(name: "notes", value: .orderedToMany(added: added, removed: [], movedByIndex: moved)),
            ]
        case .Tag:
            return [PropertyChange(name: "name", value: .attribute(.string(text(change.words, count: 1))))]
        case .Note:
            var properties = [
                PropertyChange(name: "body", value: .attribute(.string(text(change.words, count: 6)))),
                PropertyChange(name: "flagged", value: .attribute(.bool(change.flagged))),
                PropertyChange(name: "modified", value: .attribute(.date(millisecondsSince1970: 1.7e12 + Double(change.modified)))),
                PropertyChange(name: "rank", value: .attribute(.integer(Int64(change.rank)))),
                PropertyChange(name: "score", value: .attribute(.double(Double(change.score) / 100))),
                PropertyChange(name: "title", value: .attribute(.string("Note \(change.title)"))),
                PropertyChange(name: "folder", value: .toOne(relatedIdentifier: identifier(change.related))),
                PropertyChange(
                    name: "tags",
                    value: .toMany(added: identifier(change.tagAdded).map { [$0] } ?? [], removed: identifier(change.tagRemoved).map { [$0] } ?? [])),
            ]
            if change.blob >= 0 {
                let blob = blobs[Int(change.blob)]
                if let name = blob.fileName {
                    properties.append(PropertyChange(name: "attachment", value: .attributeInDataFile(filename: name)))
                } else {
                    properties.append(PropertyChange(name: "attachment", value: .attribute(.binary(Data(blob.bytes)))))
                }
            }
            return properties
        }
    }

    // MARK: - As v2 JSON

    /// The note's properties (their places in ``properties(of:entity:blobs:)``) in the order of
    /// their names' bytes, the order canonical v2 JSON lists them in (Spec/v2-json.md).
    private static let noteOrder = [8, 0, 1, 6, 2, 3, 4, 7, 5]

    /// Writes the bytes ``V2JSONEncoder/encode(_:)`` writes for ``event(_:in:modelHash:)``,
    /// straight from the drawn values: canonical keys in byte order, changes grouped by entity in
    /// name order. Identifiers, words and numbers need no escaping; attribute values that could
    /// are written by the codec's own ``V2JSONEncoder/writeAttribute(_:into:)``.
    func writeV2JSON(_ drawn: DrawnEvent, in batch: DrawnBatch, modelHash: [UInt8], into out: inout [UInt8]) throws(FormatError) {
        out.append(UInt8(ascii: "{"))
        if !drawn.changes.isEmpty {
            out.append(contentsOf: #""changesByEntity":{"#.utf8)
            var firstEntity = true
            for entity in [HistoryGenerator.Entity.Folder, .Note, .Tag] {
                var first = true
                for index in drawn.changes where entities[Int(batch.changes[index].object)] == entity {
                    if first {
                        if !firstEntity { out.append(UInt8(ascii: ",")) }
                        firstEntity = false
                        out.append(UInt8(ascii: "\""))
                        out.append(contentsOf: entity.rawValue.utf8)
                        out.append(contentsOf: #"":["#.utf8)
                    } else {
                        out.append(UInt8(ascii: ","))
                    }
                    first = false
                    try writeChange(batch.changes[index], entity: entity, blobs: batch.blobs, into: &out)
                }
                if !first { out.append(UInt8(ascii: "]")) }
            }
            out.append(contentsOf: "},".utf8)
        }
        out.append(contentsOf: #""globalCount":"#.utf8)
        Self.appendInteger(drawn.globalCount, to: &out)
        out.append(contentsOf: #","modelVersion":"#.utf8)
        out.append(contentsOf: modelHash)
        out.append(contentsOf: #","revisionsByStoreIdentifier":{"#.utf8)
        var revisions = [Int64](repeating: -1, count: stores.count)
        for index in drawn.known { revisions[Int(batch.knownStores[index])] = batch.knownRevisions[index] }
        revisions[Int(drawn.store)] = drawn.revision
        var firstStore = true
        for store in storeOrder where revisions[store] >= 0 {
            let revision = revisions[store]
            if !firstStore { out.append(UInt8(ascii: ",")) }
            firstStore = false
            appendQuoted(storeBytes, store, to: &out)
            out.append(UInt8(ascii: ":"))
            Self.appendInteger(revision, to: &out)
        }
        out.append(contentsOf: #"},"storeIdentifier":"#.utf8)
        appendQuoted(storeBytes, Int(drawn.store), to: &out)
        out.append(contentsOf: #","timestamp":"#.utf8)
        JSONWriter.writeString(CanonicalNumberFormat.double(800_000_000 + Double(drawn.index)), into: &out)
        out.append(contentsOf: #","type":200,"uniqueIdentifier":"#.utf8)
        JSONWriter.writeString(drawn.uniqueIdentifier, into: &out)
        out.append(UInt8(ascii: "}"))
    }

    private func writeChange(_ change: DrawnChange, entity: HistoryGenerator.Entity, blobs: [DrawnBlob], into out: inout [UInt8]) throws(FormatError) {
        out.append(UInt8(ascii: "{"))
        // A note's attachment is its only property that can be in a data file.
        if entity == .Note, change.blob >= 0, change.has(8), let name = blobs[Int(change.blob)].fileName {
            out.append(contentsOf: #""dataFiles":["#.utf8)
            JSONWriter.writeString(name, into: &out)
            out.append(contentsOf: "],".utf8)
        }
        out.append(contentsOf: #""globalIdentifier":"#.utf8)
        appendQuoted(objectBytes, Int(change.object), to: &out)
        if change.type != .delete {
            out.append(contentsOf: #","properties":["#.utf8)
            let order: [Int] = entity == .Note ? Self.noteOrder : (entity == .Folder ? [0, 1] : [0])
            var first = true
            for property in order where change.has(property) && (property != 8 || change.blob >= 0) {
                if !first { out.append(UInt8(ascii: ",")) }
                first = false
                try writeProperty(property, of: change, entity: entity, blobs: blobs, into: &out)
            }
            out.append(UInt8(ascii: "]"))
        }
        out.append(contentsOf: #","type":"#.utf8)
        Self.appendInteger(change.type.rawValue, to: &out)
        out.append(UInt8(ascii: "}"))
    }

    private func writeProperty(
        _ property: Int, of change: DrawnChange, entity: HistoryGenerator.Entity, blobs: [DrawnBlob], into out: inout [UInt8]
    ) throws(FormatError) {
        func attribute(_ name: String) {
            out.append(contentsOf: #"{"propertyName":""#.utf8)
            out.append(contentsOf: name.utf8)
            out.append(contentsOf: #"","type":0,"value":"#.utf8)
        }
        func words(_ prefix: String, count: Int) {
            out.append(UInt8(ascii: "\""))
            out.append(contentsOf: prefix.utf8)
            for index in 0..<count {
                if index > 0 { out.append(UInt8(ascii: " ")) }
                out.append(contentsOf: Self.wordBytes[Int(change.words >> UInt32(3 * index)) & 7])
            }
            out.append(UInt8(ascii: "\""))
        }
        func identifiers(_ object: Int32) {
            out.append(UInt8(ascii: "["))
            if object >= 0 { appendQuoted(objectBytes, Int(object), to: &out) }
            out.append(UInt8(ascii: "]"))
        }
        switch (entity, property) {
        case (.Folder, 0):
            attribute("name")
            words("Folder ", count: 2)
        case (.Folder, _):
            out.append(contentsOf: #"{"addedIdentifiers":"#.utf8)
            identifiers(change.related)
            out.append(contentsOf: #","movedIdentifiersByIndex":{"#.utf8)
            if change.related >= 0 {
                out.append(contentsOf: #""0":"#.utf8)
                appendQuoted(objectBytes, Int(change.related), to: &out)
            }
            out.append(contentsOf: #"},"propertyName":"notes","removedIdentifiers":[],"type":3"#.utf8)
        case (.Tag, _):
            attribute("name")
            words("", count: 1)
        case (.Note, 0):
            attribute("body")
            words("", count: 6)
        case (.Note, 1):
            attribute("flagged")
            out.append(contentsOf: (change.flagged ? "true" : "false").utf8)
        case (.Note, 2):
            attribute("modified")
            try V2JSONEncoder.writeAttribute(.date(millisecondsSince1970: 1.7e12 + Double(change.modified)), into: &out)
        case (.Note, 3):
            attribute("rank")
            Self.appendInteger(Int64(change.rank), to: &out)
        case (.Note, 4):
            attribute("score")
            try V2JSONEncoder.writeAttribute(.double(Double(change.score) / 100), into: &out)
        case (.Note, 5):
            attribute("title")
            out.append(contentsOf: #""Note "#.utf8)
            Self.appendInteger(Int64(change.title), to: &out)
            out.append(UInt8(ascii: "\""))
        case (.Note, 6):
            out.append(contentsOf: #"{"propertyName":"folder","relatedIdentifier":"#.utf8)
            if change.related >= 0 {
                appendQuoted(objectBytes, Int(change.related), to: &out)
            } else {
                out.append(contentsOf: "null".utf8)
            }
            out.append(contentsOf: #","type":1"#.utf8)
        case (.Note, 7):
            out.append(contentsOf: #"{"addedIdentifiers":"#.utf8)
            identifiers(change.tagAdded)
            out.append(contentsOf: #","propertyName":"tags","removedIdentifiers":"#.utf8)
            identifiers(change.tagRemoved)
            out.append(contentsOf: #","type":2"#.utf8)
        case (.Note, _):
            let blob = blobs[Int(change.blob)]
            if let name = blob.fileName {
                out.append(contentsOf: #"{"filename":"#.utf8)
                JSONWriter.writeString(name, into: &out)
                out.append(contentsOf: #","propertyName":"attachment","type":0"#.utf8)
            } else {
                attribute("attachment")
                try V2JSONEncoder.writeAttribute(.binary(Data(blob.bytes)), into: &out)
            }
        }
        out.append(UInt8(ascii: "}"))
    }

    /// Writes identifier `index` of `table` (36 bytes each) in quotes.
    private func appendQuoted(_ table: [UInt8], _ index: Int, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        out.append(contentsOf: table[(36 * index)..<(36 * index + 36)])
        out.append(UInt8(ascii: "\""))
    }

    /// Decimal digits, as `String(value)` writes them.
    static func appendInteger(_ value: Int64, to out: inout [UInt8]) {
        if value < 0 {
            out.append(contentsOf: String(value).utf8)
            return
        }
        var remaining = UInt64(value)
        let start = out.count
        repeat {
            out.append(UInt8(ascii: "0") + UInt8(remaining % 10))
            remaining /= 10
        } while remaining > 0
        out[start...].reverse()
    }
}

/// Writes a batch's files: data files first, then the events, spelt out and written by several
/// threads (each its own events and buffer). Files are written into the staging folder, not
/// flushed one by one: ``HistoryGenerator/write(to:replacing:)`` flushes once before it publishes.
struct GeneratedFileWriter: Sendable {
    let names: GeneratedNames
    let format: GeneratedFormat
    let modelHash: String
    let modelHashJSON: [UInt8]
    /// The staging folder's `events/` and `data/` folders.
    let events: String
    let data: String
    private static let threads = ProcessInfo.processInfo.activeProcessorCount

    init(names: GeneratedNames, format: GeneratedFormat, modelHash: String, events: String, data: String) {
        self.names = names
        self.format = format
        self.modelHash = modelHash
        var quoted: [UInt8] = []
        JSONWriter.writeString(modelHash, into: &quoted)
        modelHashJSON = quoted
        self.events = events
        self.data = data
    }

    /// The bytes of one event file.
    func encode(_ drawn: DrawnEvent, in batch: DrawnBatch, into out: inout [UInt8]) throws(ConversionFailure) {
        do {
            switch format {
            case .v2JSON:
                try names.writeV2JSON(drawn, in: batch, modelHash: modelHashJSON, into: &out)
            case .v1JSON:
                out = try V1JSONEncoder().encode([names.event(drawn, in: batch, modelHash: modelHash)], asLog: false)
            case .v2Binary:
                out = try V2BinaryEncoder().encode(names.event(drawn, in: batch, modelHash: modelHash))
            }
        } catch {
            throw ConversionFailure(errors: [error])
        }
    }

    /// Writes the batch's new data files and its events; returns the bytes of the events.
    func write(_ batch: DrawnBatch) throws(ConversionFailure) -> Int64 {
        for blob in batch.blobs where blob.isNewFile {
            if let name = blob.fileName { try StagingArea.writeFile(blob.bytes, atPath: "\(data)/\(name)") }
        }
        let threads = max(1, min(Self.threads, batch.events.count))
        let results = ResultSlots<Result<Int64, ConversionFailure>>(count: threads)
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            var buffer: [UInt8] = []
            buffer.reserveCapacity(1 << 16)
            var written: Int64 = 0
            let result = Result { () throws(ConversionFailure) -> Int64 in
                for index in stride(from: thread, to: batch.events.count, by: threads) {
                    let drawn = batch.events[index]
                    buffer.removeAll(keepingCapacity: true)
                    try encode(drawn, in: batch, into: &buffer)
                    let name = "\(drawn.globalCount)_\(names.stores[Int(drawn.store)])_\(drawn.revision)\(CloudFileName.eventExtension)"
                    try StagingArea.writeFile(buffer, atPath: "\(events)/\(name)")
                    written += Int64(buffer.count)
                }
                return written
            }
            results.set(thread, result)
        }
        var total: Int64 = 0
        // Every slot is set once concurrentPerform returns.
        for case let result? in results.takeValues() { total += try result.get() }
        return total
    }
}
