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
        read(bytes, position: position, options: options, into: ObjectChanges.self).map { part, changes in
            var part = part
            part.objectChanges = changes
            return part
        }
    }

    /// A single-file event with its object changes in numbered form only (the part holds none),
    /// for a merge's replay; nil exactly where ``decodePart(_:position:options:)`` is nil, and
    /// otherwise the same header and changes (`Tests/EventCodecsTests` compares them).
    package static func decodeNumbered(_ bytes: [UInt8], options: JSONReadingOptions = .strict) -> (part: EventPart, changes: NumberedEvent)? {
        read(bytes, position: .single, options: options, into: NumberedObjectChanges.self)
    }

    private static func read<Changes: ChangesBuilder>(
        _ bytes: [UInt8], position: EventPartPosition, options: JSONReadingOptions, into: Changes.Type
    ) -> (EventPart, Changes.Built)? {
        // The deepest value this decoder accepts is a tagged attribute value: 7 levels.
        guard bytes.count <= options.maximumBytes, options.maximumDepth >= 7 else { return nil }
        return bytes.withUnsafeBufferPointer { buffer in
            var reader = PartReader<Changes>(cursor: Cursor(bytes: buffer, options: options), changes: Changes(fileBytes: bytes.count))
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

    @inline(__always)
    mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    /// Skips whitespace, then consumes `byte` when it comes next.
    @inline(__always)
    mutating func consume(_ byte: UInt8) -> Bool {
        skipWhitespace()
        guard current == byte else { return false }
        index += 1
        return true
    }

    @inline(__always)
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
    /// quote, a backslash nor a control character. Stops at the first byte that is one of those
    /// (or where fewer than 8 are left), for the caller's byte-by-byte loop, which decides.
    /// Scanning every byte was an eighth of decoding (measured: Benchmarks/README.md).
    mutating func skipPlainText() { index = ByteLanes.plainStringEnd(in: bytes, from: index) }

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

    /// The member of `Member` whose key comes next, and the `:` after it. The member is told by
    /// its key's first and third bytes and the key compared whole with its closing quote, where
    /// ``key()`` scans for that quote first: the keys of object and property changes are most of
    /// a file's (measured: Benchmarks/README.md). Any other key (another name, an escape, one
    /// longer than ``maximumStringBytes``) is declined, as ``key()`` and a failed match would.
    mutating func member<Member: ObjectMember>(_: Member.Type) throws(Decline) -> Member {
        try expect(quote)
        guard index + 2 < bytes.count, let member = Member(first: bytes[index], third: bytes[index + 2]) else { throw Decline() }
        let key = member.key, end = index + key.utf8CodeUnitCount
        guard end < bytes.count, bytes[end] == quote, key.utf8CodeUnitCount <= maximumStringBytes, let base = bytes.baseAddress,
            memcmp(base + index, key.utf8Start, key.utf8CodeUnitCount) == 0
        else { throw Decline() }
        index = end + 1
        try expect(UInt8(ascii: ":"))
        return member
    }

    /// Bytes without escapes as text, or nil when they are not UTF-8 (Swift's validation is RFC
    /// 3629's, as the parser's: no overlong forms, no surrogates). `isASCII` when already known.
    func text(_ range: Range<Int>, isASCII: Bool? = nil) -> String? {
        let slice = UnsafeBufferPointer(rebasing: bytes[range])
        return isASCII ?? slice.allSatisfy({ $0 < 0x80 }) ? String(decoding: slice, as: UTF8.self) : String(validating: slice, as: UTF8.self)
    }

    /// A string's bytes: where they stand in the document when it has no escapes, or decoded.
    enum StringBytes {
        case plain(Range<Int>, isASCII: Bool)
        case unescaped([UInt8])
    }

    /// A string, its UTF-8 not yet checked.
    mutating func stringBytes() throws(Decline) -> StringBytes {
        try countValue()
        try expect(quote)
        let start = index
        skipPlainText()
        var ascii = true
        while index < bytes.count, bytes[index] != quote {
            let byte = bytes[index]
            if byte == backslash { return .unescaped(try unescaped(from: start)) }
            guard byte >= 0x20 else { throw Decline() }
            if byte >= 0x80 { ascii = false }
            index += 1
        }
        guard index < bytes.count, index - start <= maximumStringBytes else { throw Decline() }
        index += 1
        return .plain(start..<(index - 1), isASCII: ascii)
    }

    mutating func string() throws(Decline) -> String {
        let text: String?
        switch try stringBytes() {
        case .plain(let range, let isASCII): text = self.text(range, isASCII: isASCII)
        case .unescaped(let output): text = String(validating: output, as: UTF8.self)
        }
        guard let text else { throw Decline() }
        return text
    }

    /// A string with escapes, from its first byte, decoded; surrogate escapes are left to the parser.
    private mutating func unescaped(from start: Int) throws(Decline) -> [UInt8] {
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
        guard index < bytes.count, output.count <= maximumStringBytes else { throw Decline() }
        index += 1
        return output
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

/// The members of a JSON object that the decoder knows, each named by a key.
private protocol ObjectMember {
    /// The member's key.
    var key: StaticString { get }
    /// The member whose key a key starting with `first`, with `third` as its third byte, may be
    /// (no two keys of a type share both): a candidate, which the key compared whole decides.
    init?(first: UInt8, third: UInt8)
}

/// Members of an event, as bits of a mask.
private enum EventMember: Int, ObjectMember {
    case uniqueIdentifier, type, globalCount, timestamp, storeIdentifier, modelVersion, revisionsByStoreIdentifier, changesByEntity

    static let header: UInt16 = 0b0111_1111
    static let requiredHeader: UInt16 = header & ~(1 << 5)

    var key: StaticString {
        switch self {
        case .uniqueIdentifier: "uniqueIdentifier"
        case .type: "type"
        case .globalCount: "globalCount"
        case .timestamp: "timestamp"
        case .storeIdentifier: "storeIdentifier"
        case .modelVersion: "modelVersion"
        case .revisionsByStoreIdentifier: "revisionsByStoreIdentifier"
        case .changesByEntity: "changesByEntity"
        }
    }

    init?(first: UInt8, third: UInt8) {
        let member: Self? =
            switch first {
            case UInt8(ascii: "u"): .uniqueIdentifier
            case UInt8(ascii: "t"): third == UInt8(ascii: "p") ? .type : .timestamp
            case UInt8(ascii: "g"): .globalCount
            case UInt8(ascii: "s"): .storeIdentifier
            case UInt8(ascii: "m"): .modelVersion
            case UInt8(ascii: "r"): .revisionsByStoreIdentifier
            case UInt8(ascii: "c"): .changesByEntity
            default: nil
            }
        guard let member else { return nil }
        self = member
    }
}

/// Members of an object change.
private enum ChangeMember: ObjectMember {
    case type, globalIdentifier, properties, dataFiles

    var key: StaticString {
        switch self {
        case .type: "type"
        case .globalIdentifier: "globalIdentifier"
        case .properties: "properties"
        case .dataFiles: "dataFiles"
        }
    }

    init?(first: UInt8, third: UInt8) {
        let member: Self? =
            switch first {
            case UInt8(ascii: "t"): .type
            case UInt8(ascii: "g"): .globalIdentifier
            case UInt8(ascii: "p"): .properties
            case UInt8(ascii: "d"): .dataFiles
            default: nil
            }
        guard let member else { return nil }
        self = member
    }
}

/// Members of a property change, as bits of a mask.
private enum PropertyMember: Int, ObjectMember {
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

    var key: StaticString {
        switch self {
        case .propertyName: "propertyName"
        case .name: "name"
        case .type: "type"
        case .value: "value"
        case .filename: "filename"
        case .relatedIdentifier: "relatedIdentifier"
        case .addedIdentifiers: "addedIdentifiers"
        case .removedIdentifiers: "removedIdentifiers"
        case .movedIdentifiersByIndex: "movedIdentifiersByIndex"
        }
    }

    init?(first: UInt8, third: UInt8) {
        let member: Self? =
            switch first {
            case UInt8(ascii: "p"): .propertyName
            case UInt8(ascii: "n"): .name
            case UInt8(ascii: "t"): .type
            case UInt8(ascii: "v"): .value
            case UInt8(ascii: "f"): .filename
            case UInt8(ascii: "r"): third == UInt8(ascii: "l") ? .relatedIdentifier : .removedIdentifiers
            case UInt8(ascii: "a"): .addedIdentifiers
            case UInt8(ascii: "m"): .movedIdentifiersByIndex
            default: nil
            }
        guard let member else { return nil }
        self = member
    }
}

/// The v2 event structure (Spec/v2-json.md 5) over a ``Cursor``.
private struct PartReader<Changes: ChangesBuilder> {
    var cursor: Cursor
    var changes: Changes

    mutating func part(_ position: EventPartPosition) throws(Decline) -> (EventPart, Changes.Built) {
        var seen: UInt16 = 0
        var uniqueIdentifier = "", storeIdentifier = "", modelVersion: String?
        var type = EventType.save, globalCount: Int64 = 0, timestamp = 0.0
        var revisions = RevisionSet()
        if !(try cursor.open(UInt8(ascii: "{"), UInt8(ascii: "}"))) {
            repeat {
                let member = try cursor.member(EventMember.self)
                guard seen & (1 << member.rawValue) == 0 else { throw Decline() }
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
                case .changesByEntity: try changesByEntity()
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
        return (EventPart(position: position, header: header, objectChanges: [], unknownFields: JSONObject(), unknownKeys: []), try changes.finish())
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

    /// Every entity's changes, handed to ``changes``; an entity named twice is declined when they
    /// are finished.
    private mutating func changesByEntity() throws(Decline) {
        if try cursor.open(UInt8(ascii: "{"), UInt8(ascii: "}")) { return }
        repeat {
            let key = try cursor.key()
            guard !key.isEmpty, let entity = changes.name(UnsafeBufferPointer(rebasing: cursor.bytes[key])) else { throw Decline() }
            changes.beginEntity(entity)
            if !(try cursor.open(UInt8(ascii: "["), UInt8(ascii: "]"))) {
                repeat { try objectChange() } while try cursor.next(UInt8(ascii: "]"))
            }
        } while try cursor.next(UInt8(ascii: "}"))
    }

    /// A string of the changes, as ``changes`` keeps it.
    private mutating func text() throws(Decline) -> Changes.Text {
        let text: Changes.Text?
        switch try cursor.stringBytes() {
        case .plain(let range, let isASCII): text = changes.text(UnsafeBufferPointer(rebasing: cursor.bytes[range]), isASCII: isASCII)
        case .unescaped(let bytes): text = bytes.withUnsafeBufferPointer { changes.text($0, isASCII: false) }
        }
        guard let text else { throw Decline() }
        return text
    }

    /// A string or null.
    private mutating func optionalText() throws(Decline) -> Changes.Text? {
        cursor.skipWhitespace()
        if cursor.current == UInt8(ascii: "n") {
            try cursor.literal("null")
            return nil
        }
        return try text()
    }

    private mutating func objectChange() throws(Decline) {
        var type: ChangeType?, globalIdentifier: Changes.Text?
        var hasProperties = false, dataFiles: [Changes.Text] = []
        var hasDataFiles = false
        guard !(try cursor.open(UInt8(ascii: "{"), UInt8(ascii: "}"))) else { throw Decline() }
        repeat {
            switch try cursor.member(ChangeMember.self) {
            case .type:
                guard type == nil, let value = ChangeType(rawValue: try cursor.unsignedInteger()) else { throw Decline() }
                type = value
            case .globalIdentifier:
                guard globalIdentifier == nil else { throw Decline() }
                let identifier = try text()
                guard !changes.isEmpty(identifier) else { throw Decline() }
                globalIdentifier = identifier
            case .properties:
                guard !hasProperties else { throw Decline() }
                hasProperties = true
                if !(try cursor.open(UInt8(ascii: "["), UInt8(ascii: "]"))) {
                    repeat { try propertyChange() } while try cursor.next(UInt8(ascii: "]"))
                }
            case .dataFiles:
                guard !hasDataFiles else { throw Decline() }
                hasDataFiles = true
                dataFiles = try identifierSet()
                guard dataFiles.allSatisfy(changes.isDataFileName) else { throw Decline() }
            }
        } while try cursor.next(UInt8(ascii: "}"))
        guard let type, let globalIdentifier else { throw Decline() }
        try changes.endChange(identifier: globalIdentifier, type: type, dataFiles: dataFiles)
    }

    private mutating func propertyChange() throws(Decline) {
        var seen: UInt16 = 0
        var name: Changes.Text?, kind = PropertyKind.attribute
        var value = AttributeValue.null, filename: Changes.Text?, related: Changes.Text?
        var added: [Changes.Text] = [], removed: [Changes.Text] = [], moved = [Int: Changes.Text]()
        guard !(try cursor.open(UInt8(ascii: "{"), UInt8(ascii: "}"))) else { throw Decline() }
        repeat {
            let member = try cursor.member(PropertyMember.self)
            guard seen & member.bit == 0 else { throw Decline() }
            seen |= member.bit
            switch member {
            case .propertyName, .name: name = try propertyName()
            case .type:
                guard let parsed = PropertyKind(rawValue: try cursor.unsignedInteger()) else { throw Decline() }
                kind = parsed
            case .value: value = try attributeValue()
            case .filename:
                let file = try text()
                guard changes.isDataFileName(file) else { throw Decline() }
                filename = file
            case .relatedIdentifier: related = try optionalText()
            case .addedIdentifiers: added = try identifierSet()
            case .removedIdentifiers: removed = try identifierSet()
            case .movedIdentifiersByIndex: moved = try movedIdentifiers()
            }
        } while try cursor.next(UInt8(ascii: "}"))
        let naming = seen & (PropertyMember.propertyName.bit | PropertyMember.name.bit)
        guard naming == PropertyMember.propertyName.bit || naming == PropertyMember.name.bit, let name,
            seen & PropertyMember.type.bit != 0,
            seen & ~(naming | PropertyMember.type.bit | PropertyMember.own(kind)) == 0
        else { throw Decline() }
        switch kind {
        case .attribute:
            if let filename {
                // A `value` member beside `filename`, even `null`, is the general pipeline's error (Spec/v2-json.md 9).
                guard seen & PropertyMember.value.bit == 0 else { throw Decline() }
                changes.property(name: name, .dataFile(filename))
            } else {
                changes.property(name: name, .attribute(consume value))
            }
        case .toOne: changes.property(name: name, .toOne(related))
        case .toMany: changes.property(name: name, .toMany(added: added, removed: removed))
        case .orderedToMany: changes.property(name: name, .orderedToMany(added: added, removed: removed, moved: moved))
        }
    }

    /// A property's name, not empty, as ``changes`` keeps names.
    private mutating func propertyName() throws(Decline) -> Changes.Text {
        let name: Changes.Text?
        switch try cursor.stringBytes() {
        case .plain(let range, _): name = range.isEmpty ? nil : changes.name(UnsafeBufferPointer(rebasing: cursor.bytes[range]))
        case .unescaped(let bytes): name = bytes.isEmpty ? nil : bytes.withUnsafeBufferPointer { changes.name($0) }
        }
        guard let name else { throw Decline() }
        return name
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
            if !token.isIntegerLiteral, let value = JSONNumber.exactDouble(UnsafeBufferPointer(rebasing: cursor.bytes[token.range])) {
                return .double(value)
            }
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

    /// An array of strings, all different by their exact bytes, sorted (UTF-8 byte order).
    private mutating func identifierSet() throws(Decline) -> [Changes.Text] {
        var identifiers: [Changes.Text] = []
        if try cursor.open(UInt8(ascii: "["), UInt8(ascii: "]")) { return identifiers }
        repeat { identifiers.append(try text()) } while try cursor.next(UInt8(ascii: "]"))
        guard let set = changes.sortedSet(identifiers) else { throw Decline() }
        return set
    }

    private mutating func movedIdentifiers() throws(Decline) -> [Int: Changes.Text] {
        var moved: [Int: Changes.Text] = [:]
        if try cursor.open(UInt8(ascii: "{"), UInt8(ascii: "}")) { return moved }
        repeat {
            let key = try cursor.key()
            guard let index = V2TextPatterns.orderedIndex(UnsafeBufferPointer(rebasing: cursor.bytes[key])), moved[index] == nil else { throw Decline() }
            moved[index] = try text()
        } while try cursor.next(UInt8(ascii: "}"))
        return moved
    }
}

/// A property change's value as the reader hands it to a ``ChangesBuilder``.
private enum ReadProperty<Text> {
    case attribute(AttributeValue)
    case dataFile(Text)
    case toOne(Text?)
    /// Each list sorted and unique.
    case toMany(added: [Text], removed: [Text])
    case orderedToMany(added: [Text], removed: [Text], moved: [Int: Text])
}

/// What the reader builds from the object changes it has read: one reader, whose checks are the
/// same whatever it builds. Calls come entity by entity (``beginEntity(_:)``), and in an entity
/// change by change: its properties in the file's order, then
/// ``endChange(identifier:type:dataFiles:)``; ``finish()`` last.
private protocol ChangesBuilder {
    /// A string of the changes as this builder keeps it.
    associatedtype Text
    associatedtype Built
    /// A builder for a file of `fileBytes` bytes.
    init(fileBytes: Int)
    /// Text from its bytes, or nil when they are not UTF-8 (`isASCII`: known to be ASCII).
    mutating func text(_ bytes: UnsafeBufferPointer<UInt8>, isASCII: Bool) -> Text?
    /// An entity or property name, or nil when it is not UTF-8: equal names may share a text.
    mutating func name(_ bytes: UnsafeBufferPointer<UInt8>) -> Text?
    func isEmpty(_ text: Text) -> Bool
    /// ``V2TextPatterns/isDataFileName(_:)``.
    func isDataFileName(_ text: Text) -> Bool
    /// The texts sorted by their UTF-8 bytes, or nil when two have the same bytes.
    func sortedSet(_ texts: [Text]) -> [Text]?
    mutating func beginEntity(_ entity: Text)
    mutating func property(name: Text, _ value: consuming ReadProperty<Text>)
    /// Closes a change; declines when two of its properties have the same name.
    mutating func endChange(identifier: Text, type: ChangeType, dataFiles: [Text]) throws(Decline)
    /// The changes, entities in UTF-8 byte order (each entity's changes in the file's order);
    /// declines when an entity was named twice.
    mutating func finish() throws(Decline) -> Built
}

extension ChangesBuilder {
    /// Bytes without escapes as a `String`, or nil when they are not UTF-8 (Swift's validation is
    /// RFC 3629's, as the parser's: no overlong forms, no surrogates).
    fileprivate static func string(_ bytes: UnsafeBufferPointer<UInt8>, isASCII: Bool) -> String? {
        isASCII ? String(decoding: bytes, as: UTF8.self) : String(validating: bytes, as: UTF8.self)
    }

    fileprivate static func isASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool { bytes.allSatisfy { $0 < 0x80 } }
}

/// The changes as an ``Event`` holds them.
private struct ObjectChanges: ChangesBuilder {
    private var groups: [(entity: String, changes: [ObjectChange])] = []
    private var properties: [PropertyChange] = []

    init(fileBytes: Int) {}

    func text(_ bytes: UnsafeBufferPointer<UInt8>, isASCII: Bool) -> String? { Self.string(bytes, isASCII: isASCII) }
    func name(_ bytes: UnsafeBufferPointer<UInt8>) -> String? { Self.string(bytes, isASCII: Self.isASCII(bytes)) }
    func isEmpty(_ text: String) -> Bool { text.isEmpty }
    func isDataFileName(_ text: String) -> Bool { V2TextPatterns.isDataFileName(text) }

    func sortedSet(_ texts: [String]) -> [String]? {
        if texts.count <= 8 {
            for i in texts.indices.dropFirst() where texts[..<i].contains(where: { exactlyEqual($0, texts[i]) }) { return nil }
        } else {
            var seen = Set<ExactString>()
            guard texts.allSatisfy({ seen.insert(ExactString($0)).inserted }) else { return nil }
        }
        return sortedUnique(texts)
    }

    mutating func beginEntity(_ entity: String) { groups.append((entity, [])) }

    mutating func property(name: String, _ value: consuming ReadProperty<String>) {
        let changeValue: PropertyChange.Value =
            switch value {
            case .attribute(let value): .attribute(value)
            case .dataFile(let file): .attributeInDataFile(filename: file)
            case .toOne(let related): .toOne(relatedIdentifier: related)
            case .toMany(let added, let removed): .toMany(added: added, removed: removed)
            case .orderedToMany(let added, let removed, let moved): .orderedToMany(added: added, removed: removed, movedByIndex: moved)
            }
        properties.append(PropertyChange(name: name, sortedValue: changeValue))
    }

    mutating func endChange(identifier: String, type: ChangeType, dataFiles: [String]) throws(Decline) {
        // Sorted here, as the public initializer would sort them: calling it copied (retained and
        // released) the change's parts once more (measured: Benchmarks/README.md). Sorted, a
        // name given twice is next to itself, found without a list of the names.
        let sorted = ObjectChange.sortedByName(properties)
        properties = []
        guard !sorted.indices.dropFirst().contains(where: { exactlyEqual(sorted[$0 - 1].name, sorted[$0].name) }), let last = groups.indices.last else {
            throw Decline()
        }
        groups[last].changes.append(
            ObjectChange(entity: groups[last].entity, globalIdentifier: identifier, type: type, sortedPropertyChanges: sorted, sortedDataFiles: dataFiles))
    }

    mutating func finish() throws(Decline) -> [ObjectChange] {
        if groups.count <= 1 { return groups.first?.changes ?? [] }
        groups.sort { utf8Precedes($0.entity, $1.entity) }
        guard !groups.indices.dropFirst().contains(where: { exactlyEqual(groups[$0 - 1].entity, groups[$0].entity) }) else { throw Decline() }
        return groups.flatMap(\.changes)
    }
}

/// The changes in numbered form (``NumberedEvent``): strings go from the file's bytes into the
/// event's table without becoming `String`s; equal names get one number.
private struct NumberedObjectChanges: ChangesBuilder {
    private var event = NumberedEvent()
    /// Each entity's string number and the positions of its changes.
    private var groups: [(entity: Int32, changes: Range<Int>)] = []
    /// Recently numbered names by a hash of their bytes: a change's property names are those of
    /// the change before it, most of the time.
    private var names = [Int32](repeating: -1, count: 64)

    /// In the generated 1M-change folder's JSON a change takes 248 bytes of the file, a
    /// property 114, a string of the table 131, and the table's text is a fifth of the file
    /// (Benchmarks/README.md): a little more is asked for, so that most events never grow.
    init(fileBytes: Int) {
        event.reserve(changes: fileBytes / 224, properties: fileBytes / 96, strings: fileBytes / 112, textBytes: fileBytes / 3)
    }

    mutating func text(_ bytes: UnsafeBufferPointer<UInt8>, isASCII: Bool) -> Int32? {
        // A UUID's canonical upper-case text is kept as its halves, as the binary reader keeps a
        // UUID entry: the applying thread looks identifiers up by them, and parsed each one's
        // text itself before (measured: Benchmarks/README.md).
        if bytes.count == UUIDPrefix.textLength, let halves = UUIDPrefix.halves(ofText: bytes) { return event.append(uuid: halves) }
        guard isASCII || Self.string(bytes, isASCII: false) != nil else { return nil }
        return event.append(bytes)
    }

    mutating func name(_ bytes: UnsafeBufferPointer<UInt8>) -> Int32? {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        let slot = Int(truncatingIfNeeded: hash >> 58)
        if names[slot] >= 0, event.hasBytes(names[slot], bytes) { return names[slot] }
        guard let number = text(bytes, isASCII: Self.isASCII(bytes)) else { return nil }
        names[slot] = number
        return number
    }

    func isEmpty(_ text: Int32) -> Bool { event.isEmpty(text) }
    func isDataFileName(_ text: Int32) -> Bool { V2TextPatterns.isDataFileName(event.string(text)) }

    func sortedSet(_ texts: [Int32]) -> [Int32]? {
        // Most sets have one member or none.
        if texts.count < 2 { return texts }
        let sorted = texts.indices.dropFirst().allSatisfy { event.precedes(texts[$0 - 1], texts[$0]) } ? texts : event.inStringOrder(texts[...])
        // Sorted, equal bytes are next to each other.
        return sorted.indices.dropFirst().contains { event.same(sorted[$0 - 1], sorted[$0]) } ? nil : sorted
    }

    mutating func beginEntity(_ entity: Int32) {
        closeGroup()
        groups.append((entity, event.changes.count..<event.changes.count))
    }

    private mutating func closeGroup() {
        if let last = groups.indices.last { groups[last].changes = groups[last].changes.lowerBound..<event.changes.count }
    }

    mutating func property(name: Int32, _ value: consuming ReadProperty<Int32>) {
        // Consumed, so that an attribute value moves into the event (a copy was a retain here
        // and a release when the reader's value was freed).
        switch consume value {
        case .attribute(let value): event.addAttribute(name: name, value)
        case .dataFile(let file): event.addDataFile(name: name, file)
        case .toOne(let related): event.addToOne(name: name, related)
        case .toMany(let added, let removed): event.addRelationship(name: name, ordered: false, added: added, removed: removed, moved: [])
        case .orderedToMany(let added, let removed, let moved):
            let moves = moved.sorted { $0.key < $1.key }.map { NumberedEvent.Move(position: Int32(truncatingIfNeeded: $0.key), identifier: $0.value) }
            event.addRelationship(name: name, ordered: true, added: added, removed: removed, moved: moves)
        }
    }

    mutating func endChange(identifier: Int32, type: ChangeType, dataFiles: [Int32]) throws(Decline) {
        guard event.sortOpenProperties(), let entity = groups.last?.entity else { throw Decline() }
        event.addChange(entity: entity, identifier: identifier, type: type, dataFiles: dataFiles)
    }

    mutating func finish() throws(Decline) -> NumberedEvent {
        closeGroup()
        guard groups.count > 1 else { return event }
        let event = event
        let order = groups.indices.sorted { event.precedes(groups[$0].entity, groups[$1].entity) }
        guard !order.indices.dropFirst().contains(where: { event.same(groups[order[$0 - 1]].entity, groups[order[$0]].entity) }) else { throw Decline() }
        if order != Array(groups.indices) { self.event.reorderChanges(order.flatMap { Array(groups[$0].changes) }) }
        return self.event
    }
}
