import JSONDocument
import EnsembleModel
import DataModel

extension FormatError.Code {
    public static let mergeUnregisteredStore = Self("merge.unregistered-store")
    public static let mergeRevisionGap = Self("merge.revision-gap")
    public static let mergeMissingDependency = Self("merge.missing-dependency")
    public static let mergeMissingDataFile = Self("merge.missing-data-file")
    public static let mergeUnknownModelVersion = Self("merge.unknown-model-version")
    public static let mergeIncompleteData = Self("merge.incomplete-data")
    public static let mergeConflictingRevision = Self("merge.conflicting-revision")
    public static let mergeSeveralEnsembles = Self("merge.several-ensembles")
}

/// An event and the file it came from (for reports).
public struct SourcedEvent: Sendable {
    /// The event; without its object changes when ``isSummary`` is true.
    public var event: Event
    public var file: String
    /// The files of a multipart event, by part index; empty for a single file.
    public var parts: [String]
    /// The data files the event refers to (kept when the object changes are dropped).
    public var dataFileReferences: [String]
    /// How many object changes of each type the event holds (kept when they are dropped).
    public var changeCounts = ChangeCounts()

    public struct ChangeCounts: Sendable, Hashable {
        public var inserts = 0, updates = 0, deletes = 0
        public var total: Int { inserts + updates + deletes }
    }
    /// The object changes were dropped to save memory; ``MergeInput/loadBody`` reads them again.
    public private(set) var isSummary = false
    /// A fingerprint of the bytes the event was read from, so that reading them again can tell
    /// whether they are still the bytes that were checked.
    public var contentDigest: UInt64?

    public init(event: Event, file: String, parts: [String] = []) {
        self.event = event
        self.file = file
        self.parts = parts
        var referenced: [String] = []
        for change in event.objectChanges {
            switch change.type {
            case .insert: changeCounts.inserts += 1
            case .update: changeCounts.updates += 1
            case .delete: changeCounts.deletes += 1
            }
            referenced += change.dataFiles
            for property in change.propertyChanges {
                if case .attributeInDataFile(let name) = property.value { referenced.append(name) }
            }
        }
        dataFileReferences = sortedUnique(referenced)
    }

    /// The same event without its object changes: what the analysis needs, in little memory.
    public func summary() -> SourcedEvent {
        var summary = self
        summary.event.objectChanges = []
        summary.isSummary = true
        return summary
    }
}

/// Everything a merge starts from (Spec/merge.md, "Event set").
public struct MergeInput: Sendable {
    /// Save, merge and incomplete events.
    public var events: [SourcedEvent] = []
    public var baselines: [SourcedEvent] = []
    /// Stores with a `stores/` registration; nil when the input is not a cloud folder (no 205).
    public var registeredStores: Set<String>?
    /// Names present in `data/`; nil when the input is not a cloud folder (no 210).
    public var dataFiles: Set<String>?
    /// Files of incomplete multipart sets (203).
    public var incompleteFiles: [String] = []
    /// When given, `sha256:` model versions must equal its hash (204).
    public var modelHash: String?
    /// When given, related ids resolve only in the relationship's destination entity and its
    /// sub-entities.
    public var model: DataModel?
    /// Reads a summarized event's object changes again (from its files), so that only one event
    /// body is in memory at a time during the replay.
    public var loadBody: (@Sendable (SourcedEvent) throws(FormatError) -> Event)?

    public init() {}

    /// The whole event, read again when `sourced` is a summary.
    public func body(of sourced: SourcedEvent) throws(FormatError) -> Event {
        guard sourced.isSummary else { return sourced.event }
        guard let loadBody else {
            throw FormatError(.mergeIncompleteData, "the object changes of this event were dropped and cannot be read again", location: .init(file: sourced.file))
        }
        return try loadBody(sourced)
    }
}

/// A reason the merge cannot run, with the original framework's number where it has one.
public struct IntegrityProblem: Sendable, Hashable {
    public var code: FormatError.Code
    public var number: Int?
    public var files: [String]
    public var message: String
    /// Code-specific facts (store, revisions, data file...), as verify reports them.
    public var details: JSONObject = JSONObject()
}

