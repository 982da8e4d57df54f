import Deflate
import Foundation
import ParallelWork
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
        let strings = StringTable(event)
        // Grouped once: filtering all changes for each entity made N entities cost N^2
        // (Spec/v2-binary.md 8; measured: Benchmarks/README.md).
        var changesOf: [ExactString: [Int]] = [:]
        for index in event.objectChanges.indices { changesOf[ExactString(event.objectChanges[index].entity), default: []].append(index) }
        var sections: [(V2Binary.Section, [UInt8])] = [(.strings, strings.bytes()), (.header, Self.header(event, strings.index))]
        if !event.objectChanges.isEmpty { sections.append((.changes, try changes(event, changesOf, strings))) }
        let extensions = self.extensions(event, changesOf)
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

    /// `changesOf`: the positions of each entity's changes in `event.objectChanges`. Written in
    /// pieces on every core, joined in order: a large event's changes on one thread were a third
    /// of a rebase's encoding (measured: Benchmarks/README.md).
    private func changes(_ event: Event, _ changesOf: [ExactString: [Int]], _ strings: StringTable) throws(FormatError) -> [UInt8] {
        let groups = event.entities.map { (entity: $0, changes: changesOf[ExactString($0)] ?? []) }
        // The section after its count: each group's entity and change count (item `-1 - g` for
        // group g), then its changes (items their positions in `event.objectChanges`).
        var items: [Int] = []
        items.reserveCapacity(event.objectChanges.count + groups.count)
        for (group, members) in groups.enumerated() {
            items.append(-1 - group)
            items += members.changes
        }
        var writer = ByteWriter()
        writer.varint(UInt64(groups.count))
        let pieces = try Pieces.map(count: items.count, size: 4_096) { [items] (range) throws(FormatError) -> [UInt8] in
            var piece = ByteWriter()
            for item in items[range] {
                if item < 0 {
                    piece.varint(strings.index(groups[-1 - item].entity))
                    piece.varint(UInt64(groups[-1 - item].changes.count))
                } else {
                    try piece.change(event.objectChanges[item], strings)
                }
            }
            return piece.bytes
        }
        for piece in pieces { writer.bytes += piece }
        return writer.bytes
    }

    /// Unknown JSON members, by their pointer in the canonical v2 JSON form; `changesOf` gives
    /// each change's position among its entity's changes.
    private func extensions(_ event: Event, _ changesOf: [ExactString: [Int]]) -> [UInt8] {
        var members: [(pointer: String, value: [UInt8])] = []
        for (key, value) in event.unknownFields { members.append(((JSONPointer.root / key).description, JSONWriter().bytes(value))) }
        for list in changesOf.values {
            for (index, change) in list.lazy.map({ event.objectChanges[$0] }).enumerated()
            where !change.unknownFields.isEmpty || change.propertyChanges.contains(where: { !$0.unknownFields.isEmpty }) {
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

/// The interned strings of one event (Spec/v2-binary.md 10.1 rule 3): each once, sorted by
/// UTF-8 bytes. Each piece of the changes collects its distinct strings into a set and sorts
/// them, on every core; the sorted lists are then merged, dropping repeats, so that only
/// distinct strings are sorted rather than every reference (one thread collecting and sorting a
/// large baseline's strings was half of its encoding: Benchmarks/README.md).
struct StringTable: Sendable {
    private var positions: [ExactString: UInt64] = [:]
    private var sorted: [String] = []

    /// Strings sorted by UTF-8 bytes, with their ``ExactString/prefixKey(_:)``s.
    private typealias SortedList = (strings: [String], keys: [UInt64])

    init(_ event: Event) {
        let changes = event.objectChanges
        var lists = Pieces.map(count: changes.count, size: 8_192) { Self.sortedList(Self.strings(of: changes[$0])) }
        var header = Set([event.uniqueIdentifier, event.storeIdentifier].map(ExactString.init))
        for store in event.revisionSet.stores { header.insert(ExactString(store)) }
        if let model = event.modelVersion { header.insert(ExactString(model)) }
        lists.append(Self.sortedList(header))
        sorted = Self.merged(lists)
        positions.reserveCapacity(sorted.count)
        for (position, string) in sorted.enumerated() { positions[ExactString(string)] = UInt64(position) }
    }

    /// Sorted by the first bytes of the strings as a number, and by all bytes only where those
    /// are equal: comparing the strings alone was most of encoding.
    private static func sortedList(_ distinct: Set<ExactString>) -> SortedList {
        let strings = distinct.map(\.value)
        let keys = strings.map(ExactString.prefixKey)
        let order = strings.indices.sorted { keys[$0] != keys[$1] ? keys[$0] < keys[$1] : utf8Precedes(strings[$0], strings[$1]) }
        return (order.map { strings[$0] }, order.map { keys[$0] })
    }

    /// A sorted list as positions in the lists' strings end to end, with their prefix keys.
    private typealias Run = (keys: [UInt64], positions: [Int])

    /// The strings of every list, sorted, each once. Merged two lists at a time, in rounds that
    /// halve the lists, each round's pairs on every core (the last pair in parts), so that many
    /// lists cost N log L and not N L; the runs hold positions and keys only, so a merge copies
    /// no string (retaining each string for every copy was most of a merge).
    private static func merged(_ lists: [SortedList]) -> [String] {
        var strings: [String] = []
        var runs: [Run] = []
        for list in lists {
            runs.append((list.keys, Array(strings.count..<strings.count + list.strings.count)))
            strings += list.strings
        }
        while runs.count > 2 {
            var next = Pieces.map(count: runs.count / 2, size: 1) { [runs, strings] pairs in
                let a = runs[2 * pairs.lowerBound], b = runs[2 * pairs.lowerBound + 1]
                return Self.merge(a, a.keys.indices, b, b.keys.indices, strings)
            }
            if runs.count % 2 == 1 { next.append(runs[runs.count - 1]) }
            runs = next
        }
        if runs.count == 2 { runs = [mergeInParts(runs[0], runs[1], strings)] }
        return (runs.first?.positions ?? []).map { strings[$0] }
    }

    /// The last two runs merged in parts on every core when they are long: merged by one, they
    /// left the other cores idle for a sixth of a large baseline's encoding (Benchmarks/README.md).
    /// Each part of `a` is merged with the strings of `b` that come before the next part's first
    /// string, so a string in both runs falls in one part. (Most events' two runs, their
    /// changes' strings and their header's, are short: merged at once.)
    private static func mergeInParts(_ a: Run, _ b: Run, _ strings: [String]) -> Run {
        let parts = min(8, (a.keys.count + b.keys.count) / 4_096)
        guard parts > 1 else { return merge(a, a.keys.indices, b, b.keys.indices, strings) }
        var bounds: [(a: Int, b: Int)] = [(0, 0)]
        strings.withUnsafeBufferPointer { strings in
            for part in 1..<parts {
                let i = a.keys.count * part / parts
                guard i < a.keys.count else { break }
                // The first string of `b` not before a's `i`th.
                let first = partitionPoint(b.keys.count) { order(b.keys[$0], b.positions[$0], a.keys[i], a.positions[i], strings) >= 0 }
                bounds.append((i, max(first, bounds[bounds.count - 1].b)))
            }
        }
        bounds.append((a.keys.count, b.keys.count))
        let merged = Pieces.map(count: bounds.count - 1, size: 1) { [bounds] part in
            Self.merge(a, bounds[part.lowerBound].a..<bounds[part.lowerBound + 1].a, b, bounds[part.lowerBound].b..<bounds[part.lowerBound + 1].b, strings)
        }
        var run: Run = ([], [])
        run.keys.reserveCapacity(merged.reduce(0) { $0 + $1.keys.count })
        run.positions.reserveCapacity(run.keys.capacity)
        for part in merged {
            run.keys += part.keys
            run.positions += part.positions
        }
        return run
    }

    /// How the strings at positions `x` and `y`, with prefix keys `keyX` and `keyY`, compare
    /// (negative: x first; zero: the same bytes): by their keys, and by all bytes only where
    /// those are equal, compared once (a string found in both runs was compared twice).
    private static func order(_ keyX: UInt64, _ x: Int, _ keyY: UInt64, _ y: Int, _ strings: UnsafeBufferPointer<String>) -> Int32 {
        guard keyX == keyY else { return keyX < keyY ? -1 : 1 }
        return ExactString.withUTF8(of: strings[x]) { left in ExactString.withUTF8(of: strings[y]) { right in byteOrder(left, right) } }
    }

    /// How two strings' UTF-8 bytes compare (negative: `left` first; zero: the same bytes).
    static func byteOrder(_ left: UnsafeBufferPointer<UInt8>, _ right: UnsafeBufferPointer<UInt8>) -> Int32 {
        let shared = min(left.count, right.count)
        if shared > 0, let l = left.baseAddress, let r = right.baseAddress {
            let order = memcmp(l, r, shared)
            if order != 0 { return order }
        }
        return left.count == right.count ? 0 : left.count < right.count ? -1 : 1
    }

    /// The ranges `partA` of run `a` and `partB` of run `b`, each sorted and without repeats,
    /// as one run: a string in both is taken once.
    private static func merge(_ a: Run, _ partA: Range<Int>, _ b: Run, _ partB: Range<Int>, _ strings: [String]) -> Run {
        var merged: Run = ([], [])
        merged.keys.reserveCapacity(partA.count + partB.count)
        merged.positions.reserveCapacity(partA.count + partB.count)
        var i = partA.lowerBound, j = partB.lowerBound
        strings.withUnsafeBufferPointer { strings in
            while i < partA.upperBound && j < partB.upperBound {
                let x = a.positions[i], y = b.positions[j]
                let order = order(a.keys[i], x, b.keys[j], y, strings)
                if order < 0 {
                    merged.keys.append(a.keys[i])
                    merged.positions.append(x)
                    i += 1
                } else {
                    if order == 0 { i += 1 }
                    merged.keys.append(b.keys[j])
                    merged.positions.append(y)
                    j += 1
                }
            }
        }
        merged.keys += a.keys[i..<partA.upperBound]
        merged.positions += a.positions[i..<partA.upperBound]
        merged.keys += b.keys[j..<partB.upperBound]
        merged.positions += b.positions[j..<partB.upperBound]
        return merged
    }

    /// The strings `changes` name.
    private static func strings(of changes: ArraySlice<ObjectChange>) -> Set<ExactString> {
        // At least the global identifiers, nearly one per change: fewer rehashes as it grows.
        var distinct = Set<ExactString>(minimumCapacity: changes.count)
        func add(_ string: String) { distinct.insert(ExactString(string)) }
        func add(_ strings: [String]) { for string in strings { add(string) } }
        // By index, reading fields in place: copying each change and property retained all its parts.
        for change in changes.indices {
            add(changes[change].entity)
            add(changes[change].globalIdentifier)
            add(changes[change].dataFiles)
            let properties = changes[change].propertyChanges
            for property in properties.indices {
                add(properties[property].name)
                switch properties[property].value {
                case .attribute(.string(let text)), .attribute(.url(let text)): add(text)
                case .attributeInDataFile(let name): add(name)
                case .toOne(let related?): add(related)
                case .toMany(let added, let removed):
                    add(added)
                    add(removed)
                case .orderedToMany(let added, let removed, let moved):
                    add(added)
                    add(removed)
                    for id in moved.values { add(id) }
                default: break
                }
            }
        }
        return distinct
    }

    func index(_ string: String) -> UInt64 { positions[ExactString(string)] ?? 0 }

    func bytes() -> [UInt8] {
        var writer = ByteWriter()
        writer.varint(UInt64(sorted.count))
        for string in sorted { writer.tableString(string) }
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

    /// A string-table entry: `2n` and n bytes of text, or `2n+1`, a UUID's 16 bytes and n bytes.
    mutating func tableString(_ string: String) { ExactString.withUTF8(of: string) { tableString($0) } }

    /// The table entry of the string with these UTF-8 bytes.
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

    /// One object change of the changes section (Spec/v2-binary.md 8).
    mutating func change(_ change: ObjectChange, _ strings: StringTable) throws(FormatError) {
        varint(UInt64(change.type.rawValue))
        varint(strings.index(change.globalIdentifier))
        indexes(sortedUnique(change.dataFiles), strings)
        let properties = ObjectChange.sortedByName(change.propertyChanges)
        varint(UInt64(properties.count))
        for property in properties {
            varint(strings.index(property.name))
            varint(UInt64(property.kind.rawValue))
            switch property.value {
            case .attribute(let value): try attribute(value, strings.index)
            case .attributeInDataFile(let name):
                varint(11)
                varint(strings.index(name))
            case .toOne(let related): varint(related.map { strings.index($0) + 1 } ?? 0)
            case .toMany(let added, let removed):
                indexes(sortedUnique(added), strings)
                indexes(sortedUnique(removed), strings)
            case .orderedToMany(let added, let removed, let moved):
                indexes(sortedUnique(added), strings)
                indexes(sortedUnique(removed), strings)
                varint(UInt64(moved.count))
                for position in moved.keys.sorted() {
                    guard position >= 0 && position <= 999_999_999, let id = moved[position] else {
                        throw FormatError(.v2UnencodableValue, "ordered position \(position) is outside 0...999999999")
                    }
                    varint(UInt64(position))
                    varint(strings.index(id))
                }
            }
        }
    }

    mutating func indexes(_ strings: [String], _ table: StringTable) {
        varint(UInt64(strings.count))
        for string in strings { varint(table.index(string)) }
    }

    /// An attribute value (Spec/v2-binary.md 8.2), a string or URL by its table index, `index`.
    mutating func attribute(_ value: AttributeValue, _ index: (String) -> UInt64) throws(FormatError) {
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
            varint(index(text))
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
            varint(index(text))
        }
    }
}
