import Foundation
import JSONDocument
import EnsembleModel
import ParallelWork

extension V2BinaryEncoder {
    /// The bytes of ``encode(_:)`` (sections stored) for the event `header` with the object
    /// changes `changes` (the header's own are not read). Properties and relationship lists are
    /// written as a numbered event holds them (sorted, each once); a change's data files may come
    /// in any order. The changes must be grouped by entity, the entities in UTF-8 byte order
    /// (Spec/v2-binary.md 8.1), and the header may have no unknown members.
    package func encode(header event: Event, numbered changes: NumberedEvent) throws(FormatError) -> [UInt8] {
        guard !deflateSections else { throw FormatError(.v2UnencodableValue, "numbered changes are written with stored sections only") }
        guard event.unknownFields.isEmpty else { throw FormatError(.v2UnencodableValue, "an event with unknown members is not written from numbers") }
        return Self.file(try Self.sections(header: event, numbered: changes), deflating: false, withinReaderLimits: true)
    }

    /// The strings, header and changes sections, written from numbers: the string table is
    /// sorted once from the strings the changes name, their string and URL values and the
    /// header's strings, and every reference is then an array read. Building a `String` per
    /// reference, hashing it into a table and looking it up again was most of a rebase's binary
    /// baseline (Spec/merge.md 13.7; measured: Benchmarks/README.md).
    static func sections(header event: Event, numbered changes: NumberedEvent) throws(FormatError) -> [(V2Binary.Section, [UInt8])] {
        let table = NumberedTable(changes, header: event)
        var sections: [(V2Binary.Section, [UInt8])] = [(.strings, table.bytes), (.header, Self.header(event, table.index))]
        if !changes.changes.isEmpty { sections.append((.changes, try Self.changes(changes, table))) }
        return sections
    }

    /// The changes section (Spec/v2-binary.md 8.1): each entity's changes as one group, written in
    /// pieces on every core and joined in order.
    private static func changes(_ event: NumberedEvent, _ table: NumberedTable) throws(FormatError) -> [UInt8] {
        // Where each group starts, and last where the changes end. Entities are compared by their
        // table indexes, in the strings' order (two string numbers may hold one string).
        var starts: [Int] = []
        for (position, change) in event.changes.enumerated() {
            let entity = table.ofString[Int(change.entity)]
            if position > 0 {
                let previous = table.ofString[Int(event.changes[position - 1].entity)]
                guard entity >= previous else {
                    throw FormatError(.v2UnencodableValue, "the changes are not grouped by entity in UTF-8 byte order (change \(position))")
                }
                if entity == previous { continue }
            }
            starts.append(position)
        }
        starts.append(event.changes.count)
        var writer = ByteWriter()
        writer.varint(UInt64(starts.count - 1))
        let pieces = try Pieces.map(count: event.changes.count, size: 4_096) { [starts] (range) throws(FormatError) -> [UInt8] in
            var piece = ByteWriter()
            // The group of the piece's first change: the last that starts at it or before.
            var group = partitionPoint(starts.count) { starts[$0] > range.lowerBound } - 1
            for position in range {
                if position == starts[group + 1] { group += 1 }
                if position == starts[group] {
                    piece.varint(UInt64(table.ofString[Int(event.changes[position].entity)]))
                    piece.varint(UInt64(starts[group + 1] - starts[group]))
                }
                try piece.change(event, at: position, table)
            }
            return piece.bytes
        }
        for piece in pieces { writer.bytes += piece }
        return writer.bytes
    }
}

/// The string table of a numbered event and its header (Spec/v2-binary.md 6, 10.1 rule 3): each
/// string once, sorted by UTF-8 bytes, and the index of every string number the changes name,
/// of every string or URL value and of every header string.
struct NumberedTable: Sendable {
    /// The strings section.
    private(set) var bytes: [UInt8] = []
    /// By string number, its index (0 for a string the changes do not name).
    private(set) var ofString: [UInt32]
    /// By position among the event's attribute values, the index of a string or URL value.
    private(set) var ofAttribute: [UInt32]
    private var ofHeader: [ExactString: UInt64] = [:]

    /// The index of a header string.
    func index(_ string: String) -> UInt64 { ofHeader[ExactString(string)] ?? 0 }

    init(_ event: NumberedEvent, header: Event) {
        let strings = event.stringCount, attributes = event.attributes.count
        var headerStrings = [header.uniqueIdentifier, header.storeIdentifier] + header.revisionSet.stores
        if let model = header.modelVersion { headerStrings.append(model) }
        // Each string's bytes copied once into one buffer, where the sort compares them in place
        // (read from the event and its values at each comparison, they were most of the sort:
        // many values share their first eight bytes). Sources are string numbers first, then
        // positions among the attribute values, then the header's strings.
        var text: [UInt8] = []
        var entries: [Entry] = []
        entries.reserveCapacity(strings + attributes + headerStrings.count)
        func add(_ bytes: UnsafeBufferPointer<UInt8>, source: Int) {
            entries.append(Entry(key: ExactString.prefixKey(bytes), start: text.count, count: bytes.count, source: source))
            text.append(contentsOf: bytes)
        }
        for (number, isNamed) in Self.named(event).enumerated() where isNamed {
            event.withBytes(of: Int32(truncatingIfNeeded: number)) { add($0, source: number) }
        }
        for (position, value) in event.attributes.enumerated() {
            switch value {
            case .string(let string), .url(let string): ExactString.withUTF8(of: string) { add($0, source: strings + position) }
            default: break
            }
        }
        for (position, string) in headerStrings.enumerated() { ExactString.withUTF8(of: string) { add($0, source: strings + attributes + position) } }
        ofString = [UInt32](repeating: 0, count: strings)
        ofAttribute = [UInt32](repeating: 0, count: attributes)
        var table = ByteWriter()
        var count = 0
        text.withUnsafeBufferPointer { text in
            entries.sort { $0.key != $1.key ? $0.key < $1.key : Self.order($0, $1, text) < 0 }
            for (position, entry) in entries.enumerated() {
                if position == 0 || entries[position - 1].key != entry.key || Self.order(entries[position - 1], entry, text) != 0 {
                    table.tableString(UnsafeBufferPointer(rebasing: text[entry.start..<entry.start + entry.count]))
                    count += 1
                }
                let index = UInt32(truncatingIfNeeded: count - 1)
                if entry.source < strings {
                    ofString[entry.source] = index
                } else if entry.source < strings + attributes {
                    ofAttribute[entry.source - strings] = index
                } else {
                    ofHeader[ExactString(headerStrings[entry.source - strings - attributes])] = UInt64(index)
                }
            }
        }
        var section = ByteWriter()
        section.varint(UInt64(count))
        section.bytes += table.bytes
        bytes = section.bytes
    }

