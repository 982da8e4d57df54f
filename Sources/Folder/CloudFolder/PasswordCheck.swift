import Foundation
import JSONDocument
import FileWrappers

/// The files a command's password is checked against (Spec/wrappers.md 5.5), found before
/// anything is read through its layers, so that a wrong password is one error and not one per
/// file.
package enum PasswordCheck {
    /// Checks `source` against the encrypted files of `inputs` (paths as a command takes them:
    /// cloud folders, ensemble folders, event files), in the order of Spec/wrappers.md 5.5: each
    /// input in turn; of a folder, each ensemble in the scanner's order and, in it, the files of
    /// `baselines/`, `events/` and `stores/` in the byte order of their paths, then those only a
    /// duplicate folder holds. Data files are not looked at (their own content may look like a
    /// wrapper), nor standard input (`-`), which cannot be read twice. Of each file only the
    /// first two bytes are read, unless they start an encrypted file in password mode. Paths
    /// that cannot be listed or read are passed over: the command reports them itself.
    package static func run(_ source: PasswordSource, inputs: [String], limit: Int) throws(FormatError) {
        var pending = inputs[...]
        var files: [(file: FileReference, shown: String)] = []
        var nextFile = 0
        // Listing a folder only when the files before it did not decide.
        func refill() -> Bool {
            while nextFile == files.count, let input = pending.popFirst() {
                files = Self.files(of: input)
                nextFile = 0
            }
            return nextFile < files.count
        }
        try source.check {
            while refill() {
                let (file, shown) = files[nextFile]
                nextFile += 1
                guard startsEncrypted(file), let bytes = try? EventFileReader.readBytes(file, limit: limit) else { continue }
                return (shown, bytes)
            }
            return nil
        }
    }

    /// The files of one input in the order of ``run(_:inputs:limit:)``, each with the path that
    /// errors name it by.
    private static func files(of input: String) -> [(file: FileReference, shown: String)] {
        guard input != EventFileReader.standardInputName else { return [] }
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: input, isDirectory: &isFolder) else { return [] }
        guard isFolder.boolValue else { return [(FileReference(path: input), input)] }
        guard let listings = try? CloudFolderScanner().scan(input) else { return [] }
        return listings.flatMap { listing in
            listing.entries.compactMap { listed -> (FileReference, String)? in
                switch listed.entry {
                case .event, .baseline, .storeRegistration:
                    let shown = Converter.join(Converter.join(input, listing.displayPath), listed.path)
                    return (listing.file(listed.path, shownAs: shown), shown)
                default:
                    return nil
                }
            }
        }
    }

    /// Whether the file's first two bytes are those of an RNCryptor v3 file in password mode.
    private static func startsEncrypted(_ file: FileReference) -> Bool {
        let descriptor = file.open()
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var head: [UInt8] = [0, 0]
        let read = head.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, 2, 0) }
        return read == 2 && head == [RNCryptor.version, 0x01]
    }
}
