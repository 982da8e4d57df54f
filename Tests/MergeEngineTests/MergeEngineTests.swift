import Testing
import JSONDocument
import EnsembleModel
import MergeEngine

/// Small events written out by hand; the expected states follow Spec/merge.md rule by rule.
private func event(
    _ store: String, _ revision: Int64, _ globalCount: Int64, _ changes: [ObjectChange],
    others: [String: Int64] = [:], timestamp: Double = 0
) -> SourcedEvent {
    SourcedEvent(
        event: Event(
            uniqueIdentifier: "\(store)\(revision)", type: .save, storeIdentifier: store, revision: revision,
            globalCount: globalCount, timestamp: timestamp, otherStoreRevisions: others, objectChanges: changes),
        file: "\(globalCount)_\(store)_\(revision).cdeevent")
}

private func insert(_ entity: String, _ id: String, _ properties: [PropertyChange] = []) -> ObjectChange {
    ObjectChange(entity: entity, globalIdentifier: id, type: .insert, propertyChanges: properties)
}

private func update(_ entity: String, _ id: String, _ properties: [PropertyChange]) -> ObjectChange {
    ObjectChange(entity: entity, globalIdentifier: id, type: .update, propertyChanges: properties)
}

private func delete(_ entity: String, _ id: String) -> ObjectChange {
    ObjectChange(entity: entity, globalIdentifier: id, type: .delete)
}

private func name(_ value: String) -> PropertyChange { PropertyChange(name: "name", value: .attribute(.string(value))) }

private func state(_ events: [SourcedEvent]) throws -> String {
    var input = MergeInput()
    input.events = events
    return JSONWriter().string(try MergeEngine.merge(input).document())
}

@Suite("Merge engine")
struct MergeEngineTests {
    @Test("an insert after a delete brings the object back empty, then sets the insert's values")
    func insertAfterDelete() throws {
        let result = try state([
            event("A", 0, 0, [insert("P", "p", [name("one"), PropertyChange(name: "age", value: .attribute(.integer(3)))])]),
            event("A", 1, 1, [delete("P", "p")]),
            event("A", 2, 2, [insert("P", "p", [name("two")])]),
        ])
        #expect(result == #"{"entities":{"P":{"p":{"name":"two"}}}}"#)
    }

    @Test("an update after a delete, and an update or delete of an object never inserted, do nothing")
    func updatesOfDeadObjects() throws {
        let result = try state([
            event("A", 0, 0, [insert("P", "p", [name("one")])]),
            event("A", 1, 1, [delete("P", "p"), update("P", "q", [name("x")]), delete("P", "r")]),
            event("B", 0, 2, [update("P", "p", [name("late")])], others: ["A": 1]),
        ])
        #expect(result == #"{"entities":{}}"#)
    }

    @Test("last writer in replay order wins per property: global count, then timestamp, then store bytes")
    func replayOrder() throws {
        let result = try state([
            event("B", 0, 0, [insert("P", "p", [name("b")])], timestamp: 5),
            event("A", 0, 0, [insert("P", "p", [name("a")])], timestamp: 5),
            event("C", 0, 0, [insert("P", "p", [PropertyChange(name: "age", value: .attribute(.integer(1)))])], timestamp: 1),
        ])
        // C (earliest timestamp) first, then A, then B ("A" < "B"): the name from B wins.
        #expect(result == #"{"entities":{"P":{"p":{"age":1,"name":"b"}}}}"#)
    }

    @Test("to-many: an update removes then adds; unresolved ids are skipped; a to-one to a missing object is ignored")
    func relationships() throws {
        let result = try state([
            event(
                "A", 0, 0,
                [
                    insert("C", "c1"), insert("C", "c2"),
                    insert(
                        "P", "p",
                        [
                            PropertyChange(name: "kids", value: .toMany(added: ["c1", "ghost"], removed: [])),
                            PropertyChange(name: "best", value: .toOne(relatedIdentifier: "c1")),
                        ]),
                ]),
            event(
                "A", 1, 1,
                [
                    update(
                        "P", "p",
                        [
                            PropertyChange(name: "kids", value: .toMany(added: ["c2", "c1"], removed: ["c1"])),
                            PropertyChange(name: "best", value: .toOne(relatedIdentifier: "ghost")),
                        ])
                ]),
        ])
        #expect(result == #"{"entities":{"C":{"c1":{},"c2":{}},"P":{"p":{"best":"c1","kids":["c1","c2"]}}}}"#)
    }

    @Test("ordered to-many: remove, append added ids in byte order, then the moved positions lead")
    func ordered() throws {
        let result = try state([
            event(
                "A", 0, 0,
                [
                    insert("C", "a"), insert("C", "b"), insert("C", "c"), insert("C", "d"),
                    insert("P", "p", [PropertyChange(name: "list", value: .orderedToMany(added: ["c", "a", "b"], removed: [], movedByIndex: [:]))]),
                ]),
            event(
                "A", 1, 1,
                [update("P", "p", [PropertyChange(name: "list", value: .orderedToMany(added: ["d"], removed: ["a"], movedByIndex: [0: "d", 5: "zzz"]))])]),
        ])
        // After event 0: a b c. Event 1: remove a -> b c, append d -> b c d, d leads -> d b c.
        #expect(result == #"{"entities":{"C":{"a":{},"b":{},"c":{},"d":{}},"P":{"p":{"list":["d","b","c"]}}}}"#)
    }

