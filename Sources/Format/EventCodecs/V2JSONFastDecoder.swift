import Foundation
import JSONDocument
import EnsembleModel

/// Decodes the usual v2 JSON event file straight from its bytes, without a JSON tree.
///
/// It takes only the path the general reading pipeline (``JSONParser``, the v2 event schema,
/// ``V2JSONDecoder``) also takes without a single finding, and then gives the part that pipeline
/// gives. Anything else returns nil, and the reader runs the general pipeline for the exact
/// diagnostics of Spec/v2-json.md 4: any syntax or schema problem, a key it does not know (its
/// value would have to be kept), an escaped key, a surrogate escape, an integer field written
/// other than as a plain literal of at most 18 digits, a limit of ``JSONReadingOptions`` reached.
/// So verdicts, codes and pointers never depend on it; `Tests/EventCodecsTests` compares both on
/// every fixture and on mutated files.
///
/// Written by hand because the general pipeline builds and walks a tree of every value three
/// times (parse, schema, decode), most of the cost of reading a folder (Benchmarks/README.md).
package enum V2JSONFastDecoder {
    /// A single-file event, or nil when only the general pipeline can tell.
    package static func decodeEvent(_ bytes: [UInt8], options: JSONReadingOptions = .strict) -> Event? {
        decodePart(bytes, position: .single, options: options).flatMap { try? V2JSONDecoder.join([$0]) }
    }

    /// The part these bytes hold, or nil when only the general pipeline can tell.
    package static func decodePart(_ bytes: [UInt8], position: EventPartPosition, options: JSONReadingOptions = .strict) -> EventPart? {
        // The deepest value this decoder accepts is a tagged attribute value: 7 levels.
        guard bytes.count <= options.maximumBytes, options.maximumDepth >= 7 else { return nil }
        return bytes.withUnsafeBufferPointer { buffer in
            var reader = PartReader(cursor: Cursor(bytes: buffer, options: options))
            do throws(Decline) {
                return try reader.part(position)
            } catch {
                return nil
            }
        }
    }
}

/// "Ask the general pipeline": never a diagnostic of its own.
private struct Decline: Error {}

private let quote = UInt8(ascii: "\""), backslash = UInt8(ascii: "\\")

/// The bytes of a document and a position in them; every read is bounds-checked.
private struct Cursor {
    let bytes: UnsafeBufferPointer<UInt8>
    let maximumStringBytes: Int
    let maximumNumberLength: Int
    var index = 0
    /// Values still allowed by the file's budget, counted as the parser counts them: more, and
    /// the parser's `json.too-large` is the verdict (Spec/README.md 6.2).
    var valuesLeft: Int

    init(bytes: UnsafeBufferPointer<UInt8>, options: JSONReadingOptions) {
        self.bytes = bytes
        maximumStringBytes = options.maximumStringBytes
        maximumNumberLength = options.maximumNumberLength
        valuesLeft = options.valueBudget?.maximumValues ?? .max
    }

    /// One more value: every value is read by `open`, `string`, `literal`, `number` or the
    /// tagged pair of `attributeValue`, each of which counts it once.
    mutating func countValue() throws(Decline) {
        valuesLeft -= 1
        guard valuesLeft >= 0 else { throw Decline() }
    }

    /// The byte at the cursor, or 0 at the end (no token starts with 0).
    var current: UInt8 { index < bytes.count ? bytes[index] : 0 }

    mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    /// Skips whitespace, then consumes `byte` when it comes next.
    mutating func consume(_ byte: UInt8) -> Bool {
        skipWhitespace()
        guard current == byte else { return false }
        index += 1
        return true
    }

    mutating func expect(_ byte: UInt8) throws(Decline) {
        guard consume(byte) else { throw Decline() }
    }

    /// Opens an object or an array; true when it is empty (and already closed).
    mutating func open(_ opening: UInt8, _ closing: UInt8) throws(Decline) -> Bool {
        try countValue()
        try expect(opening)
        return consume(closing)
    }

    /// After a member or element: true when another follows, false when `closing` ends it.
    mutating func next(_ closing: UInt8) throws(Decline) -> Bool {
        if consume(UInt8(ascii: ",")) { return true }
        try expect(closing)
        return false
    }

