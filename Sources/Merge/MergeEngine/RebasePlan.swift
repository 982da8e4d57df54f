import JSONDocument
import EnsembleModel

extension FormatError.Code {
    public static let rebaseUnsafeCutoff = Self("rebase.unsafe-cutoff")
    public static let rebaseVerificationFailed = Self("rebase.verification-failed")
    public static let rebaseDestinationExists = Self("rebase.destination-exists")
    public static let rebaseWriteFailed = Self("rebase.write-failed")
}

/// Which events a rebase folds into the new baseline and which it keeps (Spec/merge.md 13.3).
public struct RebasePlan: Sendable {
    /// The cutoff global count C.
    public var cutoff: Int64
    /// Events to replay with a global count of at most C, in replay order.
    public var folded: [SourcedEvent]
    /// Events to replay above C, in replay order.
    public var kept: [SourcedEvent]
    /// The new baseline's revision set: per store, the greater of the baselines' revision and
    /// the highest folded revision.
    public var revisionSet: RevisionSet

    /// nil when no store has moved (nothing to fold); throws `rebase.unsafe-cutoff` when a
    /// store's kept event does not come after its folded ones.
    public init?(_ analysis: MergeAnalysis) throws(FormatError) {
        let replay = try analysis.replayedEvents()
        var greatest: [ExactString: Int64] = [:]
        for sourced in replay {
            let store = ExactString(sourced.event.storeIdentifier)
            greatest[store] = max(greatest[store] ?? .min, sourced.event.globalCount)
        }
        guard let cutoff = greatest.values.min() else { return nil }
        self.cutoff = cutoff
        folded = replay.filter { $0.event.globalCount <= cutoff }
        kept = replay.filter { $0.event.globalCount > cutoff }
        var highestFolded: [String: Int64] = [:]
        for sourced in folded {
            highestFolded[sourced.event.storeIdentifier] = max(highestFolded[sourced.event.storeIdentifier] ?? -1, sourced.event.revision)
        }
        for sourced in kept {
            if let highest = highestFolded[sourced.event.storeIdentifier], sourced.event.revision <= highest {
                throw FormatError(.rebaseUnsafeCutoff, "store \(sourced.event.storeIdentifier): revision \(sourced.event.revision) has a global count above the cutoff \(cutoff), but revision \(highest) is folded; the new baseline would cover it", location: .init(file: sourced.file))
            }
        }
        var revisions = analysis.baselineRevisions ?? RevisionSet()
        for (store, revision) in highestFolded where revision > (revisions[store] ?? -1) { revisions[store] = revision }
        revisionSet = revisions
    }
}
