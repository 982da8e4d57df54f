import Testing
import JSONDocument
import EnsembleModel
import MergeEngine

private func event(
    _ store: String, _ revision: Int64, _ globalCount: Int64, _ name: String, insert: Bool = false,
    others: [String: Int64] = [:]
) -> SourcedEvent {
    let change = ObjectChange(
        entity: "P", globalIdentifier: "p", type: insert ? .insert : .update,
        propertyChanges: [PropertyChange(name: "name", value: .attribute(.string(name)))])
    return SourcedEvent(
        event: Event(
            uniqueIdentifier: "\(store)\(revision)", type: .save, storeIdentifier: store, revision: revision,
            globalCount: globalCount, timestamp: 0, otherStoreRevisions: others, objectChanges: [change]),
        file: "\(globalCount)_\(store)_\(revision).cdeevent")
}

@Suite("Event store and early replay")
struct EventStoreTests {
    @Test("the event store gives back what it was given: whole events as they were, summaries field by field")
    func roundTrip() throws {
        var unknown = JSONObject()
        unknown["x-note"] = .string("kept")
        let whole = SourcedEvent(
            event: Event(
                uniqueIdentifier: "u1", type: .merge, storeIdentifier: "Store\u{0}é", revision: 3, globalCount: 9,
                timestamp: 1.5, modelVersion: "sha256:ab", otherStoreRevisions: ["B": 2, "C": .max, "D": .min, "E": -1],
                objectChanges: [ObjectChange(entity: "P", globalIdentifier: "p", type: .insert, dataFiles: ["F1"])],
                unknownFields: unknown),
            file: "dir/9_S_3.cdeevent", parts: ["dir/a_1of2.cdeevent", "dir/a_2of2.cdeevent"])
        var summary = whole.summary()
        summary.contentDigest = .max
        // Other stores at the same places of the set: each is numbered as itself.
        let other = event("B", 4, 10, "x", others: ["Z": 1]).summary()
        let store = try EventStore()
        try store.add([whole, summary, other])
        let back = try store.allEvents()
        try #require(back.count == 3)
        #expect(back[2].event.revisionSet == RevisionSet(["B": 4, "Z": 1]))
        #expect(back[0].event == whole.event && !back[0].isSummary)
        #expect(back[1].isSummary)
        #expect(back[1].event == summary.event)
        #expect(back[1].event.revisionSet == RevisionSet(["Store\u{0}é": 3, "B": 2, "C": .max, "D": .min, "E": -1]))
        #expect(back[1].file == summary.file && back[1].parts == summary.parts)
        #expect(back[1].dataFileReferences == ["F1"] && back[1].changeCounts == summary.changeCounts)
        #expect(back[1].contentDigest == .max)
    }

    @Test("a merge through the event store equals the merge of the same events in memory, duplicates and all")
    func storeAndMemoryAgree() throws {
        let events = [
            event("A", 0, 0, "one", insert: true), event("B", 0, 1, "two", others: ["A": 0]), event("A", 1, 2, "three", others: ["B": 0]),
            event("A", 1, 2, "three", others: ["B": 0]),
        ]
        var memory = MergeInput()
        memory.events = events
        var stored = MergeInput()
        stored.eventStore = try EventStore()
        try stored.eventStore?.add(events)
        let expected = JSONWriter().string(try MergeEngine.merge(memory).document())
        #expect(expected.contains("three"))
        #expect(JSONWriter().string(try MergeEngine.merge(stored).document()) == expected)
        // Analysing a store twice gives the same answer: the roles of the first analysis are forgotten.
        #expect(MergeEngine.analyze(stored).replayCount == 3)
        #expect(MergeEngine.analyze(stored).replayCount == 3)
    }

    @Test("roles given by one analysis of a store are forgotten by the next, which may give others")
    func rolesForgotten() throws {
        let events = [event("A", 0, 0, "one", insert: true), event("A", 1, 1, "two")]
        var covered = MergeInput()
        covered.eventStore = try EventStore()
        try covered.eventStore?.add(events)
        covered.baselines = [
            SourcedEvent(
                event: Event(
                    uniqueIdentifier: "base", type: .baseline, storeIdentifier: "A", revision: 0, globalCount: 0, timestamp: 0,
                    objectChanges: [ObjectChange(entity: "P", globalIdentifier: "p", type: .insert)]),
                file: "baselines/0_base_0.cdeevent")
        ]
        let first = MergeEngine.analyze(covered)
        #expect(try first.coveredEvents().map(\.file) == ["0_A_0.cdeevent"])
        #expect(try first.replayedEvents().map(\.file) == ["1_A_1.cdeevent"])
        // The same store without the baseline: A/0 is replayed again, not left covered.
        var uncovered = covered
        uncovered.baselines = []
        let second = MergeEngine.analyze(uncovered)
        #expect(try second.coveredEvents().isEmpty)
        #expect(try second.replayedEvents().map(\.file) == ["0_A_0.cdeevent", "1_A_1.cdeevent"])
    }

