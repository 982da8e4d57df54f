import Foundation
import Crypto
import JSONDocument
import EnsembleModel
import DataModel
import EventCodecs
import MergeEngine
import CloudFolder

/// The cure of a lost revision (Spec/repair.md 3.6): a new baseline of the salvage state whose
/// revision set covers every store's latest revision, the lost ones included, and the events and
/// baselines it covers, which move to the quarantine.
struct LostRevisionCure {
    /// A run of revisions of one store that no file holds and no baseline covers.
    struct Lost: Equatable {
        var store: String
        var first: Int64
        var last: Int64
    }

    /// The new baseline and its bytes (v2 JSON) and file name in `baselines/`.
    var baseline: Event
    var bytes: [UInt8]
    var fileName: String
    /// The files it covers, relative to the ensemble folder: every event file (copies and parts
    /// included) and every other baseline.
    var covered: [String]
    var lost: [Lost]
    /// The salvage state the baseline holds.
    var state: StoreState
    var report: JSONObject

    /// Why the cure cannot be made for this folder (the plan says so in a note).
    struct Refusal: Error { var reason: String }

    /// The cure of the folder `input` was read from, whose analysis finds only lost revisions.
    /// `relative` gives a file's path relative to the ensemble folder. With `recovery`, its
    /// events are among `input`'s and the lost revisions they held are no longer lost
    /// (Spec/repair.md 3.6.6): they are not in the folder, so nothing of them moves. With
    /// `savesBefore` (saves of two or more stores made before the baseline, 9.3 rule 7) the cure
    /// is made even when no revision is lost.
    static func make(
        _ input: MergeInput, _ analysis: MergeAnalysis, recovery: LostEventRecovery? = nil, savesBefore: Bool = false, relative: (String) -> String
    ) throws -> LostRevisionCure {
        guard let model = input.model else {
            throw Refusal(reason: "the cure lists every property of each object's entity, so it needs the app's model (--model)")
        }
        let blocking = analysis.problems.filter { ![.mergeRevisionGap, .mergeMissingDependency, .mergeMoreFindings].contains($0.code) }
        guard blocking.isEmpty else {
            throw Refusal(reason: "the folder has other findings that stop a merge (\(Set(blocking.map(\.code.rawValue)).sorted().joined(separator: ", ")))")
        }
        let events = try analysis.replayedEvents()
        var state = StoreState(model: model)
        try MergeEngine.replay(analysis.baselines, into: &state, input)
        try MergeEngine.replay(events, into: &state, input)
        // Every event and baseline the folder holds, readable ones, copies included.
        let allEvents = input.events
        let lost = lostRevisions(events, analysis.baselineRevisions)
        guard !lost.isEmpty || !(recovery?.events.isEmpty ?? true) || savesBefore else { throw Refusal(reason: "no revision is lost") }

        // The revision set: every store named anywhere, at no less than its latest revision.
        var revisions = analysis.baselineRevisions ?? RevisionSet()
        for sourced in allEvents + input.baselines { revisions.merge(with: sourced.event.revisionSet) }
        for store in input.registeredStores ?? [] where revisions[store.value] == nil { revisions[store.value] = 0 }
        for (store, revision) in revisions.revisions where revision < 0 { revisions[store] = 0 }
        let everything = allEvents + input.baselines
        let globalCount = everything.map(\.event.globalCount).max() ?? 0
        let timestamp = everything.map(\.event.timestamp).max() ?? 0
        // The store whose name prefixes the file: at least 8 UTF-16 units (Spec/repair.md 3.6),
        // the store of the last readable event in replay order that has one.
        func nameable(_ store: String) -> Bool {
            let units = Array(store.utf16)
            return units.count >= 8 && !UTF16.isLeadSurrogate(units[7])
        }
        let owner =
            events.reversed().map(\.event.storeIdentifier).first(where: nameable)
            ?? revisions.stores.first(where: nameable)
        guard let owner else { throw Refusal(reason: "no store identifier has the 8 characters a baseline's file name needs") }

        var baseline = fullBaseline(state, model: model, store: owner, globalCount: globalCount, timestamp: timestamp, revisionSet: revisions)
        baseline.uniqueIdentifier = try uniqueIdentifier(revisions, state)
        guard !input.baselines.contains(where: { $0.event.uniqueIdentifier == baseline.uniqueIdentifier }) else {
            throw Refusal(reason: "a baseline of the folder already has the cure's unique identifier")
        }
        let bytes = try V2JSONEncoder().encode(baseline)
        let fileName = BaselineNaming.fileName(globalCount: globalCount, uniqueIdentifier: baseline.uniqueIdentifier, store: owner)
        var covered: [String] = []
        let recovered = Set((recovery?.events ?? []).map(\.sourced.file))
        for sourced in everything where !recovered.contains(sourced.file) {
            covered += (sourced.parts.isEmpty ? [sourced.file] : sourced.parts).map(relative)
        }
        var report = lossReport(lost, events: events, baselines: analysis.baselines, state: state, input: input, relative: relative)
        if let recovery {
            report["recovered"] = recovery.report
            report["recoveryNotes"] = .array(recovery.notes.map(JSONValue.string))
        }
        return LostRevisionCure(
            baseline: baseline, bytes: bytes, fileName: fileName, covered: sortedUnique(covered), lost: lost, state: state, report: report)
    }

