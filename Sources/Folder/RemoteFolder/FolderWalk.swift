import Foundation
import JSONDocument

/// A listing that asks folder by folder, breadth first (WebDAV, Ensembles Server), and the rules
/// every such listing keeps (Spec/remote.md 3, 4.4): a name is safe and not repeated in its
/// folder, the manifest's name is not at the top, at most `maximumMembers` members in all, and
/// folders at most `maximumDepth` deep. What each protocol asks and how it learns a member's kind
/// stays with the protocol.
struct FolderWalk {
    private(set) var files: [RemoteSnapshot.Entry] = []
    private(set) var problems: [FormatError] = []
    /// Folders found, in the order they are listed; `next` is the first not listed yet.
    private var folders: [[String]] = [[]]
    private var next = 0
    private var total = 0
    /// The names of the folder being listed.
    private var seen: Set<String> = []

    /// The next folder to list, or nil when every folder found has been.
    mutating func nextFolder() -> [String]? {
        guard next < folders.count else { return nil }
        defer { next += 1 }
        seen = []
        return folders[next]
    }

    /// Whether `name`, a member of `folder`, is listed; when it is not, why is reported. More
    /// members than a listing may hold stops it.
    mutating func admit(_ name: String, in folder: [String]) throws(FormatError) -> Bool {
        if let reason = RemoteSnapshot.unsafeReason(name) ?? (folder.isEmpty && name == RemoteSnapshot.manifestName ? "the manifest's own name" : nil)
            ?? (seen.contains(name) ? "a second member of this name" : nil)
        {
            report(FormatError(.remoteUnsafeName, "\(reason): not fetched", location: .init(file: (folder + [name]).joined(separator: "/"))))
            return false
        }
        seen.insert(name)
        total += 1
        guard total <= RemoteSnapshot.maximumMembers else {
            throw FormatError(
                .remoteMalformedListing, "the folder holds more than \(RemoteSnapshot.maximumMembers) members, the limit of a listing",
                location: .init(file: "."))
        }
        return true
    }

    /// `path` is a folder to list in turn, unless it lies too deep.
    mutating func addFolder(_ path: [String]) {
        guard path.count < RemoteSnapshot.maximumDepth else {
            return report(
                FormatError(
                    .remoteUnsafeName, "folders nested more than \(RemoteSnapshot.maximumDepth) deep are not fetched",
                    location: .init(file: path.joined(separator: "/"))))
        }
        folders.append(path)
    }

    mutating func addFile(_ entry: RemoteSnapshot.Entry) { files.append(entry) }

    mutating func report(_ problem: FormatError) { problems.append(problem) }
}
