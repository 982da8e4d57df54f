import JSONDocument
import EnsembleModel
import DataModel
import ProgressReporting

extension FormatError.Code {
    public static let mergeUnregisteredStore = Self("merge.unregistered-store")
    public static let mergeRevisionGap = Self("merge.revision-gap")
    public static let mergeMissingDependency = Self("merge.missing-dependency")
    public static let mergeMissingDataFile = Self("merge.missing-data-file")
    public static let mergeUnknownModelVersion = Self("merge.unknown-model-version")
    public static let mergeIncompleteData = Self("merge.incomplete-data")
    public static let mergeConflictingRevision = Self("merge.conflicting-revision")
    /// Counts the findings of one code for one file beyond the first 100 (Spec/README.md 6.2).
    public static let mergeMoreFindings = Self("merge.more-findings")
    public static let mergeSeveralEnsembles = Self("merge.several-ensembles")
    /// `--out FILE` exists and `--force` was not given (Spec/merge.md 10).
    public static let mergeDestinationExists = Self("merge.destination-exists")
    /// A warning, not a finding: events name a model version and no model was given, so the
    /// state may differ from a device's (Spec/merge.md 10).
    public static let mergeModelNotGiven = Self("merge.model-not-given")
}

/// Everything a merge starts from (Spec/merge.md, "Event set").
package struct MergeInput: Sendable {
    /// Save, merge and incomplete events held in memory.
    package var events: [SourcedEvent] = []
    /// Save, merge and incomplete events indexed in SQLite instead, for histories too long for
    /// memory; when set, ``events`` must be empty.
    package var eventStore: EventStore?
    package var baselines: [SourcedEvent] = []
    /// Stores with a `stores/` registration, by exact bytes; nil when the input is not a cloud
    /// folder (no 205).
    package var registeredStores: Set<ExactString>?
    /// Names present in `data/`, by exact bytes; nil when the input is not a cloud folder (no 210).
    package var dataFiles: Set<ExactString>?
    /// The present parts of each incomplete multipart set (203: one finding per set).
    package var incompleteSets: [[String]] = []
    /// The toolkit model hash of the model in use (Spec/model.md 7): what a rebase writes.
    package var modelHash: String?
    /// When given, every model version it can compare must be one of its versions (204,
    /// Spec/merge.md 5.7).
    package var modelVersions: ModelVersionCatalog?
    /// When given, related ids resolve only in the relationship's destination entity and its
    /// sub-entities.
    package var model: DataModel?
    /// A replay made while the inputs were read; ``MergeEngine/merge(_:)`` uses its state when
    /// the analysis confirms it.
    package var earlyReplay: EarlyReplay?
    /// Reads a summarized event's object changes again (from its files), so that only one event
    /// body is in memory at a time during the replay.
    package var loadBody: (@Sendable (SourcedEvent) throws(FormatError) -> Event)?
    /// ``loadBody`` with the object changes in numbered form, for the replay; without it, the
    /// replay numbers what ``loadBody`` reads.
    package var loadNumberedBody: (@Sendable (SourcedEvent) throws(FormatError) -> NumberedEvent)?

    package init() {}

    /// The whole event, read again when `sourced` is a summary.
    package func body(of sourced: SourcedEvent) throws(FormatError) -> Event {
        guard sourced.isSummary else { return sourced.event }
        guard let loadBody else {
            throw FormatError(
                .mergeIncompleteData, "the object changes of this event were dropped and cannot be read again", location: .init(file: sourced.file))
        }
        return try loadBody(sourced)
    }

    /// ``body(of:)`` in numbered form.
    package func numberedBody(of sourced: SourcedEvent) throws(FormatError) -> NumberedEvent {
        guard sourced.isSummary, let loadNumberedBody else { return NumberedEvent(try body(of: sourced)) }
        return try loadNumberedBody(sourced)
    }
}

/// A reason the merge cannot run, with the original framework's number where it has one.
public struct IntegrityProblem: Sendable, Hashable {
    public var code: FormatError.Code
    public var number: Int?
    public var files: [String]
    public var message: String
    /// Code-specific facts (store, revisions, data file...), in the order of Spec/merge.md 5.9.
    public var details: JSONObject = JSONObject()

    public init(code: FormatError.Code, number: Int?, files: [String], message: String, details: JSONObject = JSONObject()) {
        self.code = code
        self.number = number
        self.files = files
        self.message = message
        self.details = details
    }
}

extension IntegrityProblem {
    /// "revision 3" or "revisions 3-5", as a message names the revisions of a gap.
    package static func revisions(_ first: Int64, _ last: Int64) -> String {
        first == last ? "revision \(first)" : "revisions \(first)-\(last)"
    }
}

package struct MergeFailure: Error, Sendable {
    package var problems: [IntegrityProblem]
}

