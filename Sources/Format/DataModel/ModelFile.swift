import Foundation
import JSONDocument

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The files of a model on disk (`contents`, `.xccurrentversion`, a compiled model's
/// `VersionInfo.plist`), read as Spec/model.md 2.2 and 2.5 say: bounded, and only when they are
/// regular files. Opened without blocking, so that a FIFO named `contents` is refused instead of
/// waiting for a writer forever (`FileHandle` and `FileManager.contents(atPath:)` block on one),
/// and, except for the path the user gave (2.1), without following a symbolic link.
enum ModelFile {
    /// The bytes of the file at `url`, nil when there is none. `name` says which file in errors:
    /// `datamodel.unreadable` for a link not followed, an entry that is not a regular file or
    /// one that cannot be read; `datamodel.too-large` beyond `limit` bytes.
    static func contents(
        of url: URL, name: String, followingLink: Bool, limit: Int, location: FormatError.Location
    ) throws(FormatError) -> [UInt8]? {
        func unreadable(_ why: String) -> FormatError { FormatError(.dataModelUnreadable, "\(name) \(why)", location: location) }
        let descriptor = open(url.path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | (followingLink ? 0 : O_NOFOLLOW))
        guard descriptor >= 0 else {
            let failure = errno
            if failure == ENOENT { return nil }
            throw unreadable(failure == ELOOP ? "is a symbolic link, which is never followed" : "could not be opened: \(String(cString: strerror(failure)))")
        }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { throw unreadable("is not a regular file") }
        // One byte beyond the limit tells a file that is too large, also one that grows while
        // it is read.
        var bytes: [UInt8] = []
        bytes.reserveCapacity(min(Int(info.st_size), limit) + 1)
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while bytes.count <= limit {
            let wanted = min(chunk.count, limit + 1 - bytes.count)
            let got = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, wanted) }
            if got == 0 { break }
            if got < 0 {
                if errno == EINTR { continue }
                throw unreadable("could not be read: \(String(cString: strerror(errno)))")
            }
            bytes.append(contentsOf: chunk.prefix(got))
        }
        guard bytes.count <= limit else { throw FormatError(.dataModelTooLarge, "\(name) is larger than \(limit) bytes", location: location) }
        return bytes
    }
}
