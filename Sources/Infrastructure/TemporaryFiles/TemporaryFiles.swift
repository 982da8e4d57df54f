import Foundation

/// The paths this process is writing under temporary names (staging folders, `.partial-`
/// files), so that a command stopped by SIGINT or SIGTERM can remove them before it exits:
/// an interrupted run must leave nothing behind, and retries must not pile up hidden folders.
///
/// A registry in its own small module because every writer needs it (the folder converter,
/// the SQLite export, the command line), and none of them should depend on another for it.
package enum TemporaryFiles {
    private final class Registry: @unchecked Sendable {
        let lock = NSLock()
        var paths: [String: Int] = [:]
        /// Held while a file is written into a registered folder, and by ``removeAll()``: a
        /// writer on another thread cannot recreate a folder that is being removed.
        let writeLock = NSLock()
        var stopping = false
        /// Called by ``publish(_:at:replacing:)`` with the destination right before it renames:
        /// tests create the destination there, as another writer may.
        var beforePublish: (@Sendable (URL) -> Void)?
    }

    /// Sets the hook ``publish(_:at:replacing:)`` calls with the destination right before its
    /// rename (nil to remove it): for tests of a destination that appears after the check.
    package static func setBeforePublish(_ hook: (@Sendable (URL) -> Void)?) {
        registry.lock.lock()
        registry.beforePublish = hook
        registry.lock.unlock()
    }

    static var beforePublish: (@Sendable (URL) -> Void)? {
        registry.lock.lock()
        defer { registry.lock.unlock() }
        return registry.beforePublish
    }

    private static let registry = Registry()

    /// A hidden name beside `destination`, `.NAME.<kind>-UUID`, under which it is written (kind
    /// `partial`) or its old content set aside (kind `replaced`); the one naming rule that
    /// readers recognise and never take for an ensemble (Spec/cloud-layout.md section 3).
    package static func sibling(of destination: URL, kind: String = "partial") -> URL {
        destination.deletingLastPathComponent().appendingPathComponent(".\(destination.lastPathComponent).\(kind)-\(UUID().uuidString)")
    }

    /// A ``sibling(of:kind:)`` to write `destination` under, registered for removal on a signal.
    package static func reserveSibling(of destination: URL) -> URL {
        let url = sibling(of: destination)
        register(url.path)
        return url
    }

    /// Opens `url` for reading and writing by a single `open(2)`, creating it empty if it is not
    /// there (and emptying it when `truncating`). Not `FileManager.createFile`: on Linux that
    /// writes the file under a hidden temporary name in the same folder and renames it into
    /// place, so a process killed in between leaves a stray `.dat.nosync…` file there, which
    /// in a user's folder or a repair's quarantine is a file nobody asked for.
    package static func openFile(_ url: URL, truncating: Bool = true) throws -> FileHandle {
        let descriptor = open(url.path, O_RDWR | O_CREAT | O_CLOEXEC | (truncating ? O_TRUNC : 0), 0o666)
        guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        return FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
    }

    /// Removes a reserved sibling (if it is still there) and forgets it.
    package static func release(_ url: URL) {
        try? FileManager.default.removeItem(at: url)
        unregister(url.path)
    }

    /// `path` is being written; ``removeAll()`` deletes it unless it is unregistered first.
    package static func register(_ path: String) {
        registry.lock.lock()
        registry.paths[path, default: 0] += 1
        registry.lock.unlock()
    }

    /// `path` was published (renamed into place) or removed by its writer.
    package static func unregister(_ path: String) {
        registry.lock.lock()
        if let count = registry.paths[path] { registry.paths[path] = count > 1 ? count - 1 : nil }
        registry.lock.unlock()
    }

    /// Call before writing into a registered folder; false once ``removeAll()`` has begun (then
    /// write nothing). After true, call ``endWrite()`` when the write is done.
    package static func beginWrite() -> Bool {
        registry.writeLock.lock()
        if registry.stopping {
            registry.writeLock.unlock()
            return false
        }
        return true
    }

    package static func endWrite() {
        registry.writeLock.unlock()
    }

    /// Deletes every registered path (files and whole folders), after the writes under way and
    /// with no new ones allowed; used when a signal stops the process. Returns the paths removed.
    @discardableResult
    package static func removeAll() -> [String] {
        registry.writeLock.lock()
        registry.stopping = true
        defer { registry.writeLock.unlock() }
        registry.lock.lock()
        let paths = Array(registry.paths.keys)
        registry.paths = [:]
        registry.lock.unlock()
        for path in paths { try? FileManager.default.removeItem(atPath: path) }
        return paths
    }
}
