import Dispatch
import JSONDocument
import EnsembleModel
import ParallelWork

/// The inserts and deletes of every readable event, object by object, for verify's objects step
/// (Spec/diagnostics.md 4.19a-c): kept while the folder is read, so that the events themselves can
/// be dropped; memory grows with the inserts and deletes, not with the updates or values.
///
/// Events are recorded on a queue of the index's own while the caller goes on reading: recorded
/// on the reading thread, they were a sixth of the work of the thread verify waited on (measured:
/// Benchmarks/README.md). Unchecked `Sendable`: what the queue records is read only after
/// waiting for it.
package final class ObjectIndex: @unchecked Sendable {
    private struct EventFacts {
        var file: String
        var store: String
        var revision: Int64
        var revisions: RevisionSet
    }

    private struct Touch {
        var event: Int
        var inserts: Bool
    }

    private var events: [EventFacts] = []
    /// By entity, then global identifier: each insert or delete, in reading order.
    /// Keys compared by their bytes, as the merge compares identifiers.
    private var touches: [ExactString: [ExactString: [Touch]]] = [:]
    private typealias Candidate = (entity: ExactString, identifier: ExactString, all: [Touch])
    /// Once recording is over: the objects that can have a finding, with all their touches.
    private var candidates: [Candidate]?
    /// The findings if every event recorded is replayed, when ``finishRecording(allReplayedLikely:)`` expected it.
    private var findingsIfAllReplayed: [Diagnostic]?

    private let queue = DispatchQueue(label: "ObjectIndex")

    package init() {}

    /// Records the event read from `file`, with `header` and `changes`: its inserts and deletes
    /// (updates say nothing here). The changes come in numbered form, as a merge decodes them:
    /// decoded whole, every value became a string that only this index's caller dropped again.
    package func add(file: String, header: Event, changes: NumberedEvent) {
        queue.async { [self] in record(file: file, header: header, changes: changes) }
    }

    private func record(file: String, header: Event, changes: NumberedEvent) {
        // An event of updates only is named by no touch: its facts are not kept (a folder of
        // a million such events kept a million headers here).
        guard header.type == .save || header.type == .merge, changes.changes.contains(where: { $0.type != .update }) else { return }
        let index = events.count
        events.append(EventFacts(file: file, store: header.storeIdentifier, revision: header.revision, revisions: header.revisionSet))
        for change in changes.changes where change.type != .update {
            touches[ExactString(changes.string(change.entity)), default: [:]][ExactString(changes.string(change.identifier)), default: []].append(
                Touch(event: index, inserts: change.type == .insert))
        }
    }

    /// Says that every event is recorded: on the index's queue, while the caller analyses the
    /// folder, the objects that can have no finding are dropped and, when `allReplayedLikely`
    /// (no baseline can cover an event), the findings are made as if every event were replayed:
    /// made after the analysis, they kept one core idle for a tenth of verify's time
    /// (Benchmarks/README.md).
    package func finishRecording(allReplayedLikely: Bool) {
        queue.async { [self] in
            selectCandidates()
            if allReplayedLikely, let candidates {
                findingsIfAllReplayed = findings(candidates[...], isReplayed: Array(repeating: true, count: events.count))
            }
        }
    }

    /// Each finding needs two inserts of an object, or an insert and a delete, among the events
    /// replayed (Spec/diagnostics.md 4.19a-c): an object without them among all its events has
    /// none among those replayed, and most objects are inserted once and never deleted.
    private func selectCandidates() {
        guard candidates == nil else { return }
        var kept: [Candidate] = []
        for (entity, objects) in touches {
            for (identifier, all) in objects {
                let inserts = all.count(where: \.inserts)
                if Self.canHaveFinding(inserts: inserts, deletes: all.count - inserts) { kept.append((entity, identifier, all)) }
            }
        }
        candidates = kept
        touches = [:]
    }

    /// Whether an object with these inserts and deletes can have a finding: each needs two
    /// inserts, or an insert and a delete.
    private static func canHaveFinding(inserts: Int, deletes: Int) -> Bool { inserts >= 2 || (inserts > 0 && deletes > 0) }

    /// Whether `a` knows `b` (Spec/diagnostics.md 4.19a-c): a's revision set names b's store at
    /// b's revision or later.
    private func knows(_ a: Int, _ b: Int) -> Bool {
        a != b && (events[a].revisions[events[b].store].map { $0 >= events[b].revision } ?? false)
    }

    /// The findings about the objects of the events whose files are in `replayed` (the events the
    /// merge replays: neither covered nor dropped as duplicates).
    func diagnostics(replayed: Set<ExactString>) -> [Diagnostic] {
        let (objects, made) = queue.sync {
            selectCandidates()
            return (candidates ?? [], findingsIfAllReplayed)
        }
        // Each event's file looked up once, not once for every object it inserts or deletes.
        let isReplayed = events.map { replayed.contains(ExactString($0.file)) }
        if let made, !isReplayed.contains(false) { return made }
        // Objects in pieces on every core (the caller sorts the findings).
        return Pieces.map(count: objects.count, size: 4_096) { findings(objects[$0], isReplayed: isReplayed) }.flatMap { $0 }
    }

    private func findings(_ objects: ArraySlice<Candidate>, isReplayed: [Bool]) -> [Diagnostic] {
        var found: [Diagnostic] = []
        for (entityKey, identifierKey, all) in objects {
            let entity = entityKey.value, identifier = identifierKey.value
            let touched = all.filter { isReplayed[$0.event] }
            // The same test as selectCandidates', among the events replayed: the checks' sets
            // and groups were three quarters of the step (Benchmarks/README.md).
            let inserts = touched.count(where: \.inserts), deletes = touched.count - inserts
            guard Self.canHaveFinding(inserts: inserts, deletes: deletes) else { continue }
            let object: [(String, JSONValue)] = [("entity", .string(entity)), ("globalIdentifier", .string(identifier))]
            if inserts >= 2 {
                found += concurrentInserts(touched, object)
                found += reinserts(touched, object)
            }
            guard inserts > 0, deletes > 0 else { continue }
            for event in Set(touched.filter(\.inserts).map(\.event)) where touched.contains(where: { !$0.inserts && $0.event == event }) {
                found.append(
                    Diagnostic(
                        code: .verifyInsertAndDelete, severity: .warning, number: nil, files: [events[event].file],
                        reason: "the event inserts and deletes \(entity) \(identifier)",
                        consequence:
                            "the delete wins wherever it is listed: the object is not live after this event; a writer that records both in one save has a bug",
                        details: JSONObject(object)))
            }
        }
        return found
    }

    /// 4.19a: inserting events of different stores that do not know each other.
    private func concurrentInserts(_ touched: [Touch], _ object: [(String, JSONValue)]) -> [Diagnostic] {
        let inserting = Set(touched.filter(\.inserts).map(\.event)).sorted()
        let concurrent = inserting.filter { a in
            inserting.contains { b in !exactlyEqual(events[a].store, events[b].store) && !knows(a, b) && !knows(b, a) }
        }
        guard !concurrent.isEmpty else { return [] }
        let stores = sortedUnique(concurrent.map { events[$0].store })
        return [
            Diagnostic(
                code: .verifyConcurrentInsert, severity: .info, number: nil, files: sortedUnique(concurrent.map { events[$0].file }),
                reason: "stores \(stores.joined(separator: ", ")) insert the same object without knowing of each other",
                consequence:
                    "devices keep one object: the later insert attaches to it, and where both set a property the later event in the merge order wins; if the two were meant to be different objects, their global identifiers are not unique",
                details: JSONObject(object + [("stores", .array(stores.map(JSONValue.string)))]))
        ]
    }

    /// 4.19b: consecutive inserts by one store with no delete in between.
    private func reinserts(_ touched: [Touch], _ object: [(String, JSONValue)]) -> [Diagnostic] {
        var found: [Diagnostic] = []
        // Stores named in NFC and NFD are two stores.
        let byStore = Dictionary(grouping: Set(touched.filter(\.inserts).map(\.event)).sorted(), by: { ExactString(events[$0].store) })
        for (exactStore, inserting) in byStore {
            let store = exactStore.value
            let ordered = inserting.sorted { events[$0].revision < events[$1].revision }
            for (first, second) in zip(ordered, ordered.dropFirst()) where events[first].revision < events[second].revision {
                let deletedBetween = touched.contains { touch in
                    !touch.inserts && touch.event != second && (touch.event == first || (knows(second, touch.event) && !knows(first, touch.event)))
                }
                guard !deletedBetween else { continue }
                let revisions = [events[first].revision, events[second].revision]
                found.append(
                    Diagnostic(
                        code: .verifyReinsertedObject, severity: .warning, number: nil, files: sortedUnique([events[first].file, events[second].file]),
                        reason: "\(store) inserts the object again at revision \(revisions[1]) without deleting it after revision \(revisions[0])",
                        consequence:
                            "the second insert attaches to the object that is still live: nothing is duplicated, but a store that inserts what it already inserted usually gives global identifiers that are not stable (a new identifier each launch), which makes duplicates on other devices",
                        details: JSONObject(
                            object + [("store", .string(store)), ("revisions", .array(revisions.map { JSONValue($0) }))])))
            }
        }
        return found
    }
}
