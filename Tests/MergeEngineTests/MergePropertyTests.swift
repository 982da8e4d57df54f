import Testing
import JSONDocument
import EnsembleModel
import MergeEngine
import TestSupport

/// Random histories of several stores with concurrent edits (fixed seeds, so a failure
/// repeats): the merged state must not depend on file arrival order or duplicate delivery.
@Suite("Merge properties")
struct MergePropertyTests {
    typealias Generator = SplitMix64

    /// A history: each store saves events based on what it has seen; now and then a store
    /// receives another store's events (its global count and revision set move on).
    static func history(seed: UInt64) -> [SourcedEvent] {
        var random = Generator(seed: seed)
        let stores = ["S1", "S2", "S3", "S4"].prefix(Int.random(in: 2...4, using: &random))
        var seen: [String: [String: Int64]] = [:]  // store -> latest revision known per store
        var counts: [String: Int64] = [:]  // store -> highest global count known
        var published: [SourcedEvent] = []
        let ids = ["a", "b", "c", "d", "e"]
        for _ in 0..<Int.random(in: 3...12, using: &random) {
            guard let store = stores.randomElement(using: &random) else { break }
            if Bool.random(using: &random), let other = stores.randomElement(using: &random), other != store {
                // Receive everything `other` has published.
                for sourced in published where sourced.event.storeIdentifier == other {
                    seen[store, default: [:]][other] = max(seen[store]?[other] ?? -1, sourced.event.revision)
                    counts[store] = max(counts[store] ?? -1, sourced.event.globalCount)
                }
            }
            let revision = (seen[store]?[store] ?? -1) + 1
            let globalCount = (counts[store] ?? -1) + 1
            var changes: [ObjectChange] = []
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                let entity = Bool.random(using: &random) ? "Item" : "Tag"
                let id = ids.randomElement(using: &random) ?? "a"
                switch Int.random(in: 0..<10, using: &random) {
                case 0..<4:
                    changes.append(
                        ObjectChange(
                            entity: entity, globalIdentifier: id, type: .insert,
                            propertyChanges: [
                                PropertyChange(name: "title", value: .attribute(.string("\(store)-\(revision)"))),
                                PropertyChange(name: "links", value: .toMany(added: Array(ids.shuffled(using: &random).prefix(2)), removed: [])),
                            ]))
                case 4..<8:
                    changes.append(
                        ObjectChange(
                            entity: entity, globalIdentifier: id, type: .update,
                            propertyChanges: [
                                PropertyChange(name: "count", value: .attribute(.integer(Int64.random(in: -5...5, using: &random)))),
                                PropertyChange(name: "best", value: .toOne(relatedIdentifier: ids.randomElement(using: &random))),
                                PropertyChange(
                                    name: "order",
                                    value: .orderedToMany(
                                        added: Array(ids.shuffled(using: &random).prefix(2)),
                                        removed: Array(ids.shuffled(using: &random).prefix(1)),
                                        movedByIndex: [0: ids.randomElement(using: &random) ?? "a"])),
                            ]))
                default:
                    changes.append(ObjectChange(entity: entity, globalIdentifier: id, type: .delete))
                }
            }
            let event = Event(
                uniqueIdentifier: "\(store)-\(revision)", type: .save, storeIdentifier: store, revision: revision,
                globalCount: globalCount, timestamp: Double(Int.random(in: 0...3, using: &random)),
                otherStoreRevisions: (seen[store] ?? [:]).filter { $0.key != store }, objectChanges: changes)
            seen[store, default: [:]][store] = revision
            counts[store] = globalCount
            published.append(SourcedEvent(event: event, file: "\(globalCount)_\(store)_\(revision).cdeevent"))
        }
        return published
    }

    static func merged(_ events: [SourcedEvent]) throws -> String {
        var input = MergeInput()
        input.events = events
        return JSONWriter().string(try MergeEngine.merge(input).document())
    }

    @Test("250 random histories (1,000 in the long run): any arrival order and duplicate delivery give the same state")
    func permutationsAndDuplicates() throws {
        var random = Generator(seed: 42)
        for seed in 0..<UInt64(LongRun.count(250, long: 1_000)) {
            let events = Self.history(seed: seed)
            let reference = try Self.merged(events)
            let shuffled = events.shuffled(using: &random)
            #expect(try Self.merged(shuffled) == reference, "seed \(seed): arrival order changed the state")
            let duplicated = shuffled + shuffled.prefix(Int.random(in: 0...shuffled.count, using: &random))
            #expect(try Self.merged(duplicated.shuffled(using: &random)) == reference, "seed \(seed): duplicate delivery changed the state")
        }
    }

    @Test("replicas that merged a prefix first and then everything agree with one that merged everything at once")
    func prefixThenAll() throws {
        var random = Generator(seed: 1_000)
        for seed in 1_000..<1_200 as Range<UInt64> {
            let events = Self.history(seed: seed)
            let all = try Self.merged(events)
            // A replica keeps no state of its own between merges: it merges again from the files
            // it has. Each replica first has a different prefix of the history (publication order
            // is causal, so a prefix has no gap and no missing dependency), listed in its own order.
            for replica in 1...2 {
                let cut = Int.random(in: 1...events.count, using: &random)
                let early = Array(events.prefix(cut))
                let seen = early.shuffled(using: &random)
                #expect(
                    try Self.merged(seen) == Self.merged(early), "seed \(seed), replica \(replica): the prefix of \(cut) merged differently in another order")
                // Then the rest arrives (in another order) and is listed before what the replica
                // had; some of the files it had are delivered twice.
                let rest = Array(events.dropFirst(cut)).shuffled(using: &random)
                let again = seen.shuffled(using: &random).prefix(Int.random(in: 0...seen.count, using: &random))
                let state = try Self.merged(rest + seen + again)
                #expect(state == all, "seed \(seed), replica \(replica): merging a prefix of \(cut) first, then all \(events.count) events, gave another state")
            }
        }
    }
}
