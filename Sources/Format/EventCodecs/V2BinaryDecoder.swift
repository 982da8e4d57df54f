import Foundation
import JSONDocument
import EnsembleModel

/// Limits of the binary reader (Spec/v2-binary.md, "Limits").
public struct BinaryReadingLimits: Sendable {
    public var maximumFileBytes = 256 * 1024 * 1024
    public var maximumSectionBytes = 256 * 1024 * 1024
    public var maximumInflateRatio = Zlib.maximumRatio
    public var maximumStrings = 16_777_216
    public var maximumStringBytes = 16 * 1024 * 1024
    /// Object changes per byte of the file (Spec/v2-binary.md 11): a few kilobytes of deflated
    /// changes must not decode into millions of changes and gigabytes of memory.
    public var maximumChangesPerFileByte = 4

    public init() {}
}

/// Reads the v2 binary encoding; every failure is a `binary.*` (or `v2.*`) error with the byte
/// offset where it was found. Sections it does not know are skipped and returned, so a rewriter
/// can keep them.
public struct V2BinaryDecoder: Sendable {
    public var limits: BinaryReadingLimits

    public init(limits: BinaryReadingLimits = BinaryReadingLimits()) { self.limits = limits }

    public func decode(_ bytes: [UInt8]) throws(FormatError) -> Event {
        guard bytes.count <= limits.maximumFileBytes else {
            throw FormatError(.binaryTooLarge, "the file is larger than \(limits.maximumFileBytes) bytes", location: .init(offset: limits.maximumFileBytes))
        }
        let head = Array(bytes.prefix(V2Binary.magic.count))
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
        var reader = ByteReader(bytes: bytes[...], limits: limits)
        reader.position = 10
        var payloads: [V2Binary.Section: Payload] = [:]
        var lastKnown: UInt64 = 0
        var seenUnknown = false
        while reader.position < bytes.count {
            let sectionOffset = reader.position
            let type = try reader.varint()
            let flags = try reader.varint()
            let length = try reader.varint()
            let crc = try reader.uint32()
            guard length <= UInt64(bytes.count - reader.position) else {
                throw FormatError(.binaryTruncated, "section \(type) claims \(length) bytes; the file ends first", location: .init(offset: sectionOffset))
            }
            let stored = bytes[reader.position..<(reader.position + Int(length))]
            let payloadOffset = reader.position
            reader.position += Int(length)
            guard Zlib.crc32(stored) == crc else {
                throw FormatError(.binaryChecksum, "section \(type) fails its CRC-32: the file is damaged", location: .init(offset: sectionOffset))
            }
            guard let known = V2Binary.Section(rawValue: type) else {
                guard type != 0 else {
                    throw FormatError(.binaryInvalidValue, "section type 0 does not exist", location: .init(offset: sectionOffset))
                }
                seenUnknown = true
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
        guard let stringSection = payloads[.strings] else {
            throw FormatError(.binaryMissingSection, "the strings section (1) is missing", location: .init(offset: bytes.count))
        }
        guard let headerSection = payloads[.header] else {
            throw FormatError(.binaryMissingSection, "the header section (2) is missing", location: .init(offset: bytes.count))
        }
        let strings = try readStrings(stringSection)
        var header = ByteReader(headerSection, limits: limits)
        let uniqueStart = header.offset
        let uniqueIdentifier = try header.string(strings)
        guard !uniqueIdentifier.isEmpty else {
            throw FormatError(.binaryInvalidValue, "the uniqueIdentifier is empty", location: .init(offset: uniqueStart))
        }
        let typeStart = header.offset
        let rawType = try header.varint()
        guard let type = EventType(rawValue: Int64(clamping: rawType)) else {
            throw FormatError(
                .v2UnknownEventType, "event type \(rawType) is not one of 0, 100, 200, 300", location: .init(offset: typeStart, pointer: JSONPointer(["type"])))
        }
        let globalCount = try pointing(JSONPointer(["globalCount"])) { () throws(FormatError) in try header.counter() }
        let timestampStart = header.offset
        let timestamp = try header.double()
        guard timestamp.isFinite else {
            throw FormatError(
                .v2InvalidTimestamp, "the timestamp is not a finite number", location: .init(offset: timestampStart, pointer: JSONPointer(["timestamp"])))
        }
        let storeStart = header.offset
        let store = try header.string(strings)
        guard Self.isStoreIdentifier(store) else {
            throw FormatError(
                .binaryInvalidValue, "\"\(store)\" is not a store identifier (1 to 255 characters, no '_', '/', '\\' or NUL)",
                location: .init(offset: storeStart))
        }
        let modelStart = header.offset
        let model = try header.varint()
        let modelVersion = model == 0 ? nil : try header.string(strings, index: model - 1, at: modelStart)
        var revisions = RevisionSet()
        var previous: String?
        for _ in 0..<(try header.count()) {
            let nameStart = header.offset
            let name = try header.string(strings)
            if let previous, !utf8Precedes(previous, name) {
                throw FormatError(.binaryInvalidValue, "revision set stores are not sorted and unique", location: .init(offset: nameStart))
            }
            previous = name
            revisions[name] = try pointing(JSONPointer(["revisionsByStoreIdentifier", name])) { () throws(FormatError) in try header.counter() }
        }
        try header.end()
        guard revisions[store] != nil else {
            throw FormatError(
                .v2MissingOwnRevision, "the revision set has no entry for the event's own store",
                location: .init(offset: headerSection.offset, pointer: JSONPointer(["revisionsByStoreIdentifier"])))
        }
        var changes: [ObjectChange] = []
        if let section = payloads[.changes] {
            let budget = max(1, bytes.count).multipliedReportingOverflow(by: max(0, limits.maximumChangesPerFileByte))
            changes = try readChanges(section, strings, budget: budget.overflow ? .max : budget.partialValue)
        }
        var event = Event(
            uniqueIdentifier: uniqueIdentifier, type: type, storeIdentifier: store, globalCount: globalCount,
            timestamp: timestamp, modelVersion: modelVersion, revisionSet: revisions, objectChanges: changes)
        if let section = payloads[.extensions] {
            try applyExtensions(section, to: &event)
        }
        return event
    }

    /// The v2 schema's rule for store identifiers: 1 to 255 characters, none of `_ / \\` NUL.
    static func isStoreIdentifier(_ store: String) -> Bool {
        (1...255).contains(store.unicodeScalars.count) && !store.unicodeScalars.contains { "_/\\\u{0}".unicodeScalars.contains($0) }
    }

    private func readStrings(_ section: Payload) throws(FormatError) -> [String] {
        var reader = ByteReader(section, limits: limits)
        let count = try reader.count()
        guard count <= limits.maximumStrings else {
            throw FormatError(.binaryTooLarge, "\(count) strings exceed the limit of \(limits.maximumStrings)", location: .init(offset: reader.offset))
        }
        var strings: [String] = []
        strings.reserveCapacity(count)
        for _ in 0..<count {
            let start = reader.offset
            let bytes = try reader.tableString(limit: limits.maximumStringBytes)
            guard let string = String(validating: bytes, as: UTF8.self) else {
                throw FormatError(.binaryInvalidUTF8, "a string is not valid UTF-8", location: .init(offset: start))
            }
            if let last = strings.last, !utf8Precedes(last, string) {
                throw FormatError(.binaryInvalidValue, "the string table is not sorted and unique", location: .init(offset: start))
            }
            strings.append(string)
        }
        try reader.end()
        return strings
    }

    private func readChanges(_ section: Payload, _ strings: [String], budget: Int) throws(FormatError) -> [ObjectChange] {
        var reader = ByteReader(section, limits: limits)
        var changes: [ObjectChange] = []
        var remaining = budget
        var previousEntity: String?
        for _ in 0..<(try reader.nonEmptyCount("the changes section holds no entity; it is omitted instead")) {
            let entityStart = reader.offset
            let entity = try reader.string(strings)
            if let previousEntity, !utf8Precedes(previousEntity, entity) {
                throw FormatError(.binaryInvalidValue, "entities are not sorted and unique", location: .init(offset: entityStart))
            }
            guard !entity.isEmpty else { throw FormatError(.binaryInvalidValue, "an entity name is empty", location: .init(offset: entityStart)) }
            previousEntity = entity
            let countStart = reader.offset
            let count = try reader.nonEmptyCount("an entity is listed without changes")
            remaining -= count
            guard remaining >= 0 else {
                throw FormatError(
                    .binaryTooLarge,
                    "the file holds more object changes than \(limits.maximumChangesPerFileByte) per byte of the file (\(budget)); Spec/v2-binary.md 11",
                    location: .init(offset: countStart))
            }
            for changeIndex in 0..<count {
                // Built only for an error: most changes never need it.
                func changePointer(_ rest: String...) -> JSONPointer { JSONPointer(["changesByEntity", entity, String(changeIndex)] + rest) }
                let typeStart = reader.offset
                let rawType = try reader.varint()
                guard let type = ChangeType(rawValue: Int64(clamping: rawType)) else {
                    throw FormatError(
                        .v2UnknownChangeType, "change type \(rawType) is not one of 100, 200, 300",
                        location: .init(offset: typeStart, pointer: changePointer("type")))
                }
                let idStart = reader.offset
                let id = try reader.string(strings)
                guard !id.isEmpty else { throw FormatError(.binaryInvalidValue, "a globalIdentifier is empty", location: .init(offset: idStart)) }
                let dataFiles = try reader.sortedStrings(strings, valid: DataFileName.isValid)
                var properties: [PropertyChange] = []
                var previousName: String?
                for propertyIndex in 0..<(try reader.count()) {
                    let nameStart = reader.offset
                    let name = try reader.string(strings)
                    if let previousName, !utf8Precedes(previousName, name) {
                        throw FormatError(.binaryInvalidValue, "properties are not sorted and unique", location: .init(offset: nameStart))
                    }
                    previousName = name
                    let kindStart = reader.offset
                    let kind = try reader.varint()
                    let value: PropertyChange.Value
                    switch kind {
                    case 0:
                        value = try pointing(changePointer("properties", String(propertyIndex), "value")) { () throws(FormatError) in
                            try reader.attribute(strings)
                        }
                    case 1:
                        let relatedStart = reader.offset
                        let related = try reader.varint()
                        value = .toOne(relatedIdentifier: related == 0 ? nil : try reader.string(strings, index: related - 1, at: relatedStart))
                    case 2: value = .toMany(added: try reader.sortedStrings(strings), removed: try reader.sortedStrings(strings))
                    case 3:
                        let added = try reader.sortedStrings(strings), removed = try reader.sortedStrings(strings)
                        var moved: [Int: String] = [:]
                        var last = -1
                        for _ in 0..<(try reader.count()) {
                            let positionStart = reader.offset
                            let position = try reader.varint()
                            guard position <= 999_999_999, Int(position) > last else {
                                throw FormatError(
                                    .binaryInvalidValue, "ordered positions are not ascending within 0...999999999", location: .init(offset: positionStart))
                            }
                            last = Int(position)
                            moved[last] = try reader.string(strings)
                        }
                        value = .orderedToMany(added: added, removed: removed, movedByIndex: moved)
                    default:
                        throw FormatError(.binaryInvalidValue, "property kind \(kind) is not one of 0, 1, 2, 3", location: .init(offset: kindStart))
                    }
                    properties.append(PropertyChange(name: name, value: value))
                }
                changes.append(ObjectChange(entity: entity, globalIdentifier: id, type: type, propertyChanges: properties, dataFiles: dataFiles))
            }
        }
        try reader.end()
        return changes
    }

    /// Puts each kept unknown member back where its pointer says (canonical v2 JSON positions).
    private func applyExtensions(_ section: Payload, to event: inout Event) throws(FormatError) {
        var reader = ByteReader(section, limits: limits)
        let count = try reader.nonEmptyCount("the extensions section holds nothing; it is omitted instead")
        var previousPointer: [UInt8]?
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
            let value: JSONValue
            do {
                value = try JSONParser.parse(valueBytes, options: options)
            } catch {
                throw invalid("an extension's value is not JSON within the limits: \(error.message)")
            }
            guard JSONWriter().bytes(value) == valueBytes else { throw invalid("an extension's value is not in canonical form") }
            switch tokens.count {
            case 1:
                guard !V2Key.event.contains(key) else { throw invalid("an extension names the known key \(key)") }
                event.unknownFields[key] = value
            case 4, 6:
                guard tokens[0] == V2Key.changesByEntity, let index = Int(tokens[2]) else { throw invalid("an extension pointer names no object change") }
                let positions = event.objectChanges.indices.filter { event.objectChanges[$0].entity.utf8.elementsEqual(tokens[1].utf8) }
                guard positions.indices.contains(index) else { throw invalid("an extension pointer names no object change") }
                let position = positions[index]
                if tokens.count == 4 {
                    guard !V2Key.objectChange.contains(key) else { throw invalid("an extension names the known key \(key)") }
                    event.objectChanges[position].unknownFields[key] = value
                } else {
                    guard tokens[3] == V2Key.properties, let property = Int(tokens[4]),
                        event.objectChanges[position].propertyChanges.indices.contains(property),
                        !V2Key.allPropertyKeys.contains(key)
                    else { throw invalid("an extension pointer names no property change") }
                    event.objectChanges[position].propertyChanges[property].unknownFields[key] = value
                }
            default:
                throw invalid("an extension pointer is not at the event, object change or property change level")
            }
        }
        try reader.end()
    }
}

/// A section's payload and where its stored bytes start in the file.
struct Payload {
    var bytes: ArraySlice<UInt8>
    var offset: Int
    /// Inflated bytes have no file offsets of their own: errors name the stored payload's first byte.
    var isInflated: Bool
}

/// A bounds-checked cursor over section bytes; offsets in errors are file offsets.
struct ByteReader {
    let bytes: ArraySlice<UInt8>
    let limits: BinaryReadingLimits
    /// The file offset of `bytes.startIndex`.
    let base: Int
    let pinnedOffset: Int?
    var position: Int

