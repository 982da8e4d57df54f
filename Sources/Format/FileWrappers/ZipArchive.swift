import Deflate
import CZlib

/// The zip archives of Ensembles 2's zip cloud file system, which SSZipArchive (minizip) writes:
/// one file per archive, stored or deflated (Spec/wrappers.md 4).
///
/// Why not a zip package: ZIPFoundation (0.9.20, in the local package copy) was checked again
/// and is not used. It does read an archive held in memory (through a C stream over the bytes,
/// on Linux too), but as a general archive of many entries, and what the Spec pins is around it,
/// not in it: its errors are cases without a byte offset, while Spec/wrappers.md 4.2 and 7 fix the
/// offset of every `wrap.*` error (the damaged-zip fixtures check them); it reads ZIP64, which
/// the Spec refuses; its inflate stops at the end of the DEFLATE stream without checking that the
/// stream is exactly the compressed size the headers claim, and is Apple's Compression framework
/// on Apple platforms but zlib elsewhere, so which damaged streams are refused would depend on
/// the platform; the size and ratio limits (Spec/README.md 6.2) would be a consumer that throws, after
/// the archive was opened. Checking the headers against each other, the limits and the offsets
/// would be this file's code anyway; what is left, one stored or deflated entry over the system
/// zlib the toolkit already links, is about 300 lines, without a dependency.
package enum ZipArchive {
    static let localSignature: UInt32 = 0x0403_4B50
    static let centralSignature: UInt32 = 0x0201_4B50
    static let endSignature: UInt32 = 0x0605_4B50
    static let zip64LocatorSignature: UInt32 = 0x0706_4B50
    static let descriptorSignature: UInt32 = 0x0807_4B50
    static let endRecordLength = 22
    static let centralHeaderLength = 46
    static let localHeaderLength = 30

    /// The one compression-ratio rule of the toolkit (Spec/README.md 6.2), shared with the binary
    /// encoding and data containers: a deflated entry may stand for at most 100 times its stored
    /// bytes.
    package static var maximumRatio: Int { Zlib.maximumRatio }

    /// How an entry's bytes are stored.
    package enum Method: UInt16, Sendable {
        case stored = 0
        case deflated = 8
    }

    /// The one file of an archive.
    package struct Entry: Sendable, Hashable {
        /// The entry's name as stored (UTF-8, or bytes shown as UTF-8 with replacement characters).
        package var name: String
        package var method: Method
        package var content: [UInt8]
    }

    /// Reads the one entry of `bytes`, with every size taken from the central directory and
    /// checked against the file before anything is inflated (Spec/wrappers.md 4.2). Offsets in
    /// errors are those of `bytes`.
    package static func readSingleEntry(_ bytes: [UInt8], maximumBytes: Int) throws(FormatError) -> Entry {
        let reader = ByteReader(bytes)
        let end = try findEndRecord(reader)
        let entries = reader.uint16(end + 10)
        guard reader.uint16(end + 4) == 0, reader.uint16(end + 6) == 0, reader.uint16(end + 8) == entries else {
            throw FormatError(.wrapZipUnsupported, "the archive spans several disks, which is not supported", location: .init(offset: end + 4))
        }
        let centralSize = Int(reader.uint32(end + 12))
        let centralStart = Int(reader.uint32(end + 16))
        if entries == 0xFFFF || centralSize == 0xFFFF_FFFF || centralStart == 0xFFFF_FFFF
            || (end >= 20 && reader.uint32(end - 20) == zip64LocatorSignature)
        {
            throw FormatError(
                .wrapZipUnsupported, "a ZIP64 archive, which the toolkit does not read (Ensembles' files are far below 4 GiB)", location: .init(offset: end))
        }
        guard entries == 1 else {
            throw FormatError(
                .wrapZipEntryCount, "the archive holds \(entries) entries; a wrapped cloud file holds exactly one", location: .init(offset: end + 10))
        }
        guard centralStart + centralSize <= end, centralSize >= centralHeaderLength else {
            throw FormatError(
                .wrapZipCorrupt, "the central directory (\(centralSize) bytes at \(centralStart)) does not lie before the end record",
                location: .init(offset: end + 12))
        }
        // The central directory entry.
        let central = centralStart
        guard reader.uint32(central) == centralSignature else {
            throw FormatError(.wrapZipCorrupt, "no central directory entry at the offset the end record gives", location: .init(offset: central))
        }
        let flags = reader.uint16(central + 8)
        let methodValue = reader.uint16(central + 10)
        let crc = reader.uint32(central + 16)
        let storedSize = Int(reader.uint32(central + 20))
        let size = Int(reader.uint32(central + 24))
        let nameLength = Int(reader.uint16(central + 28))
        let extraLength = Int(reader.uint16(central + 30))
        let commentLength = Int(reader.uint16(central + 32))
        let localStart = Int(reader.uint32(central + 42))
        guard central + centralHeaderLength + nameLength + extraLength + commentLength == centralStart + centralSize else {
            throw FormatError(.wrapZipCorrupt, "the central directory entry does not fill the central directory exactly", location: .init(offset: central + 28))
        }
        if storedSize == 0xFFFF_FFFF || size == 0xFFFF_FFFF || localStart == 0xFFFF_FFFF {
            throw FormatError(.wrapZipUnsupported, "the entry uses ZIP64 sizes, which the toolkit does not read", location: .init(offset: central + 20))
        }
        guard flags & 0x0041 == 0 else {
            throw FormatError(
                .wrapZipUnsupported, "the entry is encrypted with zip's own encryption, which the toolkit does not read", location: .init(offset: central + 8))
        }
        guard let method = Method(rawValue: methodValue) else {
            throw FormatError(
                .wrapZipUnsupported, "the entry uses compression method \(methodValue); only stored (0) and deflated (8) are read",
                location: .init(offset: central + 10))
        }
        let nameBytes = Array(bytes[(central + centralHeaderLength)..<(central + centralHeaderLength + nameLength)])
        let name = String(decoding: nameBytes, as: UTF8.self)
        guard !name.hasSuffix("/") else {
            throw FormatError(
                .wrapZipEntryCount, "the archive's one entry is a folder (\(name)), not a file", location: .init(offset: central + centralHeaderLength))
        }
        guard size <= maximumBytes else {
            throw FormatError(.wrapTooLarge, "the entry claims \(size) bytes, more than the limit of \(maximumBytes)", location: .init(offset: central + 24))
        }
        switch method {
        case .stored:
            guard storedSize == size else {
                throw FormatError(.wrapZipCorrupt, "a stored entry of \(size) bytes claims \(storedSize) stored bytes", location: .init(offset: central + 20))
            }
        case .deflated:
            guard size <= max(1, storedSize) * maximumRatio else {
                throw FormatError(
                    .wrapInflateRatio, "the entry claims \(size) bytes from \(storedSize) deflated bytes, more than \(maximumRatio) times",
                    location: .init(offset: central + 24))
            }
        }
        // The local header: same method, same name length; its sizes must agree unless a data
        // descriptor follows the data (flag bit 3).
        guard localStart + localHeaderLength <= centralStart, reader.uint32(localStart) == localSignature else {
            throw FormatError(.wrapZipCorrupt, "no local file header at the offset the central directory gives", location: .init(offset: central + 42))
        }
        if reader.uint32(localStart + 18) == 0xFFFF_FFFF || reader.uint32(localStart + 22) == 0xFFFF_FFFF {
            throw FormatError(
                .wrapZipUnsupported, "the local header uses ZIP64 sizes, which the toolkit does not read", location: .init(offset: localStart + 18))
        }
        let localFlags = reader.uint16(localStart + 6)
        guard reader.uint16(localStart + 8) == methodValue, localFlags & 0x0008 == flags & 0x0008 else {
            throw FormatError(
                .wrapZipCorrupt, "the local header and the central directory disagree on the method or flags", location: .init(offset: localStart + 6))
        }
        let localNameLength = Int(reader.uint16(localStart + 26))
        let localExtraLength = Int(reader.uint16(localStart + 28))
        let dataStart = localStart + localHeaderLength + localNameLength + localExtraLength
        guard dataStart <= centralStart, storedSize <= centralStart - dataStart else {
            throw FormatError(
                .wrapTruncated, "the entry's \(storedSize) stored bytes run past the central directory", location: .init(offset: min(dataStart, centralStart)))
        }
        let dataEnd = dataStart + storedSize
        if flags & 0x0008 == 0 {
            guard reader.uint32(localStart + 14) == crc, Int(reader.uint32(localStart + 18)) == storedSize, Int(reader.uint32(localStart + 22)) == size else {
                throw FormatError(
                    .wrapZipCorrupt, "the local header's CRC-32 or sizes differ from the central directory's", location: .init(offset: localStart + 14))
            }
        } else {
            try checkDescriptor(reader, at: dataEnd, limit: centralStart, crc: crc, storedSize: storedSize, size: size)
        }
        let content: [UInt8]
        switch method {
        case .stored:
            content = Array(bytes[dataStart..<dataEnd])
        case .deflated:
            content = try inflate(bytes[dataStart..<dataEnd], size: size, at: dataStart)
        }
        guard crc32(content[...]) == crc else {
            throw FormatError(.wrapZipChecksum, "the entry's CRC-32 does not match its content: the archive is damaged", location: .init(offset: dataStart))
        }
        return Entry(name: name, method: method, content: content)
    }

    /// The end of central directory record: the last `PK\x05\x06` whose comment ends the file.
    private static func findEndRecord(_ reader: ByteReader) throws(FormatError) -> Int {
        let count = reader.bytes.count
        guard count >= endRecordLength else {
            throw FormatError(.wrapTruncated, "the archive has \(count) bytes, fewer than its 22-byte end record", location: .init(offset: count))
        }
        var position = count - endRecordLength
        let lowest = max(0, count - endRecordLength - 0xFFFF)
        while position >= lowest {
            if reader.uint32(position) == endSignature, position + endRecordLength + Int(reader.uint16(position + 20)) == count {
                return position
            }
            position -= 1
        }
        throw FormatError(.wrapTruncated, "no end of central directory record: the archive was cut short", location: .init(offset: count))
    }

    /// A data descriptor (optional signature, CRC-32, stored and full size) must repeat the
    /// central directory's values.
    private static func checkDescriptor(_ reader: ByteReader, at start: Int, limit: Int, crc: UInt32, storedSize: Int, size: Int) throws(FormatError) {
        var position = start
        if position + 4 <= limit, reader.uint32(position) == descriptorSignature { position += 4 }
        guard position + 12 <= limit else {
            throw FormatError(.wrapTruncated, "the data descriptor after the entry runs past the central directory", location: .init(offset: start))
        }
        guard reader.uint32(position) == crc, Int(reader.uint32(position + 4)) == storedSize, Int(reader.uint32(position + 8)) == size else {
            throw FormatError(.wrapZipCorrupt, "the data descriptor's CRC-32 or sizes differ from the central directory's", location: .init(offset: position))
        }
    }

    /// Raw DEFLATE that must give exactly `size` bytes and end exactly at the end of its input.
    private static func inflate(_ input: ArraySlice<UInt8>, size: Int, at offset: Int) throws(FormatError) -> [UInt8] {
        var stream = z_stream()
        guard czlib_inflate_init_raw(&stream) == Z_OK else {
            throw FormatError(.wrapZipCorrupt, "zlib could not start inflating", location: .init(offset: offset))
        }
        defer { inflateEnd(&stream) }
        // One byte more than claimed, so that a stream longer than its claim is seen.
        let result = Zlib.finish(&stream, input: input, capacity: size + 1, CZlib.inflate)
        let produced = result.produced, consumed = result.consumed
        guard result.status == Z_STREAM_END else {
            let reason = produced > size ? "inflates to more than the \(size) bytes the central directory gives" : "is not one complete DEFLATE stream"
            throw FormatError(.wrapZipCorrupt, "the entry's data \(reason)", location: .init(offset: offset + consumed))
        }
        guard produced == size, consumed == input.count else {
            throw FormatError(
                .wrapZipCorrupt,
                "the entry inflates to \(produced) bytes from \(consumed) of its \(input.count) stored bytes; the central directory says \(size)",
                location: .init(offset: offset + consumed))
        }
        return Array(result.output.prefix(size))
    }

    /// CRC-32 as zip uses it (zlib's).
    static func crc32(_ bytes: ArraySlice<UInt8>) -> UInt32 { Zlib.crc32(bytes) }

    /// A one-entry archive as SSZipArchive would write it: a local header without data
    /// descriptor, the data, one central directory entry and the end record; times fixed at
    /// 1980-01-01 00:00 so that the same input gives the same bytes. `deflate` stores the entry
    /// raw when deflating would not shrink it or would break the ratio rule.
    package static func write(name: String, content: [UInt8], deflate: Bool = true) -> [UInt8] {
        var method = Method.stored
        var data = content
        if deflate, let deflated = Zlib.deflateForStorage(content) {
            method = .deflated
            data = deflated
        }
        let nameBytes = Array(name.utf8)
        let utf8Flag: UInt16 = nameBytes.allSatisfy { $0 < 0x80 } ? 0 : 0x0800
        let crc = crc32(content[...])
        var out: [UInt8] = []
        func u16(_ value: UInt16) { out += [UInt8(value & 0xFF), UInt8(value >> 8)] }
        func u32(_ value: UInt32) { for shift in stride(from: 0, to: 32, by: 8) { out.append(UInt8((value >> UInt32(shift)) & 0xFF)) } }
        let dosTime: UInt16 = 0
        let dosDate: UInt16 = (0 << 9) | (1 << 5) | 1
        // Local file header.
        u32(localSignature); u16(20); u16(utf8Flag); u16(method.rawValue); u16(dosTime); u16(dosDate)
        u32(crc); u32(UInt32(data.count)); u32(UInt32(content.count)); u16(UInt16(nameBytes.count)); u16(0)
        out += nameBytes
        out += data
        let centralStart = out.count
        // Central directory entry: made by version 2.0, no extra field, no comment.
        u32(centralSignature); u16(20); u16(20); u16(utf8Flag); u16(method.rawValue); u16(dosTime); u16(dosDate)
        u32(crc); u32(UInt32(data.count)); u32(UInt32(content.count)); u16(UInt16(nameBytes.count)); u16(0); u16(0)
        u16(0); u16(0); u32(0); u32(0)
        out += nameBytes
        let centralSize = out.count - centralStart
        // End of central directory record.
        u32(endSignature); u16(0); u16(0); u16(1); u16(1); u32(UInt32(centralSize)); u32(UInt32(centralStart)); u16(0)
        return out
    }
}

/// Little-endian fields of a byte array; a read past the end gives 0 (callers check lengths
/// against the array before they trust a field).
struct ByteReader {
    let bytes: [UInt8]
    init(_ bytes: [UInt8]) { self.bytes = bytes }

    func uint16(_ offset: Int) -> UInt16 {
        guard offset >= 0, offset + 2 <= bytes.count else { return 0 }
        return UInt16(bytes[offset]) | UInt16(bytes[offset + 1]) << 8
    }

    func uint32(_ offset: Int) -> UInt32 {
        guard offset >= 0, offset + 4 <= bytes.count else { return 0 }
        return UInt32(bytes[offset]) | UInt32(bytes[offset + 1]) << 8 | UInt32(bytes[offset + 2]) << 16 | UInt32(bytes[offset + 3]) << 24
    }
}