    /// The files a written cure baseline covers (a repair stopped after adding it, Spec/repair.md
    /// 3.6): every event at or below its revision set, and every other baseline.
    static func coveredBy(_ cure: SourcedEvent, _ input: MergeInput, relative: (String) -> String) -> [String] {
        var covered: [String] = []
        for sourced in input.events where (cure.event.revisionSet[sourced.event.storeIdentifier] ?? -1) >= sourced.event.revision {
            covered += (sourced.parts.isEmpty ? [sourced.file] : sourced.parts).map(relative)
        }
        for sourced in input.baselines where sourced.file != cure.file {
            covered += (sourced.parts.isEmpty ? [sourced.file] : sourced.parts).map(relative)
        }
        return sortedUnique(covered)
    }

    /// Per store, the revisions above the baselines that no readable event holds, up to the
    /// highest revision any event names: the gaps between present revisions, and what lies
    /// above the latest present one (Spec/merge.md 5.4, 5.5).
    static func lostRevisions(_ events: [SourcedEvent], _ known: RevisionSet?) -> [Lost] {
        // By bytes: stores named in NFC and NFD are two stores.
        var present: [ExactString: Set<Int64>] = [:]
        var named: [ExactString: Int64] = [:]
        for sourced in events {
            present[ExactString(sourced.event.storeIdentifier), default: []].insert(sourced.event.revision)
            sourced.event.revisionSet.forEachPair { store, revision in named[ExactString(store)] = max(named[ExactString(store)] ?? -1, revision) }
        }
        var lost: [Lost] = []
        for exactStore in named.keys.sorted(by: { utf8Precedes($0.value, $1.value) }) {
            let store = exactStore.value
            let have = present[exactStore] ?? []
            // As the merge checks continuity: from above the baseline, or from the lowest present
            // revision of a store the baselines do not name.
            let start = known?[store].map { $0 + 1 } ?? have.min() ?? 0
            let end = max(named[exactStore] ?? -1, have.max() ?? -1)
            guard start <= end else { continue }
            var run: Lost?
            for revision in start...end {
                if have.contains(revision) {
                    if let done = run { lost.append(done) }
                    run = nil
                } else if run == nil {
                    run = Lost(store: store, first: revision, last: revision)
                } else {
                    run?.last = revision
                }
            }
            if let done = run { lost.append(done) }
        }
        return lost
    }