    @Test("a delete detaches the object from every relationship that holds it")
    func deleteDetaches() throws {
        let result = try state([
            event(
                "A", 0, 0,
                [
                    insert("C", "c"),
                    insert(
                        "P", "p",
                        [
                            PropertyChange(name: "kids", value: .toMany(added: ["c"], removed: [])),
                            PropertyChange(name: "best", value: .toOne(relatedIdentifier: "c")),
                        ]),
                ]),
            event("A", 1, 1, [delete("C", "c")]),
        ])
        #expect(result == #"{"entities":{"P":{"p":{"best":null,"kids":[]}}}}"#)
    }

    @Test("an event's deletes: an object deleted twice goes once, its namesake of another entity stays, and freed slots are taken again")
    func deletesOfOneEvent() throws {
        let result = try state([
            event("A", 0, 0, [insert("P", "x", [name("px")]), insert("P", "y", [name("py")]), insert("Q", "x", [name("qx")])]),
            event("A", 1, 1, [insert("P", "z", [name("pz")]), delete("P", "x"), delete("P", "z"), delete("P", "x"), delete("Q", "y")]),
            event("A", 2, 2, [insert("P", "u", [name("pu")]), insert("P", "v", [name("pv")]), insert("P", "w", [name("pw")]), delete("P", "x")]),
        ])
        #expect(result == #"{"entities":{"P":{"u":{"name":"pu"},"v":{"name":"pv"},"w":{"name":"pw"},"y":{"name":"py"}},"Q":{"x":{"name":"qx"}}}}"#)
    }

    @Test("integrity: a revision gap (200) and a missing dependency (201) stop the merge")
    func integrity() {
        var input = MergeInput()
        input.events = [event("A", 0, 0, []), event("A", 2, 1, []), event("B", 0, 2, [], others: ["A": 5])]
        #expect(throws: MergeFailure.self) { try MergeEngine.merge(input) }
        do throws(MergeFailure) {
            _ = try MergeEngine.merge(input)
        } catch {
            #expect(error.problems.map(\.number) == [201, 200])
        }
    }

    @Test("the same revision twice: identical content counts once, different content is refused")
    func duplicates() throws {
        let first = event("A", 0, 0, [insert("P", "p", [name("x")])])
        #expect(try state([first, first]) == #"{"entities":{"P":{"p":{"name":"x"}}}}"#)
        var input = MergeInput()
        input.events = [first, event("A", 0, 0, [insert("P", "p", [name("y")])])]
        #expect(throws: MergeFailure.self) { try MergeEngine.merge(input) }
    }
}

@Suite("Merge with baselines")
struct BaselineTests {
    static func baseline(_ store: String, _ globalCount: Int64, _ revisions: [String: Int64], _ changes: [ObjectChange]) -> SourcedEvent {
        SourcedEvent(
            event: Event(
                uniqueIdentifier: "B\(globalCount)\(store)", type: .baseline, storeIdentifier: store,
                globalCount: globalCount, timestamp: 0, modelVersion: nil, revisionSet: RevisionSet(revisions),
                objectChanges: changes), file: "baselines/\(globalCount)_\(store)")
    }

    static func merged(_ baselines: [SourcedEvent], _ events: [SourcedEvent] = []) throws -> String {
        var input = MergeInput()
        input.baselines = baselines
        input.events = events
        return JSONWriter().string(try MergeEngine.merge(input).document())
    }

    @Test("a dominated baseline is dropped; of two equal ones the newer is used")
    func dominatedAndEqual() throws {
        let old = Self.baseline("A", 1, ["A": 1], [insert("P", "old")])
        let new = Self.baseline("A", 5, ["A": 3], [insert("P", "new")])
        let twin = Self.baseline("B", 6, ["A": 3], [insert("P", "twin")])
        #expect(try Self.merged([old, new]) == #"{"entities":{"P":{"new":{}}}}"#)
        #expect(try Self.merged([new, twin]) == #"{"entities":{"P":{"twin":{}}}}"#)
    }

    @Test("concurrent baselines are merged: union of objects, the newer value per property; events they cover are skipped")
    func concurrent() throws {
        let a = Self.baseline("A", 4, ["A": 2, "B": 0], [insert("P", "p", [name("from A")]), insert("P", "onlyA")])
        let b = Self.baseline("B", 5, ["A": 0, "B": 2], [insert("P", "p", [name("from B")]), insert("P", "onlyB")])
        let covered = event("A", 1, 2, [insert("P", "covered")])
        let later = event("A", 3, 7, [update("P", "p", [name("later")])], others: ["B": 2])
        #expect(try Self.merged([b, a], [covered, later]) == #"{"entities":{"P":{"onlyA":{},"onlyB":{},"p":{"name":"later"}}}}"#)
        #expect(try Self.merged([a, b]) == #"{"entities":{"P":{"onlyA":{},"onlyB":{},"p":{"name":"from B"}}}}"#)
    }
}
