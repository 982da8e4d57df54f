import Deflate
import Foundation
import JSONDocument
import EnsembleModel

/// Limits of the binary reader (Spec/v2-binary.md, "Limits").
package struct BinaryReadingLimits: Sendable {
    package var maximumFileBytes = 256 * 1024 * 1024
    package var maximumSectionBytes = 256 * 1024 * 1024
    package var maximumInflateRatio = Zlib.maximumRatio
    package var maximumStrings = 16_777_216
    package var maximumStringBytes = 16 * 1024 * 1024
    /// Object changes per byte of the file (Spec/v2-binary.md 11): a few kilobytes of deflated
    /// changes must not decode into millions of changes and gigabytes of memory.
    package var maximumChangesPerFileByte = 4
    /// What the file may decode to, from its size as stored (Spec/v2-binary.md 11, Spec/README.md
    /// 6.2); nil: no budget. Counted in values of the event's JSON form: a string of the table,
    /// a revision set entry, a data file name and an identifier of a relationship change 1
    /// each, an object change and a property change ``valuesPerChange`` each.
    package var valueBudget: DecodedValueBudget?
    /// What an object change or a property change counts in ``valueBudget``: the object, its
    /// identifier or name, its type and its properties or value in the JSON form.
    package static let valuesPerChange = 4

    package init() {}
}

/// A binary event with what it holds beyond the known members: a tool that writes it again must
/// keep these or refuse (Spec/v2-binary.md 5.5 and 9).
package struct DecodedBinaryEvent: Sendable {
    package var event: Event
    /// The canonical JSON pointer of every unknown member kept in section 4, in file order.
    package var unknownMembers: [JSONPointer] = []
    /// The byte offset of every section of unknown type: checked and skipped, so not in `event`.
    package var unknownSectionOffsets: [Int] = []
    /// The object changes in numbered form, when they were asked for (unknown members, which
    /// that form does not keep, make no difference to it).
    package var numbered: NumberedEvent?
}

/// Reads the v2 binary encoding; every failure is a `binary.*` (or `v2.*`) error with the byte
/// offset where it was found. Sections it does not know are checked (frame and CRC) and skipped
/// (Spec/v2-binary.md 5.5).
public struct V2BinaryDecoder: Sendable {
    package var limits: BinaryReadingLimits

    /// A decoder with the default limits of Spec/v2-binary.md 11.
    public init() { limits = BinaryReadingLimits() }

    package init(limits: BinaryReadingLimits) { self.limits = limits }

    public func decode(_ bytes: [UInt8]) throws(FormatError) -> Event {
        try decodeReportingUnknowns(bytes).event
    }

    /// Decodes, and says where the file holds members and sections this reader does not know.
    package func decodeReportingUnknowns(_ bytes: [UInt8]) throws(FormatError) -> DecodedBinaryEvent {
        let read = try read(bytes, as: EventChanges.self)
        return try finish(read, changes: read.changes?.changes ?? [])
    }

    /// ``decodeReportingUnknowns(_:)`` with ``DecodedBinaryEvent/numbered`` too, built in the same
    /// pass: a merge's reader checks and summarizes the event, and hands its numbered form on.
    package func decodeReportingUnknownsNumbered(_ bytes: [UInt8]) throws(FormatError) -> DecodedBinaryEvent {
        let read = try read(bytes, as: BothChanges.self)
        var decoded = try finish(read, changes: read.changes?.whole.changes ?? [])
        decoded.numbered = read.changes?.numbered.event ?? NumberedEvent()
        return decoded
    }

    /// ``decodeReportingUnknowns(_:)`` with the object changes in numbered form only
    /// (``DecodedBinaryEvent/numbered``; the event holds none): a merge's reader checks and
    /// summarizes the event from that form, and hands it on, without making the ``ObjectChange``s.
    /// A file with an extensions section (whose pointers are checked against the changes) is read
    /// into both forms, and the event's changes are then dropped.
    package func decodeReportingUnknownsNumberedOnly(_ bytes: [UInt8]) throws(FormatError) -> DecodedBinaryEvent {
        var read = try read(bytes, as: NumberedChanges.self)
        guard read.extensions == nil else {
            var decoded = try decodeReportingUnknownsNumbered(bytes)
            decoded.event.objectChanges = []
            return decoded
        }
        // Moved out, not copied (a retain and a release of each of the event's lists).
        let numbered = read.changes.take()?.event ?? NumberedEvent()
        var decoded = try finish(read, changes: [])
        decoded.numbered = consume numbered
        return decoded
    }

    /// The decoded event of `read` with `changes`, its extensions put in place.
    private func finish<Changes>(_ read: ReadSections<Changes>, changes: [ObjectChange]) throws(FormatError) -> DecodedBinaryEvent {
        var event = read.header
        event.objectChanges = changes
        var decoded = DecodedBinaryEvent(event: event, unknownSectionOffsets: read.unknownSectionOffsets)
        if let section = read.extensions {
            var valuesLeft = read.valuesLeft
            try section.read(limits, valuesLeft: &valuesLeft) { (reader) throws(FormatError) in try applyExtensions(&reader, to: &decoded) }
        }
        return decoded
    }

