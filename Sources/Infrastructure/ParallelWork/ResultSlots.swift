import Foundation

/// Slots that concurrent workers fill, each its own index; the lock makes the writes safe.
package final class ResultSlots<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var slots: [Value?]

    package init(count: Int) { slots = Array(repeating: nil, count: count) }

    package func set(_ index: Int, _ value: Value) {
        lock.lock()
        slots[index] = value
        lock.unlock()
    }

    /// The values, moved out (the slots are left empty): a copy of the list left every value
    /// shared, so that taking one out of it copied it again.
    package func takeValues() -> [Value?] {
        lock.lock()
        defer { lock.unlock() }
        var taken: [Value?] = []
        swap(&taken, &slots)
        return taken
    }
}
