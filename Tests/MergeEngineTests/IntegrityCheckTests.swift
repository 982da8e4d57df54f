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

/// Ordered to-many edits where only the string order of appended identifiers decides
/// (Spec/merge.md 8.3.5 step 2).
@Suite("Ordered to-many appends")
struct OrderedAppendTests {
    @Test("added identifiers that are not members are appended in string order, whatever order the change lists them in")
    func appendedInStringOrder() throws {
        func change(_ entity: String, _ id: String, _ type: ChangeType, _ properties: [PropertyChange] = []) -> ObjectChange {
            ObjectChange(entity: entity, globalIdentifier: id, type: type, propertyChanges: properties)
        }
        let children = ["c1", "c2", "c3", "c4", "c5"].map { change("Child", $0, .insert) }
        let first = Event(
            uniqueIdentifier: "A0", type: .save, storeIdentifier: "A", revision: 0, globalCount: 1, timestamp: 0, otherStoreRevisions: [:],
            objectChanges: children + [
                change(
                    "Parent", "p1", .insert,
                    [
                        PropertyChange(
                            name: "ordered", value: .orderedToMany(added: ["c1", "c2", "c3"], removed: [], movedByIndex: [0: "c1", 1: "c2", 2: "c3"]))
                    ])
            ])
        // The example of merge.md 8.3.5 without its moves: step 2 alone orders c4 before c5.
        let second = Event(
            uniqueIdentifier: "A1", type: .save, storeIdentifier: "A", revision: 1, globalCount: 2, timestamp: 0, otherStoreRevisions: [:],
            objectChanges: [
                change(
                    "Parent", "p1", .update, [PropertyChange(name: "ordered", value: .orderedToMany(added: ["c5", "c4"], removed: ["c2"], movedByIndex: [:]))])
            ])
        var input = MergeInput()
        input.events = [SourcedEvent(event: first, file: "events/1_A_0.cdeevent"), SourcedEvent(event: second, file: "events/2_A_1.cdeevent")]
        let document = try MergeEngine.merge(input).document()
        #expect(document[JSONPointer(["entities", "Parent", "p1", "ordered"])] == .array(["c1", "c3", "c4", "c5"].map(JSONValue.string)))
    }

    @Test("an identifier an update adds twice is appended once, and one that is a member already not at all")
    func appendedOnce() throws {
        func change(_ entity: String, _ id: String, _ type: ChangeType, _ properties: [PropertyChange] = []) -> ObjectChange {
            ObjectChange(entity: entity, globalIdentifier: id, type: type, propertyChanges: properties)
        }
        let first = Event(
            uniqueIdentifier: "A0", type: .save, storeIdentifier: "A", revision: 0, globalCount: 1, timestamp: 0, otherStoreRevisions: [:],
            objectChanges: ["c1", "c2", "c3"].map { change("Child", $0, .insert) } + [
                change("Parent", "p1", .insert, [PropertyChange(name: "ordered", value: .orderedToMany(added: ["c1"], removed: [], movedByIndex: [:]))])
            ])
        // Sets as decoders read them name an identifier once; an event built in code may not.
        let second = Event(
            uniqueIdentifier: "A1", type: .save, storeIdentifier: "A", revision: 1, globalCount: 2, timestamp: 0, otherStoreRevisions: [:],
            objectChanges: [
                change(
                    "Parent", "p1", .update,
                    [PropertyChange(name: "ordered", value: .orderedToMany(added: ["c3", "c1", "c3", "c2"], removed: [], movedByIndex: [:]))])
            ])
        var input = MergeInput()
        input.events = [SourcedEvent(event: first, file: "events/1_A_0.cdeevent"), SourcedEvent(event: second, file: "events/2_A_1.cdeevent")]
        let document = try MergeEngine.merge(input).document()
        #expect(document[JSONPointer(["entities", "Parent", "p1", "ordered"])] == .array(["c1", "c2", "c3"].map(JSONValue.string)))
    }
}