    /// The file's object changes in numbered form, its string table numbering them, for a merge's
    /// replay: ``decodeReportingUnknownsNumberedOnly(_:)``'s, with every check of ``decode(_:)``.
    package func decodeNumbered(_ bytes: [UInt8]) throws(FormatError) -> NumberedEvent {
        try decodeReportingUnknownsNumberedOnly(bytes).numbered ?? NumberedEvent()
    }

    /// What ``read(_:as:)`` gives: the header, the changes as `Changes` built them, and the
    /// extensions section, left to the caller with what is left of the value budget.
    private struct ReadSections<Changes> {
        var header: Event
        var changes: Changes?
        var extensions: Payload?
        var unknownSectionOffsets: [Int]
        var valuesLeft: Int
    }

    /// Frames, strings, header and changes (built by `Changes`).
    private func read<Changes: DecodedChanges>(_ bytes: [UInt8], as: Changes.Type) throws(FormatError) -> ReadSections<Changes> {
        guard bytes.count <= limits.maximumFileBytes else {
            throw FormatError(.binaryTooLarge, "the file is larger than \(limits.maximumFileBytes) bytes", location: .init(offset: limits.maximumFileBytes))
        }
        let head = bytes.prefix(V2Binary.magic.count)
        guard !head.isEmpty, V2Binary.magic.starts(with: head) else {
            throw FormatError(.binaryBadMagic, "the file does not start with the binary event magic", location: .init(offset: 0))
        }
        guard bytes.count >= 10 else {
            throw FormatError(.binaryTruncated, "the file ends inside its header", location: .init(offset: bytes.count))
        }
        guard bytes[8] == V2Binary.majorVersion else {
            throw FormatError(
                .binaryUnsupportedVersion, "major version \(bytes[8]) is not \(V2Binary.majorVersion); this reader cannot read it", location: .init(offset: 8))
        }
        var unknownSectionOffsets: [Int] = []
        let payloads = try bytes.withUnsafeBufferPointer { (file) throws(FormatError) in
            try sections(of: bytes, file, unknownSectionOffsets: &unknownSectionOffsets)
        }
        guard let stringSection = payloads[.strings] else {
            throw FormatError(.binaryMissingSection, "the strings section (1) is missing", location: .init(offset: bytes.count))
        }
        guard let headerSection = payloads[.header] else {
            throw FormatError(.binaryMissingSection, "the header section (2) is missing", location: .init(offset: bytes.count))
        }
        var valuesLeft = limits.valueBudget?.maximumValues ?? .max
        let strings = try stringSection.read(limits, valuesLeft: &valuesLeft) { (reader) throws(FormatError) -> Changes.Strings in try readStrings(&reader) }
        let header = try readHeader(headerSection, strings, valuesLeft: &valuesLeft)
        var changes: Changes?
        if let section = payloads[.changes] {
            let budget = max(1, bytes.count).multipliedReportingOverflow(by: max(0, limits.maximumChangesPerFileByte))
            // Entities come in ascending order (Spec/v2-binary.md 8.1): already the canonical order.
            changes = try section.read(limits, valuesLeft: &valuesLeft) { (reader) throws(FormatError) in
                var built = Changes(strings: strings)
                try readChanges(&reader, strings, budget: budget.overflow ? .max : budget.partialValue, into: &built)
                return built
            }
        }
        return ReadSections(
            header: header, changes: changes, extensions: payloads[.extensions], unknownSectionOffsets: unknownSectionOffsets, valuesLeft: valuesLeft)
    }

