import Foundation
import Crypto
import JSONDocument
import CFileSystem
import FileInput

/// A folder the repair moves files into or out of is held by descriptor (Spec/repair.md 5.2), as
/// every folder read is (``DirectoryHandle``): every name below it is reached one component at a
/// time with `openat` and `O_NOFOLLOW`, so that a folder replaced by a link between the plan and
/// the move (or before an undo) cannot lead a move outside the cloud folder or the quarantine.
extension DirectoryHandle {
    /// The folder at `path`, following links in it: the cloud root's parent and the quarantine
    /// are named by the user (or by the journal's header, checked against the files first).
    /// Nil when it does not exist.
    static func openForRepair(_ path: String) throws(FormatError) -> DirectoryHandle? {
        guard let folder = opened(path) else {
            if errno == ENOENT { return nil }
            throw RepairFiles.failure("cannot open the folder", path)
        }
        return folder
    }

    /// The folder `components` below this one, never through a link; nil when one is missing and
    /// `creating` is false. A created folder is flushed in its parent before anything is renamed
    /// into it. A component that is a link, a file or a special file is refused.
    func folder(_ components: ArraySlice<String>, creating: Bool) throws(FormatError) -> DirectoryHandle? {
        var current = self
        for name in components {
            var child = current.opened(name)
            if child == nil && errno == ENOENT && creating {
                guard mkdirat(current.descriptor, name, 0o777) == 0 || errno == EEXIST else {
                    throw RepairFiles.failure("cannot create the folder", current.path + "/" + name)
                }
                current.sync()
                child = current.opened(name)
            }
            guard let child else {
                if errno == ENOENT { return nil }
                throw FormatError(
                    .repairMoveFailed, "not a folder (a link is never followed): \(String(cString: strerror(errno)))",
                    location: .init(file: current.path + "/" + name))
            }
            current = child
        }
        return current
    }

    /// Opens the regular file `name` for reading, never through a link: the descriptor and its
    /// `fstat`.
    func openRegularFile(_ name: String) throws(FormatError) -> (descriptor: Int32, status: stat) {
        let file = openFile(name)
        guard file >= 0 else { throw RepairFiles.failure("cannot open the file", path + "/" + name) }
        var status = stat()
        guard fstat(file, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
            close(file)
            throw FormatError(.repairMoveFailed, "not a regular file: a repair moves nothing else", location: .init(file: path + "/" + name))
        }
        return (file, status)
    }

    /// The SHA-256 (lowercase hex) of the regular file `name` and the `fstat` of what was read;
    /// nil when it cannot be read.
    func digest(_ name: String) -> (sha256: String, status: stat)? {
        guard let (file, status) = try? openRegularFile(name) else { return nil }
        defer { close(file) }
        guard let digest = try? RepairFiles.digest(of: file) else { return nil }
        return (digest, status)
    }

    /// Flushes the folder's entries.
    func sync() { _ = fsync(descriptor) }
}

/// What a repair does with the files it moves: digests, copies in chunks, and the check that a
/// file is unchanged (Spec/repair.md 5.2).
enum RepairFiles {
    /// The SHA-256 (lowercase hex) of everything `file` holds, read from its start.
    static func digest(of file: Int32) throws(FormatError) -> String {
        var hasher = SHA256()
        try stream(file) { chunk in hasher.update(data: chunk) }
        return lowercaseHex(hasher.finalize())
    }

    /// Hands `file`'s bytes from its start to `body`, a chunk at a time, until a read finds
    /// nothing more.
    static func stream(_ file: Int32, _ body: (ArraySlice<UInt8>) throws(FormatError) -> Void) throws(FormatError) {
        var offset: Int64 = 0
        while true {
            let chunk: [UInt8]
            do {
                chunk = try FileInput.read(file, at: offset, upTo: 1 << 20)
            } catch {
                throw FormatError(.repairMoveFailed, "cannot read the file: \(error.reason)", location: .init(file: ""))
            }
            if chunk.isEmpty { return }
            try body(chunk[...])
            offset += Int64(chunk.count)
        }
    }

    static func failure(_ what: String, _ path: String) -> FormatError {
        FormatError(.repairMoveFailed, "\(what): \(String(cString: strerror(errno)))", location: .init(file: path))
    }

    /// Whether two `stat`s describe the same file, unchanged: device, inode, size, modification
    /// and change time. A sync service that replaces a file (a new inode) or writes into it (a new
    /// change time) fails it (Spec/repair.md 5.2).
    static func same(_ a: stat, _ b: stat) -> Bool {
        sameRenamed(a, b) && a.st_ctim.tv_sec == b.st_ctim.tv_sec && a.st_ctim.tv_nsec == b.st_ctim.tv_nsec
    }

    /// ``same(_:_:)`` but for the change time, which a rename of the file sets.
    static func sameRenamed(_ a: stat, _ b: stat) -> Bool {
        a.st_dev == b.st_dev && a.st_ino == b.st_ino && a.st_size == b.st_size && a.st_mtim.tv_sec == b.st_mtim.tv_sec
            && a.st_mtim.tv_nsec == b.st_mtim.tv_nsec
    }
}