public struct MergeFailure: Error, Sendable {
    public var problems: [IntegrityProblem]
}

/// The reference merge (Spec/merge.md): selects the events, checks integrity, replays them in
/// the total order and returns the final store state.
public enum MergeEngine {
    public static func merge(_ input: MergeInput) throws(MergeFailure) -> StoreState {
        let analysis = analyze(input)
        guard analysis.problems.isEmpty else { throw MergeFailure(problems: analysis.problems) }
        var state = StoreState(model: input.model)
        try replay(analysis.baselines + analysis.replay, into: &state, input)
        return state
    }

    /// Applies events in the order given, reading summarized ones again (a few ahead, on every
    /// core); an event that can no longer be read stops the replay.
    public static func replay(_ events: [SourcedEvent], into state: inout StoreState, _ input: MergeInput) throws(MergeFailure) {
        let prefetcher = BodyPrefetcher(events, input: input)
        defer { prefetcher.cancel() }
        for (index, sourced) in events.enumerated() {
            do {
                state.apply(try prefetcher.take(index))
            } catch {
                throw MergeFailure(problems: [IntegrityProblem(code: error.code, number: nil, files: [sourced.file], message: "could not be read again for the replay: \(error.message)")])
            }
        }
    }

    /// Everything a merge decides before replaying: which events take part, in which order, and
    /// every integrity problem. `verify` and `history` report from this.
    public static func analyze(_ input: MergeInput) -> MergeAnalysis { MergeAnalysis(input) }
}

/// The events that take part, in replay order, and what stops the merge (Spec/merge.md 4, 5).
public struct MergeAnalysis: Sendable {
    /// The baselines that take part, oldest first; later ones win property by property.
    public var baselines: [SourcedEvent] = []
    /// Baselines that do not take part, each with one that makes it redundant.
    public var redundantBaselines: [(baseline: SourcedEvent, by: SourcedEvent)] = []
    /// What the baselines together know: the store-wise maximum of their revision sets.
    public var baselineRevisions: RevisionSet?
    /// Events the baselines cover (not replayed).
    public var covered: [SourcedEvent] = []
    /// The events to replay, in replay order.
    public var replay: [SourcedEvent] = []
    /// Sorted by code, then files; empty when the merge can run.
    public var problems: [IntegrityProblem] = []

    init(_ input: MergeInput) {
        var problems: [IntegrityProblem] = []
        for file in input.incompleteFiles {
            problems.append(IntegrityProblem(code: .mergeIncompleteData, number: 203, files: [file], message: "a multipart event with parts missing"))
        }
        // Type 0 events never take part, covered or not (Spec/merge.md 4.1).
        for sourced in input.events + input.baselines where sourced.event.type == .incomplete {
            problems.append(IntegrityProblem(code: .mergeIncompleteData, number: 203, files: [sourced.file], message: "an incomplete event (type 0) is in the input"))
        }
        let candidates = input.events.filter { $0.event.type == .save || $0.event.type == .merge }
        let chosen = Self.chooseBaselines(input.baselines.filter { $0.event.type == .baseline }, input)
        baselines = chosen.baselines
        redundantBaselines = chosen.redundant
        problems += chosen.problems
        baselineRevisions = baselines.isEmpty ? nil : baselines.dropFirst().reduce(baselines[0].event.revisionSet) { $0.merged(with: $1.event.revisionSet) }
        // Deduplicate by (store, revision).
        var byRevision: [ExactString: [SourcedEvent]] = [:]
        var ordered: [SourcedEvent] = []
        // Copies of one (store, revision): the file first in string order names the event, so
        // the result does not depend on the order the inputs were given in.
        for sourced in candidates.sorted(by: { utf8Precedes($0.file, $1.file) }) {
            let key = ExactString("\(sourced.event.storeIdentifier)\u{0}\(sourced.event.revision)")
            if byRevision[key] == nil { ordered.append(sourced) }
            byRevision[key, default: []].append(sourced)
        }
        for copies in byRevision.values where copies.count > 1 && copies.contains(where: { !Self.same($0, copies[0], input) }) {
            let event = copies[0].event
            problems.append(IntegrityProblem(code: .mergeConflictingRevision, number: nil, files: sortedUnique(copies.map(\.file)),
                                             message: "different events claim revision \(event.revision) of store \(event.storeIdentifier)",
                                             details: JSONObject([("store", .string(event.storeIdentifier)), ("revision", JSONValue(event.revision))])))
        }
        let uncovered = ordered.filter { sourced in
            guard let known = baselineRevisions?[sourced.event.storeIdentifier] else { return true }
            return sourced.event.revision > known
        }
        covered = ordered.filter { sourced in
            guard let known = baselineRevisions?[sourced.event.storeIdentifier] else { return false }
            return sourced.event.revision <= known
        }
        problems += Self.integrity(uncovered, baselines: baselines, known: baselineRevisions, input: input)
        self.problems = problems.sorted { a, b in
            if a.code != b.code { return a.code < b.code }
            return a.files.lexicographicallyPrecedes(b.files, by: utf8Precedes)
        }
        replay = uncovered.sorted { a, b in
            let x = a.event, y = b.event
            if x.globalCount != y.globalCount { return x.globalCount < y.globalCount }
            if x.timestamp != y.timestamp { return x.timestamp < y.timestamp }
            if x.storeIdentifier != y.storeIdentifier { return utf8Precedes(x.storeIdentifier, y.storeIdentifier) }
            return x.revision < y.revision
        }
    }