    /// Stage B1 (Spec/v2-binary.md 5): the known sections' payloads, each CRC checked and
    /// deflated ones inflated; `file` is `bytes` in memory.
    private func sections(
        of bytes: [UInt8], _ file: UnsafeBufferPointer<UInt8>, unknownSectionOffsets: inout [Int]
    ) throws(FormatError) -> [V2Binary.Section: Payload] {
        var reader = ByteReader(file, offset: 0, limits: limits)
        reader.position = 10
        var payloads: [V2Binary.Section: Payload] = [:]
        var lastKnown: UInt64 = 0
        var seenUnknown = false
        while reader.remaining > 0 {
            let sectionOffset = reader.position
            let type = try reader.varint()
            let flags = try reader.varint()
            let length = try reader.varint()
            let crc = try reader.uint32()
            guard length <= UInt64(reader.remaining) else {
                throw FormatError(.binaryTruncated, "section \(type) claims \(length) bytes; the file ends first", location: .init(offset: sectionOffset))
            }
            let payloadOffset = reader.position
            let stored = bytes[payloadOffset..<(payloadOffset + Int(length))]
            reader.position += Int(length)
            guard Zlib.crc32(stored) == crc else {
                throw FormatError(.binaryChecksum, "section \(type) fails its CRC-32: the file is damaged", location: .init(offset: sectionOffset))
            }
            guard let known = V2Binary.Section(rawValue: type) else {
                guard type != 0 else {
                    throw FormatError(.binaryInvalidValue, "section type 0 does not exist", location: .init(offset: sectionOffset))
                }
                seenUnknown = true
                unknownSectionOffsets.append(sectionOffset)
                continue
            }
            guard !seenUnknown else {
                throw FormatError(.binarySectionOrder, "section \(type) comes after a section of unknown type", location: .init(offset: sectionOffset))
            }
            guard flags & ~1 == 0 else {
                throw FormatError(.binaryUnknownFlag, "section \(type) has flags \(flags) this reader does not know", location: .init(offset: sectionOffset))
            }
            guard payloads[known] == nil else {
                throw FormatError(.binaryDuplicateSection, "section \(type) appears twice", location: .init(offset: sectionOffset))
            }
            guard type > lastKnown else {
                throw FormatError(.binarySectionOrder, "section \(type) comes after section \(lastKnown)", location: .init(offset: sectionOffset))
            }
            lastKnown = type
            var payload = stored
            if flags & 1 == 1 {
                let limit = min(limits.maximumSectionBytes, max(1, stored.count) * limits.maximumInflateRatio)
                do {
                    payload = try Zlib.inflate(stored, limit: limit)[...]
                } catch .tooLarge {
                    let code: FormatError.Code = limit == limits.maximumSectionBytes ? .binaryTooLarge : .binaryInflateRatio
                    throw FormatError(code, "section \(type) inflates beyond \(limit) bytes", location: .init(offset: payloadOffset))
                } catch {
                    throw FormatError(.binaryInflateFailed, "section \(type) is not valid DEFLATE data", location: .init(offset: payloadOffset))
                }
            }
            payloads[known] = Payload(bytes: payload, offset: payloadOffset, isInflated: flags & 1 == 1)
        }
        return payloads
    }

    /// Section 1, as `Table` keeps it.
    private func readStrings<Table: BinaryStringTable>(_ reader: inout ByteReader) throws(FormatError) -> Table {
        let countOffset = reader.offset
        let countPosition = reader.position
        let count = try reader.count()
        guard count <= limits.maximumStrings else {
            // At the count's first byte (v2-binary.md 11).
            throw FormatError(.binaryTooLarge, "\(count) strings exceed the limit of \(limits.maximumStrings)", location: .init(offset: countOffset))
        }
        try reader.spend(count, at: countPosition)
        var strings = Table()
        strings.reserve(count, stored: reader.remaining)
        for index in 0..<count {
            let start = reader.position
            let entry = try reader.tableEntry(limit: limits.maximumStringBytes)
            strings.append(uuid: entry.uuid, entry.text)
            // Section 6, rule 4: in UTF-8 byte order, each string once.
            if index > 0, !strings.precedes(index - 1, index) {
                throw FormatError(.binaryInvalidValue, "the string table is not sorted and unique", location: .init(offset: reader.offset(at: start)))
            }
        }
        return strings
    }

    /// Section 2, as an event without object changes.
    private func readHeader<Table: BinaryStringTable>(_ section: Payload, _ strings: Table, valuesLeft: inout Int) throws(FormatError) -> Event {
        let event = try section.read(limits, valuesLeft: &valuesLeft) { (header) throws(FormatError) -> Event in
            let uniqueStart = header.position
            let uniqueIdentifier = strings.string(try header.reference(strings))
            guard !uniqueIdentifier.isEmpty else {
                throw FormatError(.binaryInvalidValue, "the uniqueIdentifier is empty", location: .init(offset: header.offset(at: uniqueStart)))
            }
            let typeStart = header.position
            let rawType = try header.varint()
            guard let type = EventType(rawValue: Int64(clamping: rawType)) else {
                throw FormatError(
                    .v2UnknownEventType, "event type \(rawType) is not one of 0, 100, 200, 300",
                    location: .init(offset: header.offset(at: typeStart), pointer: JSONPointer(["type"])))
            }
            let globalCount = try pointing(JSONPointer(["globalCount"])) { () throws(FormatError) in try header.counter() }
            let timestampStart = header.position
            let timestamp = try header.double()
            guard timestamp.isFinite else {
                throw FormatError(
                    .v2InvalidTimestamp, "the timestamp is not a finite number",
                    location: .init(offset: header.offset(at: timestampStart), pointer: JSONPointer(["timestamp"])))
            }
            let storeStart = header.position
            let store = strings.string(try header.reference(strings))
            guard V2TextPatterns.isStoreIdentifier(store) else {
                throw FormatError(
                    .binaryInvalidValue, "\"\(store)\" is not a store identifier (1 to 255 characters, no '_', '/', '\\' or NUL)",
                    location: .init(offset: header.offset(at: storeStart)))
            }
            let modelVersion = try header.optionalReference(strings).map(strings.string)
            var pairs: [(String, Int64)] = []
            var previous: Int?
            let pairStart = header.position
            let pairCount = try header.count()
            try header.spend(pairCount, at: pairStart)
            // Room for them all: a pair takes two bytes at least, so a count no file could hold
            // asks for no more than the bytes left allow.
            pairs.reserveCapacity(min(pairCount, header.remaining / 2))
            for _ in 0..<pairCount {
                let nameStart = header.position
                let index = try header.reference(strings)
                // References compare like the strings they name (Spec/v2-binary.md 3.5).
                if let previous, index <= previous {
                    throw FormatError(
                        .binaryInvalidValue, "revision set stores are not sorted and unique", location: .init(offset: header.offset(at: nameStart)))
                }
                previous = index
                let name = strings.string(index)
                let revision = try pointing(JSONPointer(["revisionsByStoreIdentifier", name])) { () throws(FormatError) in try header.counter() }
                pairs.append((name, revision))
            }
            // Ascending references are distinct strings in order (Spec/v2-binary.md 3.5, 6): each
            // store once, sorted already, so no sort is needed (sorting allocated a few lists per event).
            return Event(
                uniqueIdentifier: uniqueIdentifier, type: type, storeIdentifier: store, globalCount: globalCount,
                timestamp: timestamp, modelVersion: modelVersion, revisionSet: RevisionSet(uniquePairs: pairs) ?? RevisionSet(pairs: pairs),
                objectChanges: [])
        }
        guard event.revisionSet[event.storeIdentifier] != nil else {
            throw FormatError(
                .v2MissingOwnRevision, "the revision set has no entry for the event's own store",
                location: .init(offset: section.offset, pointer: JSONPointer(["revisionsByStoreIdentifier"])))
        }
        return event
    }

