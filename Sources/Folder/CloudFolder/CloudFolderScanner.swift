import Foundation
import JSONDocument
import ParallelWork
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
    package var path: String
    package var entry: CloudEntry
    /// Size in bytes for regular files.
    package var size: Int64?
}

/// The entries of one ensemble folder, classified (Spec/cloud-layout.md).
package struct EnsembleListing: Sendable {
    package var identifier: String
    /// Absolute location on disk.
    package var url: URL
    /// Relative to the path given to the scanner (`.` when that path is the ensemble).
    package var displayPath: String
    package var entries: [ListedEntry]
    /// False when the scan left out the files of `events/` (``CloudFolderScanner/scan(_:listsEvents:)``):
    /// ``EnsembleContents`` then reads that folder itself, a file at a time.
    package var eventsListed = true
    /// The folders held open while the listing lives: every file of the listing is opened from
    /// one of them, through ``file(_:shownAs:)``.
    package var folders: ListedFolders?
    /// The ensemble folder, held open.
    var folder: DirectoryHandle? { folders?.ensemble }
    /// Folders of the ensemble that could not be opened or listed (`file.unreadable`, the path
    /// relative to the ensemble): read errors, never empty folders.
    package var problems: [FormatError] = []
    /// The duplicate folders folded into this ensemble, in the order a device folds them
    /// (Spec/cloud-layout.md 3.1); their files are entries whose paths start with the folder's.
    package var duplicates: [DuplicateFolder] = []

    /// The path a file of the listing has once the duplicate folders are folded in: `events/x`
    /// for `../MainStore 2/events/x`; other paths are their own.
    package func foldedPath(_ path: String) -> String {
        for duplicate in duplicates { if let folded = ExactString.remainder(of: path, after: duplicate.path + "/") { return folded } }
        return path
    }

    /// The file at `path` (relative to the ensemble folder, as in ``entries``), read through the
    /// folder that was listed (``ListedFolders/file(_:shownAs:)``).
    package func file(_ path: String, shownAs: String? = nil) -> FileReference {
        folders?.file(path, shownAs: shownAs) ?? FileReference(path: shownAs ?? Converter.join(url.path, path))
    }

    /// Whether the ensemble folder holds the subfolder `name` (a folder, not a link), asked of the
    /// folder that was listed, like ``file(_:shownAs:)``.
    func holdsFolder(_ name: EnsembleSubfolder) -> Bool {
        let info =
            folder.map { $0.status(name.rawValue).map(CloudFolderScanner.FileInfo.init) ?? .init() }
            ?? CloudFolderScanner.fileInfo(atPath: Converter.join(url.path, name.rawValue))
        return info.isDirectory && !info.isSymlink
    }
}

/// The folders of a listed ensemble, held open by descriptor: the ensemble's own and those of its
/// duplicates. Every file of the listing is read through them, never by a path, so that what became
/// of a folder's path since it was listed does not change what is read (Spec/cloud-layout.md 7).
package struct ListedFolders: Sendable {
    /// The ensemble folder's path, for messages.
    let path: String
    let ensemble: DirectoryHandle
    /// The duplicate folders, by their path relative to the ensemble (``DuplicateFolder/path``).
    let duplicates: [(path: String, handle: DirectoryHandle)]

    /// The file at `path` (relative to the ensemble folder), opened through the duplicate folder
    /// it lies in, or else the ensemble folder. `shownAs` is the path messages give for it, when
    /// another than the ensemble's path and `path`.
    package func file(_ path: String, shownAs: String? = nil) -> FileReference {
        let shown = shownAs ?? Converter.join(self.path, path)
        for duplicate in duplicates where path.utf8.starts(with: (duplicate.path + "/").utf8) {
            return FileReference(String(decoding: path.utf8.dropFirst(duplicate.path.utf8.count + 1), as: UTF8.self), in: duplicate.handle, shownAs: shown)
        }
        return FileReference(path, in: ensemble, shownAs: shown)
    }
}

