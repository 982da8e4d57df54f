import FileInput
import Foundation
import JSONDocument

/// The files of a model on disk (`contents`, `.xccurrentversion`, a compiled model's
/// `VersionInfo.plist`), read as Spec/model.md 2.2 and 2.5 say: bounded, only when they are
/// regular files, without waiting on a FIFO, and, except for the path the user gave (2.1),
/// without following a symbolic link (``FileInput``).
enum ModelFile {
    /// The bytes of the file at `url`, nil when there is none. `name` says which file in errors:
    /// `datamodel.unreadable` for a link not followed, an entry that is not a regular file or
    /// one that cannot be read; `datamodel.too-large` beyond `limit` bytes.
    static func contents(
        of url: URL, name: String, followingLink: Bool, limit: Int, location: FormatError.Location
    ) throws(FormatError) -> [UInt8]? {
        do {
            return try FileInput.read(path: url.path, followingLink: followingLink, limit: limit)
        } catch {
            switch error {
            case .cannotOpen(errno: ENOENT): return nil
            case .cannotOpen(errno: ELOOP):
                throw FormatError(.dataModelUnreadable, "\(name) is a symbolic link, which is never followed", location: location)
            case .cannotOpen: throw FormatError(.dataModelUnreadable, "\(name) could not be opened: \(error.reason)", location: location)
            case .notRegular: throw FormatError(.dataModelUnreadable, "\(name) is not a regular file", location: location)
            case .cannotRead: throw FormatError(.dataModelUnreadable, "\(name) could not be read: \(error.reason)", location: location)
            case .tooLarge: throw FormatError(.dataModelTooLarge, "\(name) is larger than \(limit) bytes", location: location)
            }
        }
    }
}
