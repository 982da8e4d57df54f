import Foundation
import JSONDocument
import EnsembleModel
import DataModel
import EventCodecs
import CloudFolder
import ProgressReporting
import ParallelWork

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
    /// Whether the history starts from a baseline that names every store (v2 only): devices
    /// integrate only from a baseline (Spec/merge.md 15.4 step 3). Without it the draws, and so
    /// the bytes, are those of a folder without a baseline.
    package var baseline = false

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
    /// The baseline's path inside the output folder, when one was written.
    package var baseline: String?
    /// The objects the baseline inserts.
    package var baselineObjects = 0
}

/// A deterministic generator of cloud folders with a model: the same settings always
/// give the same bytes. Events are drawn in batches, one after the other (every draw from one
/// sequence, in a fixed order), then the batch's files are spelt out and written by several
/// threads; memory depends on the number of objects and the batch, not on the length of the
/// history.
///
/// The output folder holds `Model.xcdatamodeld` and `cloud/Generated/` (stores, events, data).
package struct HistoryGenerator {
    package static let ensemble = "Generated"

    let settings: GeneratorSettings
    private var random: SplitMix64
    private let names: GeneratedNames
    private var live: [Bool]
    /// The event that last drew each object (-1: none), instead of a set per event.
    private var chosenBy: [Int64]
    /// Per store: its next revision, the greatest global count it knows, and what it knows of
    /// the other stores' revisions.
    private var nextRevision: [Int64]
    private var knownGlobalCount: [Int64]
    private var knownRevisions: [[Int64]]
    /// The folder's truth: every store's latest revision (-1: none) and the greatest global count.
    private var latestRevision: [Int64]
    private var latestGlobalCount: Int64 = -1
    /// Data files already drawn: a later blob with the same bytes is not written again.
    private var dataFileNames: Set<String> = []

    enum Entity: String, CaseIterable, Sendable {
        case Folder, Note, Tag
    }

    package init(settings: GeneratorSettings) {
        self.settings = settings
        var random = SplitMix64(seed: settings.seed)
        let storeIdentifiers = (0..<settings.stores).map { _ in random.uuidString() }
        // One folder and two tags for every ten objects; the rest are notes.
        var entities: [Entity] = [], objectIdentifiers: [String] = []
        entities.reserveCapacity(settings.objects)
        objectIdentifiers.reserveCapacity(settings.objects)
        for index in 0..<settings.objects {
            entities.append(index % 10 == 0 ? .Folder : (index % 10 <= 2 ? .Tag : .Note))
            objectIdentifiers.append(random.uuidString())
        }
        self.random = random
        names = GeneratedNames(stores: storeIdentifiers, objects: objectIdentifiers, entities: entities)
        live = Array(repeating: false, count: settings.objects)
        chosenBy = Array(repeating: -1, count: settings.objects)
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

    /// A batch ends after this many object changes: its records stay small, and a batch is
    /// enough work to share between the writing threads.
    static let batchChanges = 32_768

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
        for store in names.stores {
            try StagingArea.write(try Self.registration(store), to: ensemble.appendingPathComponent("stores/\(store)"))
        }
        let writer = GeneratedFileWriter(
            names: names, format: settings.format, modelHash: modelHash, events: ensemble.appendingPathComponent("events").path,
            data: ensemble.appendingPathComponent("data").path)
        var eventIndex: Int64 = 0
        var folders = (events: false, data: false)
        if settings.baseline {
            let batch = drawBaseline()
            // Its data files as an event batch's (it has no events).
            try write(batch, with: writer, folders: &folders, summary: &summary)
            let (name, bytes) = try baselineFile(batch, modelHash: modelHash)
            try StagingArea.write(bytes, to: ensemble.appendingPathComponent("baselines/\(name)"), durable: false)
            summary.bytes += Int64(bytes.count)
            summary.baseline = "cloud/\(Self.ensemble)/baselines/\(name)"
            summary.baselineObjects = batch.changes.count
        }
        while summary.objectChanges < settings.changes {
            var batch = DrawnBatch()
            while summary.objectChanges < settings.changes && batch.changes.count < Self.batchChanges {
                drawEvent(index: eventIndex, budget: settings.changes - summary.objectChanges, into: &batch, summary: &summary)
                eventIndex += 1
            }
            try write(batch, with: writer, folders: &folders, summary: &summary)
            ProgressReport.report("object changes written", done: summary.objectChanges, total: settings.changes)
        }
        // One flush for all files instead of one per file: the folder appears only after it.
        sync()
        try staging.commit()
        return summary
    }

    /// Writes a batch's new data files and its events, counted in `summary`. The folders appear
    /// when their first file does, as they did when each write made its folder.
    private func write(
        _ batch: DrawnBatch, with writer: GeneratedFileWriter, folders: inout (events: Bool, data: Bool), summary: inout GeneratorSummary
    ) throws(ConversionFailure) {
        if !folders.data && batch.blobs.contains(where: { $0.isNewFile }) {
            try StagingArea.createFolder(URL(fileURLWithPath: writer.data))
            folders.data = true
        }
        if !folders.events && !batch.events.isEmpty {
            try StagingArea.createFolder(URL(fileURLWithPath: writer.events))
            folders.events = true
        }
        for blob in batch.blobs where blob.isNewFile {
            summary.dataFiles += 1
            summary.bytes += Int64(blob.bytes.count)
        }
        summary.bytes += try writer.write(batch)
        summary.events += batch.events.count
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

    // MARK: - The baseline

    /// Draws the baseline (``GeneratorSettings/baseline``): every object inserted with every
    /// property, as a rebase writes a baseline (Spec/merge.md 13.4), drawn before the events and
    /// in object order. It stands for every store's revision 0 folded by a rebase: its revision set
    /// names every store at 0, so no event is covered (4.5), each store's events continue at
    /// revision 1 without a gap (5.4) and global count 1, and every event knows every store at 0
    /// or later, which the baseline holds (5.5). A device of any store then integrates the whole
    /// history (15.4), as a merge does.
    private mutating func drawBaseline() -> DrawnBatch {
        var batch = DrawnBatch()
        // Every object is live from the start, so the baseline's relationships find targets.
        live = Array(repeating: true, count: names.objects.count)
        for object in 0..<names.objects.count {
            var change = DrawnChange(object: Int32(object), type: .insert)
            drawProperties(of: names.entities[object], into: &change, batch: &batch, update: false)
            batch.changes.append(change)
        }
        nextRevision = Array(repeating: 1, count: settings.stores)
        knownGlobalCount = Array(repeating: 0, count: settings.stores)
        knownRevisions = Array(repeating: Array(repeating: 0, count: settings.stores), count: settings.stores)
        latestRevision = Array(repeating: 0, count: settings.stores)
        latestGlobalCount = 0
        return batch
    }

    /// The baseline's file name (merge.md 13.5) and bytes: store the first store, global count 0,
    /// a timestamp before every event's, the unique identifier a rebase gives its revision set.
    private func baselineFile(_ batch: DrawnBatch, modelHash: String) throws(ConversionFailure) -> (String, [UInt8]) {
        let owner = names.stores[0]
        let revisions = RevisionSet(pairs: names.stores.map { ($0, 0) })
        let uniqueIdentifier = BaselineNaming.uniqueIdentifier(for: revisions)
        // Within an entity, in the order of the global identifiers' bytes, as a rebase orders them.
        let changes = batch.changes.sorted { utf8Precedes(names.objects[Int($0.object)], names.objects[Int($1.object)]) }
        let event = Event(
            uniqueIdentifier: uniqueIdentifier, type: .baseline, storeIdentifier: owner, globalCount: 0, timestamp: 800_000_000 - 1,
            modelVersion: modelHash, revisionSet: revisions, objectChanges: changes.map { names.objectChange($0, blobs: batch.blobs) })
        do {
            let bytes = settings.format == .v2Binary ? try V2BinaryEncoder().encode(event) : try V2JSONEncoder().encode(event)
            return (BaselineNaming.fileName(globalCount: 0, uniqueIdentifier: uniqueIdentifier, store: owner), bytes)
        } catch {
            throw ConversionFailure(errors: [error])
        }
    }

    // MARK: - Drawing

    /// Draws one event into `batch`. Every draw is made here, in the order the generator has
    /// always made them, so that the same seed gives the same folder.
    private mutating func drawEvent(index: Int64, budget: Int, into batch: inout DrawnBatch, summary: inout GeneratorSummary) {
        let store = random.below(settings.stores)
        if !random.chance(settings.concurrency) {
            // The store merges first: it knows every event in the folder.
            knownRevisions[store] = latestRevision
            knownGlobalCount[store] = latestGlobalCount
        }
        let count = min(budget, 1 + random.below(max(1, 2 * settings.changesPerEvent - 1)))
        let first = batch.changes.count
        for _ in 0..<count {
            let object = random.below(names.objects.count)
            guard chosenBy[object] != index else { continue }
            chosenBy[object] = index
            let change = drawChange(object, batch: &batch)
            switch change.type {
            case .insert: summary.inserts += 1
            case .update: summary.updates += 1
            case .delete: summary.deletes += 1
            }
            batch.changes.append(change)
        }
        summary.objectChanges += batch.changes.count - first
        let revision = nextRevision[store]
        nextRevision[store] += 1
        let globalCount = knownGlobalCount[store] + 1
        let knownStart = batch.knownStores.count
        for (other, known) in knownRevisions[store].enumerated() where other != store && known >= 0 {
            batch.knownStores.append(Int32(other))
            batch.knownRevisions.append(known)
        }
        latestRevision[store] = revision
        knownRevisions[store][store] = revision
        knownGlobalCount[store] = globalCount
        latestGlobalCount = max(latestGlobalCount, globalCount)
        batch.events.append(
            DrawnEvent(
                store: Int32(store), revision: revision, globalCount: globalCount, index: index, uniqueIdentifier: random.uuidString(),
                changes: first..<batch.changes.count, known: knownStart..<batch.knownStores.count))
    }

    private mutating func drawChange(_ object: Int, batch: inout DrawnBatch) -> DrawnChange {
        let entity = names.entities[object]
        if !live[object] {
            live[object] = true
            var change = DrawnChange(object: Int32(object), type: .insert)
            drawProperties(of: entity, into: &change, batch: &batch, update: false)
            return change
        }
        if random.chance(0.05) {
            live[object] = false
            return DrawnChange(object: Int32(object), type: .delete)
        }
        var change = DrawnChange(object: Int32(object), type: .update)
        drawProperties(of: entity, into: &change, batch: &batch, update: true)
        let all = change.propertyCount(entity)
        for _ in 0..<(1 + random.below(3)) {
            change.pick(UInt8(random.below(all)))
        }
        return change
    }

    /// A live object of `entity`, if the draw finds one.
    private mutating func someLive(_ entity: Entity) -> Int32 {
        for _ in 0..<4 {
            let candidate = random.below(names.objects.count)
            if names.entities[candidate] == entity && live[candidate] { return Int32(candidate) }
        }
        return -1
    }

    /// Word numbers for `count` words, three bits each, the first in the lowest bits.
    private mutating func drawWords(_ count: Int) -> UInt32 {
        var words: UInt32 = 0
        for index in 0..<count { words |= UInt32(random.below(8)) << UInt32(3 * index) }
        return words
    }

    /// Draws every property of `entity` (an update draws them all, then picks some).
    private mutating func drawProperties(of entity: Entity, into change: inout DrawnChange, batch: inout DrawnBatch, update: Bool) {
        switch entity {
        case .Folder:
            if update { change.related = someLive(.Note) }
            change.words = drawWords(2)
        case .Tag:
            change.words = drawWords(1)
        case .Note:
            change.words = drawWords(6)
            change.flagged = random.chance(0.3)
            change.modified = Int32(random.below(1_000_000_000))
            change.rank = Int32(random.below(100_000))
            change.score = Int32(random.below(1_000_000))
            change.title = Int32(random.below(100_000))
            change.related = someLive(.Folder)
            change.tagAdded = someLive(.Tag)
            if update {
                let tag = someLive(.Tag)
                if tag >= 0 && tag != change.tagAdded { change.tagRemoved = tag }
            }
            if settings.blobBytes > 0 && random.chance(0.1) {
                var bytes = [UInt8](repeating: 0, count: settings.blobBytes)
                for start in stride(from: 0, to: bytes.count, by: 8) {
                    let word = random.next()
                    for offset in 0..<min(8, bytes.count - start) { bytes[start + offset] = UInt8(truncatingIfNeeded: word >> UInt64(8 * offset)) }
                }
                var blob = DrawnBlob(bytes: bytes, fileName: nil, isNewFile: false)
                if bytes.count > Converter.inlineBinaryLimit {
                    let name = Converter.dataFileName(bytes)
                    blob.fileName = name
                    blob.isNewFile = dataFileNames.insert(name).inserted
                }
                change.blob = Int32(batch.blobs.count)
                batch.blobs.append(blob)
            }
        }
    }
}