    /// Skips, 8 bytes at a time, string bytes that need no closer look: ASCII, and neither a
    /// quote, a backslash nor a control character. Stops at the first 8 bytes that hold one of
    /// those (or where fewer than 8 are left), for the caller's byte-by-byte loop, which decides.
    /// Scanning every byte was an eighth of decoding (measured: Benchmarks/README.md).
    mutating func skipPlainText() {
        guard let base = bytes.baseAddress.map(UnsafeRawPointer.init) else { return }
        while bytes.count - index >= 8 {
            let word = base.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            guard word & 0x8080_8080_8080_8080 == 0,
                ByteLanes.inRange(word, 0, 0x20) | ByteLanes.inRange(word, quote, quote + 1) | ByteLanes.inRange(word, backslash, backslash + 1) == 0
            else { return }
            index += 8
        }
    }

    /// An object key without escapes, and the `:` after it: the range of its bytes.
    mutating func key() throws(Decline) -> Range<Int> {
        try expect(quote)
        let start = index
        skipPlainText()
        while index < bytes.count, bytes[index] != quote {
            guard bytes[index] != backslash, bytes[index] >= 0x20 else { throw Decline() }
            index += 1
        }
        guard index < bytes.count, index - start <= maximumStringBytes else { throw Decline() }
        let end = index
        index += 1
        try expect(UInt8(ascii: ":"))
        return start..<end
    }

    /// Whether the key at `range` is `name`.
    func isKey(_ range: Range<Int>, _ name: StaticString) -> Bool {
        guard range.count == name.utf8CodeUnitCount, let base = bytes.baseAddress else { return false }
        return memcmp(base + range.lowerBound, name.utf8Start, range.count) == 0
    }

    /// Bytes without escapes as text, or nil when they are not UTF-8 (Swift's validation is RFC
    /// 3629's, as the parser's: no overlong forms, no surrogates). `isASCII` when already known.
    func text(_ range: Range<Int>, isASCII: Bool? = nil) -> String? {
        let slice = UnsafeBufferPointer(rebasing: bytes[range])
        return isASCII ?? slice.allSatisfy({ $0 < 0x80 }) ? String(decoding: slice, as: UTF8.self) : String(validating: slice, as: UTF8.self)
    }

    mutating func string() throws(Decline) -> String {
        try countValue()
        try expect(quote)
        let start = index
        skipPlainText()
        var ascii = true
        while index < bytes.count, bytes[index] != quote {
            let byte = bytes[index]
            if byte == backslash { return try escapedString(from: start) }
            guard byte >= 0x20 else { throw Decline() }
            if byte >= 0x80 { ascii = false }
            index += 1
        }
        guard index < bytes.count, index - start <= maximumStringBytes, let text = text(start..<index, isASCII: ascii) else { throw Decline() }
        index += 1
        return text
    }

    /// A string with escapes, from its first byte; surrogate escapes are left to the parser.
    private mutating func escapedString(from start: Int) throws(Decline) -> String {
        var output = Array(UnsafeBufferPointer(rebasing: bytes[start..<index]))
        while index < bytes.count, bytes[index] != quote {
            let byte = bytes[index]
            guard byte >= 0x20, output.count < maximumStringBytes else { throw Decline() }
            guard byte == backslash else {
                output.append(byte)
                index += 1
                continue
            }
            guard index + 1 < bytes.count else { throw Decline() }
            switch bytes[index + 1] {
            case quote, backslash, UInt8(ascii: "/"): output.append(bytes[index + 1])
            case UInt8(ascii: "b"): output.append(0x08)
            case UInt8(ascii: "f"): output.append(0x0C)
            case UInt8(ascii: "n"): output.append(0x0A)
            case UInt8(ascii: "r"): output.append(0x0D)
            case UInt8(ascii: "t"): output.append(0x09)
            case UInt8(ascii: "u"):
                guard index + 6 <= bytes.count, let unit = UInt32(hex: bytes[(index + 2)..<(index + 6)]),
                    let scalar = Unicode.Scalar(unit)
                else { throw Decline() }
                output.append(contentsOf: String(Character(scalar)).utf8)
                index += 4
            default: throw Decline()
            }
            index += 2
        }
        guard index < bytes.count, output.count <= maximumStringBytes, let text = String(validating: output, as: UTF8.self) else { throw Decline() }
        index += 1
        return text
    }

    /// A string or null.
    mutating func optionalString() throws(Decline) -> String? {
        skipWhitespace()
        if current == UInt8(ascii: "n") {
            try literal("null")
            return nil
        }
        return try string()
    }