    /// Whether two copies hold the same event. Copies are rare, so only they are read again when
    /// their object changes were dropped.
    static func same(_ a: SourcedEvent, _ b: SourcedEvent, _ input: MergeInput) -> Bool {
        guard a.isSummary || b.isSummary else { return a.event == b.event }
        if a.file == b.file && a.parts == b.parts { return true }
        guard a.summary().event == b.summary().event, let x = try? input.body(of: a), let y = try? input.body(of: b) else { return false }
        return x == y
    }

    /// The baselines that take part (Spec/merge.md, "Baselines"): a baseline whose revision set
    /// another one dominates is dropped; of equal sets only the newest is kept; concurrent ones
    /// are all kept, to be applied oldest first. Newest = greatest (global count, timestamp,
    /// unique identifier by UTF-8 bytes).
    static func chooseBaselines(_ candidates: [SourcedEvent], _ input: MergeInput) -> (baselines: [SourcedEvent], redundant: [(baseline: SourcedEvent, by: SourcedEvent)], problems: [IntegrityProblem]) {
        func newer(_ a: Event, _ b: Event) -> Bool {
            if a.globalCount != b.globalCount { return a.globalCount > b.globalCount }
            if a.timestamp != b.timestamp { return a.timestamp > b.timestamp }
            return utf8Precedes(b.uniqueIdentifier, a.uniqueIdentifier)
        }
        // Baselines that tie on every part of the choice are one when equal, a conflict if not.
        var baselines: [SourcedEvent] = []
        var problems: [IntegrityProblem] = []
        for candidate in candidates {
            let ties = baselines.filter { other in
                other.event.revisionSet == candidate.event.revisionSet && !newer(other.event, candidate.event) && !newer(candidate.event, other.event)
            }
            if ties.isEmpty {
                baselines.append(candidate)
            } else if ties.contains(where: { !same($0, candidate, input) }) {
                problems.append(IntegrityProblem(code: .mergeConflictingRevision, number: nil, files: sortedUnique(ties.map(\.file) + [candidate.file]),
                                                 message: "different baselines tie for store \(candidate.event.storeIdentifier) revision \(candidate.event.revision)"))
            }
        }
        func makesRedundant(_ other: SourcedEvent, _ candidate: SourcedEvent) -> Bool {
            switch other.event.revisionSet.compare(candidate.event.revisionSet) {
            case .dominates: return true
            case .equal: return newer(other.event, candidate.event)
            default: return false
            }
        }
        var kept: [SourcedEvent] = []
        var redundant: [(baseline: SourcedEvent, by: SourcedEvent)] = []
        for candidate in baselines {
            if let by = baselines.filter({ makesRedundant($0, candidate) }).min(by: { utf8Precedes($0.file, $1.file) }) {
                redundant.append((candidate, by))
            } else {
                kept.append(candidate)
            }
        }
        return (kept.sorted { newer($1.event, $0.event) }, redundant, problems)
    }