/// The reference merge (Spec/merge.md): selects the events, checks integrity, replays them in
/// the total order and returns the final store state.
package enum MergeEngine {
    package static func merge(_ input: MergeInput) throws(MergeFailure) -> StoreState {
        try merge(input, whileChecking: nil).state
    }

    /// ``merge(_:)``. With `whileChecking`, the state replayed while a folder was read is handed
    /// to it before the analysis decides whether that state is the merge's, so that the caller
    /// can start writing it meanwhile (the analysis runs on one core); `isReplayedState` says
    /// whether the state returned is the one handed over.
    package static func merge(
        _ input: MergeInput, whileChecking: ((StoreState) -> Void)?
    ) throws(MergeFailure) -> (state: StoreState, isReplayedState: Bool) {
        var handedOver = false
        if let whileChecking, let replayed = input.earlyReplay?.replayedState() {
            whileChecking(replayed)
            handedOver = true
        }
        let analysis = analyze(input)
        guard analysis.problems.isEmpty else { throw MergeFailure(problems: analysis.problems) }
        if let early = input.earlyReplay?.state(for: analysis) { return (early, handedOver) }
        var state = StoreState(model: input.model)
        try replay(analysis.baselines, into: &state, input)
        // A page of summaries at a time, so that the replay order is never all in memory.
        do {
            var done = 0
            try analysis.replayPages { page in
                try replay(page, into: &state, input)
                done += page.count
                ProgressReport.report("events replayed", done: done, total: analysis.replayCount)
            }
        } catch let failure as MergeFailure {
            throw failure
        } catch {
            let message = (error as? FormatError)?.message ?? "\(error)"
            throw MergeFailure(problems: [IntegrityProblem(code: .mergeEventStore, number: nil, files: [], message: "the event index failed: \(message)")])
        }
        return (state, false)
    }

    /// Applies events in the order given, reading summarized ones again (a few ahead, on every
    /// core); an event that can no longer be read stops the replay.
    package static func replay(_ events: [SourcedEvent], into state: inout StoreState, _ input: MergeInput) throws(MergeFailure) {
        let prefetcher = BodyPrefetcher(events, input: input)
        defer { prefetcher.cancel() }
        let naming = state.isWatching
        for (index, sourced) in events.enumerated() {
            do {
                // Provenance names each event by its file (Spec/diff.md 5).
                if naming { state.currentSource = sourced.file }
                state.apply(try prefetcher.take(index))
            } catch {
                throw MergeFailure(problems: [
                    IntegrityProblem(code: error.code, number: nil, files: [sourced.file], message: "could not be read again for the replay: \(error.message)")
                ])
            }
        }
    }

    /// Everything a merge decides before replaying: which events take part, in which order, and
    /// every integrity problem. `verify` and `history` report from this.
    package static func analyze(_ input: MergeInput) -> MergeAnalysis { MergeAnalysis(input) }
}