    /// The state as a baseline that lists, for each live object, every non-transient property
    /// its entity has in the model: unset attributes as null, unset to-ones as none, and in
    /// each to-many every live object of the destination entity (and its sub-entities) that is
    /// not a member as removed (Spec/repair.md 3.6, 9.2).
    static func fullBaseline(
        _ state: StoreState, model: DataModel, store: String, globalCount: Int64, timestamp: Double, revisionSet: RevisionSet
    ) -> Event {
        let objects = state.objectsInOrder
        // By the entities' bytes: a model may have two entities whose names differ only in
        // normalisation (Spec/model.md 4.1), each with its own objects and marker.
        var liveByEntity: [ExactString: [String]] = [:]
        for object in objects { liveByEntity[ExactString(object.entity), default: []].append(object.id) }
        var kindCache: [ExactString: [String]] = [:]
        func live(ofKind destination: String) -> [String] {
            if let cached = kindCache[destination] { return cached }
            let ids = sortedUnique(liveByEntity.filter { model.entity($0.key.value, isKindOf: destination) }.flatMap(\.value))
            kindCache[destination] = ids
            return ids
        }
        let changes = objects.map { object -> ObjectChange in
            var properties: [ExactString: PropertyChange] = [:]
            var dataFiles: [String] = []
            for (name, value) in object.properties {
                switch value {
                case .attribute(let attribute): properties[name] = PropertyChange(name: name, value: .attribute(attribute))
                case .dataFile(let file):
                    dataFiles.append(file)
                    properties[name] = PropertyChange(name: name, value: .attributeInDataFile(filename: file))
                case .toOne(let target): properties[name] = PropertyChange(name: name, value: .toOne(relatedIdentifier: target?.id.value))
                case .toMany(let members):
                    properties[name] = PropertyChange(name: name, value: .toMany(added: sortedUnique(members.map(\.id.value)), removed: []))
                case .ordered(let order):
                    let ids = order.map(\.id.value)
                    properties[name] = PropertyChange(
                        name: name,
                        value: .orderedToMany(
                            added: sortedUnique(ids), removed: [],
                            movedByIndex: Dictionary(uniqueKeysWithValues: ids.enumerated().map { ($0.offset, $0.element) })))
                }
            }
            // Nearest entity first: a property redefined lower down is the one the object has.
            var seen = Set<ExactString>()
            for entity in model.lineage(of: object.entity) {
                for attribute in entity.attributes.values where !attribute.isTransient && seen.insert(ExactString(attribute.name)).inserted {
                    if properties[attribute.name] == nil { properties[attribute.name] = PropertyChange(name: attribute.name, value: .attribute(.null)) }
                }
                for relationship in entity.relationships.values where !relationship.isTransient && seen.insert(ExactString(relationship.name)).inserted {
                    let name = relationship.name
                    guard relationship.isToMany else {
                        if properties[name] == nil { properties[name] = PropertyChange(name: name, value: .toOne(relatedIdentifier: nil)) }
                        continue
                    }
                    let candidates = live(ofKind: relationship.destinationEntity)
                    switch properties[name]?.value {
                    case .toMany(let added, _)?:
                        let members = Set(added)
                        properties[name] = PropertyChange(name: name, value: .toMany(added: added, removed: candidates.filter { !members.contains($0) }))
                    case .orderedToMany(let added, _, let moved)?:
                        let members = Set(added)
                        properties[name] = PropertyChange(
                            name: name, value: .orderedToMany(added: added, removed: candidates.filter { !members.contains($0) }, movedByIndex: moved))
                    case nil:
                        properties[name] = PropertyChange(
                            name: name,
                            value: relationship.isOrdered
                                ? .orderedToMany(added: [], removed: candidates, movedByIndex: [:]) : .toMany(added: [], removed: candidates))
                    default:
                        continue
                    }
                }
            }
            let sorted = properties.values.sorted { utf8Precedes($0.name, $1.name) }
            return ObjectChange(entity: object.entity, globalIdentifier: object.id, type: .insert, propertyChanges: sorted, dataFiles: sortedUnique(dataFiles))
        }
        // An entity with no live object still gets a change, a delete of an object no device has:
        // a device's full integration sweeps only the entities the baseline names, and so it also
        // deletes that entity's objects that only a lost event inserted (Spec/repair.md 9.3 rule 3).
        let markers = model.entityNames.filter { name in !(model.entities[name]?.isAbstract ?? true) && liveByEntity[name] == nil }.map {
            ObjectChange(entity: $0, globalIdentifier: "CURE-NONE-" + $0, type: .delete, propertyChanges: [], dataFiles: [])
        }
        return Event(
            uniqueIdentifier: "", type: .baseline, storeIdentifier: store, globalCount: globalCount, timestamp: timestamp, modelVersion: nil,
            revisionSet: revisionSet, objectChanges: changes + markers)
    }

    /// A new unique identifier, the same for the same cure of the same folder: the first 16
    /// bytes of the SHA-256 of `cure-lost`, the revision set and the salvage state's document,
    /// as an uppercase UUID text (no `_`, Spec/repair.md 3.6).
    static func uniqueIdentifier(_ revisions: RevisionSet, _ state: StoreState) throws -> String {
        var hasher = SHA256()
        hasher.update(data: Array("cure-lost\u{0}".utf8))
        let set = JSONValue.object(JSONObject(revisions.stores.map { ($0, JSONValue(revisions[$0] ?? 0)) }))
        hasher.update(data: JSONWriter().bytes(set))
        try state.writeDocument { hasher.update(data: $0) }
        let hex = Array(hasher.finalize().prefix(16)).map { String(format: "%02X", $0) }.joined()
        var groups: [String] = []
        var rest = Substring(hex)
        for length in [8, 4, 4, 4, 12] {
            groups.append(String(rest.prefix(length)))
            rest = rest.dropFirst(length)
        }
        return groups.joined(separator: "-")
    }

