import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reading a file whose name came from a folder the toolkit does not control. A path is looked at
/// first (`lstat`, or `stat` where a link may be followed) and opened only when it is a regular
/// file, so that a device is never opened (opening some has effects); it is opened without
/// blocking, so that a FIFO put in its place meanwhile is refused instead of waited on forever
/// (`FileHandle` waits on one; Foundation's whole-file readers refuse one, but follow links and
/// load any size); `fstat` on the open descriptor checks again, and the descriptor is then the
/// only thing read; the read never goes more than one byte beyond the reader's limit, also for a
/// file that grows while it is read. Every reader of such files uses it: event, baseline and
/// data files (Spec/cloud-layout.md 7), a model's files (Spec/model.md 2) and a device's
/// property lists (Spec/device-state.md 6.2). Readers turn a ``Failure`` into their own codes.
package enum FileInput {
    /// Why a file was not read.
    package enum Failure: Error, Equatable {
        /// Looking at or opening the path failed with this `errno` (`ELOOP` for a link not
        /// followed, `ENOENT` for nothing there).
        case cannotOpen(errno: Int32)
        /// A folder, FIFO, socket or device (a link not followed is `cannotOpen(errno: ELOOP)`).
        case notRegular
        /// `read` failed with this `errno`.
        case cannotRead(errno: Int32)
        /// Larger than the limit: the file's size says so before anything is read, or it grew
        /// past the limit while it was read.
        case tooLarge

        /// The system's words for a failed open or read, or what the file is not.
        package var reason: String {
            switch self {
            case .cannotOpen(let failure), .cannotRead(let failure): String(cString: strerror(failure))
            case .notRegular: "not a regular file (a link, FIFO, socket or device is never read)"
            case .tooLarge: "larger than the limit"
            }
        }
    }

    /// The flags of every open for reading: without blocking, closed on exec, and without
    /// following a link at the last name unless `followingLink` (a path the user gave may be one).
    package static func openFlags(followingLink: Bool = false) -> Int32 {
        O_RDONLY | O_NONBLOCK | O_CLOEXEC | (followingLink ? 0 : O_NOFOLLOW)
    }

    /// The bytes of the regular file at `path`, at most `limit` of them.
    package static func read(path: String, followingLink: Bool = false, limit: Int) throws(Failure) -> [UInt8] {
        var status = stat()
        guard (followingLink ? stat(path, &status) : lstat(path, &status)) == 0 else { throw .cannotOpen(errno: errno) }
        switch status.st_mode & S_IFMT {
        case S_IFREG: break
        case S_IFLNK: throw .cannotOpen(errno: ELOOP)
        default: throw .notRegular
        }
        let descriptor = open(path, openFlags(followingLink: followingLink))
        guard descriptor >= 0 else { throw .cannotOpen(errno: errno) }
        defer { close(descriptor) }
        return try read(descriptor, size: regularSize(descriptor), limit: limit)
    }

    /// The size of the open file `descriptor` when it is a regular file.
    package static func regularSize(_ descriptor: Int32) throws(Failure) -> Int64 {
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { throw .notRegular }
        return Int64(status.st_size)
    }

    /// Reads the open regular file `descriptor`, of `size` bytes by its `fstat`, from its current
    /// offset: at most `limit` bytes. A file whose size is beyond `limit` is refused before
    /// anything is read.
    package static func read(_ descriptor: Int32, size: Int64, limit: Int) throws(Failure) -> [UInt8] {
        guard size <= Int64(limit) else { throw .tooLarge }
        // Read into memory left uninitialized: zeroing it first was a fifth of an event file's
        // reading instructions (Benchmarks/README.md). One byte of room beyond the size tells a
        // file that grew since `fstat`: it is read on, never beyond the limit.
        var room = Int(size) + 1, failure: Int32 = 0
        var bytes = [UInt8](unsafeUninitializedCapacity: room) { buffer, count in (count, failure) = fill(buffer, from: descriptor) }
        while failure == 0 && bytes.count == room && room <= limit {
            let more = min(room, limit + 1 - room)
            bytes += [UInt8](unsafeUninitializedCapacity: more) { buffer, count in (count, failure) = fill(buffer, from: descriptor) }
            if bytes.count < room + more { break }
            room += more
        }
        guard failure == 0 else { throw .cannotRead(errno: failure) }
        guard bytes.count <= limit else { throw .tooLarge }
        return bytes
    }

    /// Up to `count` bytes of the open file `descriptor` from `offset` (fewer where the file
    /// ends), read as ``read(_:size:limit:)`` reads, into memory left uninitialized, without
    /// moving the descriptor's offset: a piece of a file read a chunk at a time.
    package static func read(_ descriptor: Int32, at offset: Int64, upTo count: Int) throws(Failure) -> [UInt8] {
        var failure: Int32 = 0
        let bytes = [UInt8](unsafeUninitializedCapacity: count) { buffer, filled in (filled, failure) = fill(buffer, from: descriptor, at: offset) }
        guard failure == 0 else { throw .cannotRead(errno: failure) }
        return bytes
    }

    /// Reads from `descriptor` (at `offset` when given, else at its own offset) until `buffer` is
    /// full or the file ends; returns how many bytes were read, and the `errno` of a failed read
    /// (0: none).
    private static func fill(_ buffer: UnsafeMutableBufferPointer<UInt8>, from descriptor: Int32, at offset: Int64? = nil) -> (count: Int, failure: Int32) {
        var count = 0
        while count < buffer.count {
            let start = buffer.baseAddress.map { $0 + count }, room = buffer.count - count
            let read = offset.map { pread(descriptor, start, room, off_t($0) + off_t(count)) } ?? Foundation.read(descriptor, start, room)
            if read < 0 && errno == EINTR { continue }
            guard read > 0 else { return (count, read < 0 ? errno : 0) }
            count += read
        }
        return (count, 0)
    }
}