/// The events that take part, in replay order, and what stops the merge (Spec/merge.md 4, 5).
///
/// The save and merge events are sorted and grouped in an ``EventStore`` (SQLite), never all
/// in memory: ``replayOrder()`` reads them back in replay order.
package struct MergeAnalysis: Sendable {
    /// The baselines that take part, oldest first; later ones win property by property.
    package var baselines: [SourcedEvent] = []
    /// Baselines that do not take part, each with one that makes it redundant.
    package var redundantBaselines: [(baseline: SourcedEvent, by: SourcedEvent)] = []
    /// What the baselines together know: the store-wise maximum of their revision sets.
    package var baselineRevisions: RevisionSet?
    /// How many events are replayed, and how many the baselines cover (not replayed).
    package private(set) var replayCount = 0
    package private(set) var coveredCount = 0
    /// Sorted by code, then files; empty when the merge can run.
    package var problems: [IntegrityProblem] = []
    /// The events with the role this analysis gave each.
    private var store: EventStore?

    init(_ input: MergeInput) {
        do throws(FormatError) {
            try analyze(input)
        } catch {
            problems.append(IntegrityProblem(code: .mergeEventStore, number: nil, files: [], message: "the event index failed: \(error.message)"))
        }
        problems.sort(by: IntegrityProblem.reportPrecedes)
    }

    /// One key of the replay order (Spec/merge.md 6), most significant first: the one definition
    /// both the comparison of decoded events and the event index's `ORDER BY` are made from.
    enum ReplayKey: CaseIterable {
        case globalCount, timestamp, store, revision

        /// The event index's column, ordered as this key orders: SQLite compares TEXT as its
        /// UTF-8 bytes and REAL as doubles, as the comparison below does.
        var column: String {
            switch self {
            case .globalCount: "global_count"
            case .timestamp: "timestamp"
            case .store: "store"
            case .revision: "revision"
            }
        }

        /// Whether `x` comes first by this key; nil when they tie on it.
        @inline(__always)
        func precedes(_ x: ReplayPosition, _ y: ReplayPosition) -> Bool? {
            switch self {
            case .globalCount: x.globalCount == y.globalCount ? nil : x.globalCount < y.globalCount
            case .timestamp: x.timestamp == y.timestamp ? nil : x.timestamp < y.timestamp
            case .store: ExactString(x.store) == ExactString(y.store) ? nil : utf8Precedes(x.store, y.store)
            case .revision: x.revision == y.revision ? nil : x.revision < y.revision
            }
        }
    }

    /// What the replay order reads of an event, read once: an event's revision is a search
    /// of its revision set.
    struct ReplayPosition {
        var globalCount: Int64
        var timestamp: Double
        var store: String
        var revision: Int64

        init(_ event: Event) {
            (globalCount, timestamp, store, revision) = (event.globalCount, event.timestamp, event.storeIdentifier, event.revision)
        }

        func precedes(_ other: ReplayPosition) -> Bool {
            for key in ReplayKey.allCases {
                if let precedes = key.precedes(self, other) { return precedes }
            }
            return false
        }
    }

    /// The replay order (Spec/merge.md 6): global count, timestamp, store (UTF-8 bytes),
    /// revision. ``replayOrder()`` asks SQLite for the same order.
    package static func replayPrecedes(_ x: Event, _ y: Event) -> Bool { ReplayPosition(x).precedes(ReplayPosition(y)) }

    /// Sorts `items` into the replay order of their events (``replayPrecedes(_:_:)``), keeping
    /// the order of items that tie. Each event is read once, and the items are then swapped
    /// into place: sorting the items themselves copied them at each step, and a copy of an
    /// event retains and releases each of its strings and lists (measured: Benchmarks/README.md).
    package static func sortInReplayOrder<Item>(_ items: inout [Item], event: (Item) -> Event) {
        guard items.count > 1 else { return }
        var positions = items.indices.map { (position: ReplayPosition(event(items[$0])), index: $0) }
        positions.sort { $0.position.precedes($1.position) || (!$1.position.precedes($0.position) && $0.index < $1.index) }
        // Where each item goes: the item now at `i` belongs at `destination[i]`. Each swap puts
        // one item where it belongs.
        var destination = [Int](repeating: 0, count: items.count)
        for (place, position) in positions.enumerated() { destination[position.index] = place }
        items.withUnsafeMutableBufferPointer { items in
            for index in items.indices {
                while destination[index] != index {
                    let other = destination[index]
                    items.swapAt(index, other)
                    destination.swapAt(index, other)
                }
            }
        }
    }

    /// The events to replay, in replay order: global count, timestamp, store (UTF-8 bytes),
    /// revision.
    package func replayOrder() throws(FormatError) -> EventStore.Cursor {
        guard let store else { throw FormatError(.mergeEventStore, "the analysis has no event index") }
        return try store.cursor(where: Self.replayedRows, orderBy: Self.replayOrdering)
    }

    /// The greatest global count of each store's events to replay (in no particular order),
    /// without reading the events.
    package func greatestReplayedGlobalCounts() throws(FormatError) -> [Int64] {
        guard let store else { throw FormatError(.mergeEventStore, "the analysis has no event index") }
        return try store.greatestGlobalCounts(where: Self.replayedRows)
    }

    /// The file of each event to replay, in replay order, without reading the events.
    package func forEachReplayedFile(_ body: (String) -> Void) throws(FormatError) {
        guard let store else { throw FormatError(.mergeEventStore, "the analysis has no event index") }
        try store.forEachRow("file", where: Self.replayedRows, orderBy: Self.replayOrdering) { body($0.text(0)) }
    }

    /// What a rebase's plan (Spec/merge.md 13.3) and verify's replayed totals read of an event to
    /// replay.
    package struct ReplayedFields {
        package var globalCount: Int64
        package var file: String
        package var store: String
        package var revision: Int64
        package var timestamp: Double
        package var modelVersion: String?
        package var counts: SourcedEvent.ChangeCounts
        /// Nil unless asked for.
        package var revisionSet: RevisionSet?
    }

    /// ``ReplayedFields`` of each event to replay, in replay order, with its revision set if
    /// `revisions`, without reading the events (a whole event read back is a dozen strings and
    /// lists).
    package func forEachReplayedFields(revisions: Bool = false, _ body: (ReplayedFields) throws(FormatError) -> Void) throws(FormatError) {
        guard let store else { throw FormatError(.mergeEventStore, "the analysis has no event index") }
        let columns = "global_count, file, store, revision, timestamp, model_version, inserts, updates, deletes, revisions"
        try store.forEachRow(columns, where: Self.replayedRows, orderBy: Self.replayOrdering) { (row) throws(FormatError) in
            var counts = SourcedEvent.ChangeCounts()
            (counts.inserts, counts.updates, counts.deletes) = (Int(row.int64(6)), Int(row.int64(7)), Int(row.int64(8)))
            try body(
                ReplayedFields(
                    globalCount: row.int64(0), file: row.text(1), store: row.text(2), revision: row.int64(3), timestamp: row.double(4),
                    modelVersion: row.isNull(5) ? nil : row.text(5), counts: counts, revisionSet: revisions ? try store.revisionSet(row.blob(9)) : nil))
        }
    }

    /// The events to replay with a global count above `globalCount`, in replay order.
    func replayedEvents(above globalCount: Int64) throws(FormatError) -> [SourcedEvent] {
        try replayedEvents(where: "\(Self.replayedRows) AND global_count > \(globalCount)")
    }

    /// The events to replay that `condition` selects, in replay order, all in memory.
    private func replayedEvents(where condition: String) throws(FormatError) -> [SourcedEvent] {
        guard let store else { throw FormatError(.mergeEventStore, "the analysis has no event index") }
        return try store.all(where: condition, orderBy: Self.replayOrdering)
    }

    private static let replayedRows = EventStore.Role.replayed.rows
    private static let replayOrdering = ReplayKey.allCases.map(\.column).joined(separator: ", ")

    /// Calls `body` with the events to replay in replay order, a page at a time (so that the
    /// order is never all in memory), up to and including `globalCount`.
    package func replayPages(through globalCount: Int64 = .max, _ body: ([SourcedEvent]) throws -> Void) throws {
        let order = try replayOrder()
        var page: [SourcedEvent] = []
        while let sourced = try order.next(), sourced.event.globalCount <= globalCount {
            page.append(sourced)
            if page.count == 4096 {
                try body(page)
                page = []
            }
        }
        if !page.isEmpty { try body(page) }
    }

    /// The events to replay, in replay order, all in memory.
    package func replayedEvents() throws(FormatError) -> [SourcedEvent] { try replayedEvents(where: Self.replayedRows) }

    /// The events the baselines cover (not replayed), by file name.
    package func coveredEvents() throws(FormatError) -> [SourcedEvent] {
        try store?.all(where: EventStore.Role.covered.rows, orderBy: "file, id") ?? []
    }

    private mutating func analyze(_ input: MergeInput) throws(FormatError) {
        problems += input.incompleteSetProblems()
        let store = try input.eventIndex()
        self.store = store
        // Type 0 events never take part, covered or not (Spec/merge.md 4.1).
        for sourced in try store.incompleteEvents() {
            problems.append(
                IntegrityProblem(code: .mergeIncompleteData, number: 203, files: [sourced.file], message: "an incomplete event (type 0) is in the input"))
        }
        for sourced in input.baselines where sourced.event.type == .incomplete {
            problems.append(
                IntegrityProblem(code: .mergeIncompleteData, number: 203, files: [sourced.file], message: "an incomplete event (type 0) is in the input"))
        }
        let chosen = Self.chooseBaselines(input.baselines.filter { $0.event.type == .baseline }, input)
        baselines = chosen.baselines
        redundantBaselines = chosen.redundant
        problems += chosen.problems
        baselineRevisions =
            baselines.isEmpty ? nil : baselines.dropFirst().reduce(into: baselines[0].event.revisionSet) { $0.merge(with: $1.event.revisionSet) }
        var integrity = IntegrityCheck(known: baselineRevisions, input: input)
        try store.transaction { () throws(FormatError) in
            // In part: the checks below read only what an event read in part holds.
            try store.forEachRevision(whole: false) { (copies) throws(FormatError) in
                guard let first = copies.first else { return }
                let conflict = Self.conflict(among: copies, input)
                let conflicting = conflict != nil
                if let conflict { problems.append(conflict) }
                if let known = baselineRevisions?[first.sourced.event.storeIdentifier], first.sourced.event.revision <= known {
                    for copy in copies.dropFirst() { try store.setRole(.copy, of: copy.id) }
                    try store.setRole(.covered, of: first.id)
                    coveredCount += 1
                } else {
                    // Replayed: the role it has until given another.
                    replayCount += 1
                    integrity.add(first.sourced)
                    // Every copy of a conflicting revision is checked as an event of its own
                    // (Spec/merge.md 5.8); identical copies are one event.
                    for copy in copies.dropFirst() {
                        try store.setRole(conflicting ? .conflictingCopy : .copy, of: copy.id)
                        if conflicting { integrity.addCopy(copy.sourced) }
                    }
                }
            }
        }
        problems += integrity.finish()
        problems += try integrity.dependencies(store, baselines: baselines)
    }

    /// `merge.conflicting-revision` when the events read for one (store, revision) are not all
    /// the same event (Spec/merge.md 4.2); `copies` come in file order.
    static func conflict(among rows: [(id: Int64, sourced: SourcedEvent)], _ input: MergeInput) -> IntegrityProblem? {
        // Most revisions have one copy: nothing to compare, and no list of events made.
        guard rows.count > 1 else { return nil }
        let copies = rows.map(\.sourced)
        guard let first = copies.first, copies.contains(where: { !same($0, first, input) }) else { return nil }
        let event = first.event
        return IntegrityProblem(
            code: .mergeConflictingRevision, number: nil, files: sortedUnique(copies.map(\.file)),
            message: "different events claim revision \(event.revision) of store \(event.storeIdentifier)",
            details: JSONObject([("store", .string(event.storeIdentifier)), ("revision", JSONValue(event.revision))]))
    }

    /// Whether two copies hold the same event. Copies are rare, so only they are read again when
    /// their object changes were dropped.
    static func same(_ a: SourcedEvent, _ b: SourcedEvent, _ input: MergeInput) -> Bool {
        guard a.isSummary || b.isSummary else { return a.event == b.event }
        if exactlyEqual(a.file, b.file) && exactlyEqual(a.parts, b.parts) { return true }
        guard a.summary().event == b.summary().event, let x = try? input.body(of: a), let y = try? input.body(of: b) else { return false }
        return x == y
    }

    /// The baselines that take part (Spec/merge.md, "Baselines"): a baseline whose revision set
    /// another one dominates is dropped; of equal sets only the newest is kept; concurrent ones
    /// are all kept, to be applied oldest first. Newest = greatest (global count, timestamp,
    /// unique identifier by UTF-8 bytes).
    ///
    /// Ties are found by a key and dominance through a ``DominanceIndex``, never by comparing
    /// every pair: 10,000 concurrent baselines took 152 s that way (Benchmarks/README.md).
    static func chooseBaselines(
        _ candidates: [SourcedEvent], _ input: MergeInput
    ) -> (baselines: [SourcedEvent], redundant: [(baseline: SourcedEvent, by: SourcedEvent)], problems: [IntegrityProblem]) {
        func newer(_ a: Event, _ b: Event) -> Bool {
            if a.globalCount != b.globalCount { return a.globalCount > b.globalCount }
            if a.timestamp != b.timestamp { return a.timestamp > b.timestamp }
            if ExactString(a.uniqueIdentifier) != ExactString(b.uniqueIdentifier) { return utf8Precedes(b.uniqueIdentifier, a.uniqueIdentifier) }
            // Concurrent baselines tied on the key: their revision sets decide, never file names.
            return b.revisionSet.listPrecedes(a.revisionSet)
        }
        // Baselines that tie on every part of the choice are one when equal, a conflict if not.
        // Two baselines tie exactly when this key is equal (timestamps are finite: every
        // decoder checks), so each candidate ties with at most one baseline kept before it.
        struct TieKey: Hashable {
            var revisionSet: RevisionSet
            var globalCount: Int64
            var timestamp: UInt64
            var uniqueIdentifier: ExactString

            init(_ event: Event) {
                revisionSet = event.revisionSet
                globalCount = event.globalCount
                // 0.0 and -0.0 are the same time.
                timestamp = event.timestamp == 0 ? 0 : event.timestamp.bitPattern
                uniqueIdentifier = ExactString(event.uniqueIdentifier)
            }
        }
        var baselines: [SourcedEvent] = []
        var problems: [IntegrityProblem] = []
        var kept: [TieKey: Int] = [:]
        for candidate in candidates {
            let key = TieKey(candidate.event)
            guard let index = kept[key] else {
                kept[key] = baselines.count
                baselines.append(candidate)
                continue
            }
            let tie = baselines[index]
            if !same(tie, candidate, input) {
                // Named by the baseline whose file comes first (Spec/merge.md 4.4 step 3).
                let tied = utf8Precedes(candidate.file, tie.file) ? candidate.event : tie.event
                problems.append(
                    IntegrityProblem(
                        code: .mergeConflictingRevision, number: nil, files: sortedUnique([tie.file, candidate.file]),
                        message: "different baselines tie for store \(tied.storeIdentifier) revision \(tied.revision)",
                        details: JSONObject([("store", .string(tied.storeIdentifier)), ("revision", JSONValue(tied.revision))])))
            }
        }
        // A baseline is redundant when another one's set dominates its own, or is equal and the
        // other is newer; it is named by the first such baseline by file (then by position).
        func precedes(_ a: Int, _ b: Int) -> Bool {
            let x = baselines[a].file, y = baselines[b].file
            return utf8Precedes(x, y) || (ExactString(x) == ExactString(y) && a < b)
        }
        func firstByFile(_ a: Int?, _ b: Int?) -> Int? {
            guard let a, let b else { return a ?? b }
            return precedes(b, a) ? b : a
        }
        var groupOf: [RevisionSet: Int] = [:]
        var groups: [[Int]] = []
        for (position, baseline) in baselines.enumerated() {
            if let group = groupOf[baseline.event.revisionSet] {
                groups[group].append(position)
            } else {
                groupOf[baseline.event.revisionSet] = groups.count
                groups.append([position])
            }
        }
        // Each group is ranked by its first baseline by file.
        let firstOfGroup = groups.map { $0.reduce(nil, firstByFile) ?? 0 }
        var rank = [Int](repeating: 0, count: groups.count)
        for (order, group) in groups.indices.sorted(by: { precedes(firstOfGroup[$0], firstOfGroup[$1]) }).enumerated() { rank[group] = order }
        let dominance = DominanceIndex(groups.map { baselines[$0[0]].event.revisionSet }, rank: rank)
        var redundantBy = [Int?](repeating: nil, count: baselines.count)
        for (group, members) in groups.enumerated() {
            let dominatedBy = dominance.lowestDominator(of: group).map { firstOfGroup[$0] }
            // Newest first: each member is made redundant by the dominating sets and by the
            // members before it.
            var before: Int?
            for position in members.sorted(by: { newer(baselines[$0].event, baselines[$1].event) }) {
                redundantBy[position] = firstByFile(dominatedBy, before)
                before = firstByFile(before, position)
            }
        }
        var chosen: [SourcedEvent] = []
        var redundant: [(baseline: SourcedEvent, by: SourcedEvent)] = []
        for (position, candidate) in baselines.enumerated() {
            if let by = redundantBy[position] {
                redundant.append((candidate, baselines[by]))
            } else {
                chosen.append(candidate)
            }
        }
        return (chosen.sorted { newer($1.event, $0.event) }, redundant, problems)
    }
}