    mutating func literal(_ word: StaticString) throws(Decline) {
        try countValue()
        guard index + word.utf8CodeUnitCount <= bytes.count, let base = bytes.baseAddress,
            memcmp(base + index, word.utf8Start, word.utf8CodeUnitCount) == 0
        else { throw Decline() }
        index += word.utf8CodeUnitCount
    }

    /// A number by the JSON grammar: its bytes, and whether it has neither fraction nor exponent.
    mutating func number() throws(Decline) -> (range: Range<Int>, isIntegerLiteral: Bool) {
        try countValue()
        skipWhitespace()
        let start = index
        if current == UInt8(ascii: "-") { index += 1 }
        if current == UInt8(ascii: "0") {
            index += 1
            guard !isDigit(current) else { throw Decline() }
        } else {
            try digits()
        }
        var isIntegerLiteral = true
        if current == UInt8(ascii: ".") {
            index += 1
            try digits()
            isIntegerLiteral = false
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            index += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
            try digits()
            isIntegerLiteral = false
        }
        guard index - start <= maximumNumberLength else { throw Decline() }
        return (start..<index, isIntegerLiteral)
    }

    private mutating func digits() throws(Decline) {
        guard isDigit(current) else { throw Decline() }
        while isDigit(current) { index += 1 }
    }

    private func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    /// An integer literal of at most 18 digits (so it fits), optionally negative.
    func smallInteger(_ range: Range<Int>) -> Int64? {
        let negative = bytes[range.lowerBound] == UInt8(ascii: "-")
        let digits = negative ? range.dropFirst() : range[...]
        guard digits.count <= 18 else { return nil }
        var value: Int64 = 0
        for i in digits { value = value * 10 + Int64(bytes[i] - UInt8(ascii: "0")) }
        return negative ? -value : value
    }

    /// A count, a revision or a type: a plain literal without sign.
    mutating func unsignedInteger() throws(Decline) -> Int64 {
        let token = try number()
        guard token.isIntegerLiteral, bytes[token.range.lowerBound] != UInt8(ascii: "-"), let value = smallInteger(token.range) else { throw Decline() }
        return value
    }

    func numberText(_ range: Range<Int>) -> JSONNumber {
        JSONNumber(text: String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self))
    }
}

extension UInt32 {
    /// Four hexadecimal digits.
    fileprivate init?(hex digits: Slice<UnsafeBufferPointer<UInt8>>) {
        var value: UInt32 = 0
        for byte in digits {
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: return nil
            }
            value = value << 4 | UInt32(digit)
        }
        // Surrogates are left to the parser (pairs and lone halves alike).
        guard !(0xD800..<0xE000).contains(value) else { return nil }
        self = value
    }
}

/// The v2 event structure (Spec/v2-json.md 5) over a ``Cursor``.
private struct PartReader {
    var cursor: Cursor

    /// Members of an event, as bits of a mask.
    private enum EventMember: Int, CaseIterable {
        case uniqueIdentifier, type, globalCount, timestamp, storeIdentifier, modelVersion, revisionsByStoreIdentifier, changesByEntity

        static let header: UInt16 = 0b0111_1111
        static let requiredHeader: UInt16 = header & ~(1 << 5)
    }

