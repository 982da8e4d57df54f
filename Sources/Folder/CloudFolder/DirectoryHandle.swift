import CFileSystem
import FileInput
import ParallelWork
import Foundation
import JSONDocument

/// An ensemble folder (or one of its subfolders) held open by descriptor while it is read
/// (Spec/cloud-layout.md 7): its entries are listed from the descriptor, with their names as the
/// bytes the file system gives, and every file below it is opened from it one name at a time
/// without following a link. Replacing a folder, or a subfolder, by a link after the listing
/// cannot lead a reader outside the folder it listed. Readers are handed the handle
/// (``FileReference``); a repair holds the folders it moves files between the same way
/// (Spec/repair.md 5.2).
package final class DirectoryHandle: Sendable {
    let descriptor: Int32
    /// The path it was opened at, for messages: files below it are opened from ``descriptor``,
    /// never by a path (``FileReference``).
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
        guard let folder = opened(path) else {
            let reason = errno
            let message =
                switch reason {
                case ENOENT: "no such folder"
                // A file where a folder is needed: say so, as git does, rather than "no such folder".
                case ENOTDIR: "not a folder (inspect reads a single file)"
                default: "the folder cannot be opened: \(String(cString: strerror(reason)))"
                }
            throw FormatError(reason == ENOENT || reason == ENOTDIR ? .folderNotFound : .fileUnreadable, message, location: .init(file: path))
        }
        return folder
    }

    /// The folder at `path`, links in it followed; nil with `errno` set when it cannot be opened.
    static func opened(_ path: String) -> DirectoryHandle? {
        let descriptor = Foundation.open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        return descriptor >= 0 ? DirectoryHandle(descriptor: descriptor, path: path) : nil
    }

    /// The folder `name` inside this one, never through a link, known by `path` (this folder's
    /// path and `name` unless given); nil with `errno` set when it cannot be opened.
    func opened(_ name: String, path: String? = nil) -> DirectoryHandle? {
        let descriptor = Self.openFolder(name, below: self.descriptor)
        return descriptor >= 0 ? DirectoryHandle(descriptor: descriptor, path: path ?? self.path + "/" + name) : nil
    }

    /// The descriptor of the folder `name` below `folder`, never through a link; -1 with `errno`.
    private static func openFolder(_ name: String, below folder: Int32) -> Int32 {
        openat(folder, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
    }

    /// The folder `name` inside this one, never through a link; `file.unreadable` (located at
    /// `displayPath`) when it cannot be opened (Spec/cloud-layout.md 8: never an empty folder).
    /// `heldAs` is the path it is shown by, when another than this folder's path and `name` (a
    /// duplicate folder, reached from its ensemble as `ENSEMBLE/../ENSEMBLE 2`).
    func subfolder(_ name: String, displayPath: String, heldAs: String? = nil) throws(FormatError) -> DirectoryHandle {
        guard let folder = opened(name, path: heldAs) else { throw Self.unreadable(displayPath, errno) }
        return folder
    }

    /// Every entry, in the order the directory gives them, with `lstat` facts and made into a `T`
    /// by `transform`; `.` and `..` left out. A folder that cannot be listed to its end is
    /// `file.unreadable` at `displayPath`, after `body` saw the entries before the failure.
    ///
    /// The facts and `transform` run on every core, a block of names at a time (a folder of events
    /// holds tens of thousands of files, and `lstat` and naming each was most of listing it);
    /// `body` sees the entries in directory order, on the calling thread, one block behind: while
    /// it takes a block, the next one is named and `lstat`ed (waiting for each block before
    /// listing on left a core idle for a third of listing a folder, Benchmarks/README.md).
    func forEachEntry<T: Sendable>(
        displayPath: String, transform: @escaping @Sendable (EntryName, CloudFolderScanner.FileInfo) -> T, _ body: (T) -> Void
    ) throws(FormatError) {
        var names: [EntryName] = []
        var pending: (made: ResultSlots<[T]>, group: DispatchGroup)?
        func drain() {
            guard let (made, group) = pending else { return }
            group.wait()
            for case let stripe? in made.takeValues() { stripe.forEach(body) }
            pending = nil
        }
        func flush() {
            let names = names, stripes = min(4, names.count)
            let made = ResultSlots<[T]>(count: stripes), group = DispatchGroup()
            for stripe in 0..<stripes {
                DispatchQueue.global().async(group: group) {
                    let range = names.count * stripe / stripes..<names.count * (stripe + 1) / stripes
                    made.set(stripe, names[range].map { transform($0, self.info(of: $0.bytes)) })
                }
            }
            drain()
            pending = (made, group)
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
            drain()
            throw error
        }
        flush()
        drain()
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
            let bytes = Self.name(of: item)
            if bytes == [0x2E] || bytes == [0x2E, 0x2E] { continue }
            body(EntryName(bytes: bytes))
        }
    }

    /// The name of a directory entry, read in place up to its terminating NUL: an entry's record
    /// is only as long as its name, so copying the record (`pointee`) read past its end.
    private static func name(of entry: UnsafeMutablePointer<dirent>) -> [UInt8] {
        guard let offset = MemoryLayout<dirent>.offset(of: \.d_name) else { return [] }
        let name = UnsafeRawPointer(entry).advanced(by: offset).assumingMemoryBound(to: CChar.self)
        return Array(UnsafeRawBufferPointer(start: name, count: strlen(name)))
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
        status(name).map(CloudFolderScanner.FileInfo.init) ?? CloudFolderScanner.FileInfo()
    }

    /// `lstat` of the entry `name` of this folder (its bytes, as listed): nil when nothing is there.
    func status(_ name: [UInt8]) -> stat? {
        var status = stat()
        let found = (name + [0]).withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { name in name.baseAddress.map { fstatat(descriptor, $0, &status, AT_SYMLINK_NOFOLLOW) } ?? -1 }
        }
        return found == 0 ? status : nil
    }

    /// The same, for a name given as text.
    func status(_ name: String) -> stat? { status(Array(name.utf8)) }

    /// Opens the regular file at `relative` (`/`-separated, below this folder) without following
    /// a link at any of its names (empty names and `.` stay where they are, as in any path). A
    /// name `..` is refused: a listing never makes one, and it would leave the folder. Returns a
    /// descriptor or -1 with `errno` set.
    ///
    /// Names are split as UTF-8 bytes, as the file system takes them: split as characters, a `/`
    /// followed by a combining mark is no `/` at all.
    func openFile(_ relative: String) -> Int32 {
        // A path as a listing makes it (no empty name, no `.`, no `..`) is what its names join
        // to: it is not split and joined again (allocations that were half of this call's
        // instructions: Benchmarks/README.md).
        let plain = Self.isPlain(relative)
        let names = plain ? [] : Self.names(relative)
        guard plain || (!names.isEmpty && !names.contains("..")) else {
            errno = names.isEmpty ? ENOENT : EACCES
            return -1
        }
        let flags = FileInput.openFlags()
        // The whole path in one call where the system resolves it without links: opening and
        // checking each folder on the way was a third of the calls of reading a folder's files
        // (Benchmarks/README.md). Otherwise one name at a time: where the system cannot, and at
        // a link, whose reason then says which name it was (the file's own, or a folder's).
        let opened = cfs_open_beneath(descriptor, plain ? relative : names.joined(separator: "/"), flags)
        if opened >= 0 { return opened }
        switch errno {
        case ENOSYS, EPERM, EINVAL, E2BIG, EAGAIN, ELOOP: break
        default: return -1
        }
        return openByName(plain ? Self.names(relative) : names, flags: flags)
    }

    /// The names of `relative`, without empty ones and `.`.
    private static func names(_ relative: String) -> [String] {
        relative.utf8.split(separator: UInt8(ascii: "/")).map { String(decoding: $0, as: UTF8.self) }.filter { $0 != "." }
    }

    /// Whether `relative` is names only, none of them empty, `.` or `..`.
    static func isPlain(_ relative: String) -> Bool { ExactString.withUTF8(of: relative, isPlain) }

    /// ``isPlain(_:)`` of a path's bytes.
    private static func isPlain(_ path: UnsafeBufferPointer<UInt8>) -> Bool {
        var length = 0, dots = 0
        for byte in path {
            if byte == UInt8(ascii: "/") {
                guard length > 0, dots < length || length > 2 else { return false }
                (length, dots) = (0, 0)
            } else {
                length += 1
                if byte == UInt8(ascii: ".") { dots += 1 }
            }
        }
        return length > 0 && (dots < length || length > 2)
    }

    /// ``openFile(_:)`` one name at a time.
    private func openByName(_ names: [String], flags: Int32) -> Int32 {
        var folder = descriptor
        // Not close(-1) after a failed open: it would replace the errno the caller reports.
        defer { if folder != descriptor && folder >= 0 { close(folder) } }
        for name in names.dropLast() {
            let next = Self.openFolder(name, below: folder)
            if folder != descriptor { close(folder) }
            folder = next
            guard next >= 0 else { return -1 }
        }
        return openat(folder, names[names.count - 1], flags)
    }
}