    @Test("an incomplete event is never replayed, so it is never checked for dependencies (Spec/merge.md 4.1)")
    func incompleteNotReplayed() throws {
        var incomplete = event("B", 0, 1, "two", others: ["C": 5])
        incomplete.event.type = .incomplete
        var input = MergeInput()
        input.eventStore = try EventStore()
        // A/1 misses a revision of C, so that the replayed events are checked for dependencies.
        try input.eventStore?.add([event("A", 0, 0, "one", insert: true), incomplete, event("A", 1, 2, "three", others: ["C": 3])])
        let analysis = MergeEngine.analyze(input)
        #expect(analysis.problems.map(\.number) == [203, 201])
        #expect(analysis.problems.filter { $0.number == 201 }.map(\.files) == [["2_A_1.cdeevent"]])
        #expect(try analysis.replayedEvents().map(\.file) == ["0_A_0.cdeevent", "2_A_1.cdeevent"])
    }

    @Test("an early replay counts only when the analysis replays the same files in the same order")
    func earlyReplay() throws {
        let events = [event("A", 0, 0, "one", insert: true), event("B", 0, 1, "two", others: ["A": 0]), event("A", 1, 2, "three", others: ["B": 0])]
        var input = MergeInput()
        input.events = events
        let analysis = MergeEngine.analyze(input)
        let expected = JSONWriter().string(try MergeEngine.merge(input).document())

        let inOrder = EarlyReplay(baselines: [], input: input)
        for sourced in events { inOrder.offer([sourced], bodies: [nil]) }
        let early = try #require(inOrder.state(for: analysis))
        #expect(JSONWriter().string(try early.document()) == expected)
        // Whoever takes the state changes it further without taking what it replaces.
        #expect(!early.keepsReplaced)

        // Applied backwards, the object is inserted last and keeps "one": the merge must not use it.
        let backwards = EarlyReplay(baselines: [], input: input)
        for sourced in events.reversed() { backwards.offer([sourced], bodies: [nil]) }
        #expect(backwards.state(for: analysis) == nil)
        var withBackwards = input
        withBackwards.earlyReplay = backwards
        #expect(JSONWriter().string(try MergeEngine.merge(withBackwards).document()) == expected)

        // Handed over before the analysis: the backwards state is given, then refused.
        var handedOver: String?
        let refused = try MergeEngine.merge(withBackwards) { handedOver = (try? $0.document()).map { JSONWriter().string($0) } }
        #expect(!refused.isReplayedState)
        #expect(handedOver != nil && handedOver != expected)
        #expect(JSONWriter().string(try refused.state.document()) == expected)
        var withInOrder = input
        withInOrder.earlyReplay = inOrder
        handedOver = nil
        let taken = try MergeEngine.merge(withInOrder) { handedOver = (try? $0.document()).map { JSONWriter().string($0) } }
        #expect(taken.isReplayedState)
        #expect(handedOver == expected)
        #expect(JSONWriter().string(try taken.state.document()) == expected)

        let missing = EarlyReplay(baselines: [], input: input)
        missing.offer(Array(events.prefix(2)), bodies: [nil, nil])
        #expect(missing.state(for: analysis) == nil)
    }

    @Test("a folding early replay applies the events a rebase folds and holds the kept ones back (Spec/merge.md 13.3)")
    func foldingReplay() throws {
        // The first example of merge.md 13.3: C is 3; A/2 and A/3 are kept.
        let events = [
            event("A", 0, 0, "one", insert: true), event("B", 0, 1, "two", others: ["A": 0]), event("A", 1, 2, "three", others: ["B": 0]),
            event("B", 1, 3, "four", others: ["A": 1]), event("A", 2, 4, "five", others: ["B": 1]), event("A", 3, 5, "six"),
        ]
        var input = MergeInput()
        input.eventStore = try EventStore()
        try input.eventStore?.add(events)
        let analysis = MergeEngine.analyze(input)
        let plan = try #require(try RebasePlan(analysis))
        #expect(plan.cutoff == 3 && plan.foldedCount == 4)
        var folded = MergeInput()
        folded.events = Array(events.prefix(4))
        let expected = JSONWriter().string(try MergeEngine.merge(folded).document())
        #expect(expected.contains("four"))

        let early = EarlyReplay(baselines: [], input: input, mode: .folding)
        for sourced in events { early.offer([sourced], bodies: [nil]) }
        let state = try #require(early.foldedState(for: analysis, plan: plan))
        #expect(JSONWriter().string(try state.document()) == expected)
        // Not a merge's early state.
        #expect(early.state(for: analysis) == nil)

        // B's last event comes before most of A's: A's wait behind it, and a bound of one
        // waiting event gives the bet up.
        let bounded = EarlyReplay(baselines: [], input: input, mode: .folding, maximumWaiting: 1)
        for sourced in events { bounded.offer([sourced], bodies: [nil]) }
        #expect(bounded.foldedState(for: analysis, plan: plan) == nil)

        // As many events folded, but one from another file than the plan's: not the plan's state.
        var renamed = events
        renamed[1].file += ".other"
        let other = EarlyReplay(baselines: [], input: input, mode: .folding)
        for sourced in renamed { other.offer([sourced], bodies: [nil]) }
        #expect(other.foldedState(for: analysis, plan: plan) == nil)
    }
}