    init(bytes: ArraySlice<UInt8>, limits: BinaryReadingLimits, base: Int = 0) {
        self.bytes = bytes
        self.limits = limits
        self.base = base - bytes.startIndex
        pinnedOffset = nil
        position = bytes.startIndex
    }

    init(_ payload: Payload, limits: BinaryReadingLimits) {
        bytes = payload.bytes
        self.limits = limits
        base = payload.offset - payload.bytes.startIndex
        pinnedOffset = payload.isInflated ? payload.offset : nil
        position = payload.bytes.startIndex
    }

    var offset: Int { pinnedOffset ?? base + position }
    var remaining: Int { bytes.endIndex - position }

    mutating func byte() throws(FormatError) -> UInt8 {
        guard position < bytes.endIndex else {
            throw FormatError(.binaryTruncated, "the data ends inside a field", location: .init(offset: offset))
        }
        defer { position += 1 }
        return bytes[position]
    }

    /// Unsigned LEB128 in its shortest form.
    mutating func varint() throws(FormatError) -> UInt64 {
        let start = offset
        var value: UInt64 = 0
        for index in 0..<10 {
            let byte = try self.byte()
            if index == 9 && byte > 1 {
                throw FormatError(.binaryInvalidValue, "a varint exceeds 64 bits", location: .init(offset: start))
            }
            value |= UInt64(byte & 0x7F) << UInt64(7 * index)
            if byte & 0x80 == 0 {
                if index > 0 && byte == 0 {
                    throw FormatError(.binaryOverlongVarint, "a varint is not in its shortest form", location: .init(offset: start))
                }
                return value
            }
        }
        throw FormatError(.binaryInvalidValue, "a varint is longer than 10 bytes", location: .init(offset: start))
    }

