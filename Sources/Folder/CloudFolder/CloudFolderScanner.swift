import Foundation
import JSONDocument
import EnsembleModel

extension FormatError.Code {
    /// The path given is missing, or is not a folder (cloud-layout.md section 8).
    public static let folderNotFound = Self("folder.not-found")
    /// The folder is neither an ensemble folder nor a root holding one (cloud-layout.md section 8).
    public static let folderNotCloudFolder = Self("folder.not-cloud-folder")
}

/// One entry of an ensemble folder as listed, before any file is read.
package struct ListedEntry: Hashable, Sendable {
    /// Path relative to the ensemble folder, `/`-separated, e.g. `events/12_A_3.cdeevent`.
    public var path: String
    public var entry: CloudEntry
    /// Size in bytes for regular files.
    public var size: Int64?
}

/// The entries of one ensemble folder, classified (Spec/cloud-layout.md).
package struct EnsembleListing: Sendable {
    public var identifier: String
    /// Absolute location on disk.
    public var url: URL
    /// Relative to the path given to the scanner (`.` when that path is the ensemble).
    public var displayPath: String
    public var entries: [ListedEntry]
    /// False when the scan left out the files of `events/` (``CloudFolderScanner/scan(_:listsEvents:)``):
    /// ``EnsembleContents`` then reads that folder itself, a file at a time.
    public var eventsListed = true
    /// The folder held open while the listing lives: every file below it is opened from this
    /// descriptor (``DirectoryHandle``).
    var folder: DirectoryHandle?
    /// Folders of the ensemble that could not be opened or listed (`file.unreadable`, the path
    /// relative to the ensemble): read errors, never empty folders.
    package var problems: [FormatError] = []
}

