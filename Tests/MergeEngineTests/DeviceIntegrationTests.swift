import Testing
import JSONDocument
import EnsembleModel
import MergeEngine
import TestSupport

/// Device mode (Spec/merge.md 15) finds held-back events through per-store gaps and a worklist of
/// dependents. These random histories check it against the original framework's loop as
/// merge.md 15 describes it, transcribed literally: scan every store from the lowest to the
/// highest revision any integrable revision set names, remove, and repeat until nothing changes.
@Suite("Device integration")
struct DeviceIntegrationTests {
    typealias Generator = SplitMix64
    static let stores = ["A", "B", "C", "D"]

    struct History {
        var input = MergeInput()
        var device = "A"
    }

    /// A few stores with a few revisions each, some missing, with random dependencies (some on
    /// revisions nobody has), some events referencing missing data files, and a baseline that
    /// names some of the stores.
    static func history(seed: UInt64) -> History {
        var random = Generator(seed: seed)
        var history = History()
        var baseline: [String: Int64] = [:]
        for store in stores where Int.random(in: 0..<4, using: &random) > 0 {
            baseline[store] = Int64.random(in: -1...1, using: &random)
        }
        baseline = baseline.filter { $0.value >= 0 }
        if !baseline.isEmpty || Int.random(in: 0..<8, using: &random) == 0 {
            let event = Event(
                uniqueIdentifier: "BASE", type: .baseline, storeIdentifier: "A", revision: baseline["A"] ?? 0, globalCount: 0, timestamp: 0,
                otherStoreRevisions: baseline.filter { $0.key != "A" }, objectChanges: [])
            history.input.baselines = [SourcedEvent(event: event, file: "baselines/0_BASE.cdeevent")]
        }
        history.input.dataFiles = [ExactString("present")]
        var globalCount: Int64 = 1
        for store in stores {
            for revision in Int64(0)...Int64.random(in: 0...6, using: &random) where Int.random(in: 0..<6, using: &random) > 0 {
                var others: [String: Int64] = [:]
                for other in stores where other != store && Int.random(in: 0..<3, using: &random) == 0 {
                    others[other] = Int64.random(in: 0...6, using: &random)
                }
                let dataFile = Int.random(in: 0..<10, using: &random) == 0 ? "gone" : "present"
                let change = ObjectChange(
                    entity: "Item", globalIdentifier: "\(store)\(revision)", type: .insert,
                    propertyChanges: [PropertyChange(name: "photo", value: .attributeInDataFile(filename: dataFile))])
                let event = Event(
                    uniqueIdentifier: "\(store)-\(revision)", type: .save, storeIdentifier: store, revision: revision, globalCount: globalCount,
                    timestamp: Double(globalCount), otherStoreRevisions: others, objectChanges: [change])
                history.input.events.append(SourcedEvent(event: event, file: "events/\(globalCount)_\(store)_\(revision).cdeevent"))
                globalCount += 1
            }
        }
        return history
    }

    /// The original's loop, literally: the files it holds back, or nil when nothing is
    /// integrable at all.
    static func reference(_ history: History) -> Set<String>? {
        guard let baselineEvent = history.input.baselines.first?.event else { return nil }
        let known = baselineEvent.revisionSet
        let present = history.input.events
        func event(_ store: String, _ revision: Int64) -> SourcedEvent? {
            present.first { $0.event.storeIdentifier == store && $0.event.revision == revision }
        }
        var failing = Set<String>()
        var integrable: [SourcedEvent] = []
        var covered = Set<String>()
        for sourced in present {
            // Covered events are not part of a device's history (Spec/merge.md 15.4 step 5); the
            // loop below removes them again, which changes nothing but the report.
            if let base = known[sourced.event.storeIdentifier], sourced.event.revision <= base {
                covered.insert(sourced.file)
                continue
            }
            if sourced.dataFileReferences.contains("gone") { failing.insert(sourced.file) } else { integrable.append(sourced) }
        }
        var count: Int
        repeat {
            count = integrable.count
            var minimum: [String: Int64] = [:], maximum: [String: Int64] = [:]
            for set in integrable.map(\.event.revisionSet) + [known] {
                for (store, revision) in set.revisions {
                    minimum[store] = min(minimum[store] ?? revision, revision)
                    maximum[store] = max(maximum[store] ?? revision, revision)
                }
            }
            for store in Set(minimum.keys).union(known.stores) {
                guard let low = minimum[store], let high = maximum[store] else { continue }
                let base = known[store]
                var discontinuous = base == nil
                for revision in low...high {
                    guard let found = event(store, revision) else {
                        if revision > (base ?? 0) { discontinuous = true }
                        continue
                    }
                    if discontinuous || revision <= (base ?? 0) {
                        failing.insert(found.file)
                        integrable.removeAll { $0.file == found.file }
                        continue
                    }
                    for (other, needed) in found.event.revisionSet.revisions where other != store {
                        if (known[other] ?? 0) >= needed { continue }
                        let dependency = event(other, needed)
                        if dependency == nil || failing.contains(dependency?.file ?? "") {
                            failing.insert(found.file)
                            integrable.removeAll { $0.file == found.file }
                        }
                    }
                }
            }
        } while count != integrable.count
        return failing.subtracting(covered)
    }