    mutating func part(_ position: EventPartPosition) throws(Decline) -> EventPart {
        var seen: UInt16 = 0
        var uniqueIdentifier = "", storeIdentifier = "", modelVersion: String?
        var type = EventType.save, globalCount: Int64 = 0, timestamp = 0.0
        var revisions = RevisionSet()
        var changes: [ObjectChange] = []
        if !(try cursor.open(UInt8(ascii: "{"), UInt8(ascii: "}"))) {
            repeat {
                let key = try cursor.key()
                guard let member = eventMember(key), seen & (1 << member.rawValue) == 0 else { throw Decline() }
                seen |= 1 << member.rawValue
                switch member {
                case .uniqueIdentifier:
                    uniqueIdentifier = try cursor.string()
                    guard !uniqueIdentifier.isEmpty else { throw Decline() }
                case .type:
                    guard let value = EventType(rawValue: try cursor.unsignedInteger()) else { throw Decline() }
                    type = value
                case .globalCount: globalCount = try cursor.unsignedInteger()
                case .timestamp:
                    let text = try cursor.string()
                    guard isDecimalText(text), let seconds = Double(text), seconds.isFinite else { throw Decline() }
                    timestamp = seconds
                case .storeIdentifier:
                    storeIdentifier = try cursor.string()
                    guard V2TextPatterns.isStoreIdentifier(storeIdentifier) else { throw Decline() }
                case .modelVersion: modelVersion = try cursor.optionalString()
                case .revisionsByStoreIdentifier: revisions = try revisionSet()
                case .changesByEntity: changes = try changesByEntity()
                }
            } while try cursor.next(UInt8(ascii: "}"))
        }
        cursor.skipWhitespace()
        guard cursor.index == cursor.bytes.count else { throw Decline() }
        let header: EventHeader?
        if position.carriesHeader {
            guard seen & EventMember.requiredHeader == EventMember.requiredHeader, revisions[storeIdentifier] != nil else { throw Decline() }
            header = EventHeader(
                uniqueIdentifier: uniqueIdentifier, type: type, globalCount: globalCount, timestamp: timestamp,
                storeIdentifier: storeIdentifier, modelVersion: modelVersion, revisionSet: revisions)
        } else {
            guard seen == 1 << EventMember.changesByEntity.rawValue else { throw Decline() }
            header = nil
        }
        return EventPart(position: position, header: header, objectChanges: changes, unknownFields: JSONObject(), unknownKeys: [])
    }

    private func eventMember(_ key: Range<Int>) -> EventMember? {
        switch key.count {
        case 4: cursor.isKey(key, "type") ? .type : nil
        case 9: cursor.isKey(key, "timestamp") ? .timestamp : nil
        case 11: cursor.isKey(key, "globalCount") ? .globalCount : nil
        case 12: cursor.isKey(key, "modelVersion") ? .modelVersion : nil
        case 15: cursor.isKey(key, "changesByEntity") ? .changesByEntity : cursor.isKey(key, "storeIdentifier") ? .storeIdentifier : nil
        case 16: cursor.isKey(key, "uniqueIdentifier") ? .uniqueIdentifier : nil
        case 26: cursor.isKey(key, "revisionsByStoreIdentifier") ? .revisionsByStoreIdentifier : nil
        default: nil
        }
    }

    mutating func revisionSet() throws(Decline) -> RevisionSet {
        var pairs: [(String, Int64)] = []
        // Room for a usual ensemble's stores at once, not grown a store at a time.
        pairs.reserveCapacity(16)
        if try cursor.open(UInt8(ascii: "{"), UInt8(ascii: "}")) { return RevisionSet() }
        repeat {
            guard let store = cursor.text(try cursor.key()) else { throw Decline() }
            pairs.append((store, try cursor.unsignedInteger()))
        } while try cursor.next(UInt8(ascii: "}"))
        guard let revisions = RevisionSet(uniquePairs: pairs) else { throw Decline() }
        return revisions
    }

    private mutating func changesByEntity() throws(Decline) -> [ObjectChange] {
        var groups: [(entity: String, changes: [ObjectChange])] = []
        var entities = Set<ExactString>()
        if try cursor.open(UInt8(ascii: "{"), UInt8(ascii: "}")) { return [] }
        repeat {
            guard let entity = cursor.text(try cursor.key()), !entity.isEmpty, entities.insert(ExactString(entity)).inserted else { throw Decline() }
            var changes: [ObjectChange] = []
            if !(try cursor.open(UInt8(ascii: "["), UInt8(ascii: "]"))) {
                repeat { changes.append(try objectChange(entity: entity)) } while try cursor.next(UInt8(ascii: "]"))
            }
            groups.append((entity, changes))
        } while try cursor.next(UInt8(ascii: "}"))
        // Entities in UTF-8 order, as V2JSONDecoder joins them.
        if groups.count == 1 { return groups[0].changes }
        groups.sort { utf8Precedes($0.entity, $1.entity) }
        return groups.flatMap(\.changes)
    }

