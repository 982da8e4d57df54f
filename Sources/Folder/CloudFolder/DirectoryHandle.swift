import Foundation
import JSONDocument

/// An ensemble folder (or one of its subfolders) held open by descriptor while it is read
/// (Spec/cloud-layout.md 7): its entries are listed from the descriptor, with their names as the
/// bytes the file system gives, and every file below it is opened from it one name at a time
/// without following a link. Replacing a folder, or a subfolder, by a link after the listing
/// cannot lead a reader outside the folder it listed.
package final class DirectoryHandle: Sendable {
    let descriptor: Int32
    /// The path it was opened at: the prefix of the paths ``EventFileReader`` opens below it.
    let path: String

    private init(descriptor: Int32, path: String) {
        self.descriptor = descriptor
        self.path = path
    }

    deinit { close(descriptor) }

    /// Opens the folder the user named; links in that path are the user's choice and are followed.
    /// A missing path, or one that is not a folder, is `folder.not-found`; a folder that cannot
    /// be opened is `file.unreadable` with the system's reason.
    package static func open(_ path: String) throws(FormatError) -> DirectoryHandle {
        let descriptor = Foundation.open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else {
            let reason = errno
            throw FormatError(
                reason == ENOENT || reason == ENOTDIR ? .folderNotFound : .fileUnreadable,
                reason == ENOENT || reason == ENOTDIR ? "no such folder" : "the folder cannot be opened: \(String(cString: strerror(reason)))",
                location: .init(file: path))
        }
        return DirectoryHandle(descriptor: descriptor, path: path)
    }

    /// The folder `name` inside this one, never through a link; `file.unreadable` (located at
    /// `displayPath`) when it cannot be opened (Spec/cloud-layout.md 8: never an empty folder).
    /// `heldAs` is the path readers will use for it, when another than this folder's path and
    /// `name` (a duplicate folder, reached from its ensemble as `ENSEMBLE/../ENSEMBLE 2`).
    func subfolder(_ name: String, displayPath: String, heldAs: String? = nil) throws(FormatError) -> DirectoryHandle {
        let descriptor = openat(self.descriptor, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else { throw Self.unreadable(displayPath, errno) }
        return DirectoryHandle(descriptor: descriptor, path: heldAs ?? path + "/" + name)
    }

    /// Every entry, in the order the directory gives them, with `lstat` facts and made into a `T`
    /// by `transform`; `.` and `..` left out. A folder that cannot be listed to its end is
    /// `file.unreadable` at `displayPath`, after `body` saw the entries before the failure.
    ///
    /// The facts and `transform` run on every core, a block of names at a time (a folder of events
    /// holds tens of thousands of files, and `lstat` and naming each was most of listing it);
    /// `body` sees the entries in directory order, on the calling thread.
    func forEachEntry<T: Sendable>(
        displayPath: String, transform: @escaping @Sendable (EntryName, CloudFolderScanner.FileInfo) -> T, _ body: (T) -> Void
    ) throws(FormatError) {
        var names: [EntryName] = []
        func flush() {
            let names = names, stripes = min(4, names.count)
            let made = ResultSlots<[T]>(count: stripes)
            DispatchQueue.concurrentPerform(iterations: stripes) { stripe in
                let range = names.count * stripe / stripes..<names.count * (stripe + 1) / stripes
                made.set(stripe, names[range].map { transform($0, info(of: $0.bytes)) })
            }
            for case let stripe? in made.values { stripe.forEach(body) }
        }
        do {
            try forEachName(displayPath: displayPath) { name in
                names.append(name)
                if names.count == 1_024 {
                    flush()
                    names.removeAll(keepingCapacity: true)
                }
            }
        } catch {
            flush()
            throw error
        }
        flush()
    }

    /// Every name, in the order the directory gives them; `.` and `..` left out.
    private func forEachName(displayPath: String, _ body: (EntryName) -> Void) throws(FormatError) {
        // fdopendir takes the descriptor it is given; a duplicate keeps this one open.
        let copy = dup(descriptor)
        guard copy >= 0, let directory = fdopendir(copy) else {
            let reason = errno
            if copy >= 0 { close(copy) }
            throw Self.unreadable(displayPath, reason)
        }
        defer { closedir(directory) }
        while true {
            errno = 0
            guard let item = readdir(directory) else {
                if errno != 0 { throw Self.unreadable(displayPath, errno) }
                return
            }
            let bytes = withUnsafeBytes(of: item.pointee.d_name) { raw in Array(raw.prefix { $0 != 0 }) }
            if bytes == [0x2E] || bytes == [0x2E, 0x2E] { continue }
            body(EntryName(bytes: bytes))
        }
    }

    /// Every entry, sorted by the bytes of their names.
    func entries(displayPath: String) throws(FormatError) -> [(name: EntryName, info: CloudFolderScanner.FileInfo)] {
        var entries: [(name: EntryName, info: CloudFolderScanner.FileInfo)] = []
        try forEachEntry(displayPath: displayPath, transform: { ($0, $1) }) { entries.append($0) }
        return entries.sorted { $0.name.bytes.lexicographicallyPrecedes($1.name.bytes) }
    }

    private static func unreadable(_ displayPath: String, _ reason: Int32) -> FormatError {
        FormatError(.fileUnreadable, "the folder cannot be read: \(String(cString: strerror(reason)))", location: .init(file: displayPath))
    }

    private func info(of name: [UInt8]) -> CloudFolderScanner.FileInfo {
        var status = stat()
        let found = (name + [0]).withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { name in name.baseAddress.map { fstatat(descriptor, $0, &status, AT_SYMLINK_NOFOLLOW) } ?? -1 }
        }
        return found == 0 ? CloudFolderScanner.FileInfo(status) : CloudFolderScanner.FileInfo()
    }

    /// Opens the regular file at `relative` (`/`-separated, below this folder) one name at a
    /// time, every name with `O_NOFOLLOW` (empty names and `.` stay where they are, as in any
    /// path; `names` never holds `..`). Returns a descriptor or -1 with `errno` set.
    private func openFile(_ names: [String]) -> Int32 {
        guard !names.isEmpty else {
            errno = ENOENT
            return -1
        }
        // A file right below a subfolder (`events/x`) is opened from that subfolder kept open,
        // once the name is checked to still be it.
        if names.count == 2, let folder = subfolders.descriptor(names[0], below: descriptor) {
            return openat(folder, names[1], O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        }
        var folder = descriptor
        // Not close(-1) after a failed open: it would replace the errno the caller reports.
        defer { if folder != descriptor && folder >= 0 { close(folder) } }
        for name in names.dropLast() {
            let next = openat(folder, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            if folder != descriptor { close(folder) }
            folder = next
            guard next >= 0 else { return -1 }
        }
        return openat(folder, names[names.count - 1], O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
    }

    /// The subfolders files were opened through, kept open with this folder: every event file's
    /// path goes through `events/`, and opening and closing it again for each of tens of
    /// thousands of files was half the opens and closes of reading a folder (Benchmarks/README.md).
    private let subfolders = Subfolders()

    private final class Subfolders: @unchecked Sendable {
        /// By name; few (an ensemble has four), but bounded all the same.
        private var kept: [String: (descriptor: Int32, device: dev_t, inode: ino_t)] = [:]
        private let lock = NSLock()
        private static let limit = 16

        deinit { for folder in kept.values { close(folder.descriptor) } }

        /// The kept descriptor of the folder `name` below `root` (opened now if it is not kept
        /// yet), when `name` still names that folder: a folder, not a link, on the same device
        /// with the same inode. Nil otherwise, and the caller opens the name as it would without
        /// this table, with the same outcome: a subfolder swapped for a link after it was first
        /// opened is still never followed (Spec/cloud-layout.md 8).
        func descriptor(_ name: String, below root: Int32) -> Int32? {
            var named = stat()
            guard fstatat(root, name, &named, AT_SYMLINK_NOFOLLOW) == 0, named.st_mode & S_IFMT == S_IFDIR else { return nil }
            lock.lock()
            defer { lock.unlock() }
            if let folder = kept[name] { return folder.device == named.st_dev && folder.inode == named.st_ino ? folder.descriptor : nil }
            guard kept.count < Self.limit else { return nil }
            let opened = openat(root, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            var status = stat()
            guard opened >= 0, fstat(opened, &status) == 0, status.st_dev == named.st_dev, status.st_ino == named.st_ino else {
                if opened >= 0 { close(opened) }
                return nil
            }
            kept[name] = (opened, status.st_dev, status.st_ino)
            return opened
        }
    }

    // MARK: Folders being read

    /// The folders held open by a listing, by path: ``EventFileReader`` opens a file below one of
    /// them from its descriptor. Weak, so a folder closes with the last listing that holds it.
    private static let lock = NSLock()
    nonisolated(unsafe) private static var held: [String: Weak] = [:]

    private struct Weak {
        weak var handle: DirectoryHandle?
    }

    /// Registers this folder for ``opening(_:)``; the listing that holds the handle keeps it.
    func hold() -> DirectoryHandle {
        Self.lock.withLock {
            Self.held = Self.held.filter { $0.value.handle != nil }
            Self.held[path] = Weak(handle: self)
        }
        return self
    }

    /// The descriptor of the file at `path` when it lies below a folder being read, opened from
    /// that folder's descriptor; nil when no such folder holds it. Paths the readers build from a
    /// listing never hold `..`; one that does was typed by the user and is theirs to resolve.
    ///
    /// Paths are compared and split as UTF-8 bytes, as the file system takes them: compared as
    /// characters, a `/` followed by a combining mark is no `/` at all.
    static func opening(_ path: String) -> Int32? {
        let bytes = path.utf8
        let folder: DirectoryHandle? = lock.withLock {
            held.values.compactMap(\.handle).filter { handle in
                let prefix = handle.path.utf8
                return bytes.starts(with: prefix) && bytes.dropFirst(prefix.count).first == UInt8(ascii: "/")
            }.max { $0.path.utf8.count < $1.path.utf8.count }
        }
        guard let folder else { return nil }
        let names = bytes.dropFirst(folder.path.utf8.count + 1).split(separator: UInt8(ascii: "/")).map { String(decoding: $0, as: UTF8.self) }
            .filter { $0 != "." }
        return names.contains("..") ? nil : folder.openFile(names)
    }
}

/// A directory entry's name as the file system gives it: bytes, not necessarily UTF-8.
package struct EntryName: Hashable, Sendable {
    package var bytes: [UInt8]

    /// The name as text, nil when it is not well-formed UTF-8.
    package var text: String? { String(validating: bytes, as: UTF8.self) }

    /// The name for a report, without loss: a byte outside any well-formed UTF-8 sequence is shown
    /// as `\xHH` (Spec/cloud-layout.md 7, rule 0), so two names never show as one.
    package var display: String {
        if let text { return text }
        var shown = ""
        var parser = Unicode.UTF8.ForwardParser()
        var iterator = bytes.makeIterator()
        var offset = 0
        while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid(let encoded):
                shown.unicodeScalars.append(Unicode.UTF8.decode(encoded))
                offset += encoded.count
            case .error(let length):
                for byte in bytes[offset..<(offset + length)] {
                    shown += "\\x" + (byte < 0x10 ? "0" : "") + String(byte, radix: 16, uppercase: true)
                }
                offset += length
            case .emptyInput:
                return shown
            }
        }
    }
}
