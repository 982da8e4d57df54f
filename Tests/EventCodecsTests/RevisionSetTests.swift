import Testing
import EnsembleModel
import JSONDocument
import EventCodecs

@Suite("Revision sets")
struct RevisionSetTests {
    @Test(
        "comparison treats a missing store as knowing no revision, below revision 0",
        arguments: [
            ([:], [:], RevisionSet.Ordering.equal),
            (["A": 1], ["A": 1], .equal),
            (["A": 2], ["A": 1], .dominates),
            (["A": 1], ["A": 2], .isDominated),
            (["A": 0], [:], .dominates),
            ([:], ["A": 0], .isDominated),
            (["A": 1, "B": 0], ["A": 1], .dominates),
            (["A": 2], ["A": 1, "B": 0], .concurrent),
            (["A": 1, "B": 2], ["A": 2, "B": 1], .concurrent),
            (["A": 3, "B": 3], ["A": 3, "C": 0], .concurrent),
        ] as [([String: Int64], [String: Int64], RevisionSet.Ordering)])
    func compare(lhs: [String: Int64], rhs: [String: Int64], expected: RevisionSet.Ordering) {
        #expect(RevisionSet(lhs).compare(RevisionSet(rhs)) == expected)
        let mirrored: RevisionSet.Ordering =
            switch expected {
            case .dominates: .isDominated
            case .isDominated: .dominates
            default: expected
            }
        #expect(RevisionSet(rhs).compare(RevisionSet(lhs)) == mirrored)
        #expect(RevisionSet(lhs).covers(RevisionSet(rhs)) == (expected == .dominates || expected == .equal))
        #expect(RevisionSet(rhs).covers(RevisionSet(lhs)) == (mirrored == .dominates || mirrored == .equal))
    }

    @Test("merging takes the store-wise maximum")
    func merge() {
        let merged = RevisionSet(["A": 3, "B": 1]).merged(with: RevisionSet(["B": 4, "C": 0]))
        #expect(merged == RevisionSet(["A": 3, "B": 4, "C": 0]))
        var inPlace = RevisionSet(["A": 3, "B": 1])
        inPlace.merge(with: RevisionSet(["B": 4, "C": 0]))
        #expect(inPlace == merged)
    }

    @Test("identifier sets are sorted by UTF-8 bytes and duplicate-free")
    func identifierSets() {
        #expect(sortedUnique(["b", "a", "B", "é", "a", "z"]) == ["B", "a", "b", "z", "é"])
    }
}

/// Identifiers that differ only in Unicode normalisation are different identifiers everywhere
/// (Spec/README.md 4): Swift's `String ==` would call them equal.
@Suite("Exact identifiers: NFC and NFD spellings stay apart")
struct ExactIdentifierTests {
    static let composed = "caf\u{E9}"
    static let decomposed = "cafe\u{301}"

    @Test("the two spellings are canonically equivalent for Swift, and different here")
    func premise() {
        #expect(Self.composed == Self.decomposed)
        #expect(!exactlyEqual(Self.composed, Self.decomposed))
    }

    @Test("a revision set keeps both stores, looks each up exactly, and orders them by bytes")
    func revisionSet() {
        let set = RevisionSet(pairs: [(Self.composed, 1), (Self.decomposed, 0)])
        #expect(set.count == 2)
        #expect(set[Self.composed] == 1)
        #expect(set[Self.decomposed] == 0)
        #expect(set.stores.map { Array($0.utf8) } == [Array(Self.decomposed.utf8), Array(Self.composed.utf8)])
        #expect(set.compare(RevisionSet(pairs: [(Self.composed, 1)])) == .dominates)
        #expect(set != RevisionSet(pairs: [(Self.decomposed, 1), (Self.composed, 0)]))
    }

    @Test("a v2 event naming both spellings decodes with two stores")
    func decodedRevisionSet() throws {
        let text =
            #"{"globalCount":1,"revisionsByStoreIdentifier":{"cafe\u0301":1,"caf\u00e9":0},"storeIdentifier":"cafe\u0301","timestamp":"1.0","type":200,"uniqueIdentifier":"U"}"#
        let (event, _) = try V2JSONDecoder().decodeEvent(try JSONParser.parse(Array(text.utf8)))
        #expect(event.revision == 1)
        #expect(event.revisionSet.count == 2)
        #expect(event.revisionSet[Self.composed] == 0)
    }

    @Test("events, changes and values that differ only in normalisation are not equal")
    func equality() {
        func event(store: String, id: String, value: String) -> Event {
            Event(
                uniqueIdentifier: "U", type: .save, storeIdentifier: store, revision: 0, globalCount: 1, timestamp: 1,
                objectChanges: [
                    ObjectChange(
                        entity: "Item", globalIdentifier: id, type: .insert,
                        propertyChanges: [PropertyChange(name: "name", value: .attribute(.string(value)))])
                ])
        }
        let base = event(store: Self.composed, id: "x", value: "v")
        #expect(base == event(store: Self.composed, id: "x", value: "v"))
        #expect(base != event(store: Self.decomposed, id: "x", value: "v"))
        #expect(event(store: "s", id: Self.composed, value: "v") != event(store: "s", id: Self.decomposed, value: "v"))
        #expect(event(store: "s", id: "x", value: Self.composed) != event(store: "s", id: "x", value: Self.decomposed))
    }
}