    private mutating func objectChange(entity: String) throws(Decline) -> ObjectChange {
        var type: ChangeType?, globalIdentifier: String?
        var properties: [PropertyChange]?, dataFiles: [String]?
        guard !(try cursor.open(UInt8(ascii: "{"), UInt8(ascii: "}"))) else { throw Decline() }
        repeat {
            let key = try cursor.key()
            if cursor.isKey(key, "type"), type == nil {
                guard let value = ChangeType(rawValue: try cursor.unsignedInteger()) else { throw Decline() }
                type = value
            } else if cursor.isKey(key, "globalIdentifier"), globalIdentifier == nil {
                let identifier = try cursor.string()
                guard !identifier.isEmpty else { throw Decline() }
                globalIdentifier = identifier
            } else if cursor.isKey(key, "properties"), properties == nil {
                var list: [PropertyChange] = []
                if !(try cursor.open(UInt8(ascii: "["), UInt8(ascii: "]"))) {
                    repeat { list.append(try propertyChange()) } while try cursor.next(UInt8(ascii: "]"))
                }
                properties = list
            } else if cursor.isKey(key, "dataFiles"), dataFiles == nil {
                let names = try identifierSet()
                guard names.allSatisfy(V2TextPatterns.isDataFileName) else { throw Decline() }
                dataFiles = names
            } else {
                throw Decline()
            }
        } while try cursor.next(UInt8(ascii: "}"))
        guard let type, let globalIdentifier else { throw Decline() }
        // Sorted here, as the public initializer would sort them: calling it copied (retained and
        // released) the change's parts once more (measured: Benchmarks/README.md). Sorted, a
        // name given twice is next to itself, found without a list of the names.
        let sorted = ObjectChange.sortedByName(properties ?? [])
        guard !sorted.indices.dropFirst().contains(where: { exactlyEqual(sorted[$0 - 1].name, sorted[$0].name) }) else { throw Decline() }
        return ObjectChange(
            entity: entity, globalIdentifier: globalIdentifier, type: type, sortedPropertyChanges: sorted, sortedDataFiles: sortedUnique(dataFiles ?? []))
    }

    /// Members of a property change, as bits of a mask.
    private enum PropertyMember: Int {
        case propertyName, name, type, value, filename, relatedIdentifier, addedIdentifiers, removedIdentifiers, movedIdentifiersByIndex

        var bit: UInt16 { 1 << rawValue }

        /// The members a property change of `kind` may have besides its name and type (the
        /// schema's `allOf`).
        static func own(_ kind: PropertyKind) -> UInt16 {
            switch kind {
            case .attribute: value.bit | filename.bit
            case .toOne: relatedIdentifier.bit
            case .toMany: addedIdentifiers.bit | removedIdentifiers.bit
            case .orderedToMany: addedIdentifiers.bit | removedIdentifiers.bit | movedIdentifiersByIndex.bit
            }
        }
    }

    private func propertyMember(_ key: Range<Int>) -> PropertyMember? {
        switch key.count {
        case 4: cursor.isKey(key, "type") ? .type : cursor.isKey(key, "name") ? .name : nil
        case 5: cursor.isKey(key, "value") ? .value : nil
        case 8: cursor.isKey(key, "filename") ? .filename : nil
        case 12: cursor.isKey(key, "propertyName") ? .propertyName : nil
        case 16: cursor.isKey(key, "addedIdentifiers") ? .addedIdentifiers : nil
        case 17: cursor.isKey(key, "relatedIdentifier") ? .relatedIdentifier : nil
        case 18: cursor.isKey(key, "removedIdentifiers") ? .removedIdentifiers : nil
        case 23: cursor.isKey(key, "movedIdentifiersByIndex") ? .movedIdentifiersByIndex : nil
        default: nil
        }
    }