    /// A count of elements that each take at least one byte: never more than the bytes left.
    mutating func count() throws(FormatError) -> Int {
        let start = offset
        let value = try varint()
        guard value <= UInt64(remaining) else {
            throw FormatError(.binaryTruncated, "a count of \(value) exceeds the \(remaining) bytes left", location: .init(offset: start))
        }
        return Int(value)
    }

    /// A count that must not be zero (an empty list is omitted instead, for one canonical form).
    mutating func nonEmptyCount(_ why: String) throws(FormatError) -> Int {
        let start = offset
        let value = try count()
        guard value > 0 else { throw FormatError(.binaryInvalidValue, why, location: .init(offset: start)) }
        return value
    }

    mutating func counter() throws(FormatError) -> Int64 {
        let start = offset
        let value = try varint()
        guard value <= UInt64(Int64.max) else {
            throw FormatError(.v2IntegerOutOfRange, "\(value) is beyond 2^63-1", location: .init(offset: start))
        }
        return Int64(value)
    }

    mutating func uint32() throws(FormatError) -> UInt32 {
        var value: UInt32 = 0
        for shift in stride(from: 0, to: 32, by: 8) { value |= UInt32(try byte()) << UInt32(shift) }
        return value
    }

    mutating func double() throws(FormatError) -> Double {
        var bits: UInt64 = 0
        for shift in stride(from: 0, to: 64, by: 8) { bits |= UInt64(try byte()) << UInt64(shift) }
        return Double(bitPattern: bits)
    }