    /// What the cure loses, against what wiping the cloud folder loses (Spec/repair.md 3.6).
    static func lossReport(
        _ lost: [Lost], events: [SourcedEvent], baselines: [SourcedEvent], state: StoreState, input: MergeInput, relative: (String) -> String
    ) -> JSONObject {
        // The events that depended on a lost revision: of its store above it, or naming its store
        // at or above it, and (in turn) every event that names one of those.
        var tainted: [ExactString: Int64] = [:]
        for run in lost { tainted[ExactString(run.store)] = min(tainted[ExactString(run.store)] ?? .max, run.first) }
        var dependent = Set<Int>()
        var changed = true
        while changed {
            changed = false
            for (index, sourced) in events.enumerated() where !dependent.contains(index) {
                var depends = false
                sourced.event.revisionSet.forEachPair { store, revision in
                    if let low = tainted[ExactString(store)], revision >= low { depends = true }
                }
                guard depends else { continue }
                dependent.insert(index)
                changed = true
                let store = ExactString(sourced.event.storeIdentifier)
                tainted[store] = min(tainted[store] ?? .max, sourced.event.revision)
            }
        }
        // Objects some readable event or baseline inserts: a change of any other object can only
        // be of an object a lost revision inserted, and the salvage drops it (Spec/merge.md 8.3.1).
        var inserted = Set<ExactString>()
        var bodies: [Int: Event] = [:]
        for (index, sourced) in events.enumerated() {
            guard let body = try? input.body(of: sourced) else { continue }
            bodies[index] = body
            for change in body.objectChanges where change.type == .insert { inserted.insert(ExactString(change.entity + "\u{0}" + change.globalIdentifier)) }
        }
        for sourced in baselines {
            for change in ((try? input.body(of: sourced)) ?? sourced.event).objectChanges {
                inserted.insert(ExactString(change.entity + "\u{0}" + change.globalIdentifier))
            }
        }
        var touched: [ExactString: (entity: String, id: String, properties: Set<ExactString>, kept: Bool)] = [:]
        var dependentChanges = 0
        for index in dependent.sorted() {
            guard let body = bodies[index] else { continue }
            for change in body.objectChanges {
                let key = ExactString(change.entity + "\u{0}" + change.globalIdentifier)
                var entry = touched[key] ?? (change.entity, change.globalIdentifier, [], inserted.contains(key))
                if change.type == .delete {
                    entry.properties.insert(ExactString("(deleted)"))
                    dependentChanges += 1
                }
                for property in change.propertyChanges {
                    entry.properties.insert(ExactString(property.name))
                    dependentChanges += 1
                }
                touched[key] = entry
            }
        }
        var allChanges = 0
        var allEvents = 0
        for sourced in events + baselines {
            allEvents += 1
            let body = (try? input.body(of: sourced)) ?? sourced.event
            for change in body.objectChanges { allChanges += change.type == .delete ? 1 : change.propertyChanges.count }
        }
        let objects = touched.values.sorted { a, b in
            exactlyEqual(a.entity, b.entity) ? utf8Precedes(a.id, b.id) : utf8Precedes(a.entity, b.entity)
        }
        return JSONObject([
            (
                "lost",
                .array(
                    lost.map {
                        .object(JSONObject([("store", .string($0.store)), ("first", JSONValue($0.first)), ("last", JSONValue($0.last))]))
                    })
            ),
            ("dependentEvents", .array(dependent.sorted().map { .string(relative(events[$0].file)) })),
            (
                "dependentObjects",
                .array(
                    objects.map {
                        .object(
                            JSONObject([
                                ("entity", .string($0.entity)), ("id", .string($0.id)),
                                ("properties", .array($0.properties.map(\.value).sorted(by: utf8Precedes).map(JSONValue.string))),
                                ("kept", .bool($0.kept)),
                            ]))
                    })
            ),
            (
                "withCure",
                .object(
                    JSONObject([
                        ("lostEvents", JSONValue(Int64(lost.reduce(0) { $0 + Int($1.last - $1.first + 1) }))),
                        ("dependentEvents", JSONValue(Int64(dependent.count))), ("objects", JSONValue(Int64(objects.count))),
                        ("propertyChanges", JSONValue(Int64(dependentChanges))),
                    ]))
            ),
            (
                "withWipe",
                .object(
                    JSONObject([
                        ("events", JSONValue(Int64(allEvents))), ("objects", JSONValue(Int64(state.liveObjectCount))),
                        ("propertyChanges", JSONValue(Int64(allChanges))),
                    ]))
            ),
        ])
    }
}
