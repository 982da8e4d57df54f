import Foundation
import CFileSystem

/// Why ``TemporaryFiles/publish(_:at:replacing:)`` did not publish; the staged file or folder is
/// left where it was, for its writer to release.
package enum PublishFailure: Error, Sendable {
    /// Something is at the destination and `replacing` was false: it may have appeared after the
    /// writer checked (Spec/README.md 6.1); it is never replaced.
    case destinationExists
    /// The system refused; the reason.
    case failed(String)
}

extension TemporaryFiles {
    /// The one way a command puts what it wrote where the user asked (Spec/README.md 6.1): the
    /// staged file or folder (written beside the destination, under ``reserveSibling(of:)``) is
    /// flushed with every folder below it, renamed into place without replacing anything
    /// (`renameat2` with `RENAME_NOREPLACE`) or, when `replacing`, swapped with what is there
    /// (`RENAME_EXCHANGE`) whose old content is then removed; then the destination's folder is
    /// flushed. Either the old destination or the whole new one is there at every moment.
    ///
    /// On a file system that can do neither atomic rename, a plain rename is used only while
    /// nothing is at the destination, and a replaced destination is first moved aside under a
    /// hidden name; the new content is never lost, the old is removed only once the new is in
    /// place.
    package static func publish(_ staged: URL, at destination: URL, replacing: Bool) throws(PublishFailure) {
        syncTree(staged.path)
        beforePublish?(destination)
        let exists = { (url: URL) -> Bool in
            var status = stat()
            return lstat(url.path, &status) == 0
        }
        func failure(_ what: String) -> PublishFailure { .failed("\(what): \(String(cString: strerror(errno)))") }
        if replacing && exists(destination) {
            if cfs_rename_exchange(staged.path, destination.path) == 0 {
                // The staged name now holds the old content, still registered for removal.
                try? FileManager.default.removeItem(at: staged)
            } else {
                let aside = sibling(of: destination, kind: "replaced")
                guard rename(destination.path, aside.path) == 0 else { throw failure("could not move the old content aside") }
                guard rename(staged.path, destination.path) == 0 else {
                    let error = failure("could not move the result into place")
                    _ = rename(aside.path, destination.path)
                    throw error
                }
                try? FileManager.default.removeItem(at: aside)
            }
        } else {
            var status = cfs_rename_noreplace(staged.path, destination.path)
            if status != 0 && (errno == ENOSYS || errno == EINVAL) && !exists(destination) {
                status = rename(staged.path, destination.path)
            }
            if status != 0 && errno == EEXIST { throw .destinationExists }
            guard status == 0 else { throw failure("could not move the result into place") }
        }
        unregister(staged.path)
        syncFolder(destination.deletingLastPathComponent().path)
    }

    /// `fsync` of a folder, so that its entries survive a power cut (best effort: a file system
    /// that cannot sync a folder still has the files' own syncs).
    package static func syncFolder(_ path: String) {
        let descriptor = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        _ = fsync(descriptor)
        close(descriptor)
    }

    /// `fsync` of `path` and, for a folder, of everything below it (a staged ensemble has a
    /// handful of folders and its files were flushed as they were written; a staged file is
    /// flushed here).
    private static func syncTree(_ path: String) {
        var pending = [path]
        while let next = pending.popLast() {
            var status = stat()
            guard lstat(next, &status) == 0 else { continue }
            switch status.st_mode & S_IFMT {
            case S_IFDIR:
                syncFolder(next)
                for name in (try? FileManager.default.contentsOfDirectory(atPath: next)) ?? [] {
                    var child = stat()
                    if lstat(next + "/" + name, &child) == 0, child.st_mode & S_IFMT == S_IFDIR { pending.append(next + "/" + name) }
                }
            case S_IFREG where next == path:
                let descriptor = open(next, O_RDONLY | O_CLOEXEC)
                if descriptor >= 0 {
                    _ = fsync(descriptor)
                    close(descriptor)
                }
            default: continue
            }
        }
    }
}
