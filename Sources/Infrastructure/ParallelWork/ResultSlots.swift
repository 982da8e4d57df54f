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

    package var values: [Value?] {
        lock.lock()
        defer { lock.unlock() }
        return slots
    }
}
