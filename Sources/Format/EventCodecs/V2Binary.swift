import Deflate
import Foundation
import JSONDocument
import EnsembleModel

extension FormatError.Code {
    public static let binaryUnsupportedVersion = Self("binary.unsupported-version")
    public static let binaryUnknownFlag = Self("binary.unknown-flag")
    public static let binaryDuplicateSection = Self("binary.duplicate-section")
    public static let binarySectionOrder = Self("binary.section-order")
    public static let binaryMissingSection = Self("binary.missing-section")
    public static let binaryOverlongVarint = Self("binary.overlong-varint")
    public static let binaryInvalidUTF8 = Self("binary.invalid-utf8")
    public static let binaryBadIndex = Self("binary.bad-index")
    public static let binaryTooLarge = Self("binary.too-large")
    public static let binaryInflateRatio = Self("binary.inflate-ratio")
    public static let binaryTruncated = Self("binary.truncated")
    public static let binaryBadMagic = Self("binary.bad-magic")
    public static let binaryChecksum = Self("binary.checksum")
    public static let binaryInflateFailed = Self("binary.inflate-failed")
    public static let binaryTrailingBytes = Self("binary.trailing-bytes")
    public static let binaryInvalidValue = Self("binary.invalid-value")
}

/// The v2 binary encoding (Spec/v2-binary.md): the same logical event as v2 JSON, with interned
/// strings, LEB128 varints and a CRC-32 per section.
package enum V2Binary {
    package static let magic: [UInt8] = [0x89, 0x45, 0x4E, 0x53, 0x0D, 0x0A, 0x1A, 0x0A]
    package static let majorVersion: UInt8 = 2
    package static let minorVersion: UInt8 = 0

    enum Section: UInt64 {
        case strings = 1, header = 2, changes = 3, extensions = 4
    }

    /// Whether a file is read as binary: its first byte is 0x89, which can start neither JSON
    /// nor UTF-8 text (Spec/v2-binary.md 2.1); the magic itself is checked when decoding.
    package static func isBinary<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> Bool { bytes.first == 0x89 }
}

// MARK: - Encoding

/// Writes events in the canonical binary form.
public struct V2BinaryEncoder: Sendable {
    /// Deflate every section (valid, but not the canonical bytes).
    public var deflateSections: Bool

    public init(deflateSections: Bool = false) { self.deflateSections = deflateSections }

    public func encode(_ event: Event) throws(FormatError) -> [UInt8] {
        let bytes = try encode(event, deflating: deflateSections, withinReaderLimits: true)
        // The reader's limits hold for what the writer writes (Spec/v2-binary.md 11): deflated
        // sections so small that the file would hold more object changes per byte than a reader
        // accepts are written as they are.
        // The same for the value budget of the file's size (Spec/README.md 6.2): written as they
        // are, sections hold at most 4 values in 3 bytes.
        guard deflateSections,
            event.objectChanges.count > BinaryReadingLimits().maximumChangesPerFileByte * bytes.count
                || Self.valueBound(event) > DecodedValueBudget(storedBytes: bytes.count).maximumValues
        else { return bytes }
        return try encode(event, deflating: false, withinReaderLimits: true)
    }

    /// At least the values ``BinaryReadingLimits/valueBudget`` counts for the event: its changes,
    /// property changes, data file names, relationship identifiers and revision entries, and the
    /// strings of its table, each named by one of those (at most two each) or by the header.
    static func valueBound(_ event: Event) -> Int {
        var items = event.revisionSet.count
        for change in event.objectChanges {
            items += BinaryReadingLimits.valuesPerChange + change.dataFiles.count
            for property in change.propertyChanges {
                items += BinaryReadingLimits.valuesPerChange
                switch property.value {
                case .toMany(let added, let removed): items += added.count + removed.count
                case .orderedToMany(let added, let removed, let moved): items += added.count + removed.count + moved.count
                default: break
                }
            }
        }
        return 2 * items + 4
    }

    /// Every section deflated, whatever the ratio and the changes per byte: the files a reader
    /// must refuse, for the tests of its limits.
    package func encodeBeyondReaderLimits(_ event: Event) throws(FormatError) -> [UInt8] {
        try encode(event, deflating: true, withinReaderLimits: false)
    }

    private func encode(_ event: Event, deflating: Bool, withinReaderLimits: Bool) throws(FormatError) -> [UInt8] {
        // Entities in UTF-8 byte order, as readers require (Spec/v2-binary.md 8.1): changes
        // appended to an event out of that order made a file that readers refused.
        var event = event
        event.objectChanges = ObjectChange.canonicallyOrdered(event.objectChanges)
        // Written from numbers, as a rebase's baseline is: one string table builder for both.
        // (The second one, for strings, wrote the same bytes, and converting or generating
        // binary folders took longer with it: Benchmarks/README.md, stop 68.)
        var sections = try Self.sections(header: event, numbered: NumberedEvent(event))
        let extensions = self.extensions(event)
        if !extensions.isEmpty { sections.append((.extensions, extensions)) }
        return Self.file(sections, deflating: deflating, withinReaderLimits: withinReaderLimits)
    }

    /// The header section of `event` (Spec/v2-binary.md 7), its strings numbered by `index`.
    static func header(_ event: Event, _ index: (String) -> UInt64) -> [UInt8] {
        var header = ByteWriter()
        header.varint(index(event.uniqueIdentifier))
        header.varint(UInt64(event.type.rawValue))
        header.varint(UInt64(bitPattern: event.globalCount))
        header.double(event.timestamp)
        header.varint(index(event.storeIdentifier))
        header.varint(event.modelVersion.map { index($0) + 1 } ?? 0)
        let stores = event.revisionSet.stores
        header.varint(UInt64(stores.count))
        for store in stores {
            header.varint(index(store))
            header.varint(UInt64(bitPattern: event.revisionSet[store] ?? 0))
        }
        return header.bytes
    }

