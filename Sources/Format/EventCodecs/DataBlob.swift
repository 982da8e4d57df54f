import Deflate
import Crypto
import Foundation
import JSONDocument

extension FormatError.Code {
    public static let blobChecksum = Self("blob.checksum")
    public static let blobTruncated = Self("blob.truncated")
    public static let blobTooLarge = Self("blob.too-large")
    public static let blobInflateFailed = Self("blob.inflate-failed")
}

/// Data files (Spec/data-blobs.md): raw bytes as Ensembles writes them, or the optional
/// container with a length, a SHA-256 and optional DEFLATE.
package enum DataBlob {
    package static let magic: [UInt8] = [0x89, 0x45, 0x4E, 0x42, 0x0D, 0x0A, 0x1A, 0x0A]
    /// Magic, version, flags, content length and SHA-256 (Spec/data-blobs.md 2).
    package static let headerLength = 8 + 1 + 1 + 8 + 32
    package static let maximumContentBytes = 1 << 30
    package static let maximumInflateRatio = Zlib.maximumRatio

    package static func isContainer<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> Bool { bytes.starts(with: magic) }

    /// The largest container file: the header and a content of the largest length, stored raw.
    package static let maximumContainerBytes = maximumContentBytes + headerLength

    /// The container bytes for `content`; deflated when that is smaller, asked for, and within
    /// the ratio a reader accepts (Spec/data-blobs.md 5), so that every container written reads back.
    package static func container(_ content: [UInt8], deflate: Bool = false) -> [UInt8] {
        let compressed = deflate ? Zlib.deflateForStorage(content) : nil
        var bytes = magic + [1, compressed == nil ? 0 : 1]
        let length = UInt64(content.count)
        for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: length >> UInt64(shift))) }
        bytes += Array(SHA256.hash(data: content))
        bytes += compressed ?? content
        return bytes
    }

    /// The value a data file holds: the file itself when raw, the verified content when a
    /// container. For a file on disk, ``ContentVerifier`` reads it in chunks instead.
    package static func content(of bytes: [UInt8]) throws(FormatError) -> [UInt8] {
        guard let header = try header(fileSize: Int64(bytes.count), prefix: bytes.prefix(headerLength)) else { return bytes }
        let verifier = try ContentVerifier(header)
        var content: [UInt8] = []
        try verifier.feed(bytes[headerLength...]) { content.append(contentsOf: $0) }
        try verifier.finish()
        return content
    }

    /// What a container's header says (Spec/data-blobs.md 2).
    package struct Header: Sendable {
        package var contentLength: Int
        package var isDeflated: Bool
        package var digest: [UInt8]
        /// The stored bytes after the header.
        package var storedLength: Int
    }

    /// Steps 1 to 6 of Spec/data-blobs.md 4, decided from the file's size and its first
    /// ``headerLength`` bytes alone: nil for a raw data file within its size limit, the header of
    /// a container that may be read, or the first failed check.
    package static func header<Bytes: Collection<UInt8>>(fileSize: Int64, prefix: Bytes) throws(FormatError) -> Header? {
        let bytes = Array(prefix.prefix(headerLength))
        guard isContainer(bytes) else {
            guard fileSize <= Int64(maximumContentBytes) else {
                throw FormatError(.blobTooLarge, "a raw data file of \(fileSize) bytes exceeds the limit of \(maximumContentBytes)")
            }
            return nil
        }
        guard fileSize >= Int64(headerLength), bytes.count == headerLength else {
            throw FormatError(.blobTruncated, "the container ends inside its header", location: .init(offset: Int(min(fileSize, Int64(bytes.count)))))
        }
        guard fileSize <= Int64(maximumContainerBytes) else {
            throw FormatError(.blobTooLarge, "a container file of \(fileSize) bytes exceeds the limit of \(maximumContainerBytes)")
        }
        guard bytes[8] == 1 else {
            throw FormatError(.binaryUnsupportedVersion, "container version \(bytes[8]) is not 1", location: .init(offset: 8))
        }
        guard bytes[9] & ~1 == 0 else {
            throw FormatError(.binaryUnknownFlag, "container flags \(bytes[9]) hold bits this reader does not know", location: .init(offset: 9))
        }
        var length: UInt64 = 0
        for (i, byte) in bytes[10..<18].enumerated() { length |= UInt64(byte) << UInt64(8 * i) }
        guard length <= UInt64(maximumContentBytes) else {
            throw FormatError(.blobTooLarge, "a content of \(length) bytes exceeds the limit of \(maximumContentBytes)", location: .init(offset: 10))
        }
        let header = Header(
            contentLength: Int(length), isDeflated: bytes[9] & 1 == 1, digest: Array(bytes[18..<headerLength]),
            storedLength: Int(fileSize) - headerLength)
        if header.isDeflated && !Zlib.ratioAllows(stored: header.storedLength, inflated: header.contentLength) {
            throw FormatError(
                .blobTooLarge, "a content of \(length) bytes is more than \(maximumInflateRatio) times the stored bytes", location: .init(offset: 10))
        }
        return header
    }

    /// Steps 7 to 9 of Spec/data-blobs.md 4 on the stored bytes of a container, fed in chunks:
    /// the content passes through SHA-256 (and DEFLATE) and is handed on in pieces, never held
    /// whole here.
    package final class ContentVerifier {
        private let header: Header
        private var hasher = SHA256()
        private var length = 0
        private let inflater: Zlib.InflateStream?

        package init(_ header: Header) throws(FormatError) {
            self.header = header
            do {
                inflater = header.isDeflated ? try Zlib.InflateStream(limit: header.contentLength) : nil
            } catch {
                throw FormatError(.blobInflateFailed, "the DEFLATE decoder could not start", location: .init(offset: headerLength))
            }
        }

        /// The next stored bytes; `content` receives the content they hold.
        package func feed(_ stored: ArraySlice<UInt8>, content: (ArraySlice<UInt8>) -> Void) throws(FormatError) {
            guard let inflater else {
                guard length + stored.count <= header.contentLength else {
                    throw FormatError(
                        .blobChecksum, "the content has more than the \(header.contentLength) bytes the header says", location: .init(offset: 10))
                }
                take(stored, content)
                return
            }
            do {
                // The inflater's limit is the content length, so no piece goes beyond it.
                try inflater.feed(stored) { take($0, content) }
            } catch .tooLarge {
                throw FormatError(.blobChecksum, "the content inflates beyond its stated length", location: .init(offset: headerLength))
            } catch {
                throw FormatError(.blobInflateFailed, "the stored bytes are not valid DEFLATE data", location: .init(offset: headerLength))
            }
        }

        private func take(_ piece: ArraySlice<UInt8>, _ content: (ArraySlice<UInt8>) -> Void) {
            length += piece.count
            hasher.update(data: piece)
            content(piece)
        }

        /// After the last stored bytes: the length and the digest.
        package func finish() throws(FormatError) {
            if let inflater {
                do {
                    try inflater.finish()
                } catch {
                    throw FormatError(.blobInflateFailed, "the stored bytes end before the DEFLATE stream does", location: .init(offset: headerLength))
                }
            }
            guard length == header.contentLength else {
                throw FormatError(.blobTruncated, "the content has \(length) bytes, the header says \(header.contentLength)", location: .init(offset: 10))
            }
            guard Array(hasher.finalize()) == header.digest else {
                throw FormatError(.blobChecksum, "the content does not match its SHA-256: the file is damaged", location: .init(offset: 18))
            }
        }
    }
}