    @Test("held-back events equal the original's loop", arguments: 0..<300)
    func matchesTheLoop(seed: UInt64) {
        let history = Self.history(seed: seed)
        let result = DeviceIntegration.integrate(history.input, as: history.device)
        #expect(result.problems.isEmpty)
        guard let expected = Self.reference(history) else {
            #expect(result.outcome == .integratesNothing)
            return
        }
        #expect(result.outcome == .integrates)
        #expect(Set(result.heldBack.map(\.sourced.file)) == expected, "seed \(seed)")
        let covered = history.input.events.filter { sourced in
            history.input.baselines.first.flatMap { $0.event.revisionSet[sourced.event.storeIdentifier] }.map { sourced.event.revision <= $0 } ?? false
        }
        #expect(result.integrable.count + result.heldBack.count + covered.count == history.input.events.count)
        #expect(result.coveredCount == covered.count)
    }

    @Test("the device's own registration decides; other stores' registrations do not")
    func registration() {
        var history = Self.history(seed: 7)
        history.input.registeredStores = [ExactString("B")]
        let gone = DeviceIntegration.integrate(history.input, as: "A")
        #expect(gone.outcome == .deleeches)
        #expect(gone.stop?.number == 205)
        #expect(gone.integrable.isEmpty && gone.heldBack.isEmpty)
        history.input.registeredStores = [ExactString("A")]
        #expect(DeviceIntegration.integrate(history.input, as: "A").outcome != .deleeches)
    }

    @Test("without a baseline every event is held back, and the list is in file order")
    func noBaselineOrder() {
        var input = MergeInput()
        for (store, file) in [("A", "events/3_A_0.cdeevent"), ("B", "events/2_B_0.cdeevent")] {
            let event = Event(
                uniqueIdentifier: store, type: .save, storeIdentifier: store, revision: 0, globalCount: 1, timestamp: 0, otherStoreRevisions: [:],
                objectChanges: [])
            input.events.append(SourcedEvent(event: event, file: file))
        }
        let result = DeviceIntegration.integrate(input, as: "A")
        #expect(result.outcome == .integratesNothing)
        #expect(result.heldBack.map(\.sourced.file) == ["events/2_B_0.cdeevent", "events/3_A_0.cdeevent"])
    }

    @Test("a long chain of dependencies on a held-back event is held back link by link")
    func longChain() {
        var input = MergeInput()
        let base = Event(
            uniqueIdentifier: "BASE", type: .baseline, storeIdentifier: "B", revision: 0, globalCount: 0, timestamp: 0,
            otherStoreRevisions: ["C": 0], objectChanges: [])
        input.baselines = [SourcedEvent(event: base, file: "base")]
        // B/1 needs X/5, which nobody has; C/r needs B/r and B/r+1 needs C/r: every event waits
        // for the one before it, in the other store.
        let count: Int64 = 20_000
        for revision in 1...count {
            let b = Event(
                uniqueIdentifier: "B\(revision)", type: .save, storeIdentifier: "B", revision: revision, globalCount: 2 * revision, timestamp: 0,
                otherStoreRevisions: revision == 1 ? ["X": 5] : ["C": revision - 1], objectChanges: [])
            let c = Event(
                uniqueIdentifier: "C\(revision)", type: .save, storeIdentifier: "C", revision: revision, globalCount: 2 * revision + 1, timestamp: 0,
                otherStoreRevisions: ["B": revision], objectChanges: [])
            input.events += [SourcedEvent(event: b, file: "b\(revision)"), SourcedEvent(event: c, file: "c\(revision)")]
        }
        let result = DeviceIntegration.integrate(input, as: "B")
        #expect(result.integrable.isEmpty)
        #expect(result.heldBack.count == Int(2 * count))
        let reasons = Dictionary(
            result.heldBack.map { ($0.sourced.file, $0.reasons.first?.details["dependency"]?.stringValue) }, uniquingKeysWith: { a, _ in a })
        #expect(reasons["b1"] == "missing")
        #expect(reasons["c1"] == "held-back")
        #expect(reasons["b\(count)"] == "held-back")
    }
}