    mutating func blob(limit: Int) throws(FormatError) -> [UInt8] {
        let start = offset
        let length = try varint()
        guard length <= UInt64(limit) else {
            throw FormatError(.binaryTooLarge, "a length of \(length) exceeds the limit of \(limit)", location: .init(offset: start))
        }
        guard length <= UInt64(remaining) else {
            throw FormatError(.binaryTruncated, "a length of \(length) exceeds the \(remaining) bytes left", location: .init(offset: start))
        }
        defer { position += Int(length) }
        return Array(bytes[position..<(position + Int(length))])
    }

    /// A string-table entry (Spec/v2-binary.md section 6), as the bytes of the string it stands for.
    mutating func tableString(limit: Int) throws(FormatError) -> [UInt8] {
        let start = offset
        let header = try varint()
        let hasUUID = header & 1 == 1
        let stored = header >> 1
        let prefix = hasUUID ? UUIDPrefix.textLength : 0
        guard stored <= UInt64(limit - prefix) else {
            throw FormatError(.binaryTooLarge, "a string of \(stored + UInt64(prefix)) bytes exceeds the limit of \(limit)", location: .init(offset: start))
        }
        let needed = stored + (hasUUID ? 16 : 0)
        guard needed <= UInt64(remaining) else {
            throw FormatError(.binaryTruncated, "a string needs \(needed) bytes, only \(remaining) are left", location: .init(offset: start))
        }
        var result: [UInt8] = []
        if hasUUID {
            result = UUIDPrefix.text(bytes[position..<(position + 16)])
            position += 16
        }
        result.append(contentsOf: bytes[position..<(position + Int(stored))])
        position += Int(stored)
        return result
    }