    static func integrity(_ events: [SourcedEvent], baselines: [SourcedEvent], known: RevisionSet?, input: MergeInput) -> [IntegrityProblem] {
        var problems: [IntegrityProblem] = []
        var revisionsByStore: [String: [Int64]] = [:]
        var filesByStore: [String: [String]] = [:]
        var fileOfRevision: [ExactString: String] = [:]
        for sourced in events {
            revisionsByStore[sourced.event.storeIdentifier, default: []].append(sourced.event.revision)
            filesByStore[sourced.event.storeIdentifier, default: []].append(sourced.file)
            fileOfRevision[ExactString("\(sourced.event.storeIdentifier)\u{0}\(sourced.event.revision)")] = sourced.file
        }
        for store in revisionsByStore.keys.sorted(by: utf8Precedes) {
            let revisions = (revisionsByStore[store] ?? []).sorted()
            if let registered = input.registeredStores, !registered.contains(store) {
                problems.append(IntegrityProblem(code: .mergeUnregisteredStore, number: 205, files: sortedUnique(filesByStore[store] ?? []),
                                                 message: "store \(store) has events but no stores/\(store) registration",
                                                 details: JSONObject([("store", .string(store))])))
            }
            guard let lowest = revisions.first else { continue }
            var expected = known?[store].map { $0 + 1 } ?? lowest
            for revision in revisions {
                if revision > expected {
                    let above = fileOfRevision[ExactString("\(store)\u{0}\(revision)")].map { [$0] } ?? []
                    problems.append(IntegrityProblem(code: .mergeRevisionGap, number: 200, files: above,
                                                     message: "store \(store) misses revisions \(expected)...\(revision - 1)",
                                                     details: JSONObject([("store", .string(store)), ("first", JSONValue(expected)), ("last", JSONValue(revision - 1))])))
                }
                expected = max(expected, revision + 1)
            }
        }
        for sourced in baselines {
            if let modelHash = input.modelHash, let version = sourced.event.modelVersion, version.hasPrefix("sha256:"), version != modelHash {
                problems.append(IntegrityProblem(code: .mergeUnknownModelVersion, number: 204, files: [sourced.file],
                                                 message: "written with model \(version), not the given model \(modelHash)", details: JSONObject([("modelVersion", .string(version))])))
            }
        }
        let latestByStore = revisionsByStore.mapValues { $0.max() ?? -1 }
        for sourced in events {
            for other in sourced.event.revisionSet.stores where other != sourced.event.storeIdentifier {
                guard let needed = sourced.event.revisionSet[other] else { continue }
                let present = latestByStore[other] ?? -1
                let covered = known?[other] ?? -1
                if needed > max(present, covered) {
                    problems.append(IntegrityProblem(code: .mergeMissingDependency, number: 201, files: [sourced.file],
                                                     message: "depends on revision \(needed) of store \(other), which is neither present nor covered by the baseline",
                                                     details: JSONObject([("store", .string(other)), ("revision", JSONValue(needed))])))
                }
            }
            if let modelHash = input.modelHash, let version = sourced.event.modelVersion,
               version.hasPrefix("sha256:"), version != modelHash {
                problems.append(IntegrityProblem(code: .mergeUnknownModelVersion, number: 204, files: [sourced.file],
                                                 message: "written with model \(version), not the given model \(modelHash)", details: JSONObject([("modelVersion", .string(version))])))
            }
        }
        if let present = input.dataFiles {
            for sourced in events + baselines {
                for name in sourced.dataFileReferences where !present.contains(name) {
                    problems.append(IntegrityProblem(code: .mergeMissingDataFile, number: 210, files: [sourced.file],
                                                     message: "references data/\(name), which is missing",
                                                     details: JSONObject([("dataFile", .string(name))])))
                }
            }
        }
        return problems
    }
}
