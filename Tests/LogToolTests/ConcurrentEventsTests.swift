import Testing
import EnsembleModel
import EnsemblesToolkit
import TestSupport

/// `history` finds concurrent events through chains and binary searches (Spec/verify.md 10);
/// these random histories, including stores whose own events are not ordered, check it against
/// comparing every pair (fixed seeds, so a failure repeats).
@Suite("History: concurrent events")
struct ConcurrentEventsTests {
    static func events(seed: UInt64) -> [Event] {
        var random = SplitMix64(seed: seed)
        let stores = ["A", "B", "C", "D"].prefix(Int.random(in: 1...4, using: &random))
        var known: [String: [String: Int64]] = [:]
        var events: [Event] = []
        for index in 0..<Int.random(in: 1...30, using: &random) {
            let store = stores.randomElement(using: &random) ?? "A"
            var revisions = known[store, default: [:]]
            switch Int.random(in: 0..<6, using: &random) {
            case 0:
                // A hostile set: revisions that need not follow the store's earlier events.
                revisions = Dictionary(
                    uniqueKeysWithValues: stores.compactMap { other in
                        Bool.random(using: &random) ? (other, Int64.random(in: 0...3, using: &random)) : nil
                    })
            case 1:
                // Learns another store's latest revision.
                if let other = stores.randomElement(using: &random), let latest = known[other]?[other] { revisions[other] = latest }
            default:
                break
            }
            let revision = (revisions[store] ?? -1) + 1
            revisions[store] = revision
            known[store] = revisions
            events.append(
                Event(
                    uniqueIdentifier: "U\(index)", type: .save, storeIdentifier: store, revision: revision, globalCount: Int64(index),
                    timestamp: 0, otherStoreRevisions: revisions.filter { $0.key != store }))
        }
        return events
    }

    @Test("2,000 random histories: the same concurrent events as comparing every pair")
    func matchesPairwise() {
        for seed in 0..<2_000 as Range<UInt64> {
            let events = Self.events(seed: seed)
            let found = ConcurrentEvents.find(events).map { $0.sorted() }
            let expected = events.indices.map { i in
                events.indices.filter { j in j != i && events[i].revisionSet.compare(events[j].revisionSet) == .concurrent }
            }
            #expect(found == expected, "seed \(seed)")
        }
    }
}