/// For each of many distinct revision sets, the set of lowest rank among those that dominate
/// it (Spec/merge.md 4.3), found through the sets holding its most selective store instead of
/// by comparing every pair.
struct DominanceIndex {
    private typealias Holder = (revision: Int64, set: Int, lowest: Int)
    private let sets: [RevisionSet]
    private let rank: [Int]
    /// For each store, the sets holding it, by revision (highest first), then by number; with
    /// each, the set of lowest rank up to it.
    private var holders: [ExactString: [Holder]] = [:]
    /// The sets by rank.
    private let ranked: [Int]
    /// The sum over a set's stores of (revision - lowest revision of that store + 1): a set
    /// that dominates another has a strictly larger sum. Nil when a sum does not fit.
    private var sums: [Int64]?

    /// `sets` must be distinct; `rank` orders them (lower first) and has no ties.
    init(_ sets: [RevisionSet], rank: [Int]) {
        self.sets = sets
        self.rank = rank
        ranked = sets.indices.sorted { rank[$0] < rank[$1] }
        var lists: [ExactString: [Holder]] = [:]
        var lowest: [ExactString: Int64] = [:]
        for (index, set) in sets.enumerated() {
            for (store, revision) in set.revisions {
                lists[ExactString(store), default: []].append((revision, index, index))
                lowest[ExactString(store)] = min(lowest[ExactString(store)] ?? revision, revision)
            }
        }
        holders = lists.mapValues { list in
            var sorted = list.sorted { $0.revision != $1.revision ? $0.revision > $1.revision : $0.set < $1.set }
            for position in sorted.indices.dropFirst() where rank[sorted[position - 1].lowest] < rank[sorted[position].set] {
                sorted[position].lowest = sorted[position - 1].lowest
            }
            return sorted
        }
        var sums: [Int64] = []
        sums.reserveCapacity(sets.count)
        for set in sets {
            var sum: Int64 = 0
            for (store, revision) in set.revisions {
                let (shifted, overflowA) = revision.subtractingReportingOverflow(lowest[ExactString(store)] ?? revision)
                let (next, overflowB) = sum.addingReportingOverflow(shifted)
                let (total, overflowC) = next.addingReportingOverflow(1)
                guard !overflowA && !overflowB && !overflowC else {
                    self.sums = nil
                    return
                }
                sum = total
            }
            sums.append(sum)
        }
        self.sums = sums
    }

