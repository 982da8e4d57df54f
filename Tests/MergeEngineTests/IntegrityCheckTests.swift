import Testing
import JSONDocument
import EnsembleModel
import MergeEngine

/// Integrity checks on hand-made inputs where one check must count what another ignores
/// (Spec/merge.md 5).
@Suite("Integrity checks")
struct IntegrityCheckTests {
    static func event(_ store: String, _ revision: Int64, count: Int64, needs others: [String: Int64]) -> SourcedEvent {
        SourcedEvent(
            event: Event(
                uniqueIdentifier: "\(store)\(revision)", type: .save, storeIdentifier: store, revision: revision, globalCount: count, timestamp: 0,
                otherStoreRevisions: others, objectChanges: []),
            file: "events/\(count)_\(store)_\(revision).cdeevent")
    }

    @Test("201: a revision the baseline covers is no missing dependency, even when another event misses one (merge.md 5.4)")
    func coveredIsNotMissing() {
        var input = MergeInput()
        let base = Event(
            uniqueIdentifier: "BASE", type: .baseline, storeIdentifier: "B", revision: 3, globalCount: 0, timestamp: 0, otherStoreRevisions: [:],
            objectChanges: [])
        input.baselines = [SourcedEvent(event: base, file: "baselines/0_BASE.cdeevent")]
        // A/0 needs B/2, which the baseline covers and no event file holds; A/1 needs C/5, which
        // nothing has.
        input.events = [Self.event("A", 0, count: 1, needs: ["B": 2]), Self.event("A", 1, count: 2, needs: ["C": 5])]
        let problems = MergeEngine.analyze(input).problems
        #expect(problems.map(\.number) == [201])
        #expect(problems.map(\.files) == [["events/2_A_1.cdeevent"]])
    }
}
