import JSONDocument
import EnsembleModel

extension FormatError.Code {
    /// The baselines do not name the event's store, so a device cannot tell where its history
    /// starts and holds its events back (Spec/merge.md 15.4 step 6).
    public static let deviceNotInBaseline = Self("device.not-in-baseline")
    /// No baseline takes part: a device integrates nothing (Spec/merge.md 15.4 step 3).
    public static let deviceNoBaseline = Self("device.no-baseline")
    /// The device's own baseline fails a basic check: it integrates nothing (Spec/merge.md 15.4
    /// step 3).
    public static let deviceBaselineNotIntegrable = Self("device.baseline-not-integrable")
}

/// The folder as one device sees it (Spec/merge.md 15): which events the original framework's
/// integrability rules let it integrate, which it holds back and why, and what is not yet
/// visible to it. Strict merging (sections 4 and 5) stops on any finding; a device integrates
/// what it can.
package struct DeviceIntegration: Sendable {
    /// What the device does with the folder.
    package enum Outcome: String, Sendable {
        /// It integrates the ``integrable`` events (perhaps none) on top of the baselines.
        case integrates
        /// Its own registration is gone from `stores/`: it leaves the ensemble (205).
        case deleeches
        /// No baseline can take part: it integrates nothing (``stop`` says why).
        case integratesNothing = "integrates-nothing"
    }

    /// An event or baseline the device does not integrate, with every reason found for it.
    package struct HeldBack: Sendable {
        package var sourced: SourcedEvent
        /// Code, number and details of each reason, in the order they were found.
        package var reasons: [IntegrityProblem]
    }

    package var store: String
    package var outcome: Outcome = .integrates
    /// Why nothing is integrated, when ``outcome`` is not `integrates`.
    package var stop: IntegrityProblem?
    /// The baselines that take part, oldest first.
    package var baselines: [SourcedEvent] = []
    /// Baselines of other stores that fail a basic check and are left out of consolidation.
    package var heldBackBaselines: [HeldBack] = []
    /// The events integrated, in replay order.
    package var integrable: [SourcedEvent] = []
    /// The events held back, by file.
    package var heldBack: [HeldBack] = []
    /// How many events the baselines cover.
    package var coveredCount = 0
    /// Type 0 events and incomplete multipart sets: not visible to a device yet (203 in strict
    /// mode), each with its files.
    package var pending: [IntegrityProblem] = []
    /// The numbers the original reports as informative after integrating (only 204 can be one).
    package var informativeCodes: [Int] = []
    /// What stops even a device: events that disagree about one revision, or a failing index.
    package var problems: [IntegrityProblem] = []

    /// Follows Spec/merge.md 15.4 step by step for device `store`.
    package static func integrate(_ input: MergeInput, as store: String) -> DeviceIntegration {
        var result = DeviceIntegration(store: store)
        do throws(FormatError) {
            try result.run(input)
        } catch {
            result.problems.append(IntegrityProblem(code: .mergeEventStore, number: nil, files: [], message: "the event index failed: \(error.message)"))
        }
        result.problems.sort(by: IntegrityProblem.reportPrecedes)
        return result
    }

    /// An event by its store's number (``Stores``) and its revision: sets and dictionaries of
    /// these hash two integers, where hashing each store identifier's bytes again for every
    /// lookup was most of this work (Benchmarks/README.md).
    private struct Key: Hashable {
        var store: Int32
        var revision: Int64
    }

    /// The stores met, numbered by their identifiers' bytes, with what the baselines know of each.
    private struct Stores {
        let known: RevisionSet
        private var numbers: [ExactString: Int32] = [:]
        /// By number: the revision the baselines give the store; nil when they do not name it.
        private(set) var bases: [Int64?] = []

        init(known: RevisionSet) { self.known = known }

        /// The store last numbered at each place of a revision set: most sets name the same
        /// stores in the same order, and comparing a name with the one last at its place (mostly
        /// the same string: a check of identity) costs less than hashing it.
        private var byPlace: [(store: String, number: Int32)] = []

        /// ``number(_:)`` of the store at `place` in a revision set's sorted pairs.
        mutating func number(_ store: String, at place: Int) -> Int32 {
            if place < byPlace.count, ExactString(byPlace[place].store) == ExactString(store) { return byPlace[place].number }
            let number = number(store)
            if place < byPlace.count { byPlace[place] = (store, number) } else if place == byPlace.count { byPlace.append((store, number)) }
            return number
        }

        mutating func number(_ store: String) -> Int32 {
            if let number = numbers[ExactString(store)] { return number }
            let number = Int32(bases.count)
            numbers[ExactString(store)] = number
            bases.append(known[store])
            return number
        }
    }

    private mutating func run(_ input: MergeInput) throws(FormatError) {
        // Step 1: what is not visible yet.
        pending = input.incompleteSetProblems()
        let index = try input.eventIndex()
        for sourced in try index.all(where: "type = \(EventType.incomplete.rawValue)", orderBy: "file, id") + input.baselines
        where sourced.event.type == .incomplete {
            pending.append(IntegrityProblem(code: .mergeIncompleteData, number: 203, files: [sourced.file], message: "an incomplete event (type 0)"))
        }
        pending.sort(by: IntegrityProblem.reportPrecedes)

        // Step 2: the device's own registration.
        if let registered = input.registeredStores, !registered.contains(ExactString(store)) {
            outcome = .deleeches
            stop = IntegrityProblem(
                code: .mergeUnregisteredStore, number: 205, files: [], message: "stores/\(store) is gone: the device leaves the ensemble",
                details: JSONObject([("store", .string(store))]))
            return
        }

        // Step 3: the baselines, consolidated from those that pass the basic checks.
        var candidates: [SourcedEvent] = []
        for baseline in input.baselines where baseline.event.type == .baseline {
            let reasons = Self.basicProblems(baseline, input)
            if reasons.isEmpty || ExactString(baseline.event.storeIdentifier) == ExactString(store) {
                candidates.append(baseline)
            } else {
                heldBackBaselines.append(HeldBack(sourced: baseline, reasons: reasons))
            }
        }
        heldBackBaselines.sort { utf8Precedes($0.sourced.file, $1.sourced.file) }
        let chosen = MergeAnalysis.chooseBaselines(candidates, input)
        baselines = chosen.baselines
        problems += chosen.problems

        // Step 4: one event per (store, revision).
        var events: [SourcedEvent] = []
        try index.forEachRevision { (copies) throws(FormatError) in
            if let conflict = MergeAnalysis.conflict(among: copies, input) { problems.append(conflict) }
            if let first = copies.first { events.append(first.sourced) }
        }
        guard problems.isEmpty else { return }

        let baselineProblems = baselines.map { Self.basicProblems($0, input) }
        if baselineProblems.joined().contains(where: { $0.number == 204 }) { informativeCodes = [204] }
        // The stop names every baseline taking part that fails, not only the first (Spec/merge.md 15.4 step 3).
        let failingFiles = sortedUnique(baselineProblems.joined().flatMap(\.files))
        if baselines.isEmpty || !failingFiles.isEmpty {
            outcome = .integratesNothing
            if !failingFiles.isEmpty {
                stop = IntegrityProblem(
                    code: .deviceBaselineNotIntegrable, number: nil, files: failingFiles,
                    message: failingFiles.count == 1
                        ? "the device's own baseline fails a basic check, so no event is integrable"
                        : "\(failingFiles.count) of the device's own baselines fail a basic check, so no event is integrable")
            } else {
                stop = IntegrityProblem(code: .deviceNoBaseline, number: nil, files: [], message: "no baseline takes part, so no event is integrable")
            }
            heldBack = events.sorted { utf8Precedes($0.file, $1.file) }.map { sourced in
                HeldBack(
                    sourced: sourced,
                    reasons: [IntegrityProblem(code: stop?.code ?? .deviceNoBaseline, number: nil, files: [sourced.file], message: stop?.message ?? "")])
            }
            return
        }
        let known = baselines.dropFirst().reduce(into: baselines[0].event.revisionSet) { $0.merge(with: $1.event.revisionSet) }

        // Step 5: covered events take no part; the basic checks on the others.
        var stores = Stores(known: known)
        var present = Set<Key>()
        var reasons: [Key: [IntegrityProblem]] = [:]
        // Each candidate by its place in `events`, read there: a dictionary of the events
        // themselves and a list of those integrable held every event three times (a third of
        // device mode's memory at 10M changes: Benchmarks/README.md).
        var places: [Key: Int] = [:]
        var order: [Key] = []
        for place in events.indices {
            // The revision read once: each read searches the event's revision set.
            let key = Key(store: stores.number(events[place].event.storeIdentifier), revision: events[place].event.revision)
            present.insert(key)
            if let base = stores.bases[Int(key.store)], key.revision <= base {
                coveredCount += 1
                continue
            }
            places[key] = place
            order.append(key)
            let basic = Self.basicProblems(events[place], input)
            if !basic.isEmpty {
                reasons[key] = basic
                if basic.contains(where: { $0.number == 204 }) { informativeCodes = [204] }
            }
        }

        // Step 6: stores the baselines do not name, and events after a missing revision. A
        // missing revision is one no visible event has, whether or not that event passed.
        var revisionsByStore = [[Int64]](repeating: [], count: stores.bases.count)
        for key in present { revisionsByStore[Int(key.store)].append(key.revision) }
        for store in revisionsByStore.indices { revisionsByStore[store].sort() }
        var gaps: [Int32: (first: Int64, last: Int64)?] = [:]
        /// The first missing revision after `base` and the last one before the next present.
        func firstGap(_ store: Int32, after base: Int64) -> (first: Int64, last: Int64)? {
            if let known = gaps[store] { return known }
            let revisions = revisionsByStore[Int(store)]
            var expected = base + 1
            var found: (first: Int64, last: Int64)?
            for revision in revisions[partitionPoint(revisions.count) { revisions[$0] > base }...] {
                if revision > expected {
                    found = (expected, revision - 1)
                    break
                }
                guard revision < .max else { break }
                expected = revision + 1
            }
            gaps[store] = .some(found)
            return found
        }
        for key in order where reasons[key] == nil {
            guard let place = places[key] else { continue }
            guard let base = stores.bases[Int(key.store)] else {
                reasons[key] = [
                    IntegrityProblem(
                        code: .deviceNotInBaseline, number: nil, files: [events[place].file],
                        message: "the baselines do not name store \(events[place].event.storeIdentifier), so the device cannot tell where its history starts",
                        details: JSONObject([("store", .string(events[place].event.storeIdentifier))]))
                ]
                continue
            }
            // `key.revision > base`: covered events were set aside, so `base + 1` does not overflow.
            if let gap = firstGap(key.store, after: base), key.revision > gap.last {
                reasons[key] = [
                    IntegrityProblem(
                        code: .mergeRevisionGap, number: 200, files: [events[place].file],
                        message: "store \(events[place].event.storeIdentifier) misses \(IntegrityProblem.revisions(gap.first, gap.last)) before this event",
                        details: JSONObject([
                            ("store", .string(events[place].event.storeIdentifier)), ("first", JSONValue(gap.first)), ("last", JSONValue(gap.last)),
                        ]))
                ]
            }
        }

        // Step 7: dependencies, until nothing changes. A held-back event holds back the events
        // that depend on it, so each is visited again through the events depending on it: who
        // depends on what is listed only once an event is held back (usually none is, and
        // listing every pair of every event was a fifth of this step's time).
        var dependents: [Key: [Key]]?
        func listDependents() -> [Key: [Key]] {
            var listed: [Key: [Key]] = [:]
            for key in order {
                guard let event = places[key] else { continue }
                for (place, (other, revision)) in events[event].event.revisionSet.revisions.enumerated() {
                    let store = stores.number(other, at: place)
                    if store != key.store { listed[Key(store: store, revision: revision), default: []].append(key) }
                }
            }
            return listed
        }
        func dependencyProblem(_ key: Key) -> IntegrityProblem? {
            guard let event = places[key] else { return nil }
            for (place, (other, revision)) in events[event].event.revisionSet.revisions.enumerated() {
                let store = stores.number(other, at: place)
                // A store the baselines do not name counts as revision 0 there, as in the original.
                guard store != key.store, (stores.bases[Int(store)] ?? 0) < revision else { continue }
                let dependency = Key(store: store, revision: revision)
                let state: String
                if !present.contains(dependency) {
                    state = "missing"
                } else if reasons[dependency] != nil {
                    state = "held-back"
                } else {
                    continue
                }
                return IntegrityProblem(
                    code: .mergeMissingDependency, number: 201, files: [events[event].file],
                    message: "depends on revision \(revision) of store \(other), which is \(state == "missing" ? "not in the folder" : "held back")",
                    details: JSONObject([("store", .string(other)), ("revision", JSONValue(revision)), ("dependency", .string(state))]))
            }
            return nil
        }
        var work = order.filter { reasons[$0] == nil }
        var failed = order.filter { reasons[$0] != nil }
        var heldByDependency: [Key] = []
        while true {
            for key in work where reasons[key] == nil {
                if let problem = dependencyProblem(key) {
                    reasons[key] = [problem]
                    failed.append(key)
                    heldByDependency.append(key)
                }
            }
            guard !failed.isEmpty else { break }
            let listed = dependents ?? listDependents()
            dependents = listed
            work = failed.flatMap { listed[$0] ?? [] }
            failed = []
        }
        // The reason is the first dependency that fails once nothing changes, so that it does
        // not depend on the order the events were visited in.
        for key in heldByDependency {
            if let problem = dependencyProblem(key) { reasons[key] = [problem] }
        }

        // The integrable events gathered at the front of `events`, in place, and the list then
        // handed over: `places` ascend along `order`, so every place met is still untouched,
        // and what is swapped behind the front (covered or held back) was met already.
        var front = 0
        for key in order {
            guard let place = places[key] else { continue }
            if let found = reasons[key] {
                heldBack.append(HeldBack(sourced: events[place], reasons: found))
            } else {
                events.swapAt(front, place)
                front += 1
            }
        }
        events.removeSubrange(front...)
        integrable = events
        events = []
        heldBack.sort { utf8Precedes($0.sourced.file, $1.sourced.file) }
        MergeAnalysis.sortInReplayOrder(&integrable) { $0.event }
    }

    /// The original's basic checks of one event or baseline: its model version (204) and its
    /// data files (210).
    static func basicProblems(_ sourced: SourcedEvent, _ input: MergeInput) -> [IntegrityProblem] {
        input.modelVersionProblems(sourced) + input.missingDataFileProblems(sourced)
    }

    /// The state the device reaches: the baselines, then the integrable events in replay
    /// order. Nil when it integrates nothing. When the folder was replayed as it was read
    /// (``EarlyReplay``) and that replay applied exactly these, its state is taken instead of
    /// reading every event again, and `isReplayedState` says so.
    package func state(_ input: MergeInput) throws(MergeFailure) -> (state: StoreState, isReplayedState: Bool)? {
        guard outcome == .integrates else { return nil }
        if let early = input.earlyReplay?.state(baselines: baselines, events: integrable) { return (early, true) }
        var state = StoreState(model: input.model)
        try MergeEngine.replay(baselines, into: &state, input)
        try MergeEngine.replay(integrable, into: &state, input)
        return (state, false)
    }
}
