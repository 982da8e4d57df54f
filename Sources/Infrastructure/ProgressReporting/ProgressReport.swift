import Foundation

/// Where long operations say how far they are: `done` of `total` items of a named step. The
/// command line installs a handler that draws one line on a terminal; a library user may install
/// their own; with none installed (the default) reporting costs one lock per call.
///
/// In its own small module because the merge engine, the folder writer and the generator all
/// report, and none of them should depend on another or on the command line for it.
package enum ProgressReport {
    package typealias Handler = @Sendable (_ step: String, _ done: Int, _ total: Int) -> Void

    private final class Box: @unchecked Sendable {
        let lock = NSLock()
        var handler: Handler?
    }
    private static let box = Box()

    /// Installs (or with nil removes) the handler.
    package static func install(_ handler: Handler?) {
        box.lock.lock()
        box.handler = handler
        box.lock.unlock()
    }

    /// Reports that `done` of `total` items of `step` are finished.
    package static func report(_ step: String, done: Int, total: Int) {
        box.lock.lock()
        let handler = box.handler
        box.lock.unlock()
        handler?(step, done, total)
    }
}