    mutating func string(_ table: [String]) throws(FormatError) -> String {
        let start = offset
        return try string(table, index: try varint(), at: start)
    }

    /// The string a reference names; `start` is the reference's first byte, for the error.
    func string(_ table: [String], index: UInt64, at start: Int) throws(FormatError) -> String {
        guard index < UInt64(table.count) else {
            throw FormatError(.binaryBadIndex, "string index \(index) is beyond the \(table.count) strings", location: .init(offset: start))
        }
        return table[Int(index)]
    }

    /// A set of strings, written sorted and unique; each must pass `valid`.
    mutating func sortedStrings(_ table: [String], valid: (String) -> Bool = { _ in true }) throws(FormatError) -> [String] {
        var result: [String] = []
        var last: UInt64?
        for _ in 0..<(try count()) {
            let start = offset
            let index = try varint()
            if let last, index <= last {
                throw FormatError(.binaryInvalidValue, "a set of identifiers is not sorted and unique", location: .init(offset: start))
            }
            last = index
            let string = try self.string(table, index: index, at: start)
            guard valid(string) else {
                throw FormatError(.binaryInvalidValue, "\"\(string)\" is not allowed here", location: .init(offset: start))
            }
            result.append(string)
        }
        return result
    }

    mutating func attribute(_ table: [String]) throws(FormatError) -> PropertyChange.Value {
        let start = offset
        switch try varint() {
        case 0: return .attribute(.null)
        case 1: return .attribute(.bool(false))
        case 2: return .attribute(.bool(true))
        case 3:
            let raw = try varint()
            return .attribute(.integer(Int64(bitPattern: raw >> 1) ^ -Int64(bitPattern: raw & 1)))
        case 4: return .attribute(.double(try double()))
        case 5:
            guard let text = String(validating: try blob(limit: limits.maximumStringBytes), as: UTF8.self), isDecimalText(text) else {
                throw FormatError(.v2InvalidDecimal, "a decimal is not decimal text", location: .init(offset: start))
            }
            return .attribute(.decimal(text))
        case 6: return .attribute(.string(try string(table)))
        case 7:
            let valueStart = offset
            let milliseconds = try double()
            guard milliseconds.isFinite else {
                throw FormatError(.v2NumberOutOfRange, "a date is not a finite number", location: .init(offset: valueStart))
            }
            return .attribute(.date(millisecondsSince1970: milliseconds))
        case 8: return .attribute(.binary(Data(try blob(limit: limits.maximumSectionBytes))))
        case 9:
            var raw = [UInt8]()
            for _ in 0..<16 { raw.append(try byte()) }
            let uuid = UUID(
                uuid: (
                    raw[0], raw[1], raw[2], raw[3], raw[4], raw[5], raw[6], raw[7],
                    raw[8], raw[9], raw[10], raw[11], raw[12], raw[13], raw[14], raw[15]
                ))
            return .attribute(.uuid(uuid))
        case 10: return .attribute(.url(try string(table)))
        case 11:
            let referenceStart = offset
            let name = try string(table)
            guard DataFileName.isValid(name) else {
                throw FormatError(.binaryInvalidValue, "\"\(name)\" is not a data file name", location: .init(offset: referenceStart))
            }
            return .attributeInDataFile(filename: name)
        case let tag:
            throw FormatError(.binaryInvalidValue, "attribute value tag \(tag) is unknown", location: .init(offset: start))
        }
    }

    /// Every field of a section must be used: bytes left over are an error.
    func end() throws(FormatError) {
        guard position == bytes.endIndex else {
            throw FormatError(.binaryTrailingBytes, "\(remaining) bytes follow the last field of the section", location: .init(offset: offset))
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
