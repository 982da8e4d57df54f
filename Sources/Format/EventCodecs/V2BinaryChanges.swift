import JSONDocument
import EnsembleModel

/// A property change's value as the binary reader checks it: strings as positions in the
/// file's string table (Spec/v2-binary.md 8.3).
enum ReadValue {
    case attribute(AttributeValue)
    case dataFile(Int)
    case toOne(Int?)
    case toMany(added: [Int], removed: [Int])
    /// The moved members by ascending position.
    case orderedToMany(added: [Int], removed: [Int], moved: [(position: Int, identifier: Int)])
}

/// The file's string table (Spec/v2-binary.md 6) as the binary reader keeps it: `String`s for an
/// ``Event``, or bytes for the numbered form (``NumberedStrings``), with no `String` made. The
/// reader's checks read strings through these few calls only, so they are the same for either.
protocol BinaryStringTable {
    init()
    var stringCount: Int { get }
    /// Makes room for `count` more strings; `stored` is the bytes of the table as stored.
    mutating func reserve(_ count: Int, stored: Int)
    /// Adds a checked entry: the uppercase text of the 16 bytes of `uuid` (if any), then `text`,
    /// valid UTF-8.
    mutating func append(uuid: UnsafeBufferPointer<UInt8>?, _ text: UnsafeBufferPointer<UInt8>)
    /// Calls `body` with the UTF-8 bytes of string `index`.
    func withBytes<R>(of index: Int, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R
    /// Whether string `index` is empty.
    func isEmpty(_ index: Int) -> Bool
    /// String `index` as a `String`, where one is needed: the header's, attribute values, messages.
    func string(_ index: Int) -> String
    /// Whether string `a` comes before string `b` in UTF-8 byte order (``utf8Precedes(_:_:)``).
    func precedes(_ a: Int, _ b: Int) -> Bool
}

extension BinaryStringTable {
    func isEmpty(_ index: Int) -> Bool { withBytes(of: index) { $0.isEmpty } }

    func precedes(_ a: Int, _ b: Int) -> Bool { bytesPrecede(a, b) }

    /// ``precedes(_:_:)`` by reading the two strings' bytes.
    func bytesPrecede(_ a: Int, _ b: Int) -> Bool { withBytes(of: a) { x in withBytes(of: b) { y in utf8Precedes(x, y) } } }
}

/// The table an ``Event`` is made from: each string made once, shared by every reference to it.
extension [String]: BinaryStringTable {
    var stringCount: Int { count }

    mutating func reserve(_ count: Int, stored: Int) { reserveCapacity(self.count + count) }

    mutating func append(uuid: UnsafeBufferPointer<UInt8>?, _ text: UnsafeBufferPointer<UInt8>) {
        guard let uuid else { return append(String(decoding: text, as: UTF8.self)) }
        append(
            String(unsafeUninitializedCapacity: UUIDPrefix.textLength + text.count) { buffer in
                UUIDPrefix.write(uuid, to: buffer)
                _ = UnsafeMutableBufferPointer(rebasing: buffer[UUIDPrefix.textLength...]).initialize(fromContentsOf: text)
                return UUIDPrefix.textLength + text.count
            })
    }

    func withBytes<R>(of index: Int, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R { ExactString.withUTF8(of: self[index], body) }

    func string(_ index: Int) -> String { self[index] }
}

/// The numbered form's table as the reader fills it: the strings' UTF-8 bytes one after another
/// (a UUID prefix with more after it written out as its text in place; a UUID alone kept as its
/// halves only, with no text), and where each string ends; handed over to
/// ``NumberedEvent/init(text:ends:uuids:)``. A type of this module, so that the reader's calls on it
/// are specialized and inlined here.
struct NumberedStrings: BinaryStringTable {
    private let text = TextBuffer()
    private(set) var ends: [Int] = []
    /// The entries that are a UUID and nothing after it, as their 16 bytes.
    private(set) var uuids = NumberedEvent.UUIDHints()
    /// The `String`s made so far: each string once, shared by every value that names it, as in
    /// the `String` table. A reference takes a byte or two and a string up to 16 MiB
    /// (Spec/v2-binary.md 6 and 11): a `String` per reference could make a small file take terabytes.
    private let made = MadeStrings()

