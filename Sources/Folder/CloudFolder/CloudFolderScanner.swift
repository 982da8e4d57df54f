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
}

/// Lists a cloud folder without reading or changing anything, and without following links.
package struct CloudFolderScanner: Sendable {
    public init() {}

    /// True when `url` is a directory holding at least one of the four ensemble folders.
    public static func isEnsembleFolder(_ url: URL) -> Bool {
        EnsembleSubfolder.allCases.contains { isPlainDirectory(url.appendingPathComponent($0.rawValue)) }
    }

    /// Lists `path`: an ensemble folder, or a root whose subfolders are ensembles. Without
    /// `listsEvents`, the files of each `events/` are not listed (a long history is then never
    /// held as a list).
    public func scan(_ path: String, listsEvents: Bool = true) throws(FormatError) -> [EnsembleListing] {
        let url = URL(fileURLWithPath: path)
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw FormatError(.folderNotFound, "no such folder", location: .init(file: path))
        }
        if Self.isEnsembleFolder(url) {
            return [listEnsemble(url, displayPath: ".", listsEvents: listsEvents)]
        }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? []
        let ensembles = names.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }).compactMap { name -> EnsembleListing? in
            let child = url.appendingPathComponent(name)
            guard !Self.isStagingName(name), Self.isPlainDirectory(child), Self.isEnsembleFolder(child) else { return nil }
            return listEnsemble(child, displayPath: name, listsEvents: listsEvents)
        }
        guard !ensembles.isEmpty else {
            throw FormatError(
                .folderNotCloudFolder, "not a cloud folder: neither it nor any folder in it has stores/, events/, baselines/ or data/",
                location: .init(file: path))
        }
        return ensembles
    }

    private func listEnsemble(_ url: URL, displayPath: String, listsEvents: Bool) -> EnsembleListing {
        var entries: [ListedEntry] = []
        for name in Self.sortedNames(url) {
            let child = url.appendingPathComponent(name)
            let info = Self.fileInfo(child)
            if let folder = EnsembleSubfolder(rawValue: name), info.isDirectory, !info.isSymlink {
                if folder == .events && !listsEvents { continue }
                // Paths joined as text: a URL per file was a visible share of listing a large folder.
                let childPath = child.path
                for inner in Self.sortedNames(child) { entries.append(Self.entry(inner, in: folder, at: childPath)) }
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
        listing.eventsListed = listsEvents || !Self.isPlainDirectory(url.appendingPathComponent(EnsembleSubfolder.events.rawValue))
        return listing
    }

    /// The file `name` of the subfolder `folder`, found at `folderPath`, classified.
    static func entry(_ name: String, in folder: EnsembleSubfolder, at folderPath: String) -> ListedEntry {
        let info = fileInfo(atPath: folderPath + "/" + name)
        let entry = CloudFileName.classify(
            name: name, in: folder, isDirectory: info.isDirectory, isSymlink: info.isSymlink, isSpecial: info.isSpecial, size: info.size)
        return ListedEntry(path: "\(folder.rawValue)/\(name)", entry: entry, size: info.isDirectory ? nil : info.size)
    }

    /// Every entry of the subfolder `folder` of the ensemble at `url`, classified, in the order the
    /// directory gives them; one at a time, without a list of names.
    static func forEachEntry(of folder: EnsembleSubfolder, in url: URL, _ body: (ListedEntry) -> Void) {
        let folderPath = url.appendingPathComponent(folder.rawValue).path
        guard let directory = opendir(folderPath) else { return }
        defer { closedir(directory) }
        while let item = readdir(directory) {
            let name = withUnsafeBytes(of: item.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name == "." || name == ".." { continue }
            body(entry(name, in: folder, at: folderPath))
        }
    }

    /// A writer's temporary folder (`.NAME.partial-UUID`, `.NAME.replaced-UUID`, README 6.1):
    /// never an ensemble of a root, whatever it holds (Spec/cloud-layout.md section 3).
    static func isStagingName(_ name: String) -> Bool {
        name.hasPrefix(".") && (name.contains(".partial-") || name.contains(".replaced-"))
    }

    static func sortedNames(_ url: URL) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? []).sorted(by: utf8Precedes)
    }

    struct FileInfo {
        var isDirectory = false
        var isSymlink = false
        /// Neither a regular file, a directory nor a link: a FIFO, socket or device.
        var isSpecial = false
        var size: Int64?
    }

    /// `lstat` facts: a link is reported as a link, never as what it points to. (`lstat` itself:
    /// FileManager's attribute dictionary costs far more per file.)
    static func fileInfo(_ url: URL) -> FileInfo { fileInfo(atPath: url.path) }

    static func fileInfo(atPath path: String) -> FileInfo {
        var status = stat()
        guard lstat(path, &status) == 0 else { return FileInfo() }
        let type = status.st_mode & S_IFMT
        return FileInfo(
            isDirectory: type == S_IFDIR, isSymlink: type == S_IFLNK, isSpecial: type != S_IFDIR && type != S_IFLNK && type != S_IFREG,
            size: Int64(status.st_size))
    }

    static func isPlainDirectory(_ url: URL) -> Bool {
        let info = fileInfo(url)
        return info.isDirectory && !info.isSymlink
    }
}