/// Lists a cloud folder without reading or changing anything, and without following links.
package struct CloudFolderScanner: Sendable {
    public init() {}

    /// Lists `path`: an ensemble folder, or a root whose subfolders are ensembles. Without
    /// `listsEvents`, the files of each `events/` are not listed (a long history is then never
    /// held as a list).
    public func scan(_ path: String, listsEvents: Bool = true) throws(FormatError) -> [EnsembleListing] {
        let url = URL(fileURLWithPath: path)
        let root: DirectoryHandle
        let entries: [(name: EntryName, info: FileInfo)]
        do {
            root = try DirectoryHandle.open(url.path)
            entries = try root.entries(displayPath: path)
        } catch {
            throw FormatError(error.code, error.message, location: .init(file: path))
        }
        if Self.holdsEnsembleSubfolder(entries) {
            return [listEnsemble(root, entries, url: url, displayPath: ".", listsEvents: listsEvents)]
        }
        // Ensembles of a root: folders (never links) with a UTF-8 name, opened from the root's descriptor.
        let ensembles = entries.compactMap { name, info -> EnsembleListing? in
            // A folder of the root that cannot be read cannot be told to be an ensemble: left out.
            guard let text = name.text, !Self.isStagingName(text), info.isDirectory, !info.isSymlink,
                let child = try? root.subfolder(text, displayPath: text), let childEntries = try? child.entries(displayPath: text),
                Self.holdsEnsembleSubfolder(childEntries)
            else { return nil }
            return listEnsemble(child, childEntries, url: url.appendingPathComponent(text), displayPath: text, listsEvents: listsEvents)
        }
        guard !ensembles.isEmpty else {
            throw FormatError(
                .folderNotCloudFolder, "not a cloud folder: neither it nor any folder in it has stores/, events/, baselines/ or data/",
                location: .init(file: path))
        }
        return ensembles
    }

    private static func holdsEnsembleSubfolder(_ entries: [(name: EntryName, info: FileInfo)]) -> Bool {
        entries.contains { name, info in info.isDirectory && !info.isSymlink && name.text.flatMap(EnsembleSubfolder.init(rawValue:)) != nil }
    }

    private func listEnsemble(
        _ handle: DirectoryHandle, _ found: [(name: EntryName, info: FileInfo)], url: URL, displayPath: String, listsEvents: Bool
    ) -> EnsembleListing {
        var entries: [ListedEntry] = []
        var problems: [FormatError] = []
        var eventsFolder = false
        for (entryName, info) in found {
            guard let name = entryName.text else {
                entries.append(Self.notUTF8(entryName, in: nil, info: info))
                continue
            }
            if let folder = EnsembleSubfolder(rawValue: name), info.isDirectory, !info.isSymlink {
                if folder == .events {
                    eventsFolder = true
                    if !listsEvents { continue }
                }
                do throws(FormatError) {
                    for (inner, innerInfo) in try handle.subfolder(name, displayPath: name).entries(displayPath: name) {
                        entries.append(Self.entry(inner, info: innerInfo, in: folder))
                    }
                } catch {
                    problems.append(error)
                }
                continue
            }
            let entry: CloudEntry
            if let debris = CloudFileName.debris(name: name, isSymlink: info.isSymlink, isDirectory: info.isDirectory, size: info.size) {
                entry = debris
            } else if info.isDirectory, let original = CloudFileName.duplicateFolderOriginal(name) {
                entry = .debris(.duplicateFolder, reason: "a duplicate of \(original.rawValue)/ made by a sync service; its files are not read")
            } else {
                entry = .debris(.unknownEntry, reason: "not part of the ensemble layout (stores/, events/, baselines/, data/)")
            }
            entries.append(ListedEntry(path: name, entry: entry, size: info.isDirectory ? nil : info.size))
        }
        var listing = EnsembleListing(identifier: url.lastPathComponent, url: url, displayPath: displayPath, entries: entries)
        listing.eventsListed = listsEvents || !eventsFolder
        listing.folder = handle.hold()
        listing.problems = problems
        return listing
    }

    /// The entry `name` of the subfolder `folder`, classified.
    static func entry(_ name: EntryName, info: FileInfo, in folder: EnsembleSubfolder) -> ListedEntry {
        guard let text = name.text else { return notUTF8(name, in: folder, info: info) }
        let entry = CloudFileName.classify(
            name: text, in: folder, isDirectory: info.isDirectory, isSymlink: info.isSymlink, isSpecial: info.isSpecial, size: info.size)
        return ListedEntry(path: "\(folder.rawValue)/\(text)", entry: entry, size: info.isDirectory ? nil : info.size)
    }

    /// An entry whose name is not UTF-8: debris shown without loss, never opened (Spec/cloud-layout.md 7, rule 0).
    private static func notUTF8(_ name: EntryName, in folder: EnsembleSubfolder?, info: FileInfo) -> ListedEntry {
        ListedEntry(
            path: (folder.map { "\($0.rawValue)/" } ?? "") + name.display,
            entry: .debris(.unknownName, reason: "the name is not UTF-8 (its other bytes are shown as \\xHH); never opened"),
            size: info.isDirectory ? nil : info.size)
    }

    /// Every entry of the subfolder `folder` of a listed ensemble, classified, in the order the
    /// directory gives them; one at a time, without a list of names.
    static func forEachEntry(of folder: EnsembleSubfolder, in listing: EnsembleListing, _ body: (ListedEntry) -> Void) throws(FormatError) {
        guard let handle = listing.folder else { return }
        try handle.subfolder(folder.rawValue, displayPath: folder.rawValue).forEachEntry(displayPath: folder.rawValue) { name, info in
            body(entry(name, info: info, in: folder))
        }
    }

    /// A writer's temporary folder (`.NAME.partial-UUID`, `.NAME.replaced-UUID`, README 6.1):
    /// never an ensemble of a root, whatever it holds (Spec/cloud-layout.md section 3).
    static func isStagingName(_ name: String) -> Bool {
        name.hasPrefix(".") && (name.contains(".partial-") || name.contains(".replaced-"))
    }

    struct FileInfo {
        var isDirectory = false
        var isSymlink = false
        /// Neither a regular file, a directory nor a link: a FIFO, socket or device.
        var isSpecial = false
        var size: Int64?

        init() {}

        init(_ status: stat) {
            let type = status.st_mode & S_IFMT
            isDirectory = type == S_IFDIR
            isSymlink = type == S_IFLNK
            isSpecial = type != S_IFDIR && type != S_IFLNK && type != S_IFREG
            size = Int64(status.st_size)
        }
    }

    /// `lstat` facts: a link is reported as a link, never as what it points to. (`lstat` itself:
    /// FileManager's attribute dictionary costs far more per file.)
    static func fileInfo(_ url: URL) -> FileInfo { fileInfo(atPath: url.path) }

    static func fileInfo(atPath path: String) -> FileInfo {
        var status = stat()
        return lstat(path, &status) == 0 ? FileInfo(status) : FileInfo()
    }

    static func isPlainDirectory(_ url: URL) -> Bool {
        let info = fileInfo(url)
        return info.isDirectory && !info.isSymlink
    }
}