    private mutating func propertyChange() throws(Decline) -> PropertyChange {
        var seen: UInt16 = 0
        var name = "", kind = PropertyKind.attribute
        var value = AttributeValue.null, filename = "", related: String?
        var added: [String] = [], removed: [String] = [], moved: [Int: String] = [:]
        guard !(try cursor.open(UInt8(ascii: "{"), UInt8(ascii: "}"))) else { throw Decline() }
        repeat {
            guard let member = propertyMember(try cursor.key()), seen & member.bit == 0 else { throw Decline() }
            seen |= member.bit
            switch member {
            case .propertyName, .name: name = try cursor.string()
            case .type:
                guard let parsed = PropertyKind(rawValue: try cursor.unsignedInteger()) else { throw Decline() }
                kind = parsed
            case .value: value = try attributeValue()
            case .filename:
                filename = try cursor.string()
                guard V2TextPatterns.isDataFileName(filename) else { throw Decline() }
            case .relatedIdentifier: related = try cursor.optionalString()
            case .addedIdentifiers: added = try identifierSet()
            case .removedIdentifiers: removed = try identifierSet()
            case .movedIdentifiersByIndex: moved = try movedIdentifiers()
            }
        } while try cursor.next(UInt8(ascii: "}"))
        let naming = seen & (PropertyMember.propertyName.bit | PropertyMember.name.bit)
        guard naming == PropertyMember.propertyName.bit || naming == PropertyMember.name.bit, !name.isEmpty,
            seen & PropertyMember.type.bit != 0,
            seen & ~(naming | PropertyMember.type.bit | PropertyMember.own(kind)) == 0
        else { throw Decline() }
        let changeValue: PropertyChange.Value
        switch kind {
        case .attribute:
            if seen & PropertyMember.filename.bit != 0 {
                // A `value` member beside `filename`, even `null`, is the general pipeline's error (Spec/v2-json.md 9).
                guard seen & PropertyMember.value.bit == 0 else { throw Decline() }
                changeValue = .attributeInDataFile(filename: filename)
            } else {
                changeValue = .attribute(value)
            }
        case .toOne: changeValue = .toOne(relatedIdentifier: related)
        // The identifier sets sorted here, as the public initializer would sort them (see above).
        case .toMany: changeValue = .toMany(added: sortedUnique(added), removed: sortedUnique(removed))
        case .orderedToMany: changeValue = .orderedToMany(added: sortedUnique(added), removed: sortedUnique(removed), movedByIndex: moved)
        }
        return PropertyChange(name: name, sortedValue: changeValue)
    }

    private mutating func attributeValue() throws(Decline) -> AttributeValue {
        cursor.skipWhitespace()
        switch cursor.current {
        case quote: return .string(try cursor.string())
        case UInt8(ascii: "t"):
            try cursor.literal("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try cursor.literal("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try cursor.literal("null")
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            let token = try cursor.number()
            if token.isIntegerLiteral, let value = cursor.smallInteger(token.range) { return .integer(value) }
            do throws(FormatError) {
                return try V2JSONDecoder.attributeNumber(cursor.numberText(token.range), at: .root)
            } catch {
                throw Decline()
            }
        case UInt8(ascii: "["):
            // A tagged pair ["<tag>", <string or number>] (Spec/v2-json.md 5.5).
            try cursor.countValue()
            cursor.index += 1
            let tag = try cursor.string()
            try cursor.expect(UInt8(ascii: ","))
            cursor.skipWhitespace()
            let payload: JSONValue
            switch cursor.current {
            case quote: payload = .string(try cursor.string())
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): payload = .number(cursor.numberText(try cursor.number().range))
            default: throw Decline()
            }
            try cursor.expect(UInt8(ascii: "]"))
            do throws(FormatError) {
                return try TaggedValue.decode(tag: tag, payload: payload, at: .root)
            } catch {
                throw Decline()
            }
        default: throw Decline()
        }
    }

    /// An array of strings, all different by their exact bytes.
    private mutating func identifierSet() throws(Decline) -> [String] {
        var identifiers: [String] = []
        if try cursor.open(UInt8(ascii: "["), UInt8(ascii: "]")) { return identifiers }
        repeat { identifiers.append(try cursor.string()) } while try cursor.next(UInt8(ascii: "]"))
        guard !hasDuplicates(identifiers) else { throw Decline() }
        return identifiers
    }

    private mutating func movedIdentifiers() throws(Decline) -> [Int: String] {
        var moved: [Int: String] = [:]
        if try cursor.open(UInt8(ascii: "{"), UInt8(ascii: "}")) { return moved }
        repeat {
            let key = try cursor.key()
            guard let index = V2TextPatterns.orderedIndex(UnsafeBufferPointer(rebasing: cursor.bytes[key])), moved[index] == nil else { throw Decline() }
            moved[index] = try cursor.string()
        } while try cursor.next(UInt8(ascii: "}"))
        return moved
    }

    /// Whether two strings have the same bytes; a scan for the few of a usual list.
    private func hasDuplicates(_ strings: [String]) -> Bool {
        if strings.count <= 8 {
            for i in strings.indices.dropFirst() where strings[..<i].contains(where: { exactlyEqual($0, strings[i]) }) { return true }
            return false
        }
        var seen = Set<ExactString>()
        return !strings.allSatisfy { seen.insert(ExactString($0)).inserted }
    }
}
