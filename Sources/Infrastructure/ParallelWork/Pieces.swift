import Foundation

/// Work over a range split into consecutive pieces, done on every core, with the results in
/// range order: for a large output made in one place (a state document, a baseline and its
/// encodings) whose parts do not depend on each other.
package enum Pieces {
    /// `body` of consecutive ranges of `0 ..< count`, `size` indices each (the last may be
    /// shorter), each on whichever core is free; the results in range order, or the first
    /// range's error. A single piece runs on the calling thread.
    package static func map<T: Sendable, Failure: Error>(
        count: Int, size: Int, _ body: @Sendable (Range<Int>) throws(Failure) -> T
    ) throws(Failure) -> [T] {
        let size = max(1, size)
        guard count > size else { return count > 0 ? [try body(0..<count)] : [] }
        let pieces = (count + size - 1) / size
        let results = ResultSlots<Result<T, Failure>>(count: pieces)
        DispatchQueue.concurrentPerform(iterations: pieces) { index in
            let range = index * size..<min(count, (index + 1) * size)
            results.set(index, Result { () throws(Failure) in try body(range) })
        }
        var values: [T] = []
        values.reserveCapacity(pieces)
        // Every slot is set once concurrentPerform returns.
        for case let result? in results.takeValues() { values.append(try result.get()) }
        return values
    }
}
