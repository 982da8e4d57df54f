import JSONDocument

/// An event's object changes as the merge engine applies them (Spec/merge.md 8): every
/// entity name, property name, identifier and data file name is a number into one table of the
/// event's strings, held as bytes in one buffer (a UUID's canonical upper-case text as its 16
/// bytes: ``UUIDHints``), and the changes, property changes and
/// relationship lists are flat arrays of numbers.
///
/// A decoded ``Event`` holds a string (a reference) for every identifier and name and an array
/// for every change's properties: applying it and freeing it retained, released and freed each
/// of them (Benchmarks/README.md). This form is a handful of buffers whatever the event's size.
/// It keeps what applying reads, and what a summary of the event counts (``SourcedEvent``): the
/// data files its changes list; no header, no unknown members.
package struct NumberedEvent: Sendable, Equatable {
    /// A change of one object: its entity and identifier (string numbers), its type, its
    /// property changes, `properties[firstProperty ..< endProperty]`, sorted by name, and the data
    /// files it lists, `dataFiles[firstDataFile ..< endDataFile]`.
    package struct Change: Sendable, Equatable {
        package var entity: Int32
        package var identifier: Int32
        package var type: ChangeType
        package var firstProperty: Int32
        package var endProperty: Int32
        package var firstDataFile: Int32
        package var endDataFile: Int32
    }

    /// How a property change's numbers are read.
    package enum Kind: UInt8, Sendable {
        /// `value` is a position in ``NumberedEvent/attributes``.
        case attribute
        /// `value` is the string number of a data file name.
        case dataFile
        /// `value` is the related identifier's string number, or -1 for no object.
        case toOne
        /// The added and removed identifiers are in ``NumberedEvent/identifiers``.
        case toMany
        /// As `toMany`, plus the moved members in ``NumberedEvent/moves``.
        case orderedToMany
    }

    /// One property change. For a to-many or ordered to-many, `identifiers[first ..< first +
    /// added]` are the identifiers added and the `removed` after them those removed (each list
    /// sorted and unique), and `moves[firstMove ..< firstMove + moved]` the moved members by
    /// ascending position.
    package struct Property: Sendable, Equatable {
        package var name: Int32
        package var kind: Kind
        package var value: Int32 = -1
        package var first: Int32 = 0
        package var added: Int32 = 0
        package var removed: Int32 = 0
        package var firstMove: Int32 = 0
        package var moved: Int32 = 0

        init(name: Int32, kind: Kind, value: Int32 = -1) {
            self.name = name
            self.kind = kind
            self.value = value
        }
    }

    /// A member of an ordered to-many put at a position (Spec/merge.md 8.3.5).
    package struct Move: Sendable, Equatable {
        package var position: Int32
        package var identifier: Int32

        package init(position: Int32, identifier: Int32) {
            self.position = position
            self.identifier = identifier
        }
    }

    /// The strings' UTF-8 bytes, one after another: string `n` ends at `ends[n]` and starts where
    /// string `n - 1` ends; a string kept as a UUID's halves (``UUIDHints``) has none here. Read
    /// only through ``withBytes(of:_:)`` and the calls on it. (Offsets are `Int`: the text of a
    /// large event may pass 2^31 bytes; the numbers of strings and changes never come near it.)
    private var text: [UInt8] = []
    private var ends: [Int] = []
    /// In canonical order (entities in UTF-8 byte order, then as the writer gave them).
    package private(set) var changes: [Change] = []
    package private(set) var properties: [Property] = []
    package private(set) var identifiers: [Int32] = []
    package private(set) var moves: [Move] = []
    package private(set) var attributes: [AttributeValue] = []
    /// The string numbers of the data files every change lists (Spec/merge.md 8.4), all changes'
    /// one after another: a summary reads them as a set, a writer each change's own.
    package private(set) var dataFiles: [Int32] = []
    /// The properties of the changes closed so far: those after them belong to the change being built.
    private var closedProperties: Int32 = 0
    /// The strings that are a UUID's canonical upper-case text, kept as its 16 bytes instead.
    private var uuids = UUIDHints()

    /// The strings that are a UUID's canonical upper-case text and nothing more (a binary
    /// table's UUID entries with nothing after them, Spec/v2-binary.md 6, or such text in a
    /// JSON event), as two big-endian halves, which stand for
    /// the string's canonical upper-case text: such a string has no bytes in ``text``, and its
    /// text is written where it is read (``withBytes(of:_:)``). The applying thread looks
    /// identifiers up by these bytes, and most are never read as text. Events compare equal
    /// however their strings are kept (``==(_:_:)``).
    package struct UUIDHints: Sendable {
        /// Two halves per UUID string.
        package var halves: [UInt64] = []
        /// For each string, where its halves start in `halves`, or -1; empty when no string is one.
        package var positions: [Int32] = []

        package init() {}

        /// The halves of string `string` when it is a UUID and nothing after it.
        @inline(__always)
        package func halves(of string: Int) -> (high: UInt64, low: UInt64)? {
            guard string < positions.count else { return nil }
            let position = Int(positions[string])
            return position < 0 ? nil : (halves[position], halves[position + 1])
        }

        /// Adds string number `number` as the UUID with these halves: the first one gives the
        /// strings before it their -1, as ``positions`` says, and makes room for `room` strings,
        /// all of them UUIDs if need be (grown one at a time, the lists were reallocated several
        /// times per event).
        package mutating func add(_ uuid: (high: UInt64, low: UInt64), asString number: Int, room: Int) {
            if positions.isEmpty {
                positions.reserveCapacity(room)
                halves.reserveCapacity(2 * room)
                positions.append(contentsOf: repeatElement(-1, count: number))
            }
            positions.append(Int32(truncatingIfNeeded: halves.count))
            halves.append(uuid.high)
            halves.append(uuid.low)
        }
    }

    package init() {}

    /// A form without changes whose strings are `text` and `ends`, as ``text`` and ``ends`` hold
    /// them (a decoder that filled them itself hands them over without a copy), with the UUID
    /// strings among them that `uuids` gives, which have no bytes in `text`.
    package init(text: [UInt8], ends: [Int], uuids: UUIDHints = UUIDHints()) {
        self.text = text
        self.ends = ends
        self.uuids = uuids
    }

    /// The big-endian halves of the UUID whose canonical upper-case text string `number` is,
    /// when the decoder read it as such; nil for any other string, or when it gave no hints.
    package func uuidHalves(of number: Int32) -> (high: UInt64, low: UInt64)? { uuids.halves(of: Int(number)) }

    package var stringCount: Int { ends.count }

    /// Calls `body` with the memory of each of the event's lists that applying it reads, for a
    /// thread about to apply it to ask for them ahead (they were written on another core).
    package func forEachBuffer(_ body: (UnsafeRawBufferPointer) -> Void) {
        changes.withUnsafeBytes(body)
        properties.withUnsafeBytes(body)
        identifiers.withUnsafeBytes(body)
        text.withUnsafeBytes(body)
        ends.withUnsafeBytes(body)
        uuids.positions.withUnsafeBytes(body)
        uuids.halves.withUnsafeBytes(body)
        attributes.withUnsafeBytes(body)
        moves.withUnsafeBytes(body)
    }

    /// Makes room for about this many changes, properties (attribute values as many) and, for
    /// a decoder that adds its strings one by one, strings and bytes of their text: a decoder
    /// that knows its input's size asks for what it will most likely hold, where appending
    /// from empty reallocated each list about eight times per event (measured:
    /// Benchmarks/README.md). Estimates, so that a wrong guess costs memory or a reallocation,
    /// never a wrong event; a decoder keeps them within a small multiple of its input.
    package mutating func reserve(changes: Int, properties: Int, strings: Int = 0, textBytes: Int = 0) {
        self.changes.reserveCapacity(changes)
        self.properties.reserveCapacity(properties)
        attributes.reserveCapacity(properties)
        ends.reserveCapacity(strings)
        text.reserveCapacity(textBytes)
    }

    /// Hands the attribute values over, leaving none: applying an event moves each value into
    /// the state instead of copying it (a retain, on memory the decoding thread wrote, and a
    /// release when the event is freed; measured: Benchmarks/README.md). What is left of them
    /// goes back with ``putBack(attributes:)``, so that the thread that frees the event frees
    /// them.
    package mutating func takeAttributes() -> [AttributeValue] {
        var taken: [AttributeValue] = []
        swap(&taken, &attributes)
        return taken
    }

    /// Returns what ``takeAttributes()`` took.
    package mutating func putBack(attributes taken: consuming [AttributeValue]) { attributes = taken }

    /// Adds a string to the table; returns its number.
    package mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) -> Int32 {
        text.append(contentsOf: bytes)
        ends.append(text.count)
        if !uuids.positions.isEmpty { uuids.positions.append(-1) }
        return Int32(truncatingIfNeeded: ends.count - 1)
    }

    /// Adds a string kept as a UUID's halves, which stand for its canonical upper-case text
    /// (``UUIDHints``); returns its number.
    package mutating func append(uuid halves: (high: UInt64, low: UInt64)) -> Int32 {
        uuids.add(halves, asString: ends.count, room: ends.capacity)
        ends.append(text.count)
        return Int32(truncatingIfNeeded: ends.count - 1)
    }

    /// Adds an attribute value to the change being built (the one ``addChange(entity:identifier:type:dataFiles:)``
    /// closes next); properties come sorted by name.
    package mutating func addAttribute(name: Int32, _ value: consuming AttributeValue) {
        attributes.append(consume value)
        properties.append(Property(name: name, kind: .attribute, value: Int32(truncatingIfNeeded: attributes.count - 1)))
    }

    /// Adds a value held in a data file (its name's string number) to the change being built.
    package mutating func addDataFile(name: Int32, _ file: Int32) { properties.append(Property(name: name, kind: .dataFile, value: file)) }

    /// Adds a to-one relationship (the related identifier's string number, or nil for no
    /// object) to the change being built.
    package mutating func addToOne(name: Int32, _ related: Int32?) { properties.append(Property(name: name, kind: .toOne, value: related ?? -1)) }

    /// Adds a to-many (`ordered` false, `moved` empty) or ordered to-many relationship to the
    /// change being built: identifiers added and removed as string numbers, each list sorted
    /// and unique, and the moved members by ascending position. The numbers are taken as a
    /// decoder has them: converting them into lists of their own first cost an allocation per
    /// list.
    package mutating func addRelationship(name: Int32, ordered: Bool, added: [Int32], removed: [Int32], moved: [Move]) {
        appendRelationship(name: name, ordered: ordered, added: added, removed: removed, moved: moved)
    }

    /// ``addRelationship(name:ordered:added:removed:moved:)`` for a decoder that numbers
    /// strings with `Int`s.
    package mutating func addRelationship(name: Int32, ordered: Bool, added: [Int], removed: [Int], moved: [Move]) {
        appendRelationship(name: name, ordered: ordered, added: added, removed: removed, moved: moved)
    }

    /// Both of the above, specialized here: a decoder in another module called the generic
    /// function through its type's metadata, element by element.
    private mutating func appendRelationship<Number: BinaryInteger>(
        name: Int32, ordered: Bool, added: [Number], removed: [Number], moved: [Move]
    ) {
        var property = Property(name: name, kind: ordered ? .orderedToMany : .toMany)
        property.first = Int32(truncatingIfNeeded: identifiers.count)
        property.added = Int32(truncatingIfNeeded: added.count)
        property.removed = Int32(truncatingIfNeeded: removed.count)
        for number in added { identifiers.append(Int32(truncatingIfNeeded: number)) }
        for number in removed { identifiers.append(Int32(truncatingIfNeeded: number)) }
        property.firstMove = Int32(truncatingIfNeeded: moves.count)
        property.moved = Int32(truncatingIfNeeded: moved.count)
        moves += moved
        properties.append(property)
    }

    /// Closes a change: the properties added since the last change closed are its own, and
    /// `dataFiles` the string numbers of the data files it lists.
    package mutating func addChange(entity: Int32, identifier: Int32, type: ChangeType, dataFiles: [Int32]) {
        let firstDataFile = Int32(truncatingIfNeeded: self.dataFiles.count)
        if !dataFiles.isEmpty { self.dataFiles += dataFiles }
        let end = Int32(truncatingIfNeeded: properties.count)
        changes.append(
            Change(
                entity: entity, identifier: identifier, type: type, firstProperty: closedProperties, endProperty: end, firstDataFile: firstDataFile,
                endDataFile: Int32(truncatingIfNeeded: self.dataFiles.count)))
        closedProperties = end
    }

    /// Sorts the properties of the change being built by name (UTF-8 bytes), for a decoder whose
    /// input may give them in any order; false when two have the same name.
    package mutating func sortOpenProperties() -> Bool {
        let open = Int(closedProperties)..<properties.count
        guard open.count > 1 else { return true }
        // The table from the lists themselves: calling the event's own methods from this
        // mutating one copied the whole event at every call.
        return Self.withTable(text, ends, uuids) { table in
            if !open.dropFirst().allSatisfy({ table.precedes(properties[$0 - 1].name, properties[$0].name) }) {
                properties[open].sort { table.precedes($0.name, $1.name) }
            }
            return !open.dropFirst().contains { table.same(properties[$0 - 1].name, properties[$0].name) }
        }
    }

    /// Puts the changes in the order `order` gives as positions of the current changes (a
    /// permutation); each keeps its own properties, and changes added later come after them.
    package mutating func reorderChanges(_ order: [Int]) {
        changes = order.map { changes[$0] }
    }

    /// Calls `body` with the bytes of string `number`; a UUID kept as its halves has its text
    /// written here. (Not through ``Table``: readers in other modules call it unspecialized,
    /// and one buffer taken costs less than four.)
    @inline(__always)
    package func withBytes<R>(of number: Int32, _ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        if let uuid = uuids.halves(of: Int(number)) { return try UUIDPrefix.withText(high: uuid.high, low: uuid.low, body) }
        let end = ends[Int(number)]
        let start = number == 0 ? 0 : ends[Int(number) - 1]
        return try text.withUnsafeBufferPointer { try body(UnsafeBufferPointer(rebasing: $0[start..<end])) }
    }

    /// Whether string `number` is `bytes`, byte for byte: one call, where ``withBytes(of:_:)``
    /// from another module is a generic call and a closure for every name a reader compares.
    package func hasBytes(_ number: Int32, _ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        withBytes(of: number) { ExactString.sameBytes($0, bytes) }
    }

    /// Whether string `number` is empty (see ``hasBytes(_:_:)``); a UUID kept as its halves is not.
    package func isEmpty(_ number: Int32) -> Bool {
        uuids.halves(of: Int(number)) == nil && ends[Int(number)] == (number == 0 ? 0 : ends[Int(number) - 1])
    }

    /// String `number` as a `String` (made anew: the table holds bytes).
    package func string(_ number: Int32) -> String { withBytes(of: number) { String(decoding: $0, as: UTF8.self) } }

    /// Whether string `a` comes before string `b` in UTF-8 byte order (``utf8Precedes(_:_:)``).
    package func precedes(_ a: Int32, _ b: Int32) -> Bool { withTable { $0.precedes(a, b) } }

    /// String numbers sorted by their strings in UTF-8 byte order, as ``precedes(_:_:)`` orders
    /// them. The table is read through buffer pointers: a sort that called ``precedes(_:_:)``
    /// from its closure copied the whole event at every comparison (a retain and a release of
    /// each of its lists; measured: Benchmarks/README.md).
    package func inStringOrder(_ numbers: ArraySlice<Int32>) -> [Int32] {
        guard numbers.count > 1 else { return Array(numbers) }
        return withTable { table in numbers.sorted { table.precedes($0, $1) } }
    }

    /// Whether strings `a` and `b` have the same bytes: two UUIDs kept as halves by their
    /// halves, any other two by their bytes. (Not through the table, whose four buffers cost
    /// more than these reads: the model check asks for every name of a change.)
    package func same(_ a: Int32, _ b: Int32) -> Bool {
        if let x = uuids.halves(of: Int(a)), let y = uuids.halves(of: Int(b)) { return x == y }
        return withBytes(of: a) { x in withBytes(of: b) { ExactString.sameBytes(x, $0) } }
    }

    /// The string table read in place, through buffer pointers, for the calls that read two
    /// strings or more (a closure that captured the event copied it: a retain and a release of
    /// each of its lists): each string's text, or for a UUID kept as its halves (``UUIDHints``),
    /// the halves, whose text is written where it is read.
    private struct Table {
        let text: UnsafeBufferPointer<UInt8>
        let ends: UnsafeBufferPointer<Int>
        let positions: UnsafeBufferPointer<Int32>
        let halves: UnsafeBufferPointer<UInt64>

        func uuid(_ number: Int32) -> (high: UInt64, low: UInt64)? {
            guard Int(number) < positions.count, positions[Int(number)] >= 0 else { return nil }
            let position = Int(positions[Int(number)])
            return (halves[position], halves[position + 1])
        }

        func withBytes<R>(of number: Int32, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
            if let uuid = uuid(number) { return UUIDPrefix.withText(high: uuid.high, low: uuid.low, body) }
            return body(UnsafeBufferPointer(rebasing: text[(number == 0 ? 0 : ends[Int(number) - 1])..<ends[Int(number)]]))
        }

        /// Two UUIDs compare as their upper-case texts do (digits before letters, hyphens in
        /// the same places), without writing them.
        func precedes(_ a: Int32, _ b: Int32) -> Bool {
            if let x = uuid(a), let y = uuid(b) { return (x.high, x.low) < (y.high, y.low) }
            return withBytes(of: a) { x in withBytes(of: b) { y in x.lexicographicallyPrecedes(y) } }
        }

        func same(_ a: Int32, _ b: Int32) -> Bool {
            if let x = uuid(a), let y = uuid(b) { return x == y }
            return withBytes(of: a) { x in withBytes(of: b) { y in ExactString.sameBytes(x, y) } }
        }
    }

    private func withTable<R>(_ body: (Table) -> R) -> R { Self.withTable(text, ends, uuids, body) }

    private static func withTable<R>(_ text: [UInt8], _ ends: [Int], _ uuids: UUIDHints, _ body: (Table) -> R) -> R {
        text.withUnsafeBufferPointer { text in
            ends.withUnsafeBufferPointer { ends in
                uuids.positions.withUnsafeBufferPointer { positions in
                    uuids.halves.withUnsafeBufferPointer { body(Table(text: text, ends: ends, positions: positions, halves: $0)) }
                }
            }
        }
    }

    /// Events are equal when their changes are and their strings have the same bytes, however
    /// a decoder kept them (a UUID as its text, or as its halves).
    package static func == (a: NumberedEvent, b: NumberedEvent) -> Bool {
        guard
            a.changes == b.changes && a.properties == b.properties && a.identifiers == b.identifiers && a.moves == b.moves
                && a.attributes == b.attributes && a.dataFiles == b.dataFiles && a.closedProperties == b.closedProperties
                && a.stringCount == b.stringCount
        else { return false }
        return a.withTable { x in
            b.withTable { y in
                (0..<Int32(truncatingIfNeeded: a.stringCount)).allSatisfy { number in
                    x.withBytes(of: number) { one in y.withBytes(of: number) { ExactString.sameBytes(one, $0) } }
                }
            }
        }
    }

    /// The numbered form of `event`'s object changes. Strings with one representation (a name
    /// that every change of a decoded event shares) get one number; others may repeat. Each
    /// change's properties are sorted by name and its relationship lists sorted, each member
    /// once, as this form holds them: a decoded event has them so, but the public lists of an
    /// `Event` may be in any order. A moved position beyond `Int32` is kept as the nearest one
    /// (a writer refuses both).
    package init(_ event: Event) {
        var interned = Interning()
        let changes = event.objectChanges
        self.changes.reserveCapacity(changes.count)
        // By index, reading fields in place: copying a change retains all its parts.
        for index in changes.indices {
            let properties = ObjectChange.sortedByName(changes[index].propertyChanges)
            for property in properties.indices {
                let name = interned.number(properties[property].name, in: &self)
                switch properties[property].value {
                case .attribute(let value):
                    addAttribute(name: name, value)
                case .attributeInDataFile(let file):
                    let file = interned.number(file, in: &self)
                    addDataFile(name: name, file)
                case .toOne(let related):
                    let related = related.map { interned.number($0, in: &self) }
                    addToOne(name: name, related)
                case .toMany(let added, let removed):
                    let added = sortedUnique(added).map { interned.number($0, in: &self) }
                    let removed = sortedUnique(removed).map { interned.number($0, in: &self) }
                    addRelationship(name: name, ordered: false, added: added, removed: removed, moved: [])
                case .orderedToMany(let added, let removed, let moved):
                    let added = sortedUnique(added).map { interned.number($0, in: &self) }
                    let removed = sortedUnique(removed).map { interned.number($0, in: &self) }
                    let moves = moved.keys.sorted().compactMap { position in
                        moved[position].map { Move(position: Int32(clamping: position), identifier: interned.number($0, in: &self)) }
                    }
                    addRelationship(name: name, ordered: true, added: added, removed: removed, moved: moves)
                }
            }
            let entity = interned.number(changes[index].entity, in: &self)
            let identifier = interned.number(changes[index].globalIdentifier, in: &self)
            let files = changes[index].dataFiles.isEmpty ? [] : changes[index].dataFiles.map { interned.number($0, in: &self) }
            addChange(entity: entity, identifier: identifier, type: changes[index].type, dataFiles: files)
        }
    }

    /// Numbers strings by their representation (``ExactString/identical(_:_:)``), from a small
    /// cache: no string's bytes are hashed.
    private struct Interning {
        private var recent = [(string: String, number: Int32)](repeating: ("", -1), count: 64)

        mutating func number(_ string: String, in event: inout NumberedEvent) -> Int32 {
            let slot = Int(truncatingIfNeeded: ExactString.representationHash(string) >> 58)
            if recent[slot].number >= 0 && ExactString.identical(recent[slot].string, string) { return recent[slot].number }
            let number = ExactString.withUTF8(of: string) { event.append($0) }
            recent[slot] = (string, number)
            return number
        }
    }
}