    /// The file of these sections, in this order (Spec/v2-binary.md 4 and 5).
    static func file(_ sections: [(V2Binary.Section, [UInt8])], deflating: Bool, withinReaderLimits: Bool) -> [UInt8] {
        var output = ByteWriter()
        output.bytes.append(contentsOf: V2Binary.magic)
        output.bytes.append(contentsOf: [V2Binary.majorVersion, V2Binary.minorVersion])
        for (type, payload) in sections {
            // Deflated only within the ratio every reader accepts (Spec/v2-binary.md 5.2).
            let deflated =
                deflating
                ? Zlib.deflate(payload).flatMap { !withinReaderLimits || Zlib.ratioAllows(stored: $0.count, inflated: payload.count) ? $0 : nil } : nil
            let stored = deflated ?? payload
            output.varint(type.rawValue)
            output.varint(deflated == nil ? 0 : 1)
            output.varint(UInt64(stored.count))
            output.uint32(Zlib.crc32(stored[...]))
            output.bytes.append(contentsOf: stored)
        }
        return output.bytes
    }

    /// Unknown JSON members, by their pointer in the canonical v2 JSON form (a change's by its
    /// position among its entity's changes; `event`'s changes are grouped by entity).
    private func extensions(_ event: Event) -> [UInt8] {
        var members: [(pointer: String, value: [UInt8])] = []
        for (key, value) in event.unknownFields { members.append(((JSONPointer.root / key).description, JSONWriter().bytes(value))) }
        let changes = event.objectChanges
        var index = 0
        for position in changes.indices {
            let change = changes[position]
            index = position > 0 && exactlyEqual(changes[position - 1].entity, change.entity) ? index + 1 : 0
            if !change.unknownFields.isEmpty || change.propertyChanges.contains(where: { !$0.unknownFields.isEmpty }) {
                let changePointer = JSONPointer.root / "changesByEntity" / change.entity / index
                for (key, value) in change.unknownFields { members.append(((changePointer / key).description, JSONWriter().bytes(value))) }
                for (j, property) in ObjectChange.sortedByName(change.propertyChanges).enumerated() {
                    for (key, value) in property.unknownFields {
                        members.append(((changePointer / "properties" / j / key).description, JSONWriter().bytes(value)))
                    }
                }
            }
        }
        guard !members.isEmpty else { return [] }
        var writer = ByteWriter()
        writer.varint(UInt64(members.count))
        for member in members.sorted(by: { $0.pointer.utf8.lexicographicallyPrecedes($1.pointer.utf8) }) {
            writer.blob(Array(member.pointer.utf8))
            writer.blob(member.value)
        }
        return writer.bytes
    }
}

/// Bytes as Spec/v2-binary.md 3 lays them out; also the event index's compact columns.
package struct ByteWriter {
    package var bytes: [UInt8] = []

    package init() {}

    /// Unsigned LEB128 in its shortest form.
    package mutating func varint(_ value: UInt64) {
        var rest = value
        while rest >= 0x80 {
            bytes.append(UInt8(rest & 0x7F) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(rest))
    }

    /// A signed integer zigzag-encoded, then as ``varint(_:)``.
    package mutating func zigzag(_ value: Int64) { varint(UInt64(bitPattern: (value << 1) ^ (value >> 63))) }

    mutating func double(_ value: Double) {
        let bits = value.isNaN ? 0x7FF8_0000_0000_0000 : value.bitPattern
        for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: bits >> UInt64(shift))) }
    }

    mutating func uint32(_ value: UInt32) {
        for shift in stride(from: 0, to: 32, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) }
    }

    mutating func blob(_ data: [UInt8]) {
        varint(UInt64(data.count))
        bytes.append(contentsOf: data)
    }

    /// The string-table entry of the string with these UTF-8 bytes: `2n` and n bytes of text,
    /// or `2n+1`, a UUID's 16 bytes and n bytes.
    mutating func tableString(_ text: UnsafeBufferPointer<UInt8>) {
        if let uuid = UUIDPrefix.uuid(text) {
            varint(UInt64(text.count - UUIDPrefix.textLength) * 2 + 1)
            withUnsafeBytes(of: uuid) { bytes.append(contentsOf: $0) }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: text[UUIDPrefix.textLength...]))
        } else {
            varint(UInt64(text.count) * 2)
            bytes.append(contentsOf: text)
        }
    }

    /// An attribute value (Spec/v2-binary.md 8.2); a string or URL is written as `tableIndex`, its
    /// string's index in the table.
    mutating func attribute(_ value: AttributeValue, tableIndex: UInt64) {
        switch value {
        case .null: varint(0)
        case .bool(let flag): varint(flag ? 2 : 1)
        case .integer(let int):
            varint(3)
            zigzag(int)
        case .double(let double):
            varint(4)
            self.double(double)
        case .decimal(let text):
            varint(5)
            blob(Array(text.utf8))
        case .string:
            varint(6)
            varint(tableIndex)
        case .date(let milliseconds):
            varint(7)
            // The JSON form cannot tell -0 from 0, so neither does the binary one.
            double(milliseconds == 0 ? 0 : milliseconds)
        case .binary(let data):
            varint(8)
            blob(Array(data))
        case .uuid(let uuid):
            varint(9)
            withUnsafeBytes(of: uuid.uuid) { bytes.append(contentsOf: $0) }
        case .url:
            varint(10)
            varint(tableIndex)
        }
    }
}
