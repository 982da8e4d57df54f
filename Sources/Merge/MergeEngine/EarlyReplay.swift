import ParallelWork
import Foundation
import Crypto
import JSONDocument
import EnsembleModel

/// Replays events while a folder is still being read, on a thread of its own, betting that the
/// analysis will replay exactly these events in exactly this order (so that each event is then
/// decoded once, and applying overlaps reading).
///
/// The bet is checked, never assumed: ``MergeEngine/merge(_:)`` takes the early state only when
/// the analysis chose the same baselines and its replay order lists the same files in the same
/// order (compared through a SHA-256 of the list); otherwise it replays from the event store as
/// usual. Events must be offered in nondecreasing global count, each global count whole in one
/// offer, which is how a folder's names order them.
///
/// For a rebase (``Mode/folding``) only the events the rebase folds are applied (Spec/merge.md
/// 13.3: those with a global count of at most the cutoff C, the least over the moved stores of
/// their greatest global count). C is known only once every event is read, but never falls below
/// L, the least greatest global count of the stores offered so far (a store offered later has
/// greater counts still): events at or below L are applied as they come, the others wait until L
/// passes them, and those still waiting at the end are the kept ones. When too many wait (a
/// store that stopped saving early keeps L low), the bet is abandoned.
package final class EarlyReplay: @unchecked Sendable {
    /// What is applied: every event to replay (a merge), or only those a rebase folds.
    package enum Mode: Sendable {
        case everything
        case folding
    }
    // `state` and `abandoned` are used only on `queue`, or after it drained; `replayed` and
    // `count` only by the thread that offers events and asks for the state (the one reading the
    // folder), so that the applying thread, the slower side, does nothing but apply.
    private let queue = DispatchQueue(label: "ensembles.early-replay")
    /// At most eight offers wait, so that memory stays bounded when applying is the slower side
    /// (a folder offers 64 events at a time: 512 events wait at most).
    private let pending = DispatchSemaphore(value: 8)
    /// Offers queued and not yet applied.
    private let queued = SharedCounter()
    private var state: StoreState
    private var replayed = FileSequenceDigest()
    private var count = 0
    private var abandoned = false
    private let known: RevisionSet?
    private let baselineFiles: [String]
    private let mode: Mode
    /// Folding: the greatest global count offered of each store, and the events above their
    /// least (L) waiting in replay order; used only by the thread that offers events.
    private var greatest: [ExactString: Int64] = [:]
    private var waiting: [Queued] = []
    private var gaveUp = false
    /// Folding: more waiting events than this abandons the bet (memory stays bounded).
    private let maximumWaiting: Int

    /// Applies the baselines the analysis would choose among `baselines`: `bodies[i]`, when
    /// given, holds the object changes of `baselines[i]` in numbered form; the others are read
    /// again through `input`. Abandons at once when they cannot be chosen or read.
    package init(
        baselines: [SourcedEvent], bodies: [NumberedEvent?] = [], input: MergeInput, mode: Mode = .everything, maximumWaiting: Int = 16_384
    ) {
        self.mode = mode
        self.maximumWaiting = maximumWaiting
        state = StoreState(model: input.model)
        state.keepsReplaced = true
        let chosen = MergeAnalysis.chooseBaselines(baselines.filter { $0.event.type == .baseline }, input)
        baselineFiles = chosen.baselines.map(\.file)
        known =
            chosen.baselines.isEmpty
            ? nil : chosen.baselines.dropFirst().reduce(into: chosen.baselines[0].event.revisionSet) { $0.merge(with: $1.event.revisionSet) }
        guard chosen.problems.isEmpty else {
            abandoned = true
            return
        }
        // By file: the analysis chooses among the baselines as given, so each chosen one is one
        // of them, its file named once.
        var given: [ExactString: NumberedEvent] = [:]
        for (baseline, body) in zip(baselines, bodies) { if let body, baseline.isSummary { given[ExactString(baseline.file)] = body } }
        do throws(FormatError) {
            for baseline in chosen.baselines {
                if let body = given[ExactString(baseline.file)] { state.apply(body) } else { state.apply(try input.numberedBody(of: baseline)) }
            }
        } catch {
            abandoned = true
        }
    }

    /// Applies `events` (with their object changes in numbered form in `bodies` where they are
    /// summaries) in replay order, skipping what the baselines cover; returns once they are queued.
    package func offer(_ events: [SourcedEvent], bodies: consuming [NumberedEvent?]) {
        guard !gaveUp else { return }
        let handover = Handover()
        // Each body moved into the batch, not copied (a copy retained and released its lists).
        for (index, sourced) in zip(bodies.indices, events) where sourced.event.type == .save || sourced.event.type == .merge {
            if let covered = known?[sourced.event.storeIdentifier], sourced.event.revision <= covered { continue }
            guard let body = sourced.isSummary ? bodies[index].take() : NumberedEvent(sourced.event) else {
                abandon()
                return
            }
            handover.batch.append(Queued(sourced: sourced, body: body))
        }
        MergeAnalysis.sortInReplayOrder(&handover.batch) { $0.sourced.event }
        if mode == .folding {
            for index in handover.batch.indices {
                let event = handover.batch[index].sourced.event, store = ExactString(event.storeIdentifier)
                greatest[store] = max(greatest[store] ?? .min, event.globalCount)
            }
            // Waiting events come before this batch in replay order (smaller global counts).
            waiting += handover.batch
            handover.batch = []
            release(through: greatest.values.min() ?? .min, into: handover)
            guard waiting.count <= maximumWaiting else {
                waiting = []
                gaveUp = true
                abandon()
                return
            }
        }
        apply(handover)
    }

    /// Folding: moves the waiting events with a global count of at most `bound` into `handover`.
    private func release(through bound: Int64, into handover: Handover) {
        let ready = waiting.prefix { $0.sourced.event.globalCount <= bound }
        handover.batch += ready
        waiting.removeFirst(ready.count)
    }

    private func apply(_ handover: Handover) {
        // Recorded in the order they are applied in: the queue applies every batch whole, in
        // the order offered, unless it abandons (and then no state is given).
        // By index: iterating the batch copied each event (a retain and a release of each of
        // its strings and lists) to read its file name.
        for index in handover.batch.indices { replayed.record(handover.batch[index].sourced.file) }
        count += handover.batch.count
        pending.wait()
        queued.add(1)
        queue.async { [self] in
            defer {
                queued.add(-1)
                pending.signal()
            }
            if !abandoned {
                // In place: a copy of each body retained and released all its buffers, and
                // applying moves its values out.
                handover.batch.withUnsafeMutableBufferPointer { batch in
                    for index in batch.indices {
                        if index + 1 < batch.count { StoreState.prefetch(&batch[index + 1].body) }
                        state.apply(&batch[index].body)
                    }
                }
                handover.replaced = state.takeReplaced()
            }
            // Freeing the batch, and releasing the values its changes replaced, is left to
            // another thread: this one is the slower side of the pipeline. Only the handover
            // holds them, so the last reference is dropped there (a copy held here was often the
            // last, and freed here).
            DispatchQueue.global().async {
                handover.batch = []
                handover.replaced = []
            }
        }
    }

    /// Whether four offers (of the eight that may be) are queued or being applied: the applying
    /// thread has work for a while, and reading on one thread keeps it supplied. (Of 1, 2, 4 and
    /// 6, 4 was the fastest on both the JSON and the binary folder: Benchmarks/README.md.)
    package var isBusy: Bool { queued.value >= 4 }

    /// An event to apply and its changes in numbered form. A struct, not a tuple: a field of a
    /// tuple element was read by copying the element (each of its lists retained and
    /// released), and a list of tuples is freed through the runtime's generic tuple witness.
    private struct Queued {
        var sourced: SourcedEvent
        var body: NumberedEvent
    }

    /// Events passed to the applying thread, and from it to the one that frees them; the batch
    /// is read in place and emptied only by the freeing thread.
    private final class Handover: @unchecked Sendable {
        var batch: [Queued] = []
        var replaced: [StoreState.Stored] = []
    }

    /// Stops applying: the bet is already lost (another input joined, say).
    package func abandon() {
        queue.async { [self] in abandoned = true }
    }

    /// The state once every offered event is applied, before any analysis has checked it; nil
    /// when the replay was abandoned. ``state(for:)`` decides whether it is the merge's.
    package func replayedState() -> StoreState? {
        queue.sync {}
        guard !abandoned else { return nil }
        // Whoever takes it changes it without taking the values it replaces.
        var given = state
        given.keepsReplaced = false
        return given
    }

    /// The state, when the analysis replays exactly what was applied; nil otherwise.
    package func state(for analysis: MergeAnalysis) -> StoreState? {
        guard mode == .everything, let replayed = replayedState(), count == analysis.replayCount, baselineFiles == analysis.baselines.map(\.file)
        else { return nil }
        var expected = FileSequenceDigest()
        do throws(FormatError) {
            try analysis.forEachReplayedFile { expected.record($0) }
        } catch {
            return nil
        }
        return expected.finalize() == self.replayed.finalize() ? replayed : nil
    }

    /// The state, when what was applied is exactly `baselines` and then `events` (in this
    /// order): a device that integrates every event a merge replays (Spec/merge.md 15.4 step 8);
    /// nil otherwise.
    package func state(baselines: [SourcedEvent], events: [SourcedEvent]) -> StoreState? {
        guard mode == .everything, let replayed = replayedState(), count == events.count, baselineFiles == baselines.map(\.file) else { return nil }
        var expected = FileSequenceDigest()
        for sourced in events { expected.record(sourced.file) }
        return expected.finalize() == self.replayed.finalize() ? replayed : nil
    }

    /// Folding: the state of the baselines and the events `plan` folds, when they are exactly
    /// what was applied (the waiting events at or below its cutoff applied first); nil otherwise.
    package func foldedState(for analysis: MergeAnalysis, plan: RebasePlan) -> StoreState? {
        guard mode == .folding else { return nil }
        let handover = Handover()
        release(through: plan.cutoff, into: handover)
        apply(handover)
        guard let folded = replayedState(), count == plan.foldedCount, baselineFiles == analysis.baselines.map(\.file),
            plan.foldedFiles == replayed.finalize()
        else { return nil }
        // Handed over, not shared: the caller goes on changing it (the kept events), which would
        // copy the whole state while this one still held it.
        queue.sync { state = StoreState(model: folded.dataModel) }
        return folded
    }
}

/// The SHA-256 of a sequence of file names, each name's bytes then a NUL: what ``EarlyReplay``
/// applied, what the analysis replays, what a rebase plan folds. Fed to the hash a block of names
/// at a time: an update per name cost more than hashing it (Benchmarks/README.md).
struct FileSequenceDigest {
    private var hash = SHA256()
    private var pending: [UInt8] = []

    mutating func record(_ file: String) {
        ExactString.withUTF8(of: file) { pending.append(contentsOf: $0) }
        pending.append(0)
        if pending.count >= 1 << 14 {
            pending.withUnsafeBytes { hash.update(bufferPointer: $0) }
            pending.removeAll(keepingCapacity: true)
        }
    }

    /// The digest of the names recorded so far.
    func finalize() -> [UInt8] {
        var hash = hash
        pending.withUnsafeBytes { hash.update(bufferPointer: $0) }
        return Array(hash.finalize())
    }
}