    /// Section 3. Sorted lists are checked by comparing references, which compare like the
    /// strings they name (Spec/v2-binary.md 3.5).
    private func readChanges<Changes: DecodedChanges>(
        _ reader: inout ByteReader, _ strings: Changes.Strings, budget: Int, into changes: inout Changes
    ) throws(FormatError) {
        var remaining = budget
        var previousEntity: Int?
        changes.reserve(sectionBytes: reader.remaining)
        for _ in 0..<(try reader.nonEmptyCount("the changes section holds no entity; it is omitted instead")) {
            let entityStart = reader.position
            let entityIndex = try reader.reference(strings)
            if let previousEntity, entityIndex <= previousEntity {
                throw FormatError(.binaryInvalidValue, "entities are not sorted and unique", location: .init(offset: reader.offset(at: entityStart)))
            }
            guard !strings.isEmpty(entityIndex) else {
                throw FormatError(.binaryInvalidValue, "an entity name is empty", location: .init(offset: reader.offset(at: entityStart)))
            }
            previousEntity = entityIndex
            let countStart = reader.position
            let count = try reader.nonEmptyCount("an entity is listed without changes")
            try reader.spend(count, times: BinaryReadingLimits.valuesPerChange, at: countStart)
            remaining -= count
            guard remaining >= 0 else {
                throw FormatError(
                    .binaryTooLarge,
                    "the file holds more object changes than \(limits.maximumChangesPerFileByte) per byte of the file (\(budget)); Spec/v2-binary.md 11",
                    location: .init(offset: reader.offset(at: countStart)))
            }
            for changeIndex in 0..<count {
                // Built only for an error: most changes never need it.
                func changePointer(_ rest: String...) -> JSONPointer {
                    JSONPointer(["changesByEntity", strings.string(entityIndex), String(changeIndex)] + rest)
                }
                let typeStart = reader.position
                let rawType = try reader.varint()
                guard let type = ChangeType(rawValue: Int64(clamping: rawType)) else {
                    throw FormatError(
                        .v2UnknownChangeType, "change type \(rawType) is not one of 100, 200, 300",
                        location: .init(offset: reader.offset(at: typeStart), pointer: changePointer("type")))
                }
                let idStart = reader.position
                let id = try reader.reference(strings)
                guard !strings.isEmpty(id) else {
                    throw FormatError(.binaryInvalidValue, "a globalIdentifier is empty", location: .init(offset: reader.offset(at: idStart)))
                }
                let dataFiles = try reader.sortedReferences(strings, valid: DataFileName.isValid)
                let propertyCountStart = reader.position
                let propertyCount = try reader.count()
                try reader.spend(propertyCount, times: BinaryReadingLimits.valuesPerChange, at: propertyCountStart)
                // Each property takes at least 3 bytes (name, kind, value): a count beyond that
                // reserves nothing more.
                changes.beginChange(propertyCount: min(propertyCount, reader.remaining / 3))
                var previousName: Int?
                for propertyIndex in 0..<propertyCount {
                    let nameStart = reader.position
                    let nameIndex = try reader.reference(strings)
                    if let previousName, nameIndex <= previousName {
                        throw FormatError(.binaryInvalidValue, "properties are not sorted and unique", location: .init(offset: reader.offset(at: nameStart)))
                    }
                    previousName = nameIndex
                    changes.property(
                        name: nameIndex, try reader.propertyValue(strings) { changePointer("properties", String(propertyIndex), "value") })
                }
                changes.endChange(entity: entityIndex, identifier: id, type: type, dataFiles: dataFiles)
            }
        }
    }

