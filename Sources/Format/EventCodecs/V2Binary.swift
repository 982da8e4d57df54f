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
    public static let magic: [UInt8] = [0x89, 0x45, 0x4E, 0x53, 0x0D, 0x0A, 0x1A, 0x0A]
    public static let majorVersion: UInt8 = 2
    public static let minorVersion: UInt8 = 0

    enum Section: UInt64 {
        case strings = 1, header = 2, changes = 3, extensions = 4
    }

    /// Whether a file is read as binary: its first byte is 0x89, which can start neither JSON
    /// nor UTF-8 text (Spec/v2-binary.md 2.1); the magic itself is checked when decoding.
    public static func isBinary<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> Bool { bytes.first == 0x89 }
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
        guard deflateSections, event.objectChanges.count > BinaryReadingLimits().maximumChangesPerFileByte * bytes.count else { return bytes }
        return try encode(event, deflating: false, withinReaderLimits: true)
    }

    /// Every section deflated, whatever the ratio and the changes per byte: the files a reader
    /// must refuse, for the tests of its limits.
    package func encodeBeyondReaderLimits(_ event: Event) throws(FormatError) -> [UInt8] {
        try encode(event, deflating: true, withinReaderLimits: false)
    }

    private func encode(_ event: Event, deflating: Bool, withinReaderLimits: Bool) throws(FormatError) -> [UInt8] {
        var strings = StringTable()
        strings.collect(event)
        var header = ByteWriter()
        header.varint(strings.index(event.uniqueIdentifier))
        header.varint(UInt64(event.type.rawValue))
        header.varint(UInt64(bitPattern: event.globalCount))
        header.double(event.timestamp)
        header.varint(strings.index(event.storeIdentifier))
        header.varint(event.modelVersion.map { strings.index($0) + 1 } ?? 0)
        let stores = event.revisionSet.stores
        header.varint(UInt64(stores.count))
        for store in stores {
            header.varint(strings.index(store))
            header.varint(UInt64(bitPattern: event.revisionSet[store] ?? 0))
        }
        var sections: [(V2Binary.Section, [UInt8])] = [(.strings, strings.bytes()), (.header, header.bytes)]
        if !event.objectChanges.isEmpty { sections.append((.changes, try changes(event, strings))) }
        let extensions = try self.extensions(event)
        if !extensions.isEmpty { sections.append((.extensions, extensions)) }
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

    private func changes(_ event: Event, _ strings: StringTable) throws(FormatError) -> [UInt8] {
        var writer = ByteWriter()
        let entities = event.entities
        // Grouped once: filtering all changes for each entity made N entities cost N^2
        // (Spec/v2-binary.md 8; measured: Benchmarks/README.md).
        var changesOf: [ExactString: [Int]] = [:]
        for index in event.objectChanges.indices { changesOf[ExactString(event.objectChanges[index].entity), default: []].append(index) }
        writer.varint(UInt64(entities.count))
        for entity in entities {
            let list = changesOf[ExactString(entity)] ?? []
            writer.varint(strings.index(entity))
            writer.varint(UInt64(list.count))
            for change in list.lazy.map({ event.objectChanges[$0] }) {
                writer.varint(UInt64(change.type.rawValue))
                writer.varint(strings.index(change.globalIdentifier))
                writer.indexes(sortedUnique(change.dataFiles), strings)
                let properties = change.propertyChanges.sorted { utf8Precedes($0.name, $1.name) }
                writer.varint(UInt64(properties.count))
                for property in properties {
                    writer.varint(strings.index(property.name))
                    writer.varint(UInt64(property.kind.rawValue))
                    switch property.value {
                    case .attribute(let value): try writer.attribute(value, strings)
                    case .attributeInDataFile(let name):
                        writer.varint(11)
                        writer.varint(strings.index(name))
                    case .toOne(let related): writer.varint(related.map { strings.index($0) + 1 } ?? 0)
                    case .toMany(let added, let removed):
                        writer.indexes(sortedUnique(added), strings)
                        writer.indexes(sortedUnique(removed), strings)
                    case .orderedToMany(let added, let removed, let moved):
                        writer.indexes(sortedUnique(added), strings)
                        writer.indexes(sortedUnique(removed), strings)
                        writer.varint(UInt64(moved.count))
                        for position in moved.keys.sorted() {
                            guard position >= 0 && position <= 999_999_999, let id = moved[position] else {
                                throw FormatError(.v2UnencodableValue, "ordered position \(position) is outside 0...999999999")
                            }
                            writer.varint(UInt64(position))
                            writer.varint(strings.index(id))
                        }
                    }
                }
            }
        }
        return writer.bytes
    }

    /// Unknown JSON members, by their pointer in the canonical v2 JSON form.
    private func extensions(_ event: Event) throws(FormatError) -> [UInt8] {
        var members: [(pointer: String, value: [UInt8])] = []
        for (key, value) in event.unknownFields { members.append(((JSONPointer.root / key).description, JSONWriter().bytes(value))) }
        var indexInEntity: [ExactString: Int] = [:]
        for change in event.objectChanges {
            let index = indexInEntity[ExactString(change.entity), default: 0]
            indexInEntity[ExactString(change.entity)] = index + 1
            let changePointer = JSONPointer.root / "changesByEntity" / change.entity / index
            for (key, value) in change.unknownFields { members.append(((changePointer / key).description, JSONWriter().bytes(value))) }
            for (j, property) in change.propertyChanges.sorted(by: { utf8Precedes($0.name, $1.name) }).enumerated() {
                for (key, value) in property.unknownFields {
                    members.append(((changePointer / "properties" / j / key).description, JSONWriter().bytes(value)))
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

/// The interned strings of one event: sorted by UTF-8 bytes, each once.
struct StringTable {
    private var set = Set<ExactString>()
    private var positions: [ExactString: UInt64] = [:]
    private var sorted: [String] = []

    mutating func collect(_ event: Event) {
        var all = [event.uniqueIdentifier, event.storeIdentifier] + event.revisionSet.stores
        if let model = event.modelVersion { all.append(model) }
        for change in event.objectChanges {
            all += [change.entity, change.globalIdentifier] + change.dataFiles
            for property in change.propertyChanges {
                all.append(property.name)
                switch property.value {
                case .attribute(.string(let text)), .attribute(.url(let text)): all.append(text)
                case .attributeInDataFile(let name): all.append(name)
                case .toOne(let related?): all.append(related)
                case .toMany(let added, let removed): all += added + removed
                case .orderedToMany(let added, let removed, let moved): all += added + removed + Array(moved.values)
                default: break
                }
            }
        }
        sorted = sortedUnique(all)
        for (i, string) in sorted.enumerated() { positions[ExactString(string)] = UInt64(i) }
    }

    func index(_ string: String) -> UInt64 { positions[ExactString(string)] ?? 0 }

    func bytes() -> [UInt8] {
        var writer = ByteWriter()
        writer.varint(UInt64(sorted.count))
        for string in sorted { writer.tableString(string) }
        return writer.bytes
    }
}

/// Strings that start with an uppercase UUID (Apple's `UUID().uuidString` and
/// `ProcessInfo.globallyUniqueString`, the usual global and store identifiers) are stored in the
/// string table as 16 bytes plus the rest of the text (Spec/v2-binary.md section 6).
enum UUIDPrefix {
    static let textLength = 36
    private static let hex = Array("0123456789ABCDEF".utf8)

    /// The 16 bytes of the uppercase UUID that `text` starts with, or nil.
    static func bytes(_ text: some Collection<UInt8>) -> [UInt8]? {
        guard text.count >= textLength else { return nil }
        var result: [UInt8] = []
        result.reserveCapacity(16)
        var high: UInt8?
        for (position, byte) in text.prefix(textLength).enumerated() {
            if position == 8 || position == 13 || position == 18 || position == 23 {
                guard byte == UInt8(ascii: "-") else { return nil }
                continue
            }
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: return nil
            }
            if let first = high {
                result.append(first << 4 | digit)
                high = nil
            } else {
                high = digit
            }
        }
        return result
    }

    /// The 36 characters of the uppercase text of a 16-byte UUID.
    static func text(_ bytes: some Collection<UInt8>) -> [UInt8] {
        var result: [UInt8] = []
        result.reserveCapacity(textLength)
        for (index, byte) in bytes.enumerated() {
            if index == 4 || index == 6 || index == 8 || index == 10 { result.append(UInt8(ascii: "-")) }
            result.append(hex[Int(byte >> 4)])
            result.append(hex[Int(byte & 0x0F)])
        }
        return result
    }
}

struct ByteWriter {
    var bytes: [UInt8] = []

    mutating func varint(_ value: UInt64) {
        var rest = value
        while rest >= 0x80 {
            bytes.append(UInt8(rest & 0x7F) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(rest))
    }

    mutating func zigzag(_ value: Int64) { varint(UInt64(bitPattern: (value << 1) ^ (value >> 63))) }

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

    /// A string-table entry: `2n` and n bytes of text, or `2n+1`, a UUID's 16 bytes and n bytes.
    mutating func tableString(_ string: String) {
        let utf8 = Array(string.utf8)
        if let uuid = UUIDPrefix.bytes(utf8) {
            varint(UInt64(utf8.count - UUIDPrefix.textLength) * 2 + 1)
            bytes.append(contentsOf: uuid)
            bytes.append(contentsOf: utf8[UUIDPrefix.textLength...])
        } else {
            varint(UInt64(utf8.count) * 2)
            bytes.append(contentsOf: utf8)
        }
    }

    mutating func indexes(_ strings: [String], _ table: StringTable) {
        varint(UInt64(strings.count))
        for string in strings { varint(table.index(string)) }
    }

    mutating func attribute(_ value: AttributeValue, _ table: StringTable) throws(FormatError) {
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
        case .string(let text):
            varint(6)
            varint(table.index(text))
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
        case .url(let text):
            varint(10)
            varint(table.index(text))
        }
    }
}
