import Testing
import JSONDocument
import EnsembleModel
import MergeEngine
import TestSupport

/// The engine finds ties by a key and dominance through an index (Spec/merge.md 4.4); these
/// random candidate sets check it against the definition applied to every pair, as the engine
/// did before (fixed seeds, so a failure repeats).
@Suite("Baseline choice")
struct BaselineChoiceTests {
    typealias Generator = SplitMix64

    /// Candidates with few stores, revisions, counts, timestamps and identifiers, so that
    /// equal sets, ties, duplicates (one event in two files) and conflicts all occur.
    static func candidates(seed: UInt64) -> [SourcedEvent] {
        var random = Generator(seed: seed)
        var result: [SourcedEvent] = []
        for index in 0..<Int.random(in: 1...14, using: &random) {
            if index > 0, Int.random(in: 0..<6, using: &random) == 0, let copy = result.randomElement(using: &random) {
                result.append(SourcedEvent(event: copy.event, file: "copy\(index).cdeevent"))
                continue
            }
            var revisions: [String: Int64] = [:]
            for store in ["A", "B", "C"] where Int.random(in: 0..<3, using: &random) > 0 {
                revisions[store] = Int64.random(in: 0...2, using: &random)
            }
            let store = revisions.keys.sorted().first ?? "A"
            let own = revisions[store] ?? 0
            revisions[store] = nil
            let event = Event(
                uniqueIdentifier: ["X", "Y"].randomElement(using: &random) ?? "X", type: .baseline, storeIdentifier: store, revision: own,
                globalCount: Int64.random(in: 0...1, using: &random), timestamp: Double(Int.random(in: 0...1, using: &random)),
                otherStoreRevisions: revisions,
                objectChanges: [ObjectChange(entity: "Item", globalIdentifier: "o\(Int.random(in: 0...1, using: &random))", type: .insert)])
            result.append(SourcedEvent(event: event, file: "\(index).cdeevent"))
        }
        return result
    }

    /// Spec/merge.md 4.4 pair by pair: the files taking part (oldest first), each redundant
    /// baseline's file with the file of the first baseline (by file) that makes it redundant,
    /// and the files of each conflict.
    static func reference(_ candidates: [SourcedEvent]) -> (kept: [String], redundant: [[String]], conflicts: [[String]]) {
        func newer(_ a: Event, _ b: Event) -> Bool {
            if a.globalCount != b.globalCount { return a.globalCount > b.globalCount }
            if a.timestamp != b.timestamp { return a.timestamp > b.timestamp }
            if !exactlyEqual(a.uniqueIdentifier, b.uniqueIdentifier) { return utf8Precedes(b.uniqueIdentifier, a.uniqueIdentifier) }
            return b.revisionSet.listPrecedes(a.revisionSet)
        }
        var baselines: [SourcedEvent] = []
        var conflicts: [[String]] = []
        for candidate in candidates {
            let ties = baselines.filter {
                $0.event.revisionSet == candidate.event.revisionSet && !newer($0.event, candidate.event) && !newer(candidate.event, $0.event)
            }
            if ties.isEmpty {
                baselines.append(candidate)
            } else if ties.contains(where: { $0.event != candidate.event }) {
                conflicts.append(sortedUnique(ties.map(\.file) + [candidate.file]))
            }
        }
        var kept: [SourcedEvent] = []
        var redundant: [[String]] = []
        for candidate in baselines {
            let makers = baselines.filter { other in
                switch other.event.revisionSet.compare(candidate.event.revisionSet) {
                case .dominates: true
                case .equal: newer(other.event, candidate.event)
                default: false
                }
            }
            if let by = makers.min(by: { utf8Precedes($0.file, $1.file) }) {
                redundant.append([candidate.file, by.file])
            } else {
                kept.append(candidate)
            }
        }
        return (kept.sorted { newer($1.event, $0.event) }.map(\.file), redundant, conflicts)
    }

    @Test("500 random candidate sets (2,000 in the long run): the same baselines, redundant baselines and conflicts as pair by pair")
    func matchesPairwiseDefinition() {
        for seed in 0..<UInt64(LongRun.count(500, long: 2_000)) {
            let candidates = Self.candidates(seed: seed)
            var input = MergeInput()
            input.baselines = candidates
            let analysis = MergeEngine.analyze(input)
            let expected = Self.reference(candidates)
            #expect(analysis.baselines.map(\.file) == expected.kept, "seed \(seed): other baselines take part")
            #expect(analysis.redundantBaselines.map { [$0.baseline.file, $0.by.file] } == expected.redundant, "seed \(seed): other redundant baselines")
            let conflicts = analysis.problems.filter { $0.code == .mergeConflictingRevision }.map(\.files)
            #expect(Set(conflicts) == Set(expected.conflicts) && conflicts.count == expected.conflicts.count, "seed \(seed): other conflicts")
        }
    }

    @Test("3,000 concurrent baselines and a chain of 3,000: each taking part or named by the first that dominates it")
    func manyBaselines() {
        var input = MergeInput()
        // 3,000 stores with one baseline each (all concurrent), then 3,000 baselines of one
        // store, each dominated by all those after it.
        for index in 0..<3_000 {
            let event = Event(
                uniqueIdentifier: "C\(index)", type: .baseline, storeIdentifier: "S\(index)", revision: 0, globalCount: 0, timestamp: 0)
            input.baselines.append(SourcedEvent(event: event, file: "c\(index).cdeevent"))
        }
        for revision in 0..<3_000 {
            let event = Event(
                uniqueIdentifier: "D\(revision)", type: .baseline, storeIdentifier: "T", revision: Int64(revision), globalCount: 0, timestamp: 0)
            input.baselines.append(SourcedEvent(event: event, file: "d\(revision).cdeevent"))
        }
        let analysis = MergeEngine.analyze(input)
        #expect(analysis.baselines.count == 3_001)
        #expect(analysis.redundantBaselines.count == 2_999)
        // Every dominated one is named by the first file (UTF-8 order) among those dominating it.
        #expect(analysis.redundantBaselines.first { $0.baseline.file == "d0.cdeevent" }?.by.file == "d1.cdeevent")
        #expect(analysis.redundantBaselines.first { $0.baseline.file == "d2998.cdeevent" }?.by.file == "d2999.cdeevent")
        #expect(analysis.baselineRevisions?.count == 3_001)
    }
}