    /// Section 4: puts each kept unknown member back where its pointer says (canonical v2 JSON
    /// positions).
    private func applyExtensions(_ reader: inout ByteReader, to decoded: inout DecodedBinaryEvent) throws(FormatError) {
        let count = try reader.nonEmptyCount("the extensions section holds nothing; it is omitted instead")
        var previousPointer: UnsafeBufferPointer<UInt8>?
        for _ in 0..<count {
            let start = reader.offset
            func invalid(_ why: String) -> FormatError { FormatError(.binaryInvalidValue, why, location: .init(offset: start)) }
            let pointerBytes = try reader.blob(limit: limits.maximumStringBytes)
            guard let text = String(validating: pointerBytes, as: UTF8.self),
                let pointer = JSONPointer(parsing: text), let key = pointer.tokens.last
            else { throw invalid("an extension has no valid JSON pointer") }
            if let previousPointer, !previousPointer.lexicographicallyPrecedes(pointerBytes) {
                throw invalid("extension pointers are not sorted and unique")
            }
            previousPointer = pointerBytes
            let tokens = pointer.tokens
            // Positions are written without leading zeros, as in the canonical JSON form.
            for position in [2, 4] where tokens.count > position && tokens.count >= 4 {
                guard OrderedIndex.parse(tokens[position]) != nil || tokens[position] == "0" else {
                    throw invalid("an extension pointer has a position with a leading zero")
                }
            }
            let valueBytes = try reader.blob(limit: limits.maximumSectionBytes)
            var options = JSONReadingOptions()
            options.maximumDepth = 64 - tokens.count + 1 - 1
            // The value's JSON values count in the file's budget, from what is left of it.
            options.valueBudget = limits.valueBudget.map { budget in
                var left = budget
                left.maximumValues = max(0, reader.valuesLeft)
                return left
            }
            let value: JSONValue
            var valuesRead = 0
            do {
                value = try JSONParser.parse(valueBytes, options: options, valuesRead: &valuesRead)
                reader.valuesLeft -= valuesRead
            } catch {
                if options.valueBudget != nil && valuesRead > reader.valuesLeft {
                    try reader.spend(valuesRead, at: reader.position)
                }
                throw invalid("an extension's value is not JSON within the limits: \(error.message)")
            }
            guard JSONWriter().bytes(value).elementsEqual(valueBytes) else { throw invalid("an extension's value is not in canonical form") }
            decoded.unknownMembers.append(pointer)
            switch tokens.count {
            case 1:
                guard !V2Key.event.contains(key) else { throw invalid("an extension names the known key \(key)") }
                decoded.event.unknownFields[key] = value
            case 4, 6:
                guard tokens[0] == V2Key.changesByEntity, let index = Int(tokens[2]) else { throw invalid("an extension pointer names no object change") }
                let positions = Self.changes(of: tokens[1], in: decoded.event.objectChanges)
                guard (0..<positions.count).contains(index) else { throw invalid("an extension pointer names no object change") }
                let position = positions.lowerBound + index
                if tokens.count == 4 {
                    guard !V2Key.objectChange.contains(key) else { throw invalid("an extension names the known key \(key)") }
                    decoded.event.objectChanges[position].unknownFields[key] = value
                } else {
                    guard tokens[3] == V2Key.properties, let property = Int(tokens[4]),
                        decoded.event.objectChanges[position].propertyChanges.indices.contains(property),
                        !V2Key.allPropertyKeys.contains(key)
                    else { throw invalid("an extension pointer names no property change") }
                    decoded.event.objectChanges[position].propertyChanges[property].unknownFields[key] = value
                }
            default:
                throw invalid("an extension pointer is not at the event, object change or property change level")
            }
        }
    }

    /// The positions of `entity`'s changes: one run found by binary search, since the decoded
    /// changes are grouped by entity in ascending order (Spec/v2-binary.md 8.1). Filtering every
    /// change for each pointer made a file of many extensions cost changes × extensions.
    private static func changes(of entity: String, in changes: [ObjectChange]) -> Range<Int> {
        func first(_ isPast: (String) -> Bool) -> Int {
            var low = 0, high = changes.count
            while low < high {
                let middle = low + (high - low) / 2
                if isPast(changes[middle].entity) { high = middle } else { low = middle + 1 }
            }
            return low
        }
        return first { !utf8Precedes($0, entity) }..<first { utf8Precedes(entity, $0) }
    }
}

/// A section's payload and where its stored bytes start in the file.
struct Payload {
    var bytes: ArraySlice<UInt8>
    var offset: Int
    /// Inflated bytes have no file offsets of their own: errors name the stored payload's first byte.
    var isInflated: Bool

    /// Runs `body` with a reader of the payload, which must use every byte (`binary.trailing-bytes`).
    func read<T>(_ limits: BinaryReadingLimits, _ body: (inout ByteReader) throws(FormatError) -> T) throws(FormatError) -> T {
        var valuesLeft = Int.max
        return try read(limits, valuesLeft: &valuesLeft, body)
    }