    /// Whether set `other` dominates set `index` (the sets are distinct).
    private func dominates(_ other: Int, _ index: Int) -> Bool {
        if let sums, sums[other] <= sums[index] { return false }
        return sets[other].covers(sets[index])
    }

    /// The set of lowest rank that dominates set `index`, or nil when none does.
    func lowestDominator(of index: Int) -> Int? {
        let target = sets[index]
        let pairs = target.revisions
        // Every non-empty set dominates the empty set.
        guard !pairs.isEmpty else { return ranked.first { $0 != index } }
        // A dominating set holds every store of the target at a revision at least as high: only
        // the holders of the store that fewest sets hold high enough are candidates, a prefix of
        // its list, which holds the target too.
        var best: (list: [Holder], count: Int, revision: Int64)?
        for (store, revision) in pairs {
            let list = holders[ExactString(store)] ?? []
            let count = partitionPoint(list.count) { list[$0].revision < revision }
            if best.map({ count < $0.count }) ?? true { best = (list, count, revision) }
        }
        guard let (list, count, revision) = best else { return nil }
        let own = partitionPoint(count) { list[$0].revision == revision && list[$0].set >= index }
        // The candidate of lowest rank: before the target in the list, or after it with the
        // same revision. When it dominates, it is the answer (as it is in a chain of sets).
        var lowest = own > 0 ? list[own - 1].lowest : nil
        for holder in list[min(own + 1, count)..<count] where lowest.map({ rank[holder.set] < rank[$0] }) ?? true { lowest = holder.set }
        if let lowest, dominates(lowest, index) { return lowest }
        var result: Int?
        for holder in list[..<count] where holder.set != index && (result.map { rank[holder.set] < rank[$0] } ?? true) && dominates(holder.set, index) {
            result = holder.set
        }
        return result
    }

}

