import Foundation
import JSONDocument
import EnsembleModel
import DataModel
import EventCodecs
import CloudFolder
import ProgressReporting

/// What `logtool generate` makes: the size and shape of a synthetic history.
package struct GeneratorSettings: Sendable {
    package var stores = 3
    package var objects = 1_000
    /// Object changes in all events together.
    package var changes = 10_000
    package var seed: UInt64 = 1
    /// Size of the binary attribute written on some inserts and updates; 0 for none. Above
    /// 10,000 bytes the value goes to a data file, as the original frameworks do.
    package var blobBytes = 0
    /// Probability that a store saves without merging the others' latest events first.
    package var concurrency = 0.2
    /// Mean object changes per event.
    package var changesPerEvent = 50
    package var format = GeneratedFormat.v2JSON

    package init() {}
}

package enum GeneratedFormat: String, Sendable, CaseIterable {
    case v1JSON, v2JSON, v2Binary
}

/// What was generated.
package struct GeneratorSummary: Sendable {
    package var events = 0
    package var objectChanges = 0
    package var inserts = 0, updates = 0, deletes = 0
    package var dataFiles = 0
    package var bytes: Int64 = 0
    package var modelHash = ""
}

/// A deterministic generator of cloud folders with a model: the same settings always
/// give the same bytes. Events are written as they are made, so memory depends on the number of
/// objects, not on the length of the history.
///
/// The output folder holds `Model.xcdatamodeld` and `cloud/Generated/` (stores, events, data).
package struct HistoryGenerator {
    package static let ensemble = "Generated"

    let settings: GeneratorSettings
    private var random: SplitMix64
    private let storeIdentifiers: [String]
    private let objects: [(entity: Entity, id: String)]
    private var live: [Bool]
    /// Per store: its next revision, the greatest global count it knows, and what it knows of
    /// the other stores' revisions.
    private var nextRevision: [Int64]
    private var knownGlobalCount: [Int64]
    private var knownRevisions: [[Int64]]
    /// The folder's truth: every store's latest revision (-1: none) and the greatest global count.
    private var latestRevision: [Int64]
    private var latestGlobalCount: Int64 = -1

    enum Entity: String, CaseIterable {
        case Folder, Note, Tag
    }

    package init(settings: GeneratorSettings) {
        self.settings = settings
        random = SplitMix64(seed: settings.seed)
        var random = self.random
        storeIdentifiers = (0..<settings.stores).map { _ in random.uuidString() }
        // One folder and two tags for every ten objects; the rest are notes.
        objects = (0..<settings.objects).map { index in
            let entity: Entity = index % 10 == 0 ? .Folder : (index % 10 <= 2 ? .Tag : .Note)
            return (entity, random.uuidString())
        }
        self.random = random
        live = Array(repeating: false, count: settings.objects)
        nextRevision = Array(repeating: 0, count: settings.stores)
        knownGlobalCount = Array(repeating: -1, count: settings.stores)
        knownRevisions = Array(repeating: Array(repeating: -1, count: settings.stores), count: settings.stores)
        latestRevision = Array(repeating: -1, count: settings.stores)
    }

    /// The model every generated event follows.
    package static let modelXML = """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" minimumToolsVersion="Automatic" sourceLanguage="Swift">
            <entity name="Folder" representedClassName="Folder" syncable="YES">
                <attribute name="name" optional="YES" attributeType="String"/>
                <relationship name="notes" optional="YES" toMany="YES" ordered="YES" deletionRule="Nullify" destinationEntity="Note" inverseName="folder" inverseEntity="Note"/>
            </entity>
            <entity name="Note" representedClassName="Note" syncable="YES">
                <attribute name="attachment" optional="YES" attributeType="Binary" allowsExternalBinaryDataStorage="YES"/>
                <attribute name="body" optional="YES" attributeType="String"/>
                <attribute name="flagged" optional="YES" attributeType="Boolean" usesScalarValueType="YES"/>
                <attribute name="modified" optional="YES" attributeType="Date" usesScalarValueType="NO"/>
                <attribute name="rank" optional="YES" attributeType="Integer 64" usesScalarValueType="YES"/>
                <attribute name="score" optional="YES" attributeType="Double" usesScalarValueType="YES"/>
                <attribute name="title" optional="YES" attributeType="String"/>
                <relationship name="folder" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Folder" inverseName="notes" inverseEntity="Folder"/>
                <relationship name="tags" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Tag" inverseName="notes" inverseEntity="Tag"/>
            </entity>
            <entity name="Tag" representedClassName="Tag" syncable="YES">
                <attribute name="name" optional="YES" attributeType="String"/>
                <relationship name="notes" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Note" inverseName="tags" inverseEntity="Note"/>
            </entity>
        </model>

        """

    /// Writes the whole folder into `destination`, which must not exist; nothing is left there
    /// on failure.
    package mutating func write(to destination: String, replacing: Bool = false) throws(ConversionFailure) -> GeneratorSummary {
        let destinationURL = URL(fileURLWithPath: destination).standardizedFileURL
        try Converter.checkDestination(destination, replacing: replacing, existsCode: .convertDestinationExists)
        var staging = try StagingArea(for: destinationURL)
        staging.replacing = replacing
        defer { staging.discard() }
        let modelFolder = staging.url.appendingPathComponent("Model.xcdatamodeld")
        try StagingArea.write(Array(Self.modelXML.utf8), to: modelFolder.appendingPathComponent("Model.xcdatamodel/contents"))
        let model: DataModel
        do {
            model = try ModelBundle(path: modelFolder.path).load()
        } catch {
            throw ConversionFailure(errors: [error])
        }
        var summary = GeneratorSummary()
        // Once: the hash walks the whole model (it was 15% of a run when taken per event).
        let modelHash = model.modelHash
        summary.modelHash = modelHash
        let ensemble = staging.url.appendingPathComponent("cloud/\(Self.ensemble)")
        for store in storeIdentifiers {
            try StagingArea.write(try Self.registration(store), to: ensemble.appendingPathComponent("stores/\(store)"))
        }
        var eventIndex: Int64 = 0
        while summary.objectChanges < settings.changes {
            var (event, blobs) = makeEvent(index: eventIndex, budget: settings.changes - summary.objectChanges, summary: &summary)
            event.modelVersion = modelHash
            for (name, bytes) in blobs {
                let url = ensemble.appendingPathComponent("data/\(name)")
                if !Converter.exists(url) {
                    try StagingArea.write(bytes, to: url, durable: false)
                    summary.dataFiles += 1
                    summary.bytes += Int64(bytes.count)
                }
            }
            let bytes: [UInt8]
            do {
                switch settings.format {
                case .v1JSON: bytes = try V1JSONEncoder().encode([event], asLog: false)
                case .v2JSON: bytes = try V2JSONEncoder().encode(event)
                case .v2Binary: bytes = try V2BinaryEncoder().encode(event)
                }
            } catch {
                throw ConversionFailure(errors: [error])
            }
            let name = "\(event.globalCount)_\(event.storeIdentifier)_\(event.revision)\(CloudFileName.eventExtension)"
            try StagingArea.write(bytes, to: ensemble.appendingPathComponent("events/\(name)"), durable: false)
            summary.events += 1
            summary.bytes += Int64(bytes.count)
            eventIndex += 1
            if eventIndex % 256 == 0 { ProgressReport.report("object changes written", done: summary.objectChanges, total: settings.changes) }
        }
        // One flush for all files instead of one per file: the folder appears only after it.
        sync()
        try staging.commit()
        return summary
    }

    /// A `stores/` registration (Spec/cloud-layout.md section 5), written by Foundation's
    /// property list writer, which sorts the keys: the same store always gives the same bytes.
    static func registration(_ store: String) throws(ConversionFailure) -> [UInt8] {
        let plist: [String: Any] = ["storeIdentifier": store, "leechDate": Date(timeIntervalSince1970: 1_767_225_600)]
        do {
            return Array(try PropertyListSerialization.data(fromPropertyList: plist, format: .xml, options: 0))
        } catch {
            throw ConversionFailure(errors: [FormatError(.convertWriteFailed, "could not write the registration of \(store): \(error.localizedDescription)")])
        }
    }

    // MARK: - Events

    private mutating func makeEvent(index: Int64, budget: Int, summary: inout GeneratorSummary) -> (Event, [(String, [UInt8])]) {
        let store = random.below(settings.stores)
        if !random.chance(settings.concurrency) {
            // The store merges first: it knows every event in the folder.
            knownRevisions[store] = latestRevision
            knownGlobalCount[store] = latestGlobalCount
        }
        let count = min(budget, 1 + random.below(max(1, 2 * settings.changesPerEvent - 1)))
        var chosen = Set<Int>()
        var changes: [ObjectChange] = []
        var blobs: [(String, [UInt8])] = []
        for _ in 0..<count {
            let object = random.below(objects.count)
            guard chosen.insert(object).inserted else { continue }
            let change = makeChange(object, blobs: &blobs)
            switch change.type {
            case .insert: summary.inserts += 1
            case .update: summary.updates += 1
            case .delete: summary.deletes += 1
            }
            changes.append(change)
        }
        summary.objectChanges += changes.count
        let revision = nextRevision[store]
        nextRevision[store] += 1
        let globalCount = knownGlobalCount[store] + 1
        var others: [String: Int64] = [:]
        for (other, known) in knownRevisions[store].enumerated() where other != store && known >= 0 {
            others[storeIdentifiers[other]] = known
        }
        latestRevision[store] = revision
        knownRevisions[store][store] = revision
        knownGlobalCount[store] = globalCount
        latestGlobalCount = max(latestGlobalCount, globalCount)
        let event = Event(
            uniqueIdentifier: random.uuidString(), type: .save, storeIdentifier: storeIdentifiers[store], revision: revision,
            globalCount: globalCount, timestamp: 800_000_000 + Double(index), otherStoreRevisions: others, objectChanges: changes)
        return (event, blobs)
    }

    private mutating func makeChange(_ object: Int, blobs: inout [(String, [UInt8])]) -> ObjectChange {
        let (entity, id) = objects[object]
        if !live[object] {
            live[object] = true
            let properties = allProperties(of: entity, blobs: &blobs)
            return ObjectChange(entity: entity.rawValue, globalIdentifier: id, type: .insert, propertyChanges: properties, dataFiles: dataFiles(properties))
        }
        if random.chance(0.05) {
            live[object] = false
            return ObjectChange(entity: entity.rawValue, globalIdentifier: id, type: .delete)
        }
        let all = allProperties(of: entity, blobs: &blobs, update: true)
        var picked: [PropertyChange] = []
        for _ in 0..<(1 + random.below(3)) {
            let property = all[random.below(all.count)]
            if !picked.contains(where: { $0.name == property.name }) { picked.append(property) }
        }
        return ObjectChange(entity: entity.rawValue, globalIdentifier: id, type: .update, propertyChanges: picked, dataFiles: dataFiles(picked))
    }

    private func dataFiles(_ properties: [PropertyChange]) -> [String] {
        properties.compactMap { property in
            if case .attributeInDataFile(let name) = property.value { return name }
            return nil
        }
    }

    /// A live object of `entity`, if the draw finds one.
    private mutating func someLive(_ entity: Entity) -> String? {
        for _ in 0..<4 {
            let candidate = random.below(objects.count)
            if objects[candidate].entity == entity && live[candidate] { return objects[candidate].id }
        }
        return nil
    }

    private mutating func allProperties(of entity: Entity, blobs: inout [(String, [UInt8])], update: Bool = false) -> [PropertyChange] {
        func text(_ words: Int) -> String {
            (0..<words).map { _ in ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"][random.below(8)] }.joined(separator: " ")
        }
        switch entity {
        case .Folder:
            var moved: [Int: String] = [:]
            var added: [String] = []
            if update, let note = someLive(.Note) {
                added = [note]
                moved[0] = note
            }
            return [
                PropertyChange(name: "name", value: .attribute(.string("Folder \(text(2))"))),
                PropertyChange(name: "notes", value: .orderedToMany(added: added, removed: [], movedByIndex: moved)),
            ]
        case .Tag:
            return [PropertyChange(name: "name", value: .attribute(.string(text(1))))]
        case .Note:
            var properties = [
                PropertyChange(name: "body", value: .attribute(.string(text(6)))),
                PropertyChange(name: "flagged", value: .attribute(.bool(random.chance(0.3)))),
                PropertyChange(name: "modified", value: .attribute(.date(millisecondsSince1970: 1.7e12 + Double(random.below(1_000_000_000))))),
                PropertyChange(name: "rank", value: .attribute(.integer(Int64(random.below(100_000))))),
                PropertyChange(name: "score", value: .attribute(.double(Double(random.below(1_000_000)) / 100))),
                PropertyChange(name: "title", value: .attribute(.string("Note \(random.below(100_000))"))),
                PropertyChange(name: "folder", value: .toOne(relatedIdentifier: someLive(.Folder))),
            ]
            var added: [String] = [], removed: [String] = []
            if let tag = someLive(.Tag) { added.append(tag) }
            if update, let tag = someLive(.Tag), !added.contains(tag) { removed.append(tag) }
            properties.append(PropertyChange(name: "tags", value: .toMany(added: added, removed: removed)))
            if settings.blobBytes > 0 && random.chance(0.1) {
                var bytes = [UInt8](repeating: 0, count: settings.blobBytes)
                for start in stride(from: 0, to: bytes.count, by: 8) {
                    let word = random.next()
                    for offset in 0..<min(8, bytes.count - start) { bytes[start + offset] = UInt8(truncatingIfNeeded: word >> UInt64(8 * offset)) }
                }
                if bytes.count > Converter.inlineBinaryLimit {
                    let name = Converter.dataFileName(bytes)
                    blobs.append((name, bytes))
                    properties.append(PropertyChange(name: "attachment", value: .attributeInDataFile(filename: name)))
                } else {
                    properties.append(PropertyChange(name: "attachment", value: .attribute(.binary(Data(bytes)))))
                }
            }
            return properties
        }
    }
}
