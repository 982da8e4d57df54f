import Foundation

/// An integer that several threads change and read; the lock makes that safe. (A lock, not
/// `Atomic`, which needs macOS 15; the package supports macOS 13. Its users change it once per
/// file or per batch of events, where a lock costs nothing measurable.)
package final class SharedCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0

    package init() {}

    /// Adds `change`; returns the value before it.
    @discardableResult
    package func add(_ change: Int) -> Int {
        lock.lock()
        defer { lock.unlock() }
        count += change
        return count - change
    }

    package var value: Int {
        lock.lock()
        defer { lock.unlock() }
        return count
    }
}