    /// ``read(_:_:)`` spending `valuesLeft` of the file's value budget.
    func read<T>(
        _ limits: BinaryReadingLimits, valuesLeft: inout Int, _ body: (inout ByteReader) throws(FormatError) -> T
    ) throws(FormatError) -> T {
        let left = valuesLeft
        let (result, spent) = try bytes.withUnsafeBufferPointer { (buffer) throws(FormatError) -> (T, Int) in
            var reader = ByteReader(buffer, offset: offset, pinned: isInflated, limits: limits)
            reader.valuesLeft = left
            let result = try body(&reader)
            guard reader.remaining == 0 else {
                throw FormatError(
                    .binaryTrailingBytes, "\(reader.remaining) bytes follow the last field of the section", location: .init(offset: reader.offset))
            }
            return (result, left - reader.valuesLeft)
        }
        valuesLeft -= spent
        return result
    }
}

/// A cursor over bytes in memory, valid only inside the `withUnsafeBufferPointer` call that made
/// it (it never outlives ``Payload/read(_:_:)`` or the framing). Every read checks the bytes left
/// first, so hostile input never reads beyond them; offsets in errors are file offsets.
/// Reads bytes as Spec/v2-binary.md 3 lays them out, every check made; also the event index's
/// compact columns.
package struct ByteReader {
    private let bytes: UnsafeBufferPointer<UInt8>
    let limits: BinaryReadingLimits
    /// The file offset of `bytes[0]`.
    private let base: Int
    /// Inflated bytes have no file offsets of their own: errors name `base`, the stored payload's
    /// first byte (Spec/v2-binary.md 5.2).
    private let pinned: Bool
    /// The next byte to read, from 0.
    var position = 0
    /// What is left of the file's value budget (``BinaryReadingLimits/valueBudget``).
    var valuesLeft = Int.max

    package init(_ bytes: UnsafeBufferPointer<UInt8>, offset: Int, pinned: Bool = false, limits: BinaryReadingLimits) {
        self.bytes = bytes
        self.limits = limits
        base = offset
        self.pinned = pinned
    }

    /// The file offset of a position, for errors.
    func offset(at position: Int) -> Int { pinned ? base : base + position }
    var offset: Int { offset(at: position) }
    package var remaining: Int { bytes.count - position }

    /// A field that runs past the end of the input, reported at that end (Spec/v2-binary.md 3.6).
    private var truncated: FormatError {
        FormatError(.binaryTruncated, "the data ends inside a field", location: .init(offset: offset(at: bytes.count)))
    }

    /// The next `count` bytes.
    @inline(__always)
    mutating func fixed(_ count: Int) throws(FormatError) -> UnsafeBufferPointer<UInt8> {
        guard count <= remaining else { throw truncated }
        defer { position += count }
        return UnsafeBufferPointer(rebasing: bytes[position..<(position + count)])
    }

    /// Unsigned LEB128 in its shortest form.
    @inline(__always)
    package mutating func varint() throws(FormatError) -> UInt64 {
        // One or two bytes (a reference into a table of up to 16,384 strings), the usual cases,
        // without the loop.
        if remaining >= 2 {
            let first = bytes[position], second = bytes[position + 1]
            if first < 0x80 {
                position += 1
                return UInt64(first)
            }
            if second < 0x80 && second != 0 {
                position += 2
                return UInt64(first & 0x7F) | UInt64(second) << 7
            }
        }
        return try longVarint()
    }

    /// A zigzag-encoded signed integer (``ByteWriter/zigzag(_:)``).
    package mutating func zigzag() throws(FormatError) -> Int64 {
        let raw = try varint()
        return Int64(bitPattern: raw >> 1) ^ -Int64(bitPattern: raw & 1)
    }

    /// ``varint()`` byte by byte, with every check of Spec/v2-binary.md 3.2.
    private mutating func longVarint() throws(FormatError) -> UInt64 {
        let start = position
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            guard position < bytes.count else { throw truncated }
            let byte = bytes[position]
            position += 1
            if shift == 63 && byte > 1 {
                throw FormatError(.binaryInvalidValue, "a varint exceeds 64 bits", location: .init(offset: offset(at: start)))
            }
            value |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 {
                if shift > 0 && byte == 0 {
                    throw FormatError(.binaryOverlongVarint, "a varint is not in its shortest form", location: .init(offset: offset(at: start)))
                }
                return value
            }
            shift += 7
        }
    }

    /// A count of elements that each take at least one byte: never more than the bytes left.
    @inline(__always)
    mutating func count() throws(FormatError) -> Int {
        let start = position
        let value = try varint()
        guard value <= UInt64(remaining) else {
            throw FormatError(.binaryTruncated, "a count of \(value) exceeds the \(remaining) bytes left", location: .init(offset: offset(at: start)))
        }
        return Int(value)
    }

    /// Spends `count` × `times` values of the file's budget, before they are built; over it is
    /// `binary.too-large` at `position` (Spec/v2-binary.md 11).
    mutating func spend(_ count: Int, times: Int = 1, at position: Int) throws(FormatError) {
        let values = count.multipliedReportingOverflow(by: times)
        valuesLeft = values.overflow ? -1 : valuesLeft.subtractingReportingOverflow(values.partialValue).partialValue
        guard valuesLeft >= 0 else {
            let message = limits.valueBudget?.exceededMessage("values (Spec/v2-binary.md 11 counts them)") ?? "the file decodes to too many values"
            throw FormatError(.binaryTooLarge, message, location: .init(offset: offset(at: position)))
        }
    }

    /// A count that must not be zero (an empty list is omitted instead, for one canonical form).
    mutating func nonEmptyCount(_ why: String) throws(FormatError) -> Int {
        let start = position
        let value = try count()
        guard value > 0 else { throw FormatError(.binaryInvalidValue, why, location: .init(offset: offset(at: start))) }
        return value
    }

    mutating func counter() throws(FormatError) -> Int64 {
        let start = position
        let value = try varint()
        guard value <= UInt64(Int64.max) else {
            throw FormatError(.v2IntegerOutOfRange, "\(value) is beyond 2^63-1", location: .init(offset: offset(at: start)))
        }
        return Int64(value)
    }

    mutating func uint32() throws(FormatError) -> UInt32 {
        UInt32(littleEndian: UnsafeRawBufferPointer(try fixed(4)).loadUnaligned(as: UInt32.self))
    }

    mutating func double() throws(FormatError) -> Double {
        Double(bitPattern: UInt64(littleEndian: UnsafeRawBufferPointer(try fixed(8)).loadUnaligned(as: UInt64.self)))
    }

    /// A byte string: a length within `limit`, then that many bytes.
    mutating func blob(limit: Int) throws(FormatError) -> UnsafeBufferPointer<UInt8> {
        let start = position
        let length = try varint()
        guard length <= UInt64(clamping: limit) else {
            throw FormatError(.binaryTooLarge, "a length of \(length) exceeds the limit of \(limit)", location: .init(offset: offset(at: start)))
        }
        guard length <= UInt64(remaining) else {
            throw FormatError(.binaryTruncated, "a length of \(length) exceeds the \(remaining) bytes left", location: .init(offset: offset(at: start)))
        }
        return try fixed(Int(length))
    }

    /// A string-table entry (Spec/v2-binary.md section 6), checked in the order of the rules
    /// there: the 16 bytes of its UUID prefix, if it has one, and its text, valid UTF-8.
    mutating func tableEntry(limit: Int) throws(FormatError) -> (uuid: UnsafeBufferPointer<UInt8>?, text: UnsafeBufferPointer<UInt8>) {
        let start = position
        let header = try varint()
        let hasUUID = header & 1 == 1
        let stored = header >> 1
        let prefix = hasUUID ? UUIDPrefix.textLength : 0
        guard limit >= prefix, stored <= UInt64(limit - prefix) else {
            throw FormatError(
                .binaryTooLarge, "a string of \(stored + UInt64(prefix)) bytes exceeds the limit of \(limit)", location: .init(offset: offset(at: start)))
        }
        let needed = stored + (hasUUID ? 16 : 0)
        guard needed <= UInt64(remaining) else {
            throw FormatError(.binaryTruncated, "a string needs \(needed) bytes, only \(remaining) are left", location: .init(offset: offset(at: start)))
        }
        let uuid = hasUUID ? try fixed(16) : nil
        let text = try fixed(Int(stored))
        // ASCII, the usual case, by a scan without an early exit, since `String(validating:)`
        // costs a generic call (and makes a `String`).
        guard text.reduce(0, |) < 0x80 || String(validating: text, as: UTF8.self) != nil else {
            throw FormatError(.binaryInvalidUTF8, "a string is not valid UTF-8", location: .init(offset: offset(at: start)))
        }
        return (uuid, text)
    }

    /// A string reference (Spec/v2-binary.md 3.5): a position in `table`.
    @inline(__always)
    mutating func reference<Table: BinaryStringTable>(_ table: Table) throws(FormatError) -> Int {
        let start = position
        let index = try varint()
        guard index < UInt64(table.stringCount) else {
            throw FormatError(
                .binaryBadIndex, "string index \(index) is beyond the \(table.stringCount) strings", location: .init(offset: offset(at: start)))
        }
        return Int(index)
    }

    /// An optional reference: 0 for none, otherwise the position plus 1.
    mutating func optionalReference<Table: BinaryStringTable>(_ table: Table) throws(FormatError) -> Int? {
        let start = position
        let value = try varint()
        guard value > 0 else { return nil }
        guard value - 1 < UInt64(table.stringCount) else {
            throw FormatError(
                .binaryBadIndex, "string index \(value - 1) is beyond the \(table.stringCount) strings", location: .init(offset: offset(at: start)))
        }
        return Int(value - 1)
    }

    /// A set of strings, written as ascending references (their positions in `table` are
    /// returned); each must pass `valid`, if given (made a `String` for it only then).
    mutating func sortedReferences<Table: BinaryStringTable>(_ table: Table, valid: ((String) -> Bool)? = nil) throws(FormatError) -> [Int] {
        let countStart = position
        let count = try count()
        // Most sets are empty (a change's data files): no buffer is asked for them.
        guard count > 0 else { return [] }
        try spend(count, at: countStart)
        var result: [Int] = []
        result.reserveCapacity(count)
        var last: Int?
        for _ in 0..<count {
            let start = position
            let index = try reference(table)
            if let last, index <= last {
                throw FormatError(.binaryInvalidValue, "a set of identifiers is not sorted and unique", location: .init(offset: offset(at: start)))
            }
            last = index
            if let valid {
                let string = table.string(index)
                guard valid(string) else {
                    throw FormatError(.binaryInvalidValue, "\"\(string)\" is not allowed here", location: .init(offset: offset(at: start)))
                }
            }
            result.append(index)
        }
        return result
    }

    /// A property change's kind and value (Spec/v2-binary.md 8.2, 8.3); `valuePointer` is the
    /// place of an attribute value in the canonical JSON form, for its `v2.*` errors.
    mutating func propertyValue<Table: BinaryStringTable>(_ table: Table, valuePointer: () -> JSONPointer) throws(FormatError) -> ReadValue {
        let kindStart = position
        switch try varint() {
        case 0: return try pointing(valuePointer()) { () throws(FormatError) in try attribute(table) }
        case 1: return .toOne(try optionalReference(table))
        case 2: return .toMany(added: try sortedReferences(table), removed: try sortedReferences(table))
        case 3:
            let added = try sortedReferences(table), removed = try sortedReferences(table)
            var moved: [(position: Int, identifier: Int)] = []
            var last = -1
            let movedStart = position
            let movedCount = try count()
            try spend(movedCount, at: movedStart)
            for _ in 0..<movedCount {
                let positionStart = position
                let index = try varint()
                guard index <= 999_999_999, Int(index) > last else {
                    throw FormatError(
                        .binaryInvalidValue, "ordered positions are not ascending within 0...999999999", location: .init(offset: offset(at: positionStart)))
                }
                last = Int(index)
                moved.append((last, try reference(table)))
            }
            return .orderedToMany(added: added, removed: removed, moved: moved)
        case let kind:
            throw FormatError(.binaryInvalidValue, "property kind \(kind) is not one of 0, 1, 2, 3", location: .init(offset: offset(at: kindStart)))
        }
    }

    mutating func attribute<Table: BinaryStringTable>(_ table: Table) throws(FormatError) -> ReadValue {
        let start = position
        switch try varint() {
        case 0: return .attribute(.null)
        case 1: return .attribute(.bool(false))
        case 2: return .attribute(.bool(true))
        case 3: return .attribute(.integer(try zigzag()))
        case 4: return .attribute(.double(try double()))
        case 5:
            guard let text = String(validating: try blob(limit: limits.maximumStringBytes), as: UTF8.self), isDecimalText(text) else {
                throw FormatError(.v2InvalidDecimal, "a decimal is not decimal text", location: .init(offset: offset(at: start)))
            }
            return .attribute(.decimal(text))
        case 6: return .attribute(.string(table.string(try reference(table))))
        case 7:
            let valueStart = position
            let milliseconds = try double()
            guard milliseconds.isFinite else {
                throw FormatError(.v2NumberOutOfRange, "a date is not a finite number", location: .init(offset: offset(at: valueStart)))
            }
            return .attribute(.date(millisecondsSince1970: milliseconds))
        case 8: return .attribute(.binary(Data(try blob(limit: limits.maximumSectionBytes))))
        case 9:
            var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
            let raw = try fixed(16)
            withUnsafeMutableBytes(of: &uuid) { $0.copyMemory(from: UnsafeRawBufferPointer(raw)) }
            return .attribute(.uuid(UUID(uuid: uuid)))
        case 10: return .attribute(.url(table.string(try reference(table))))
        case 11:
            let referenceStart = position
            let name = try reference(table)
            // A `String` for the check: data files are rare.
            let file = table.string(name)
            guard DataFileName.isValid(file) else {
                throw FormatError(.binaryInvalidValue, "\"\(file)\" is not a data file name", location: .init(offset: offset(at: referenceStart)))
            }
            return .dataFile(name)
        case let tag:
            throw FormatError(.binaryInvalidValue, "attribute value tag \(tag) is unknown", location: .init(offset: offset(at: start)))
        }
    }
}

/// Runs `body`; a `v2.*` error it throws gets `pointer`, the place of the value in the event's
/// canonical JSON form (Spec/v2-binary.md 12.2), as the JSON reader would report it.
private func pointing<T>(_ pointer: @autoclosure () -> JSONPointer, _ body: () throws(FormatError) -> T) throws(FormatError) -> T {
    do {
        return try body()
    } catch {
        var located = error
        if located.code.rawValue.hasPrefix("v2.") { located.location.pointer = pointer() }
        throw located
    }
}