/// The integrity checks of Spec/merge.md 5 over the events to replay, fed one at a time in
/// (store, revision) order so that no list of events is kept.
private struct IntegrityCheck {
    let known: RevisionSet?
    let input: MergeInput
    private var problems: [IntegrityProblem] = []
    /// The store being read: its identifier, its files (only when unregistered) and the next
    /// revision expected.
    private var store: (identifier: String, files: [String]?, expected: Int64)?
    /// The highest replayed revision of each store.
    private(set) var latestByStore = RevisionSet()
    /// The highest revision of each store in the revision sets of the checked events (their
    /// own revisions included, which are present): when none exceeds what is present or
    /// covered, no event misses a dependency and the events are not read again for 201.
    private var highestNeeded = RevisionSet()

    init(known: RevisionSet?, input: MergeInput) {
        self.known = known
        self.input = input
    }

    /// A replayed event (the first file of its revision).
    mutating func add(_ sourced: SourcedEvent) {
        check(sourced)
        // The revision read once: each read searches the event's revision set.
        let event = sourced.event, revision = event.revision
        if store.map({ ExactString($0.identifier) != ExactString(event.storeIdentifier) }) ?? true {
            finishStore()
            let unregistered = input.registeredStores.map { !$0.contains(ExactString(event.storeIdentifier)) } ?? false
            store = (event.storeIdentifier, unregistered ? [] : nil, known?[event.storeIdentifier].map { $0 + 1 } ?? revision)
        }
        guard var current = store else { return }
        current.files?.append(sourced.file)
        if revision > current.expected {
            problems.append(
                IntegrityProblem(
                    code: .mergeRevisionGap, number: 200, files: [sourced.file],
                    message: "store \(current.identifier) misses \(IntegrityProblem.revisions(current.expected, revision - 1))",
                    details: JSONObject([
                        ("store", .string(current.identifier)), ("first", JSONValue(current.expected)), ("last", JSONValue(revision - 1)),
                    ])))
        }
        current.expected = max(current.expected, revision + 1)
        store = current
        latestByStore[event.storeIdentifier] = max(latestByStore[event.storeIdentifier] ?? -1, revision)
    }

