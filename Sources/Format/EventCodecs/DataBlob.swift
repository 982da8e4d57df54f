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
public enum DataBlob {
    public static let magic: [UInt8] = [0x89, 0x45, 0x4E, 0x42, 0x0D, 0x0A, 0x1A, 0x0A]
    static let headerLength = 8 + 1 + 1 + 8 + 32
    public static let maximumContentBytes = 1 << 30
    public static let maximumInflateRatio = 1_000

    public static func isContainer<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> Bool { bytes.starts(with: magic) }

    /// The container bytes for `content`; deflated when that is smaller and asked for.
    public static func container(_ content: [UInt8], deflate: Bool = false) -> [UInt8] {
        let compressed = deflate ? Zlib.deflate(content) : nil
        let useDeflate = compressed.map { $0.count < content.count } ?? false
        var bytes = magic + [1, useDeflate ? 1 : 0]
        let length = UInt64(content.count)
        for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: length >> UInt64(shift))) }
        bytes += Array(SHA256.hash(data: content))
        bytes += useDeflate ? (compressed ?? content) : content
        return bytes
    }

    /// The value a data file holds: the file itself when raw, the verified content when a
    /// container.
    public static func content(of bytes: [UInt8]) throws(FormatError) -> [UInt8] {
        guard isContainer(bytes) else { return bytes }
        guard bytes.count >= headerLength else {
            throw FormatError(.blobTruncated, "the container ends inside its header", location: .init(offset: bytes.count))
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
        let stored = bytes[headerLength...]
        var content: [UInt8]
        if bytes[9] & 1 == 1 {
            guard length <= UInt64(max(1, stored.count) * maximumInflateRatio) else {
                throw FormatError(
                    .blobTooLarge, "a content of \(length) bytes is more than \(maximumInflateRatio) times the stored bytes", location: .init(offset: 10))
            }
            let limit = Int(length) + 1
            do {
                content = try Zlib.inflate(stored, limit: limit)
            } catch .tooLarge {
                throw FormatError(.blobChecksum, "the content inflates beyond its stated length", location: .init(offset: headerLength))
            } catch {
                throw FormatError(.blobInflateFailed, "the stored bytes are not valid DEFLATE data", location: .init(offset: headerLength))
            }
        } else {
            content = Array(stored)
        }
        guard UInt64(content.count) <= length else {
            throw FormatError(.blobChecksum, "the content has \(content.count) bytes, more than the \(length) the header says", location: .init(offset: 10))
        }
        guard UInt64(content.count) == length else {
            throw FormatError(.blobTruncated, "the content has \(content.count) bytes, the header says \(length)", location: .init(offset: 10))
        }
        guard Array(SHA256.hash(data: content)) == Array(bytes[18..<50]) else {
            throw FormatError(.blobChecksum, "the content does not match its SHA-256: the file is damaged", location: .init(offset: 18))
        }
        return content
    }
}
