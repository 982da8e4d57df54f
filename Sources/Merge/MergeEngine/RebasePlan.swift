import JSONDocument
import EnsembleModel
import ProgressReporting

extension FormatError.Code {
    public static let rebaseUnsafeCutoff = Self("rebase.unsafe-cutoff")
    public static let rebaseVerificationFailed = Self("rebase.verification-failed")
    public static let rebaseDestinationExists = Self("rebase.destination-exists")
    public static let rebaseWriteFailed = Self("rebase.write-failed")
}

/// Which events a rebase folds into the new baseline and which it keeps (Spec/merge.md 13.3).
///
/// The folded events are not listed: they are read from the analysis's event store when they are
/// replayed, so a rebase of a long history does not hold it in memory.
package struct RebasePlan: Sendable {
    /// The cutoff global count C.
    package var cutoff: Int64
    /// How many events to replay have a global count of at most C.
    package var foldedCount = 0
    /// The store of the last folded event in replay order.
    package var lastFoldedStore: String?
    /// The greatest timestamp of the folded events.
    package var foldedTimestamp: Double?
    /// The model version of the last folded event in replay order that names one.
    package var foldedModelVersion: String?
    /// Events to replay above C, in replay order (usually few: what the stores did last).
    package var kept: [SourcedEvent] = []
    /// The new baseline's revision set: per store, the greater of the baselines' revision and
    /// the highest folded revision.
    package var revisionSet: RevisionSet
    /// The SHA-256 of the folded events' file names in replay order, as ``EarlyReplay`` records
    /// the files it replays: whether its folded state is the one of this plan.
    package var foldedFiles: [UInt8] = []
    private let analysis: MergeAnalysis

    /// nil when no store has moved (nothing to fold); throws `rebase.unsafe-cutoff` when a
    /// store's kept event does not come after its folded ones.
    package init?(_ analysis: MergeAnalysis) throws(FormatError) {
        self.analysis = analysis
        // The cutoff from the index alone (one pass over the events, not two).
        guard let cutoff = try analysis.greatestReplayedGlobalCounts().min() else { return nil }
        self.cutoff = cutoff
        var highestFolded = RevisionSet()
        var files = FileSequenceDigest()
        // The folded events' few fields from the index, not the events (one pass over them); the
        // kept ones, usually few, whole.
        var folded = (count: 0, lastStore: String?.none, timestamp: Double?.none, modelVersion: String?.none)
        try analysis.forEachReplayedFields { event in
            guard event.globalCount <= cutoff else { return }
            files.record(event.file)
            folded.count += 1
            folded.lastStore = event.store
            folded.timestamp = max(folded.timestamp ?? event.timestamp, event.timestamp)
            if let version = event.modelVersion { folded.modelVersion = version }
            highestFolded[event.store] = max(highestFolded[event.store] ?? -1, event.revision)
        }
        (foldedCount, lastFoldedStore, foldedTimestamp, foldedModelVersion) = folded
        kept = try analysis.replayedEvents(above: cutoff)
        for sourced in kept {
            if let highest = highestFolded[sourced.event.storeIdentifier], sourced.event.revision <= highest {
                throw FormatError(
                    .rebaseUnsafeCutoff,
                    "store \(sourced.event.storeIdentifier): revision \(sourced.event.revision) has a global count above the cutoff \(cutoff), but revision \(highest) is folded; the new baseline would cover it",
                    location: .init(file: sourced.file))
            }
        }
        var revisions = analysis.baselineRevisions ?? RevisionSet()
        for (store, revision) in highestFolded.revisions where revision > (revisions[store] ?? -1) { revisions[store] = revision }
        revisionSet = revisions
        foldedFiles = files.finalize()
    }

    /// Calls `body` with the folded events in replay order, a page at a time.
    package func forEachFoldedPage(_ body: ([SourcedEvent]) throws -> Void) throws {
        var done = 0
        try analysis.replayPages(through: cutoff) { page in
            try body(page)
            done += page.count
            ProgressReport.report("events folded", done: done, total: foldedCount)
        }
    }
}