/// A file to read: one of a folder being read, named below the ``DirectoryHandle`` it is read
/// through, or one the user named by its path (a single file given on the command line).
///
/// A file of a folder is opened from the folder's descriptor one name at a time without following
/// a link (Spec/cloud-layout.md 7), whatever has become of the folder's path since it was listed:
/// the reader is handed the folder, it never finds one from a path.
package struct FileReference: Sendable {
    /// The path shown in messages; the path opened when there is no ``folder``.
    package let path: String
    /// The folder the file is opened through, and the file's path below it (`/`-separated).
    let folder: (handle: DirectoryHandle, relative: String)?

    /// The file the user named: opened by its path, links in the folders above it followed (they
    /// are the user's choice), the file itself never a link.
    package init(path: String) {
        self.path = path
        folder = nil
    }

    /// ``init(path:)`` for a file URL.
    package init(_ url: URL) { self.init(path: url.path) }

    /// The file `relative` below `folder`, shown as `path`.
    init(_ relative: String, in folder: DirectoryHandle, shownAs path: String) {
        self.path = path
        self.folder = (folder, relative)
    }

    /// Opens the file for reading without following a link at its end (nor, below a folder, at
    /// any name below the folder) and without blocking: a descriptor, or -1 with `errno` set.
    func open() -> Int32 {
        guard let folder else { return Foundation.open(path, FileInput.openFlags()) }
        return folder.handle.openFile(folder.relative)
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

/// One entry of a folder as readers outside this module see it (Spec/ticds.md 2.2): its name,
/// its type from `lstat` (a link is a link) and, for a file, its size and modification time.
package struct FolderEntry: Sendable, Hashable {
    package var name: EntryName
    package var isDirectory: Bool
    package var isRegularFile: Bool
    package var size: Int64
    /// Seconds since 1970 (the file system's modification time, to the nanosecond it keeps).
    package var modified: Double
}

extension DirectoryHandle {
    /// The entries of this folder sorted by the bytes of their names, with ``FolderEntry``'s facts
    /// taken with `lstat` from the folder's descriptor; `.` and `..` left out. A folder that
    /// cannot be listed is `file.unreadable` at `displayPath`.
    package func listedEntries(displayPath: String) throws(FormatError) -> [FolderEntry] {
        try entries(displayPath: displayPath).map { entry in
            let found = status(entry.name.bytes)
            let type = (found?.st_mode ?? 0) & S_IFMT
            let modified = found.map { Double($0.st_mtim.tv_sec) + Double($0.st_mtim.tv_nsec) / 1e9 } ?? 0
            return FolderEntry(
                name: entry.name, isDirectory: type == S_IFDIR, isRegularFile: type == S_IFREG, size: Int64(found?.st_size ?? 0), modified: modified)
        }
    }

    /// The subfolder `name`, opened from this folder's descriptor without following a link; nil
    /// when it is missing, a link or not a folder.
    package func folder(_ name: String) -> DirectoryHandle? { opened(name) }

    /// The file `relative` (`/`-separated) below this folder, shown as `path` in messages.
    package func file(_ relative: String, shownAs path: String) -> FileReference { FileReference(relative, in: self, shownAs: path) }
}
