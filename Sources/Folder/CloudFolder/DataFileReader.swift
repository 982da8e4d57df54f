import Crypto
import Foundation
import JSONDocument
import EventCodecs
import FileInput
import FileWrappers

/// Data files read as Spec/data-blobs.md 4 says, from a descriptor opened like every other file
/// (no link, FIFO or device): sizes are decided from `fstat` before anything is read, and a
/// container is checked in chunks, so a data file of any size costs one chunk of memory at a time.
package enum DataFileReader {
    /// Bytes read at once while checking a container.
    static let chunkBytes = 1 << 20

    /// Runs every check of Spec/data-blobs.md 4 on the file at `url`. `content`, when given,
    /// receives the content in pieces (a caller must not use what it received when this throws);
    /// without it a raw file, which has nothing to verify, is not read at all.
    package static func check(at url: URL, content: ((ArraySlice<UInt8>) -> Void)? = nil) throws(FormatError) {
        try check(FileReference(url), content: content)
    }

    /// ``check(at:content:)`` for a file of a folder, opened through the folder's handle.
    package static func check(_ file: FileReference, content: ((ArraySlice<UInt8>) -> Void)? = nil) throws(FormatError) {
        let (descriptor, size) = try EventFileReader.openRegularFile(file)
        defer { close(descriptor) }
        let head = try read(descriptor, at: 0, upTo: DataBlob.headerLength)
        guard let header = try DataBlob.header(fileSize: size, prefix: head) else {
            if let content { try stream(descriptor, from: 0) { content($0) } }
            return
        }
        let verifier = try DataBlob.ContentVerifier(header)
        try stream(descriptor, from: Int64(DataBlob.headerLength)) { (stored) throws(FormatError) in
            try verifier.feed(stored, content: content ?? { _ in })
        }
        try verifier.finish()
    }

    /// The whole content of a data file (at most 1 GiB, from Spec/data-blobs.md 4.1), checked.
    package static func content(at url: URL) throws(FormatError) -> [UInt8] {
        try content(FileReference(url))
    }

    /// ``content(at:)`` for a file of a folder, opened through the folder's handle.
    package static func content(_ file: FileReference) throws(FormatError) -> [UInt8] {
        var bytes: [UInt8] = []
        try check(file) { bytes.append(contentsOf: $0) }
        return bytes
    }

    /// The content of a data file of a folder whose other files all have the layers `layers`
    /// (``EnsembleContents/folderLayers``): those layers are removed when the file has them, and
    /// only those (a data file's content may itself look like a wrapper, Spec/wrappers.md 1), then
    /// a blob container is checked and opened. `unwrapped` says whether layers were removed; a
    /// file without them is taken as it is. A layer that is there but does not open (a wrong
    /// password, a damaged archive) throws its `wrap.*` error.
    package static func content(at url: URL, removing layers: [WrapperLayer], unwrapper: Unwrapper) throws(FormatError) -> (content: [UInt8], unwrapped: Bool) {
        try content(FileReference(url), removing: layers, unwrapper: unwrapper)
    }

    /// ``content(at:removing:unwrapper:)`` for a file of a folder, opened through the folder's handle.
    package static func content(
        _ file: FileReference, removing layers: [WrapperLayer], unwrapper: Unwrapper
    ) throws(FormatError) -> (content: [UInt8], unwrapped: Bool) {
        guard !layers.isEmpty else { return (try content(file), false) }
        // A wrapper adds a header, a name and a MAC: far less than this margin.
        let bytes = try EventFileReader.readBytes(file, limit: DataBlob.maximumContainerBytes + 65_536)
        var unwrapper = unwrapper
        unwrapper.maximumBytes = DataBlob.maximumContainerBytes
        let inner = try unwrapper.remove(exactly: layers, from: bytes)
        return (try DataBlob.content(of: inner ?? bytes), inner != nil)
    }

    /// Hands every byte of a regular file to `body`, a chunk at a time: copies of files of any
    /// size (registrations, data files) cost one chunk of memory at a time.
    package static func forEachChunk(at url: URL, _ body: (ArraySlice<UInt8>) throws(FormatError) -> Void) throws(FormatError) {
        try forEachChunk(FileReference(url), body)
    }

    /// ``forEachChunk(at:_:)`` for a file of a folder, opened through the folder's handle.
    package static func forEachChunk(_ file: FileReference, _ body: (ArraySlice<UInt8>) throws(FormatError) -> Void) throws(FormatError) {
        let (descriptor, _) = try EventFileReader.openRegularFile(file)
        defer { close(descriptor) }
        try stream(descriptor, from: 0, body)
    }

    /// The SHA-256 of a regular file's bytes, read in chunks.
    package static func digest(of url: URL) throws(FormatError) -> [UInt8] {
        try digest(of: FileReference(url))
    }

    /// ``digest(of:)`` for a file of a folder, opened through the folder's handle.
    package static func digest(of file: FileReference) throws(FormatError) -> [UInt8] {
        var hasher = SHA256()
        try forEachChunk(file) { hasher.update(data: $0) }
        return Array(hasher.finalize())
    }

    /// Hands every chunk from `offset` to the end of the file to `body`.
    private static func stream(
        _ descriptor: Int32, from offset: Int64, _ body: (ArraySlice<UInt8>) throws(FormatError) -> Void
    ) throws(FormatError) {
        var position = offset
        while true {
            let chunk = try read(descriptor, at: position, upTo: chunkBytes)
            if chunk.isEmpty { return }
            try body(chunk[...])
            position += Int64(chunk.count)
            if chunk.count < chunkBytes { return }
        }
    }

    /// Up to `count` bytes from `offset` (fewer where the file ends), into memory not zeroed
    /// first: zeroing a chunk's megabyte for each small file was a tenth of `inspect --sqlite`.
    private static func read(_ descriptor: Int32, at offset: Int64, upTo count: Int) throws(FormatError) -> [UInt8] {
        do {
            return try FileInput.read(descriptor, at: offset, upTo: count)
        } catch {
            throw FormatError(.fileUnreadable, "the file could not be read: \(error.reason)")
        }
    }
}
