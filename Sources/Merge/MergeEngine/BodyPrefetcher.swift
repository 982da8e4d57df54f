import Foundation
import JSONDocument
import EnsembleModel

/// Reads the next events of the replay on another core while the current one is applied: the
/// replay itself is sequential, reading and decoding the files is not. At most `window` events
/// are held ahead, so memory stays bounded. Events are handed over in numbered form, made on the
/// reading cores, so that the replaying thread neither reads nor frees their strings.
final class BodyPrefetcher: @unchecked Sendable {
    // All mutable state is guarded by `condition`.
    private let condition = NSCondition()
    private var ready: [Int: Result<NumberedEvent, FormatError>] = [:]
    private var consumed = 0
    private var cancelled = false
    private let window: Int
    private let batch = 16

    init(_ events: [SourcedEvent], input: MergeInput, window: Int = 64) {
        self.window = window
        DispatchQueue.global().async { [self] in
            // In batches decoded on every core: decoding, not the replay, is the slower side.
            for start in stride(from: 0, to: events.count, by: batch) {
                condition.lock()
                while start - consumed >= window && !cancelled { condition.wait() }
                let stop = cancelled
                condition.unlock()
                if stop { return }
                let end = min(start + batch, events.count)
                DispatchQueue.concurrentPerform(iterations: end - start) { offset in
                    let result: Result<NumberedEvent, FormatError>
                    do throws(FormatError) {
                        result = .success(try input.numberedBody(of: events[start + offset]))
                    } catch {
                        result = .failure(error)
                    }
                    condition.lock()
                    ready[start + offset] = result
                    condition.broadcast()
                    condition.unlock()
                }
            }
        }
    }

    /// The event at `index`; indices must be taken in order, each once.
    func take(_ index: Int) throws(FormatError) -> NumberedEvent {
        condition.lock()
        while ready[index] == nil { condition.wait() }
        let result = ready.removeValue(forKey: index)
        consumed = index + 1
        condition.broadcast()
        condition.unlock()
        switch result {
        case .success(let event)?: return event
        case .failure(let error)?: throw error
        case nil: throw FormatError(.mergeIncompleteData, "an event was taken twice")
        }
    }

    /// Stops reading ahead (when the replay ends early).
    func cancel() {
        condition.lock()
        cancelled = true
        condition.broadcast()
        condition.unlock()
    }
}