    /// Another copy of the revision just added (a conflicting one): it counts for 205 only here;
    /// its own revision set, data files and model version are checked by ``dependencies``.
    mutating func addCopy(_ sourced: SourcedEvent) {
        check(sourced)
        store?.files?.append(sourced.file)
    }

    /// The checks of one event that need no other event: model version and data files; its
    /// dependencies are noted for ``dependencies(_:baselines:)``.
    private mutating func check(_ sourced: SourcedEvent) {
        problems += input.modelVersionProblems(sourced)
        problems += input.missingDataFileProblems(sourced)
        // The event's own store comes along: its revision is one replayed, so it never exceeds
        // what is present (and merging whole sets needs neither sorting nor a copy).
        highestNeeded.merge(with: sourced.event.revisionSet)
    }

    private mutating func finishStore() {
        guard let finished = store, let files = finished.files else { return }
        problems.append(
            IntegrityProblem(
                code: .mergeUnregisteredStore, number: 205, files: sortedUnique(files),
                message: "store \(finished.identifier) has events but no stores/\(finished.identifier) registration",
                details: JSONObject([("store", .string(finished.identifier))])))
    }

    /// The problems found while adding events.
    mutating func finish() -> [IntegrityProblem] {
        finishStore()
        store = nil
        defer { problems = [] }
        return problems
    }