    /// A string of the table to be: its ``ExactString/prefixKey(_:)``, its bytes in the copied
    /// text, and where it comes from.
    private struct Entry {
        var key: UInt64
        var start: Int
        var count: Int
        var source: Int
    }

    /// How two entries' strings compare by their bytes (negative: `a` first; zero: the same).
    private static func order(_ a: Entry, _ b: Entry, _ text: UnsafeBufferPointer<UInt8>) -> Int32 {
        utf8Order(UnsafeBufferPointer(rebasing: text[a.start..<a.start + a.count]), UnsafeBufferPointer(rebasing: text[b.start..<b.start + b.count]))
    }

    /// Which string numbers the changes name (a decoded event's table may hold others).
    private static func named(_ event: NumberedEvent) -> [Bool] {
        var named = [Bool](repeating: false, count: event.stringCount)
        for change in event.changes {
            named[Int(change.entity)] = true
            named[Int(change.identifier)] = true
        }
        for file in event.dataFiles { named[Int(file)] = true }
        for property in event.properties {
            named[Int(property.name)] = true
            if property.kind == .dataFile || (property.kind == .toOne && property.value >= 0) { named[Int(property.value)] = true }
        }
        for identifier in event.identifiers { named[Int(identifier)] = true }
        for move in event.moves { named[Int(move.identifier)] = true }
        return named
    }
}

extension ByteWriter {
    /// Object change `position` of a numbered event (Spec/v2-binary.md 8.1).
    mutating func change(_ event: NumberedEvent, at position: Int, _ table: NumberedTable) throws(FormatError) {
        let change = event.changes[position]
        varint(UInt64(change.type.rawValue))
        varint(UInt64(table.ofString[Int(change.identifier)]))
        // Sorted and each once by their indexes: the table's order is the strings' order, and one
        // string has one index.
        var files = event.dataFiles[Int(change.firstDataFile)..<Int(change.endDataFile)].map { table.ofString[Int($0)] }
        if !files.indices.dropFirst().allSatisfy({ files[$0 - 1] < files[$0] }) { files = Array(Set(files)).sorted() }
        varint(UInt64(files.count))
        for file in files { varint(UInt64(file)) }
        let properties = Int(change.firstProperty)..<Int(change.endProperty)
        varint(UInt64(properties.count))
        for position in properties {
            let property = event.properties[position]
            varint(UInt64(table.ofString[Int(property.name)]))
            switch property.kind {
            case .attribute:
                varint(UInt64(PropertyKind.attribute.rawValue))
                let value = Int(property.value)
                attribute(event.attributes[value], tableIndex: UInt64(table.ofAttribute[value]))
            case .dataFile:
                varint(UInt64(PropertyKind.attribute.rawValue))
                varint(11)
                varint(UInt64(table.ofString[Int(property.value)]))
            case .toOne:
                varint(UInt64(PropertyKind.toOne.rawValue))
                varint(property.value < 0 ? 0 : UInt64(table.ofString[Int(property.value)]) + 1)
            case .toMany, .orderedToMany:
                varint(UInt64((property.kind == .toMany ? PropertyKind.toMany : PropertyKind.orderedToMany).rawValue))
                let added = Int(property.first)..<Int(property.first + property.added)
                indexes(event.identifiers[added], table)
                indexes(event.identifiers[added.upperBound..<added.upperBound + Int(property.removed)], table)
                guard property.kind == .orderedToMany else { break }
                // By ascending position, as a numbered event holds them.
                let moves = event.moves[Int(property.firstMove)..<Int(property.firstMove + property.moved)]
                varint(UInt64(moves.count))
                for move in moves {
                    guard move.position >= 0 && move.position <= 999_999_999 else {
                        // Int32's ends stand for the positions beyond them (NumberedEvent.init).
                        let beyond = move.position == .max ? " or more" : move.position == .min ? " or less" : ""
                        throw FormatError(.v2UnencodableValue, "ordered position \(move.position)\(beyond) is outside 0...999999999")
                    }
                    varint(UInt64(move.position))
                    varint(UInt64(table.ofString[Int(move.identifier)]))
                }
            }
        }
    }

    /// A list of strings by their table indexes.
    private mutating func indexes(_ numbers: ArraySlice<Int32>, _ table: NumberedTable) {
        varint(UInt64(numbers.count))
        for number in numbers { varint(UInt64(table.ofString[Int(number)])) }
    }
}