/// A copy of an ensemble folder, or of the cloud root, that a sync service made beside the
/// original (`MainStore 2`, `<root> 3`): a device folds it in before merging (Spec/cloud-layout.md 3.1).
package struct DuplicateFolder: Hashable, Sendable {
    /// Relative to the ensemble folder: `../MainStore 2`, or `../../<root> 2/MainStore`.
    package var path: String
    /// Files only this duplicate has, which a device would copy into the ensemble (folded paths).
    package var copied: [String]
    /// Files the ensemble (or an earlier duplicate) already has, which a device leaves as they are.
    package var shared: [String]
}

/// Lists a cloud folder without reading or changing anything, and without following links.
package struct CloudFolderScanner: Sendable {
    package init() {}

    /// Lists `path`: an ensemble folder, or a root whose subfolders are ensembles. Without
    /// `listsEvents`, the files of each `events/` are not listed (a long history is then never
    /// held as a list).
    package func scan(_ path: String, listsEvents: Bool = true) throws(FormatError) -> [EnsembleListing] {
        let url = URL(fileURLWithPath: path)
        let root: DirectoryHandle
        let entries: [(name: EntryName, info: FileInfo)]
        do {
            root = try DirectoryHandle.open(url.path)
            entries = try root.entries(displayPath: path)
        } catch {
            throw FormatError(error.code, error.message, location: .init(file: path))
        }
        // The folder holding the one given: where a sync service puts its duplicates.
        let parent = try? DirectoryHandle.open(url.deletingLastPathComponent().path)
        if Self.holdsEnsembleSubfolder(entries) {
            let layers = Self.duplicateLayers(of: url.lastPathComponent, at: url.path, in: parent, rootDuplicates: [])
            return [listEnsemble(root, entries, url: url, displayPath: ".", listsEvents: listsEvents, duplicates: layers)]
        }
        // Duplicates of the root itself (`<root> 2` beside it), in the order a device folds them.
        let rootDuplicates = Self.duplicateNames(of: url.lastPathComponent).compactMap { name in
            (try? parent?.subfolder(name, displayPath: name)).map { (name: name, handle: $0) }
        }
        let names = Set(entries.compactMap { $0.name.text.map(ExactString.init) })
        // Ensembles of a root: folders (never links) with a UTF-8 name, opened from the root's descriptor.
        let ensembles = entries.compactMap { name, info -> EnsembleListing? in
            // A folder of the root that cannot be read cannot be told to be an ensemble: left out;
            // `MainStore 2` beside `MainStore` is a duplicate of it, not an ensemble of its own.
            guard let text = name.text, !Self.isStagingName(text), info.isDirectory, !info.isSymlink,
                Self.duplicateOriginal(text).map({ !names.contains(ExactString($0)) }) ?? true,
                let child = try? root.subfolder(text, displayPath: text), let childEntries = try? child.entries(displayPath: text),
                Self.holdsEnsembleSubfolder(childEntries)
            else { return nil }
            let childURL = url.appendingPathComponent(text)
            let layers = Self.duplicateLayers(of: text, at: childURL.path, in: root, rootDuplicates: rootDuplicates)
            return listEnsemble(child, childEntries, url: childURL, displayPath: text, listsEvents: listsEvents, duplicates: layers)
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

    /// `NAME 2` ... `NAME 9`: the names a sync service gives the duplicates of `NAME`.
    static func duplicateNames(of name: String) -> [String] { (2...9).map { "\(name) \($0)" } }

    /// `NAME` for `NAME 2` ... `NAME 9`.
    static func duplicateOriginal(_ name: String) -> String? {
        guard let space = name.lastIndex(of: " "), name.index(after: space) == name.index(before: name.endIndex),
            let digit = name.last?.wholeNumberValue, (2...9).contains(digit), space > name.startIndex
        else { return nil }
        return String(name[..<space])
    }

    /// The duplicate folders of the ensemble `name` (whose path is `path`), in the order a device
    /// folds them in (Spec/cloud-layout.md 3.1): first the root's duplicates, each holding its own
    /// copy of the ensemble; then the ensemble's duplicates `NAME 2` ... `NAME 9` beside it, each
    /// with the copies the root's duplicates hold of it.
    private static func duplicateLayers(
        of name: String, at path: String, in parent: DirectoryHandle?, rootDuplicates: [(name: String, handle: DirectoryHandle)]
    ) -> [(path: String, handle: DirectoryHandle)] {
        var layers: [(path: String, handle: DirectoryHandle)] = []
        func add(_ relative: String, _ folder: DirectoryHandle?, _ inner: String) {
            if let handle = try? folder?.subfolder(inner, displayPath: relative, heldAs: path + "/" + relative) { layers.append((relative, handle)) }
        }
        for root in rootDuplicates { add("../../\(root.name)/\(name)", root.handle, name) }
        for duplicate in duplicateNames(of: name) {
            add("../\(duplicate)", parent, duplicate)
            for root in rootDuplicates { add("../../\(root.name)/\(duplicate)", root.handle, duplicate) }
        }
        return layers
    }

    private func listEnsemble(
        _ handle: DirectoryHandle, _ found: [(name: EntryName, info: FileInfo)], url: URL, displayPath: String, listsEvents: Bool,
        duplicates: [(path: String, handle: DirectoryHandle)]
    ) -> EnsembleListing {
        var entries: [ListedEntry] = []
        var problems: [FormatError] = []
        var eventsFolder = false
        // With duplicates, every event file is listed: folding compares names.
        let listsEvents = listsEvents || !duplicates.isEmpty
        Self.listLayer(handle, found, prefix: nil, listsEvents: listsEvents, into: &entries, problems: &problems, eventsFolder: &eventsFolder)
        // By the paths' bytes: a copy's file named in NFD beside the original's in NFC is another file.
        var present = Set(entries.map { ExactString($0.path) })
        var folded: [DuplicateFolder] = []
        for (path, duplicate) in duplicates {
            var layer: [ListedEntry] = []
            var ignored = false
            do throws(FormatError) {
                Self.listLayer(
                    duplicate, try duplicate.entries(displayPath: path), prefix: path, listsEvents: true, into: &layer, problems: &problems,
                    eventsFolder: &ignored)
            } catch {
                problems.append(error)
            }
            var record = DuplicateFolder(path: path, copied: [], shared: [])
            for entry in layer {
                let foldedPath = ExactString.remainder(of: entry.path, after: path + "/") ?? entry.path
                if present.insert(ExactString(foldedPath)).inserted {
                    record.copied.append(foldedPath)
                    entries.append(entry)
                } else {
                    record.shared.append(foldedPath)
                }
            }
            folded.append(record)
        }
        var listing = EnsembleListing(identifier: url.lastPathComponent, url: url, displayPath: displayPath, entries: entries)
        listing.eventsListed = listsEvents || !eventsFolder
        listing.folders = ListedFolders(path: url.path, ensemble: handle, duplicates: duplicates)
        listing.problems = problems
        listing.duplicates = folded
        return listing
    }

    /// The entries of one folder tree of an ensemble (the ensemble's own, or a duplicate's with
    /// `prefix`), classified.
    private static func listLayer(
        _ handle: DirectoryHandle, _ found: [(name: EntryName, info: FileInfo)], prefix: String?, listsEvents: Bool,
        into entries: inout [ListedEntry], problems: inout [FormatError], eventsFolder: inout Bool
    ) {
        func prefixed(_ entry: ListedEntry) -> ListedEntry {
            var entry = entry
            if let prefix { entry.path = prefix + "/" + entry.path }
            return entry
        }
        for (entryName, info) in found {
            guard let name = entryName.text else {
                entries.append(prefixed(Self.notUTF8(entryName, in: nil, info: info)))
                continue
            }
            if let folder = EnsembleSubfolder(rawValue: name), info.isDirectory, !info.isSymlink {
                if folder == .events {
                    eventsFolder = true
                    if !listsEvents { continue }
                }
                let shown = prefix.map { $0 + "/" + name } ?? name
                do throws(FormatError) {
                    let subfolder = try handle.subfolder(name, displayPath: shown)
                    var direct: [ListedEntry] = []
                    var partitioned: [ListedEntry] = []
                    let found = try subfolder.entries(displayPath: shown)
                    // The names read on every core, a piece at a time (events/ holds tens of
                    // thousands; read one after another they were a third of listing it).
                    let made = Pieces.map(count: found.count, size: 2_048) { range in
                        found[range].map { inner, innerInfo in
                            folder == .data && partitionName(inner, info: innerInfo) != nil ? nil : Self.entry(inner, info: innerInfo, in: folder)
                        }
                    }
                    for (index, made) in zip(found.indices, made.joined()) {
                        if let made {
                            direct.append(made)
                        } else if let partition = partitionName(found[index].name, info: found[index].info) {
                            listPartition(partition, of: subfolder, shown: shown, into: &partitioned, problems: &problems)
                        }
                    }
                    let kept = flatCopiesWin(partitioned, over: direct)
                    // Appended as they are where there is no prefix: copied into a joined list,
                    // then into a prefixed one, each entry was retained and released twice more.
                    if prefix == nil {
                        entries += direct
                        entries += kept
                    } else {
                        entries += (direct + kept).map(prefixed)
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
            entries.append(prefixed(ListedEntry(path: name, entry: entry, size: info.isDirectory ? nil : info.size)))
        }
    }

    /// The name of a partition folder of `data/` (Spec/cloud-layout.md 6.1): a directory, not a
    /// link, whose name is two UTF-16 code units and not debris; nil for any other entry.
    private static func partitionName(_ name: EntryName, info: FileInfo) -> String? {
        guard info.isDirectory, !info.isSymlink, let text = name.text, text.utf16.count == 2, text != "..",
            CloudFileName.debris(name: text, isSymlink: false, isDirectory: true, size: nil) == nil
        else { return nil }
        return text
    }

    /// The entries of the partition folder `data/XY`, classified as entries of `data/` are, at
    /// `data/XY/NAME`; a data file whose name does not start with `XY` is debris (Spec/cloud-layout.md 6.1).
    private static func listPartition(
        _ partition: String, of data: DirectoryHandle, shown: String, into entries: inout [ListedEntry], problems: inout [FormatError]
    ) {
        let folderPath = shown + "/" + partition
        do throws(FormatError) {
            for (inner, innerInfo) in try data.subfolder(partition, displayPath: folderPath).entries(displayPath: folderPath) {
                var listed = entry(inner, info: innerInfo, in: .data)
                listed.path = "data/\(partition)/" + listed.path.dropFirst("data/".count)
                if case .dataFile(let name) = listed.entry, !name.utf16.starts(with: partition.utf16) {
                    let reason = "a data file in the partition of another name: data/\(partition)/ holds only names that start with \"\(partition)\""
                    listed.entry = .debris(.unknownName, reason: reason)
                }
                entries.append(listed)
            }
        } catch {
            problems.append(error)
        }
    }

    /// The partitioned entries, with each data file that `data/` also holds directly turned into
    /// debris: the copy in `data/` is the one read (Spec/cloud-layout.md 6.1).
    private static func flatCopiesWin(_ partitioned: [ListedEntry], over flat: [ListedEntry]) -> [ListedEntry] {
        // Most folders hold no partition: the flat list (all of events/, say) is not walked.
        guard !partitioned.isEmpty else { return [] }
        var flatNames = Set<String>()
        for listed in flat {
            if case .dataFile(let name) = listed.entry { flatNames.insert(name) }
        }
        return partitioned.map { listed in
            guard case .dataFile(let name) = listed.entry, flatNames.contains(name) else { return listed }
            var copy = listed
            copy.entry = .debris(.unknownName, reason: "a second copy of data/\(name); the one directly in data/ is read")
            return copy
        }
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
        try handle.subfolder(folder.rawValue, displayPath: folder.rawValue).forEachEntry(
            displayPath: folder.rawValue, transform: { entry($0, info: $1, in: folder) }, body)
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
    static func fileInfo(atPath path: String) -> FileInfo {
        var status = stat()
        return lstat(path, &status) == 0 ? FileInfo(status) : FileInfo()
    }
}