    var stringCount: Int { ends.count }

    mutating func reserve(_ count: Int, stored: Int) {
        ends.reserveCapacity(ends.count + count)
        // An entry with a UUID prefix and more (1 + 16 + n bytes stored, n > 0) is 36 + n bytes
        // of text: at most 37/18 as many, under 17/8; a UUID alone has none, and an entry
        // without a prefix is a byte fewer.
        text.reserve(stored + (stored * 9 + 7) / 8)
        // A UUID's halves take 16 bytes, fewer than the 17 it is stored in at least: room for
        // every one there can be (grown one at a time, the list was reallocated about six times
        // per event).
        uuids.halves.reserveCapacity(uuids.halves.count + 2 * (stored / 17))
    }

    mutating func append(uuid: UnsafeBufferPointer<UInt8>?, _ bytes: UnsafeBufferPointer<UInt8>) {
        let halves = uuid.map { UUIDPrefix.halves(of: UnsafeRawBufferPointer($0)) }
        // A UUID with text after it is written out whole; one with nothing after it (most
        // entries) is its halves alone, its text written where it is read
        // (``NumberedEvent/withBytes(of:_:)``): the merge reads most identifiers as halves, and
        // writing each one's 36 characters was a tenth of decoding (Benchmarks/README.md).
        if let halves, !bytes.isEmpty { text.appendUUID(high: halves.high, low: halves.low) }
        // This string's place among the hints: the UUID's halves when nothing follows it.
        if let halves, bytes.isEmpty {
            // Room for the strings the table reserved (``reserve(_:stored:)``).
            uuids.add(halves, asString: ends.count, room: ends.capacity)
        } else if !uuids.positions.isEmpty {
            uuids.positions.append(-1)
        }
        if !bytes.isEmpty { text.append(bytes) }
        ends.append(text.count)
    }

    /// The text of every string so far, one after another (none for a UUID kept as halves).
    var textBytes: UnsafeBufferPointer<UInt8> { text.bytes }

    func precedes(_ a: Int, _ b: Int) -> Bool {
        // Two UUIDs with nothing after them, as most entries are: their halves compare as their
        // upper-case texts do, without reading the texts.
        if let x = uuids.halves(of: a), let y = uuids.halves(of: b) { return (x.high, x.low) < (y.high, y.low) }
        return bytesPrecede(a, b)
    }

    func withBytes<R>(of index: Int, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        if isUUID(index), let uuid = uuids.halves(of: index) { return UUIDPrefix.withText(high: uuid.high, low: uuid.low, body) }
        // String n ends at ends[n] and starts where string n - 1 ends, as in the numbered form.
        let start = index == 0 ? 0 : ends[index - 1]
        return body(UnsafeBufferPointer(rebasing: text.bytes[start..<ends[index]]))
    }

    func isEmpty(_ index: Int) -> Bool { ends[index] == (index == 0 ? 0 : ends[index - 1]) && !isUUID(index) }

    /// Whether string `index` is kept as a UUID's halves (read from the list in place: this is
    /// asked for every string the reader checks).
    private func isUUID(_ index: Int) -> Bool { index < uuids.positions.count && uuids.positions[index] >= 0 }

    func string(_ index: Int) -> String {
        // Sized on first use; grown if strings were added since.
        if made.positions.count < ends.count {
            // Room, on first use, for the strings a file's values most often make (about one
            // in four entries): grown from one, the list was reallocated six times per file.
            if made.positions.isEmpty { made.strings.reserveCapacity(ends.count / 4) }
            made.positions += repeatElement(-1, count: ends.count - made.positions.count)
        }
        if made.positions[index] >= 0 { return made.strings[Int(made.positions[index])] }
        let string: String
        if isUUID(index), let uuid = uuids.halves(of: index) {
            string = UUIDPrefix.text(high: uuid.high, low: uuid.low)
        } else {
            string = withBytes(of: index) { String(decoding: $0, as: UTF8.self) }
        }
        made.positions[index] = Int32(truncatingIfNeeded: made.strings.count)
        made.strings.append(string)
        return string
    }
}

/// ``NumberedStrings``'s text as it is written, in memory of its own, copied into the numbered
/// event's list once, whole: appended to an array a string at a time, each append checked the
/// array's uniqueness and room (about 90 instructions a string, Benchmarks/README.md), and a
/// UUID's text was written on the stack first. One file's table, written by one thread, then
/// only read: its fields are not checked for exclusive access (``MadeStrings``), and a copy of
/// the table shares it.
private final class TextBuffer {
    @exclusivity(unchecked) private var start = UnsafeMutablePointer<UInt8>.allocate(capacity: 64)
    @exclusivity(unchecked) private(set) var count = 0
    @exclusivity(unchecked) private var capacity = 64