    /// Checks that need every store's latest revision (dependencies, read again from `store`
    /// by file name only when some event may miss one), and the baselines' model versions and
    /// data files.
    func dependencies(_ store: EventStore, baselines: [SourcedEvent]) throws(FormatError) -> [IntegrityProblem] {
        var problems: [IntegrityProblem] = []
        for sourced in baselines { problems += input.modelVersionProblems(sourced) + input.missingDataFileProblems(sourced) }
        let anyMissing = highestNeeded.revisions.contains { other, needed in needed > max(latestByStore[other] ?? -1, known?[other] ?? -1) }
        guard anyMissing else { return problems }
        let replayed = try store.cursor(
            where: "(\(EventStore.Role.replayed.rows)) OR \(EventStore.Role.conflictingCopy.rows)", orderBy: "file, id")
        while let sourced = try replayed.next() {
            let missing = sourced.event.revisionSet.stores.compactMap { other -> (store: String, needed: Int64)? in
                guard other != sourced.event.storeIdentifier, let needed = sourced.event.revisionSet[other] else { return nil }
                return needed > max(latestByStore[other] ?? -1, known?[other] ?? -1) ? (other, needed) : nil
            }
            // One event names each store once, so the report order among its findings is that of
            // the stores' UTF-8 bytes (Spec/merge.md 5.9), the order `stores` has.
            problems += IntegrityProblem.bounded(missing, code: .mergeMissingDependency, number: 201, file: sourced.file) {
                IntegrityProblem(
                    code: .mergeMissingDependency, number: 201, files: [sourced.file],
                    message: "depends on revision \($0.needed) of store \($0.store), which is neither present nor covered by the baseline",
                    details: JSONObject([("store", .string($0.store)), ("revision", JSONValue($0.needed))]))
            }
        }
        return problems
    }
}

extension IntegrityProblem {
    /// The most findings of one code one file gets (Spec/README.md 6.2).
    static let findingsPerFile = 100

    /// The findings of `items`, all of one code for one file and already in report order, within
    /// the report bound of Spec/README.md 6.2: the first 100, then one `merge.more-findings`
    /// counting the rest. Only the kept items become findings, so an event that names 100,000
    /// missing pieces costs no more than one that names 100.
    static func bounded<Item>(_ items: [Item], code: FormatError.Code, number: Int, file: String, finding: (Item) -> IntegrityProblem) -> [IntegrityProblem] {
        guard items.count > findingsPerFile else { return items.map(finding) }
        let omitted = items.count - findingsPerFile
        return items.prefix(findingsPerFile).map(finding) + [
            IntegrityProblem(
                code: .mergeMoreFindings, number: number, files: [file], message: "and \(omitted) more \(code.rawValue) findings for this file",
                details: JSONObject([("code", .string(code.rawValue)), ("count", JSONValue(Int64(omitted)))]))
        ]
    }
}

extension MergeInput {
    /// One 203 per incomplete multipart set, with every present part (Spec/merge.md 5.2).
    func incompleteSetProblems() -> [IntegrityProblem] {
        incompleteSets.map {
            IntegrityProblem(code: .mergeIncompleteData, number: 203, files: sortedUnique($0), message: "a multipart event with parts missing")
        }
    }

    /// The events indexed for an analysis: the given index with its roles cleared, or a new one
    /// holding the events in memory.
    func eventIndex() throws(FormatError) -> EventStore {
        guard let given = eventStore else {
            let index = try EventStore()
            try index.add(events)
            return index
        }
        guard events.isEmpty else { throw FormatError(.mergeEventStore, "events were given both in memory and in an event store") }
        try given.resetRoles()
        return given
    }

    /// 204 for an event or baseline whose model version none of the known versions matches
    /// (Spec/merge.md 5.7; the form decides what it is compared with); a device holds such an
    /// event back (section 15).
    func modelVersionProblems(_ sourced: SourcedEvent) -> [IntegrityProblem] {
        // The catalog read in place: a copy of it for each event retained and released its lists.
        guard let version = sourced.event.modelVersion, let check = modelVersions?.check(version), check.isUnknown else { return [] }
        let shown = check.form == .sha256 ? version : "a \(check.form.rawValue) model version"
        return [
            IntegrityProblem(
                code: .mergeUnknownModelVersion, number: 204, files: [sourced.file],
                message: "written with \(shown), which is none of the \(modelVersions?.versions.count ?? 0) given model versions",
                details: JSONObject([("modelVersion", .string(version)), ("form", .string(check.form.rawValue))]))
        ]
    }

    /// 210 for each data file an event or baseline references that `data/` lacks (Spec/merge.md
    /// 5.6).
    func missingDataFileProblems(_ sourced: SourcedEvent) -> [IntegrityProblem] {
        guard let present = dataFiles else { return [] }
        // In report order: the references are sorted by their UTF-8 bytes (merge.md 5.9).
        let missing = sourced.dataFileReferences.filter { !present.contains(ExactString($0)) }
        return IntegrityProblem.bounded(missing, code: .mergeMissingDataFile, number: 210, file: sourced.file) { name in
            IntegrityProblem(
                code: .mergeMissingDataFile, number: 210, files: [sourced.file], message: "references data/\(name), which is missing",
                details: JSONObject([("dataFile", .string(name))]))
        }
    }
}
