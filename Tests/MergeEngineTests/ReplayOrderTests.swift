import Testing
import JSONDocument
import EnsembleModel
import MergeEngine

/// Every tie-break of the replay order (Spec/merge.md 6), in a strict merge and in device mode
/// (merge.md 15), which sort by different code: two events write the same property, and the one
/// the Spec replays last must win. At each level the earlier keys tie and every later key points
/// the other way, so that skipping or reversing any comparison makes the other event win.
@Suite("Replay order")
struct ReplayOrderTests {
    /// One of the two events: (store, revision, global count, timestamp).
    struct Writer: Sendable, CustomStringConvertible {
        var store: String
        var revision: Int64
        var globalCount: Int64
        var timestamp: Double
        var description: String { "\(store)/\(revision) count \(globalCount) at \(timestamp)" }
    }

    /// (earlier, later) by the Spec, one pair per key, hand-derived from merge.md 6.
    static let levels: [(key: String, earlier: Writer, later: Writer)] = [
        // Global count decides, although timestamp, store and revision say otherwise.
        ("global count", Writer(store: "z", revision: 9, globalCount: 5, timestamp: 90), Writer(store: "A", revision: 1, globalCount: 6, timestamp: 10)),
        // Counts tie: the smaller timestamp first, although store and revision say otherwise.
        ("timestamp", Writer(store: "z", revision: 9, globalCount: 5, timestamp: 10), Writer(store: "A", revision: 1, globalCount: 5, timestamp: 20)),
        // Counts and timestamps tie: "B" (0x42) before "a" (0x61) in UTF-8 bytes (not
        // alphabetically), although the revision says otherwise.
        ("store", Writer(store: "B", revision: 9, globalCount: 5, timestamp: 10), Writer(store: "a", revision: 1, globalCount: 5, timestamp: 10)),
        // Everything else ties: the lower revision first.
        ("revision", Writer(store: "S", revision: 8, globalCount: 5, timestamp: 10), Writer(store: "S", revision: 9, globalCount: 5, timestamp: 10)),
    ]

    /// A baseline that inserts the object and covers every revision before the writers', and the
    /// two writers (listed later one first, so that the input order never decides).
    static func input(_ earlier: Writer, _ later: Writer) -> MergeInput {
        var input = MergeInput()
        var covered: [String: Int64] = ["D": 0]
        for writer in [earlier, later] { covered[writer.store] = min(covered[writer.store] ?? .max, writer.revision - 1) }
        let base = Event(
            uniqueIdentifier: "BASE", type: .baseline, storeIdentifier: "D", revision: 0, globalCount: 0, timestamp: 0,
            otherStoreRevisions: covered.filter { $0.key != "D" },
            objectChanges: [
                ObjectChange(
                    entity: "Item", globalIdentifier: "o", type: .insert, propertyChanges: [PropertyChange(name: "title", value: .attribute(.string("base")))])
            ])
        input.baselines = [SourcedEvent(event: base, file: "baselines/0_BASE.cdeevent")]
        for writer in [later, earlier] {
            let event = Event(
                uniqueIdentifier: "\(writer.store)-\(writer.revision)", type: .save, storeIdentifier: writer.store, revision: writer.revision,
                globalCount: writer.globalCount, timestamp: writer.timestamp, otherStoreRevisions: [:],
                objectChanges: [
                    ObjectChange(
                        entity: "Item", globalIdentifier: "o", type: .update,
                        propertyChanges: [PropertyChange(name: "title", value: .attribute(.string(writer.description)))])
                ])
            input.events.append(SourcedEvent(event: event, file: "events/\(writer.globalCount)_\(writer.store)_\(writer.revision).cdeevent"))
        }
        return input
    }

    static func title(_ document: JSONValue) -> String? {
        document[JSONPointer(["entities", "Item", "o", "title"])]?.stringValue
    }

    @Test("a strict merge replays the later event last", arguments: levels.indices)
    func strict(_ level: Int) throws {
        let (key, earlier, later) = Self.levels[level]
        let state = try MergeEngine.merge(Self.input(earlier, later))
        #expect(Self.title(try state.document()) == later.description, "tie-break by \(key)")
    }

    @Test("device mode replays the later event last", arguments: levels.indices)
    func device(_ level: Int) throws {
        let (key, earlier, later) = Self.levels[level]
        let input = Self.input(earlier, later)
        let device = DeviceIntegration.integrate(input, as: "D")
        #expect(device.heldBack.isEmpty)
        let state = try #require(try device.state(input)?.state)
        #expect(Self.title(try state.document()) == later.description, "tie-break by \(key)")
    }

    /// All eight writers of ``levels`` in the replay order worked out by hand from merge.md 6:
    /// global count 5 before 6; among count 5, timestamp 10, then 20, then 90; among those at
    /// 10, store "B" < "S" < "a" < "z" in UTF-8 bytes, and "S" revision 8 before 9.
    static let handOrder = [
        "B/9 count 5 at 10.0", "S/8 count 5 at 10.0", "S/9 count 5 at 10.0", "a/1 count 5 at 10.0",
        "z/9 count 5 at 10.0", "A/1 count 5 at 20.0", "z/9 count 5 at 90.0", "A/1 count 6 at 10.0",
    ]

    @Test("sorting into replay order gives the order worked out by hand, and keeps items that tie in the order given")
    func sorting() {
        func event(_ writer: Writer) -> Event {
            Event(
                uniqueIdentifier: writer.description, type: .save, storeIdentifier: writer.store, revision: writer.revision,
                globalCount: writer.globalCount, timestamp: writer.timestamp, otherStoreRevisions: [:], objectChanges: [])
        }
        let writers = Self.levels.flatMap { [$0.later, $0.earlier] }
        #expect(Set(writers.map(\.description)) == Set(Self.handOrder))
        // Given in reverse, so that the order given never matches; then two more copies of the
        // writer given first, which tie with it on every key: the three stay in the order given.
        var items = writers.reversed().map { (event: event($0), tag: "") }
        items.insert((event(Self.levels[3].earlier), "second copy"), at: 2)
        items.append((event(Self.levels[3].earlier), "third copy"))
        MergeAnalysis.sortInReplayOrder(&items) { $0.event }
        let expected = Self.handOrder.flatMap { $0 == Self.levels[3].earlier.description ? [($0, ""), ($0, "second copy"), ($0, "third copy")] : [($0, "")] }
        #expect(items.map(\.event.uniqueIdentifier) == expected.map(\.0))
        #expect(items.map(\.tag) == expected.map(\.1))
    }
}