    deinit { start.deallocate() }

    var bytes: UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(start: start, count: count) }

    /// Room for `more` bytes after the last.
    func reserve(_ more: Int) {
        guard more > capacity - count else { return }
        let grown = max(count + more, 2 * capacity)
        let moved = UnsafeMutablePointer<UInt8>.allocate(capacity: grown)
        moved.initialize(from: start, count: count)
        start.deallocate()
        (start, capacity) = (moved, grown)
    }

    func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let source = bytes.baseAddress else { return }
        reserve(bytes.count)
        (start + count).initialize(from: source, count: bytes.count)
        count += bytes.count
    }

    /// Appends the 36 characters of the UUID with these big-endian halves.
    func appendUUID(high: UInt64, low: UInt64) {
        reserve(UUIDPrefix.textLength)
        UUIDPrefix.write(high: high, low: low, to: UnsafeMutableBufferPointer(start: start + count, count: UUIDPrefix.textLength))
        count += UUIDPrefix.textLength
    }
}

/// ``NumberedStrings/string(_:)``'s strings in the order they were made, and where each string
/// of the table is among them (-1: none made yet); a class, so that reading a string (a
/// reader's table is read, not changed) can keep what it made. Positions, not a `String?` per
/// entry: filling those with nil retained and released nothing, a call per entry of every file.
/// Its lists are not checked for exclusive access as they run: a table is one file's, read by
/// one thread, and `string(_:)` touches them in one call at a time (the checks took a third of
/// its time: Benchmarks/README.md).
private final class MadeStrings {
    @exclusivity(unchecked) var strings: [String] = []
    @exclusivity(unchecked) var positions: [Int32] = []
}

/// What the binary reader builds from the object changes it has checked (Spec/v2-binary.md 8):
/// one reader, whose checks are the same whatever it builds. Strings are positions in `strings`,
/// the file's table, kept as the builder needs it; calls come change by change:
/// ``beginChange(propertyCount:)``, each property in order, then
/// ``endChange(entity:identifier:type:dataFiles:)``.
protocol DecodedChanges {
    associatedtype Strings: BinaryStringTable
    init(strings: Strings)
    mutating func beginChange(propertyCount: Int)
    /// Makes room for what a changes section of `sectionBytes` most likely holds.
    mutating func reserve(sectionBytes: Int)
    mutating func property(name: Int, _ value: consuming ReadValue)
    mutating func endChange(entity: Int, identifier: Int, type: ChangeType, dataFiles: [Int])
}

extension DecodedChanges {
    /// Nothing reserved: only the numbered form knows what to ask for.
    func reserve(sectionBytes: Int) {}
}

/// The changes as an ``Event`` holds them.
struct EventChanges: DecodedChanges {
    private let strings: [String]
    private(set) var changes: [ObjectChange] = []
    private var properties: [PropertyChange] = []

    init(strings: [String]) { self.strings = strings }

    mutating func beginChange(propertyCount: Int) { properties.reserveCapacity(propertyCount) }

