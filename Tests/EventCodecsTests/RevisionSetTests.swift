import Testing
import EnsembleModel
import JSONDocument
import EventCodecs
import TestSupport

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
        // The same stores on both sides, each side higher for one of them; then as many stores
        // but not the same ones.
        var same = RevisionSet(["A": 3, "B": 5])
        same.merge(with: RevisionSet(["A": 4, "B": 1]))
        #expect(same == RevisionSet(["A": 4, "B": 5]))
        var sameCount = RevisionSet(["A": 1, "B": 2])
        sameCount.merge(with: RevisionSet(["A": 2, "C": 3]))
        #expect(sameCount == RevisionSet(["A": 2, "B": 2, "C": 3]))
    }

    /// The reference the sets are checked against: a dictionary keyed by UTF-8 bytes, and the
    /// rules of Spec/merge.md 4.3-4.4 written out plainly.
    struct Reference: Equatable {
        var revisions: [[UInt8]: Int64] = [:]

        var sorted: [(store: [UInt8], revision: Int64)] {
            revisions.map { ($0.key, $0.value) }.sorted { $0.store.lexicographicallyPrecedes($1.store) }
        }

        func compare(_ other: Reference) -> RevisionSet.Ordering {
            let stores = Set(revisions.keys).union(other.revisions.keys)
            let newer = stores.contains { (revisions[$0] ?? -1) > (other.revisions[$0] ?? -1) }
            let older = stores.contains { (revisions[$0] ?? -1) < (other.revisions[$0] ?? -1) }
            return newer ? (older ? .concurrent : .dominates) : (older ? .isDominated : .equal)
        }

        func listPrecedes(_ other: Reference) -> Bool {
            let a = sorted, b = other.sorted
            for (x, y) in zip(a, b) {
                if x.store != y.store { return x.store.lexicographicallyPrecedes(y.store) }
                if x.revision != y.revision { return x.revision < y.revision }
            }
            return a.count < b.count
        }
    }

    /// Checks every reading of `set` against `reference`.
    static func check(_ set: RevisionSet, _ reference: Reference, _ label: String) {
        #expect(set.count == reference.revisions.count, "\(label)")
        #expect(set.revisions.map { Array($0.store.utf8) } == reference.sorted.map(\.store), "\(label)")
        #expect(set.revisions.map(\.revision) == reference.sorted.map(\.revision), "\(label)")
        #expect(set.stores.map { Array($0.utf8) } == reference.sorted.map(\.store), "\(label)")
        var pairs: [[UInt8]: Int64] = [:]
        set.forEachPair { pairs[Array($0.utf8)] = $1 }
        #expect(pairs == reference.revisions, "\(label)")
        for (store, revision) in reference.revisions { #expect(set[String(decoding: store, as: UTF8.self)] == revision, "\(label)") }
        // Built again from its pairs in another order, it is the same value with the same hash.
        let rebuilt = RevisionSet(pairs: set.revisions.reversed().map { ($0.store, $0.revision) })
        #expect(rebuilt == set && rebuilt.hashValue == set.hashValue, "\(label)")
    }

    @Test("on 500 random sets of up to 150 stores (3,000 in the long run), small and large alike: every operation as the reference gives it")
    func randomized() {
        // Stores that sort differently as bytes and as Swift strings, and two spellings of one name.
        let pool = (0..<150).map { "s\($0 * 7919 % 150)" } + ["caf\u{E9}", "cafe\u{301}", "Z", "é", ""]
        var random = SplitMix64(seed: 4242)
        func randomSet() -> (RevisionSet, Reference) {
            let size = [0, 1, 3, 10, 40, 63, 64, 65, 70, 150][Int.random(in: 0..<10, using: &random)]
            var pairs: [(String, Int64)] = []
            for _ in 0..<size { pairs.append((pool[Int.random(in: 0..<pool.count, using: &random)], Int64.random(in: 0...5, using: &random))) }
            var reference = Reference()
            for (store, revision) in pairs { reference.revisions[Array(store.utf8)] = revision }
            let set = RevisionSet(pairs: pairs)
            // Given each store once, the strict initializer gives the same set; given one twice, none.
            let unique = RevisionSet(uniquePairs: pairs)
            #expect(Set(pairs.map { Array($0.0.utf8) }).count == pairs.count ? unique == set : unique == nil)
            return (set, reference)
        }
        for round in 0..<LongRun.count(500, long: 3_000) {
            var (a, referenceA) = randomSet()
            let (b, referenceB) = randomSet()
            Self.check(a, referenceA, "round \(round) a")
            #expect(a.compare(b) == referenceA.compare(referenceB), "round \(round)")
            #expect(a.covers(b) == [.dominates, .equal].contains(referenceA.compare(referenceB)), "round \(round)")
            #expect(a.listPrecedes(b) == referenceA.listPrecedes(referenceB), "round \(round)")
            #expect((a == b) == (referenceA == referenceB), "round \(round)")
            var merged = referenceA
            merged.revisions.merge(referenceB.revisions, uniquingKeysWith: max)
            Self.check(a.merged(with: b), merged, "round \(round) merged")
            // Stores set and removed one at a time, across the size where the form changes.
            for _ in 0..<Int.random(in: 0...90, using: &random) {
                let store = pool[Int.random(in: 0..<pool.count, using: &random)]
                let revision: Int64? = Int.random(in: 0..<4, using: &random) == 0 ? nil : Int64.random(in: 0...9, using: &random)
                a[store] = revision
                referenceA.revisions[Array(store.utf8)] = revision
            }
            Self.check(a, referenceA, "round \(round) edited")
        }
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

    @Test("an event's changes are grouped by entity in UTF-8 byte order, each entity's in the order given, both spellings apart")
    func canonicalOrder() {
        let entities = ["Item", Self.composed, "item", Self.decomposed, "Zeta", "\u{1F600}", "", "It"]
        var generator = SplitMix64(seed: 68)
        for count in [0, 1, 2, 7, 300] {
            let changes = (0..<count).map { number in
                ObjectChange(entity: entities.randomElement(using: &generator) ?? "", globalIdentifier: String(number), type: .update)
            }
            // The reference: positions sorted by (entity bytes, position), with no hashing.
            let expected = changes.indices.sorted { a, b in
                let x = Array(changes[a].entity.utf8), y = Array(changes[b].entity.utf8)
                return x != y ? x.lexicographicallyPrecedes(y) : a < b
            }.map { changes[$0].globalIdentifier }
            #expect(ObjectChange.canonicallyOrdered(changes).map(\.globalIdentifier) == expected, "\(count) changes")
        }
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