    mutating func property(name: Int, _ value: consuming ReadValue) {
        let strings = strings
        func named(_ positions: [Int]) -> [String] { positions.map { strings[$0] } }
        let resolved: PropertyChange.Value =
            switch value {
            case .attribute(let attribute): .attribute(attribute)
            case .dataFile(let file): .attributeInDataFile(filename: strings[file])
            case .toOne(let related): .toOne(relatedIdentifier: related.map { strings[$0] })
            case .toMany(let added, let removed): .toMany(added: named(added), removed: named(removed))
            case .orderedToMany(let added, let removed, let moved):
                .orderedToMany(
                    added: named(added), removed: named(removed),
                    movedByIndex: Dictionary(moved.map { ($0.position, strings[$0.identifier]) }, uniquingKeysWith: { first, _ in first }))
            }
        properties.append(PropertyChange(name: strings[name], sortedValue: resolved))
    }

    mutating func endChange(entity: Int, identifier: Int, type: ChangeType, dataFiles: [Int]) {
        changes.append(
            ObjectChange(
                entity: strings[entity], globalIdentifier: strings[identifier], type: type, sortedPropertyChanges: properties,
                sortedDataFiles: dataFiles.map { strings[$0] }))
        properties = []
    }
}

/// The changes in numbered form, numbered as the file's string table is: the table's strings
/// are the event's, in the same order.
struct NumberedChanges: DecodedChanges {
    private(set) var event: NumberedEvent

    init(strings: NumberedStrings) { event = NumberedEvent(text: Array(strings.textBytes), ends: strings.ends, uuids: strings.uuids) }

    /// In the generated 1M-change folder a change takes 19 bytes of the section and a property
    /// 9 (Benchmarks/README.md); each takes 3 at least (Spec/v2-binary.md 8).
    mutating func reserve(sectionBytes: Int) { event.reserve(changes: sectionBytes / 16, properties: sectionBytes / 8) }

    func beginChange(propertyCount: Int) {}

    mutating func property(name: Int, _ value: consuming ReadValue) {
        let name = Int32(truncatingIfNeeded: name)
        // Consumed, so that an attribute value moves into the event (a copy was a retain here
        // and a release when the reader's value was freed).
        switch consume value {
        case .attribute(let attribute):
            event.addAttribute(name: name, attribute)
        case .dataFile(let file):
            event.addDataFile(name: name, Int32(truncatingIfNeeded: file))
        case .toOne(let related):
            event.addToOne(name: name, related.map { Int32(truncatingIfNeeded: $0) })
        case .toMany(let added, let removed):
            event.addRelationship(name: name, ordered: false, added: added, removed: removed, moved: [])
        case .orderedToMany(let added, let removed, let moved):
            event.addRelationship(
                name: name, ordered: true, added: added, removed: removed,
                moved: moved.map { NumberedEvent.Move(position: Int32(truncatingIfNeeded: $0.position), identifier: Int32(truncatingIfNeeded: $0.identifier)) })
        }
    }

    mutating func endChange(entity: Int, identifier: Int, type: ChangeType, dataFiles: [Int]) {
        event.addChange(
            entity: Int32(truncatingIfNeeded: entity), identifier: Int32(truncatingIfNeeded: identifier), type: type,
            dataFiles: dataFiles.isEmpty ? [] : dataFiles.map { Int32(truncatingIfNeeded: $0) })
    }
}

/// Both at once, in one pass over the file.
struct BothChanges: DecodedChanges {
    private(set) var whole: EventChanges
    private(set) var numbered: NumberedChanges

    init(strings: [String]) {
        whole = EventChanges(strings: strings)
        var table = NumberedStrings()
        for string in strings { ExactString.withUTF8(of: string) { table.append(uuid: nil, $0) } }
        numbered = NumberedChanges(strings: table)
    }

    mutating func beginChange(propertyCount: Int) {
        whole.beginChange(propertyCount: propertyCount)
        numbered.beginChange(propertyCount: propertyCount)
    }

    mutating func property(name: Int, _ value: consuming ReadValue) {
        whole.property(name: name, copy value)
        numbered.property(name: name, value)
    }

    mutating func endChange(entity: Int, identifier: Int, type: ChangeType, dataFiles: [Int]) {
        whole.endChange(entity: entity, identifier: identifier, type: type, dataFiles: dataFiles)
        numbered.endChange(entity: entity, identifier: identifier, type: type, dataFiles: dataFiles)
    }
}
