import ParallelWork
import Foundation
import JSONDocument
import EnsembleModel
import DataModel
import EventCodecs
import CPrefetch

/// The state of the store being rebuilt: live objects and the properties set on them
/// (Spec/merge.md sections 7 and 8).
///
/// Objects, entity names and property names are numbered as they appear, and relationships
/// hold object numbers: a replay of millions of changes then hashes each global identifier once
/// per change instead of at every step (measured: Benchmarks/README.md).
public struct StoreState: Sendable {
    /// An object: its entity and global identifier. (Base, x) and (Sub, x) are two objects.
    package struct ObjectKey: Hashable, Sendable {
        package var entity: ExactString
        package var id: ExactString

        package init(entity: ExactString, id: ExactString) {
            self.entity = entity
            self.id = id
        }
    }

    /// A property's current value, as the output gives it. Relationships hold objects, not
    /// bare identifiers, so a delete detaches exactly the object deleted.
    package enum Value: Sendable, Equatable {
        case attribute(AttributeValue)
        case dataFile(String)
        case toOne(ObjectKey?)
        case toMany(Set<ObjectKey>)
        case ordered([ObjectKey])
    }

    /// A value as stored: relationships hold object numbers.
    enum Stored: Sendable {
        case attribute(AttributeValue)
        case dataFile(String)
        case toOne(Int32?)
        /// The members, in no order (a few, mostly: see ``SmallMap``).
        case toMany(SmallMap<Int32, Void>)
        case ordered([Int32])

        var isRelationship: Bool {
            switch self {
            case .toOne, .toMany, .ordered: true
            case .attribute, .dataFile: false
            }
        }

        /// For a value that holds at most one object (a to-one or an attribute): that object, if
        /// any. Not `isSingle` for a to-many or ordered value.
        var single: (isSingle: Bool, target: Int32?) {
            switch self {
            case .toOne(let target): (true, target)
            case .toMany, .ordered: (false, nil)
            case .attribute, .dataFile: (true, nil)
            }
        }

        /// ``single`` of a value, or of no value at all (which holds no object).
        static func single(_ value: Stored?) -> (isSingle: Bool, target: Int32?) { value?.single ?? (true, nil) }

        /// What keeping the referrer records needs of a new value, read before the value is
        /// moved into its object (a copy kept to read it later was a retain and a release).
        struct Summary {
            var isRelationship: Bool
            var single: (isSingle: Bool, target: Int32?)
            /// The objects of a to-many or ordered value; nil for the others, whose object
            /// ``single`` gives.
            fileprivate var many: Set<Int32>?

            /// ``Stored/targets`` of the value.
            var targets: Set<Int32> { many ?? single.target.map { [$0] } ?? [] }
        }

        var summary: Summary {
            let single = self.single
            return Summary(isRelationship: isRelationship, single: single, many: single.isSingle ? nil : targets)
        }

        /// The objects a relationship value holds.
        var targets: Set<Int32> {
            switch self {
            case .toOne(let target?): [target]
            case .toMany(let members): Set(members.lazy.map(\.key))
            case .ordered(let order): Set(order)
            default: []
            }
        }
    }

    /// One live object, or a free slot. A delete detaches the object from everything that held
    /// it, so nothing names its number any more and a later insert may take the slot: the slots
    /// then grow with the live objects, not with the inserts of the whole history.
    /// The fields are in this order so that a slot takes 64 bytes: the two flags share the word
    /// of the 32-bit entity number (after the identifier's prefix the live flag took a word of
    /// its own, and a slot 72 bytes).
    ///
    /// The global identifier is kept as the 16 bytes of a UUID when it is a UUID's canonical
    /// upper-case text, as devices write them, and otherwise in ``textIdentifiers``: a `String`
    /// per object was an allocation for every insert and a free for every delete on the
    /// applying thread, and a cache miss for every identifier the writer wrote (measured:
    /// Benchmarks/README.md).
    struct Slot: Sendable {
        var entity: Int32
        var isLive = true
        /// Whether `uuid` holds the identifier.
        var isUUID: Bool
        /// ``ExactString/prefixKey(_:)`` of the identifier: objects are sorted by identifier,
        /// and most comparisons end with these keys.
        var idPrefix: UInt64
        /// The identifier's UUID as big-endian halves, when `isUUID`.
        var uuid: (high: UInt64, low: UInt64)
        /// Set properties by property number.
        var properties = SmallMap<Int32, Stored>()
        /// Which (object, relationship) pairs hold this object, packed as holder << 32 | property.
        var referrers = SmallMap<Int64, Void>()

        /// A live slot for the identifier with these UTF-8 bytes. Returns the text to keep aside
        /// when the identifier is not a UUID.
        static func make(entity: Int32, id: UnsafeBufferPointer<UInt8>) -> (Slot, text: String?) {
            if let uuid = UUIDPrefix.halves(ofText: id) { return (make(entity: entity, uuid: uuid), nil) }
            return (Slot(entity: entity, isUUID: false, idPrefix: ExactString.prefixKey(id), uuid: (0, 0)), String(decoding: id, as: UTF8.self))
        }

        /// The slot of an object whose identifier is the upper-case text of the UUID with these
        /// halves, made without that text.
        static func make(entity: Int32, uuid: (high: UInt64, low: UInt64)) -> Slot {
            Slot(entity: entity, isUUID: true, idPrefix: UUIDPrefix.prefixKey(high: uuid.high), uuid: uuid)
        }
    }

    private(set) var slots: [Slot] = []
    /// The identifiers of the live objects whose identifier is not an upper-case UUID, by
    /// object number (see ``Slot``).
    private(set) var textIdentifiers: [Int32: String] = [:]
    /// Slots of deleted objects, free for the next insert.
    private var freeSlots: [Int32] = []
    private var live = LiveIndex()
    private(set) var liveCount = 0
    /// Deleted members still to take out of ordered to-manys, by holder << 32 | property:
    /// taken out once at the end of the delete phase, so that deleting N members of one
    /// ordered to-many does not search and shift it N times.
    private var orderedRemovals: [Int64: [Int32]] = [:]
    private(set) var entities = Numbering()
    private(set) var propertyNames = Numbering()
    /// Values that changes replaced, kept for ``takeReplaced()`` when ``keepsReplaced``; nil
    /// otherwise. Releasing one is a write to its storage, which many objects may share (a
    /// decoded string used by many values) and which is rarely in this thread's cache: the
    /// applying thread hands them to a thread that releases them (measured: Benchmarks/README.md).
    private var replaced: [Stored]?
    /// Model answers by (entity, property) and by (entity, ancestor), asked once each. A
    /// relationship's answer is kept as numbers: every relationship change reads it, and a
    /// `Property` copy retains all its strings.
    private var relationships = PairAnswers<RelationshipNumbers?>()
    private var kinds = PairAnswers<Bool>()
    let model: DataModel?

    /// For `history` and `diff`: the objects whose properties' provenance is recorded.
    private var watched: Set<ObjectKey> = []
    /// The object `watch(entity:id:)` named last, whose provenance ``provenance`` gives.
    private var watchedLast: ObjectKey?
    /// The file of the event being applied, for provenance.
    public var currentSource: String?
    /// For each watched object: property name (by its bytes: two properties whose names differ
    /// only in normalisation are two) -> the file of the change that set it last, or nil when an
    /// inverse relationship set it.
    private var provenanceByObject: [ObjectKey: [ExactString: String?]] = [:]

    /// For the object ``watch(entity:id:)`` named last: the file of the change that set the
    /// property with exactly this name last, `.some(nil)` when an inverse relationship set it,
    /// nil when nothing set it.
    public func provenance(ofProperty name: String) -> String?? { watchedLast.flatMap { provenanceByObject[$0]?[name] } }

    /// An empty store; with a model, inverse relationships are kept consistent.
    public init(model: DataModel?) { self.model = model }

    /// Whether the values changes replace are kept for ``takeReplaced()`` instead of released
    /// as they are replaced. Whoever sets it takes them after every few events.
    package var keepsReplaced: Bool {
        get { replaced != nil }
        set { replaced = newValue ? (replaced ?? []) : nil }
    }

    /// The replaced values kept since the last call, for the caller to release on another thread.
    mutating func takeReplaced() -> [Stored] {
        guard replaced != nil else { return [] }
        var taken: [Stored] = []
        swap(&taken, &replaced!)
        return taken
    }

    /// Records, for one object, who set each property (Spec/verify.md, history).
    public mutating func watch(entity: String, id: String) {
        let key = ObjectKey(entity: ExactString(entity), id: ExactString(id))
        watched.insert(key)
        watchedLast = key
    }

    /// Records who sets each property of every object of `objects` (Spec/diff.md 5).
    package mutating func watch(_ objects: Set<ObjectKey>) { watched.formUnion(objects) }

    /// Whether some object is watched: only then does a replay name each event's file.
    package var isWatching: Bool { !watched.isEmpty }

    /// For a watched object: property name -> the file of the change that set it last, or nil
    /// when an inverse relationship set it; nil for an object not watched or never inserted.
    package func provenance(of object: ObjectKey) -> [ExactString: String?]? { provenanceByObject[object] }

    // MARK: - Numbering

    private static func pair(_ a: Int32, _ b: Int32) -> Int64 { Int64(a) << 32 | Int64(UInt32(bitPattern: b)) }

    /// Model answers by a pair of numbers (``pair(_:_:)``), each asked of the model once: every
    /// relationship change asks again, so the last answers sit in a small table indexed by the
    /// pair's bits, which most questions hit without hashing the key for the dictionary (its
    /// `Hasher` was most of an answer: Benchmarks/README.md).
    struct PairAnswers<Value: Sendable>: Sendable {
        private var all: [Int64: Value] = [:]
        /// Pairs are never negative: -1 marks an empty entry.
        private var recent = [(key: Int64, value: Value?)](repeating: (-1, nil), count: 64)

        /// The answer for `key`, if it was given before.
        mutating func answer(_ key: Int64) -> Value? {
            let slot = Self.slot(key)
            if recent[slot].key == key { return recent[slot].value }
            guard let value = all[key] else { return nil }
            recent[slot] = (key, value)
            return value
        }

        mutating func set(_ value: Value, for key: Int64) {
            all[key] = value
            recent[Self.slot(key)] = (key, value)
        }

        /// The top 6 bits of the key times a large odd number: every bit of both numbers counts.
        private static func slot(_ key: Int64) -> Int { Int(truncatingIfNeeded: (UInt64(bitPattern: key) &* 0x9E37_79B9_7F4A_7C15) >> 58) }
    }

    /// A relationship as applying needs it: destination entity, inverse property and kind, by
    /// number.
    private struct RelationshipNumbers {
        var destination: Int32
        var inverse: Int32?
        var isToMany: Bool
        var isOrdered: Bool
    }

    /// The model's relationship `property` of `entity` (inherited ones included); nil without a
    /// model, or when the property is not a relationship there.
    private mutating func relationship(_ property: Int32, of entity: Int32) -> RelationshipNumbers? {
        guard let model else { return nil }
        let key = Self.pair(entity, property)
        if let known = relationships.answer(key) { return known }
        var found: RelationshipNumbers?
        if case .relationship(let definition)? = model.property(propertyNames[property], of: entities[entity]) {
            found = RelationshipNumbers(
                destination: entities.number(definition.destinationEntity), inverse: definition.inverseName.map { propertyNames.number($0) },
                isToMany: definition.isToMany, isOrdered: definition.isOrdered)
        }
        relationships.set(found, for: key)
        return found
    }

    private mutating func entity(_ entity: Int32, isKindOf ancestor: Int32) -> Bool {
        guard let model else { return true }
        let key = Self.pair(entity, ancestor)
        if let known = kinds.answer(key) { return known }
        let found = model.entity(entities[entity], isKindOf: entities[ancestor])
        kinds.set(found, for: key)
        return found
    }

    /// The live object (entity, id), if any.
    func object(_ entity: Int32, _ id: String) -> Int32? { object(entity, LiveIndex.probe(id)) }

    func object(_ entity: Int32, _ probe: LiveIndex.Probe) -> Int32? {
        live[probe]?.first { $0.entity == entity }?.object
    }

    func key(of object: Int32) -> ObjectKey {
        // The two fields read in place: a copy of the slot retained and released its lists.
        ObjectKey(entity: ExactString(entities[slots[Int(object)].entity]), id: ExactString(identifier(of: object)))
    }

    /// The global identifier of `object`.
    func identifier(of object: Int32) -> String {
        withIdentifier(of: object) { String(decoding: $0, as: UTF8.self) }
    }

    /// Calls `body` with the UTF-8 bytes of the global identifier of `object`.
    func withIdentifier<R>(of object: Int32, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        slots.withUnsafeBufferPointer { Identifiers(slots: $0, texts: textIdentifiers).with(object, body) }
    }

    /// The objects' global identifiers, read through the slots' buffer (a closure that called a
    /// method of the state captured a copy of it for every call).
    struct Identifiers {
        let slots: UnsafeBufferPointer<Slot>
        let texts: [Int32: String]

        /// Calls `body` with the UTF-8 bytes of the global identifier of `object`.
        func with<R>(_ object: Int32, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
            guard slots[Int(object)].isUUID else { return ExactString.withUTF8(of: texts[object] ?? "", body) }
            let uuid = slots[Int(object)].uuid
            return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: UUIDPrefix.textLength) { text in
                UUIDPrefix.write(high: uuid.high, low: uuid.low, to: text)
                return body(UnsafeBufferPointer(text))
            }
        }

        /// Whether object `a` comes before `b` by global identifier (UTF-8 bytes), given each with
        /// the ``Slot/idPrefix`` of its identifier: the keys settle most comparisons, and two
        /// UUIDs' halves the others (their upper-case digits sort as the numbers they write).
        func precedes(_ a: (prefix: UInt64, object: Int32), _ b: (prefix: UInt64, object: Int32)) -> Bool {
            if a.prefix != b.prefix { return a.prefix < b.prefix }
            if slots[Int(a.object)].isUUID && slots[Int(b.object)].isUUID {
                let x = slots[Int(a.object)].uuid, y = slots[Int(b.object)].uuid
                return x.high != y.high ? x.high < y.high : x.low < y.low
            }
            return with(a.object) { x in with(b.object) { y in utf8Precedes(x, y) } }
        }

        /// Writes the global identifier of `object` as a JSON string.
        func write(_ object: Int32, into buffer: inout [UInt8]) {
            guard slots[Int(object)].isUUID else { return JSONWriter.writeString(texts[object] ?? "", into: &buffer) }
            // Hex digits and hyphens: nothing to escape.
            let uuid = slots[Int(object)].uuid
            UUIDPrefix.append(high: uuid.high, low: uuid.low, to: &buffer, around: UInt8(ascii: "\""))
        }
    }

    /// The key of `object` when it is watched.
    private func watchedKey(_ object: Int32) -> ObjectKey? {
        let candidate = key(of: object)
        return watched.contains(candidate) ? candidate : nil
    }

    /// Records that `property` of `object` was set by the change of `source` (nil: through an
    /// inverse), when the object is watched. Every change of a merge asks, so nothing is hashed,
    /// and the state is not copied, when nothing is watched: a mutating method reads `watched` in
    /// place, where a call of a non-mutating one from a mutating one copied the whole state (272
    /// bytes then) for every change (Benchmarks/README.md).
    @inline(__always)
    private mutating func noteProvenance(of object: Int32, _ property: Int32, from source: String?) {
        guard !watched.isEmpty else { return }
        recordProvenance(of: object, property, from: source)
    }

    private mutating func recordProvenance(of object: Int32, _ property: Int32, from source: String?) {
        guard let key = watchedKey(object) else { return }
        provenanceByObject[key, default: [:]][propertyNames[property]] = .some(source)
    }

    /// Starts `object`'s provenance afresh (inserted or deleted), when it is watched.
    private mutating func resetProvenance(of object: Int32) {
        guard !watched.isEmpty, let key = watchedKey(object) else { return }
        provenanceByObject[key] = [:]
    }

    // MARK: - Applying events

    /// Applies one event with its three phases: create, set, delete (Spec/merge.md section 8).
    public mutating func apply(_ event: Event) { apply(NumberedEvent(event)) }

    /// ``apply(_:)`` of an event in numbered form, the form a merge's readers hand over: the
    /// changes are read as numbers, each of the event's names is numbered here once, and freeing
    /// the event frees a few buffers (measured: Benchmarks/README.md).
    package mutating func apply(_ event: consuming NumberedEvent) { apply(&event) }

    /// ``apply(_:)`` that moves the event's attribute values into the state instead of copying
    /// them: the event is left without them (its other parts unchanged), for the caller to free.
    package mutating func apply(_ event: inout NumberedEvent) {
        Self.prefetch(&event)
        var attributes = event.takeAttributes()
        apply(event, attributes: &attributes)
        event.putBack(attributes: attributes)
    }

    private mutating func apply(_ event: NumberedEvent, attributes: inout [AttributeValue]) {
        var numbers = EventNumbers(count: event.stringCount)
        let changes = event.changes
        var entityNumbers: [Int32] = []
        entityNumbers.reserveCapacity(changes.count)
        for change in changes { entityNumbers.append(entityNumber(change.entity, of: event, &numbers)) }
        // On a large state, each object's memory is a cache miss. The memory is asked for in
        // loops of prefetch hints, which do not wait and whose misses overlap, before the
        // loops that use it, which would otherwise wait for them one by one: the buckets where
        // the identifiers' lookups start, then the objects found and their property lists
        // (measured: Benchmarks/README.md). (The event's own lists were asked for by the caller.)
        var probes: [LiveIndex.Probe] = []
        probes.reserveCapacity(changes.count)
        for change in changes { probes.append(Self.probe(change.identifier, of: event)) }
        for probe in probes { live.prefetch(probe) }
        // The same for the objects the relationship values name, whose inverses and referrer
        // records the set phase changes: their buckets now, their slots once found.
        let related = Self.relatedProbes(of: event)
        for probe in related { live.prefetch(probe) }
        // The object an insert names is live from the insert phase on: found or made once, not
        // looked up again for its properties.
        var inserted: [Int32] = []
        inserted.reserveCapacity(changes.count)
        for index in changes.indices where changes[index].type == .insert {
            let entity = entityNumbers[index]
            if let existing = object(entity, probes[index]) {
                inserted.append(existing)
                continue
            }
            // Room for the properties the insert sets: grown one at a time, the list was
            // reallocated about three times per object.
            let identifier = changes[index].identifier
            var (slot, text) =
                event.uuidHalves(of: identifier).map { (Slot.make(entity: entity, uuid: $0), nil) }
                ?? event.withBytes(of: identifier) { Slot.make(entity: entity, id: $0) }
            slot.properties.reserveCapacity(Int(changes[index].endProperty - changes[index].firstProperty))
            let number: Int32
            // Moved in, not copied (a copy retained its two lists).
            if let free = freeSlots.popLast() {
                number = free
                slots[Int(free)] = consume slot
            } else {
                number = Int32(slots.count)
                slots.append(consume slot)
            }
            if let text { textIdentifiers[number] = text }
            live.add(probes[index], (entity, number))
            liveCount += 1
            inserted.append(number)
            resetProvenance(of: number)
        }
        // Every object of the set phase is found first, then asked for with its properties.
        var targets: [Int32] = []
        targets.reserveCapacity(changes.count)
        var nextInserted = 0
        for index in changes.indices where changes[index].type != .delete {
            if changes[index].type == .insert {
                targets.append(inserted[nextInserted])
                nextInserted += 1
            } else {
                targets.append(object(entityNumbers[index], probes[index]) ?? -1)
            }
        }
        prefetchSlots(targets)
        prefetchSlots(related.compactMap { live.firstObject($0) }, referrers: true)
        var nextTarget = 0
        for change in changes where change.type != .delete {
            let number = targets[nextTarget]
            nextTarget += 1
            guard number >= 0 else { continue }
            for property in Int(change.firstProperty)..<Int(change.endProperty) {
                set(property, of: event, &numbers, on: number, isInsert: change.type == .insert, attributes: &attributes)
            }
        }
        // The same for the deletes. Found before any is deleted: deleting one object changes no
        // other's lookup, and an object deleted twice is skipped the second time.
        var deleted: [Int32] = []
        deleted.reserveCapacity(changes.count)
        for index in changes.indices where changes[index].type == .delete {
            if let number = object(entityNumbers[index], probes[index]) { deleted.append(number) }
        }
        prefetchSlots(deleted)
        for number in deleted { delete(number) }
        removeDeletedFromOrdered()
    }

    /// An event's string numbers as this state's entity and property numbers, each found once
    /// per event (-1: not yet asked).
    private struct EventNumbers {
        var entities: [Int32]
        var properties: [Int32]

        init(count: Int) {
            entities = Array(repeating: -1, count: count)
            properties = entities
        }
    }

    // The lookups inlined, the first numbering of a name not: every change and property change
    // asks, and the call was most of the answer.
    @inline(__always)
    private mutating func entityNumber(_ string: Int32, of event: NumberedEvent, _ numbers: inout EventNumbers) -> Int32 {
        let known = numbers.entities[Int(string)]
        return known >= 0 ? known : Self.number(string, of: event, into: &numbers.entities, by: &entities)
    }

    @inline(__always)
    private mutating func propertyNumber(_ string: Int32, of event: NumberedEvent, _ numbers: inout EventNumbers) -> Int32 {
        let known = numbers.properties[Int(string)]
        return known >= 0 ? known : Self.number(string, of: event, into: &numbers.properties, by: &propertyNames)
    }

    /// Numbers the event's string `string` by `numbering`, noted in `known` for the event.
    private static func number(_ string: Int32, of event: NumberedEvent, into known: inout [Int32], by numbering: inout Numbering) -> Int32 {
        let number = numbering.number(event.string(string))
        known[Int(string)] = number
        return number
    }

    /// Probes of the identifiers that `event`'s relationship values name (to-ones, then the
    /// members added, removed or moved), for prefetching. Made again as each value is set:
    /// keeping them by string number for that took longer than hashing twice.
    private static func relatedProbes(of event: NumberedEvent) -> [LiveIndex.Probe] {
        var probes: [LiveIndex.Probe] = []
        probes.reserveCapacity(event.identifiers.count)
        for property in event.properties where property.value >= 0 {
            if case .toOne = property.kind { probes.append(probe(property.value, of: event)) }
        }
        for identifier in event.identifiers { probes.append(probe(identifier, of: event)) }
        return probes
    }

    /// The live index's probe of an identifier of `event`, read from the event's bytes.
    private static func probe(_ string: Int32, of event: NumberedEvent) -> LiveIndex.Probe {
        // A UUID the decoder kept as its halves is probed by them, without writing its text.
        if let uuid = event.uuidHalves(of: string) { return LiveIndex.probe(upperCaseUUID: uuid) }
        return event.withBytes(of: string) { LiveIndex.probe($0) }
    }

    /// Asks for the lists of `event`, which the decoding thread wrote: each first read of one
    /// was a cache miss, waited for one by one. A replay asks for the next event's while it
    /// applies one (measured: Benchmarks/README.md).
    /// (In place: through a copy, each of the event's lists was retained and released.)
    static func prefetch(_ event: inout NumberedEvent) {
        event.forEachBuffer { buffer in
            guard let base = buffer.baseAddress else { return }
            for offset in stride(from: 0, to: buffer.count, by: 64) { cpf_prefetch(base + offset) }
        }
    }

    /// Asks for the slots of `objects` (negative numbers skipped) and for their property lists,
    /// and their referrer records if `referrers`; reading a slot's list pointers is the only wait.
    private func prefetchSlots(_ objects: [Int32], referrers: Bool = false) {
        guard let field = MemoryLayout<Slot>.offset(of: \.properties), let referrerField = MemoryLayout<Slot>.offset(of: \.referrers) else { return }
        slots.withUnsafeBufferPointer { buffer in
            guard let first = buffer.baseAddress else { return }
            for number in objects where number >= 0 && Int(number) < buffer.count {
                cpf_prefetch(first + Int(number))
                SmallMap<Int32, Stored>.prefetch(at: UnsafeRawPointer(first + Int(number)) + field)
                if referrers { SmallMap<Int64, Void>.prefetch(at: UnsafeRawPointer(first + Int(number)) + referrerField) }
            }
        }
    }

    /// For the writer, which visits objects in name order, not in memory order: asks for the
    /// slot of `ahead`, and for the property list of `nearer`, whose slot was asked for earlier
    /// (both nil past the end of a piece).
    func prefetch(slot ahead: Int32?, contentsOf nearer: Int32?) {
        guard let properties = MemoryLayout<Slot>.offset(of: \.properties) else { return }
        slots.withUnsafeBufferPointer { buffer in
            guard let first = buffer.baseAddress else { return }
            if let ahead, Int(ahead) < buffer.count {
                // A slot straddles two lines.
                cpf_prefetch(first + Int(ahead))
                cpf_prefetch(UnsafeRawPointer(first + Int(ahead)) + MemoryLayout<Slot>.size - 1)
            }
            if let nearer, Int(nearer) < buffer.count {
                SmallMap<Int32, Stored>.prefetch(at: UnsafeRawPointer(first + Int(nearer)) + properties)
            }
        }
    }

    /// Hints the processor to fetch what the state document reads of `object`'s values beyond
    /// its property list: each to-many's and ordered list's members, each string's bytes (a
    /// miss each, measured: Benchmarks/README.md). Its property list was asked for further
    /// ahead (``prefetch(slot:contentsOf:)``).
    func prefetchValues(of object: Int32?) {
        // A string's second word is read from within the value: never past its end.
        guard let object, MemoryLayout<Stored>.size >= 2 * MemoryLayout<UInt>.size else { return }
        // A member's value follows its 4-byte key at the value's alignment (a tuple's layout).
        let alignment = MemoryLayout<Stored>.alignment, valueOffset = (MemoryLayout<Int32>.size + alignment - 1) / alignment * alignment
        slots.withUnsafeBufferPointer { buffer in
            guard Int(object) < buffer.count else { return }
            buffer[Int(object)].properties.withMembers { members in
                guard let first = members.baseAddress else { return }
                for member in members.indices {
                    // The case alone is read: a copy of the list or string would retain it, a
                    // write to the very line asked for. A list's payload starts the value, as the
                    // map's list; a string's storage is named by its second word, below the flag
                    // bits (a small string holds its bytes, and the guess asks for a line in vain).
                    let value = UnsafeRawPointer(first + member) + valueOffset
                    switch members[member].value {
                    case .toMany, .ordered: SmallMap<Int32, Void>.prefetch(at: value)
                    case .attribute(.string), .dataFile:
                        let storage = value.load(fromByteOffset: MemoryLayout<UInt>.size, as: UInt.self) & 0x0000_FFFF_FFFF_FFFF
                        cpf_prefetch(UnsafeRawPointer(bitPattern: storage))
                        cpf_prefetch(UnsafeRawPointer(bitPattern: storage &+ 48))
                    case .toOne, .attribute: break
                    }
                }
            }
        }
    }

    /// Hints the processor to fetch the slots of the objects that the relationships of `object`
    /// name: the state document writes each one's identifier from its slot, a line nothing else
    /// brings in, one miss per member (measured: Benchmarks/README.md). The relationships are
    /// read in place; their lists were asked for further ahead (``prefetchValues(of:)``).
    func prefetchRelated(of object: Int32?) {
        guard let object else { return }
        slots.withUnsafeBufferPointer { buffer in
            guard let first = buffer.baseAddress, Int(object) < buffer.count else { return }
            func ask(_ target: Int32) { if Int(target) < buffer.count { cpf_prefetch(first + Int(target)) } }
            buffer[Int(object)].properties.withMembers { members in
                for member in members.indices {
                    switch members[member].value {
                    case .toOne(let target?): ask(target)
                    case .toMany(let targets): targets.withMembers { for target in $0 { ask(target.key) } }
                    case .ordered(let targets): for target in targets { ask(target) }
                    case .toOne(nil), .attribute, .dataFile: break
                    }
                }
            }
        }
    }

    /// Takes the members deleted in this event out of the ordered to-manys that held them, one
    /// pass per relationship (Spec/merge.md 8.4). A holder deleted meanwhile has nothing left to
    /// change; nothing reads these orders before the event ends.
    private mutating func removeDeletedFromOrdered() {
        guard !orderedRemovals.isEmpty else { return }
        for (referrer, members) in orderedRemovals {
            let holder = Int(Int32(truncatingIfNeeded: referrer >> 32)), relationship = Int32(truncatingIfNeeded: referrer)
            guard slots[holder].isLive, case .ordered? = slots[holder].properties[relationship],
                case .ordered(var order)? = slots[holder].properties.removeValue(forKey: relationship)
            else { continue }
            let gone = Set(members)
            order.removeAll { gone.contains($0) }
            slots[holder].properties[relationship] = .ordered(order)
        }
        orderedRemovals = [:]
    }

    /// Applies property change `index` of `event` to `object`. An attribute value is moved out
    /// of `attributes` (the event's, taken from it), each being set once.
    private mutating func set(
        _ index: Int, of event: NumberedEvent, _ numbers: inout EventNumbers, on object: Int32, isInsert: Bool, attributes: inout [AttributeValue]
    ) {
        let change = event.properties[index]
        let property = propertyNumber(change.name, of: event, &numbers)
        let first = Int(change.first)
        let added = first..<first + Int(change.added), removed = added.upperBound..<added.upperBound + Int(change.removed)
        let moved = Int(change.firstMove)..<Int(change.firstMove) + Int(change.moved)
        // An update of a to-many or ordered to-many edits the current value in place (8.3.4,
        // 8.3.5): rebuilding it made every event that touches a relationship cost its size.
        // Cases matched, not compared with `==`: the kind is another module's enum, whose `==`
        // was called through the generic Equatable witness for every property change.
        if !isInsert, change.kind.isToManyEdit {
            enum Holding { case toMany, ordered, other }
            // Decided first, so that no copy of the collection is alive while it is edited.
            let holding: Holding =
                switch slots[Int(object)].properties[property] {
                case .toMany?: .toMany
                case .ordered?: .ordered
                default: .other
                }
            let edited: (lost: [Int32], gained: [Int32])?
            switch (change.kind, holding) {
            case (.toMany, .toMany):
                edited = editToMany(property, of: object, adding: added, removing: removed, in: event)
            case (.orderedToMany, .ordered):
                edited = editOrdered(property, of: object, adding: added, removing: removed, moving: moved, in: event)
            default:
                edited = nil
            }
            if let edited {
                noteProvenance(of: object, property, from: currentSource)
                maintainInverse(of: property, on: object, lost: edited.lost, gained: edited.gained)
                return
            }
        }
        let entity = slots[Int(object)].entity
        let value: Stored
        switch change.kind {
        case .attribute:
            var taken = AttributeValue.null
            swap(&taken, &attributes[Int(change.value)])
            value = .attribute(consume taken)
        case .dataFile:
            value = .dataFile(event.string(change.value))
        case .toOne:
            guard change.value >= 0 else {
                value = .toOne(nil)
                break
            }
            guard let target = resolve(Self.probe(change.value, of: event), from: entity, relationship: property) else { return }
            value = .toOne(target)
        case .toMany:
            // An insert, or a value of another kind: the set starts empty (8.3.6).
            var members = SmallMap<Int32, Void>()
            for id in added {
                guard let target = resolve(Self.probe(event.identifiers[id], of: event), from: entity, relationship: property) else { continue }
                members.insert(target)
            }
            value = .toMany(members)
        case .orderedToMany:
            var order: [Int32] = []
            var members: Set<Int32> = []
            for id in event.inStringOrder(event.identifiers[added]) {
                guard let target = resolve(Self.probe(id, of: event), from: entity, relationship: property), members.insert(target).inserted else { continue }
                order.append(target)
            }
            value = .ordered(moving(order, by: moved, in: event) { members.contains($0) })
        }
        let new = value.summary
        let current = store(consume value, summarized: new, as: property, of: object)
        noteProvenance(of: object, property, from: currentSource)
        if current?.isRelationship == true || new.isRelationship {
            let was = Stored.single(current), now = new.single
            if was.isSingle && now.isSingle {
                // Most relationship changes are to-ones: no sets are built for them.
                if was.target != now.target { maintainInverse(of: property, on: object, lost: was.target, gained: now.target) }
            } else {
                let before = current?.targets ?? [], after = new.targets
                maintainInverse(of: property, on: object, lost: Array(before.subtracting(after)), gained: Array(after.subtracting(before)))
            }
        }
        if replaced != nil, let current { replaced?.append(consume current) }
    }

    /// Removes, then adds members of a to-many set in place (Spec/merge.md 8.3.4): members are
    /// live, so a member with a removed identifier is one of the live objects with it. `added`
    /// and `removed` are positions in `event.identifiers`.
    private mutating func editToMany(
        _ property: Int32, of object: Int32, adding added: Range<Int>, removing removed: Range<Int>, in event: NumberedEvent
    ) -> (lost: [Int32], gained: [Int32]) {
        guard case .toMany(var members)? = slots[Int(object)].properties.removeValue(forKey: property) else { return ([], []) }
        let entity = slots[Int(object)].entity
        var lost: [Int32] = [], gained: [Int32] = []
        for id in removed {
            live[Self.probe(event.identifiers[id], of: event)]?.forEach { candidate in
                if members.removeValue(forKey: candidate.object) != nil { lost.append(candidate.object) }
            }
        }
        for id in added {
            // Skipped when its identifier is already a member's. (The identifier is looked up
            // once, for both questions.)
            guard let candidates = live[Self.probe(event.identifiers[id], of: event)], !candidates.contains(where: { members.contains($0.object) }),
                let target = resolve(candidates, from: entity, relationship: property)
            else { continue }
            members.insert(target)
            gained.append(target)
        }
        slots[Int(object)].properties[property] = .toMany(members)
        return finishEdit(property, of: object, lost: lost, gained: gained)
    }

    /// Removes, appends and moves members of an ordered to-many in place (Spec/merge.md 8.3.5).
    /// Whether an object is a member is read from its referrers, not by searching the order.
    private mutating func editOrdered(
        _ property: Int32, of object: Int32, adding added: Range<Int>, removing removed: Range<Int>, moving moved: Range<Int>, in event: NumberedEvent
    ) -> (lost: [Int32], gained: [Int32]) {
        guard case .ordered(var order)? = slots[Int(object)].properties.removeValue(forKey: property) else { return ([], []) }
        let entity = slots[Int(object)].entity
        let referrer = Self.pair(object, property)
        // Small maps, not sets: an edit loses and gains a member or two, mostly.
        var lost = SmallMap<Int32, Void>()
        for id in removed {
            live[Self.probe(event.identifiers[id], of: event)]?.forEach { candidate in
                if slots[Int(candidate.object)].referrers.contains(referrer) { lost.insert(candidate.object) }
            }
        }
        if !lost.isEmpty { order.removeAll { lost.contains($0) } }
        var gained: [Int32] = []
        var joined = SmallMap<Int32, Void>()
        for id in event.inStringOrder(event.identifiers[added]) {
            guard let candidates = live[Self.probe(id, of: event)] else { continue }
            let isMember = candidates.contains {
                joined.contains($0.object) || (slots[Int($0.object)].referrers.contains(referrer) && !lost.contains($0.object))
            }
            guard !isMember, let target = resolve(candidates, from: entity, relationship: property) else { continue }
            order.append(target)
            gained.append(target)
            joined.insert(target)
        }
        // The closure takes the slots alone: capturing `self` here, where it is being changed,
        // made a copy of the whole state for the call.
        order = moving(order, by: moved, in: event) { [slots] in
            joined.contains($0) || (slots[Int($0)].referrers.contains(referrer) && !lost.contains($0))
        }
        slots[Int(object)].properties[property] = .ordered(order)
        return finishEdit(property, of: object, lost: lost.map(\.key), gained: gained)
    }

    /// Records who refers to whom after an in-place edit; returns the members that left and
    /// those that joined, for the inverses (an object can leave and join in one change). Each
    /// list names an object once. Most edits only add or only remove: no sets are built for them.
    private mutating func finishEdit(_ property: Int32, of object: Int32, lost: [Int32], gained: [Int32]) -> (lost: [Int32], gained: [Int32]) {
        let referrer = Self.pair(object, property)
        for target in lost { slots[Int(target)].referrers.remove(referrer) }
        for target in gained { slots[Int(target)].referrers.insert(referrer) }
        guard !lost.isEmpty, !gained.isEmpty else { return (lost, gained) }
        let left = Set(lost), joined = Set(gained)
        return (lost.filter { !joined.contains($0) }, gained.filter { !left.contains($0) })
    }

    /// The members named by `event.moves[moved]`, by position, then the others in their order
    /// (8.3.5 step 3). A member is found through the live objects with its identifier
    /// (`isMember` tells which are in `order`); when several are, the first in `order` is taken.
    private func moving(_ order: [Int32], by moved: Range<Int>, in event: NumberedEvent, isMember: (Int32) -> Bool) -> [Int32] {
        guard !moved.isEmpty else { return order }
        func member(_ id: Int32) -> Int32? {
            var found: Int32?
            var several = false
            live[Self.probe(id, of: event)]?.forEach { candidate in
                guard isMember(candidate.object) else { return }
                if found == nil { found = candidate.object } else { several = true }
            }
            guard several else { return found }
            return event.withBytes(of: id) { bytes in order.first { withIdentifier(of: $0) { ExactString.sameBytes($0, bytes) } } }
        }
        // The members moved, by ascending position (as the moves come), then the others: built
        // in one list, with the moved ones in a small map (a set, two lists and a concatenation
        // cost ten times as much for the one or two moves an event usually has).
        var result: [Int32] = []
        result.reserveCapacity(order.count)
        var inFront = SmallMap<Int32, Void>()
        for move in event.moves[moved] {
            guard let member = member(move.identifier), !inFront.contains(member) else { continue }
            result.append(member)
            inFront.insert(member)
        }
        for member in order where !inFront.contains(member) { result.append(member) }
        return result
    }

    /// The live object a related identifier names (Spec/merge.md 8.5): without a model any
    /// entity, with one the destination entity or its sub-entities; the first entity by name
    /// in UTF-8 byte order when several match.
    private mutating func resolve(_ probe: LiveIndex.Probe, from entity: Int32, relationship: Int32) -> Int32? {
        live[probe].flatMap { resolve($0, from: entity, relationship: relationship) }
    }

    /// ``resolve(_:from:relationship:)`` among the live objects of one identifier.
    private mutating func resolve(_ candidates: LiveIndex.Entry, from entity: Int32, relationship: Int32) -> Int32? {
        let destination = self.relationship(relationship, of: entity)?.destination
        var best: (entity: Int32, object: Int32)?
        for candidate in candidates {
            if let destination, !self.entity(candidate.entity, isKindOf: destination) { continue }
            if let current = best, !utf8Precedes(entities[candidate.entity], entities[current.entity]) { continue }
            best = candidate
        }
        return best?.object
    }

    // MARK: - Inverse relationships

    /// With a model, keeps the other side of a relationship consistent, as Core Data does
    /// (Spec/merge.md 8.8).
    /// `lost` are the objects the relationship no longer holds, `gained` those it now holds,
    /// each named once.
    private mutating func maintainInverse(of relationship: Int32, on object: Int32, lost: [Int32], gained: [Int32]) {
        guard let inverse = self.relationship(relationship, of: slots[Int(object)].entity)?.inverse else { return }
        for target in inObjectOrder(lost) where slots[Int(target)].isLive { detach(object, from: inverse, of: target) }
        for target in inObjectOrder(gained) { attach(object, to: inverse, of: target, from: relationship) }
    }

    /// ``maintainInverse(of:on:lost:gained:)`` for a change that loses and gains one object at
    /// most (a to-one's).
    private mutating func maintainInverse(of relationship: Int32, on object: Int32, lost: Int32?, gained: Int32?) {
        guard let inverse = self.relationship(relationship, of: slots[Int(object)].entity)?.inverse else { return }
        if let lost, slots[Int(lost)].isLive { detach(object, from: inverse, of: lost) }
        if let gained { attach(object, to: inverse, of: gained, from: relationship) }
    }

    /// Adds `object` to the `inverse` side of `target` (which `object` now holds through
    /// `relationship`).
    private mutating func attach(_ object: Int32, to inverse: Int32, of target: Int32, from relationship: Int32) {
        guard slots[Int(target)].isLive, let inverseDefinition = self.relationship(inverse, of: slots[Int(target)].entity) else { return }
        if !inverseDefinition.isToMany {
            // A to-one holds one object: its previous partner loses the target.
            if case .toOne(let previous?)? = slots[Int(target)].properties[inverse], previous != object, slots[Int(previous)].isLive {
                detach(target, from: relationship, of: previous)
            }
            store(.toOne(object), as: inverse, of: target)
        } else if inverseDefinition.isOrdered {
            modify(inverse, of: target, adding: object) { value in
                // Taken out of `value`, not copied (a retain, then a release): the only reference
                // left, the collection is changed in place. The same in the closures below.
                guard case .ordered(var order)? = value.take() else { return .ordered([object]) }
                if !order.contains(object) { order.append(object) }
                return .ordered(order)
            }
        } else {
            modify(inverse, of: target, adding: object) { value in
                guard case .toMany(var members)? = value.take() else { return .toMany([object]) }
                members.insert(object)
                return .toMany(members)
            }
        }
        noteProvenance(of: target, inverse, from: nil)
    }

    /// The objects by entity name, then global identifier, in UTF-8 byte order (identifiers as the
    /// writer compares them, by their kept prefix keys first). Compared through the slots' buffer
    /// and the entity names alone: a closure that called a method of the state captured a copy of
    /// the whole state for every sort (a retain and a release of each of its lists), and copying
    /// two slots per comparison retained and released all their collections.
    private func inObjectOrder(_ objects: [Int32]) -> [Int32] {
        guard objects.count >= 2 else { return objects }
        let entities = self.entities, texts = textIdentifiers
        return slots.withUnsafeBufferPointer { slots in
            let identifiers = Identifiers(slots: slots, texts: texts)
            return objects.sorted { a, b in
                let x = slots[Int(a)].entity, y = slots[Int(b)].entity
                if x != y { return utf8Precedes(entities[x], entities[y]) }
                return identifiers.precedes((slots[Int(a)].idPrefix, a), (slots[Int(b)].idPrefix, b))
            }
        }
    }

    /// Sets one property of a live object and keeps the referrer records in step.
    private mutating func store(_ value: consuming Stored, as property: Int32, of object: Int32) {
        let new = value.summary
        store(value, summarized: new, as: property, of: object)
    }

    /// ``store(_:as:of:)`` of a value whose ``Stored/summary`` the caller already has; returns
    /// the value it replaced.
    @discardableResult
    private mutating func store(_ value: consuming Stored, summarized new: Stored.Summary, as property: Int32, of object: Int32) -> Stored? {
        guard slots[Int(object)].isLive else { return nil }
        let old = slots[Int(object)].properties.updateValue(value, forKey: property)
        // Attributes hold no objects: only relationships change who refers to whom.
        guard old?.isRelationship == true || new.isRelationship else { return old }
        let referrer = Self.pair(object, property)
        let was = Stored.single(old), now = new.single
        if was.isSingle && now.isSingle {
            // To-ones: no sets are built.
            if was.target != now.target {
                if let target = was.target { slots[Int(target)].referrers.remove(referrer) }
                if let target = now.target { slots[Int(target)].referrers.insert(referrer) }
            }
            return old
        }
        let before = old?.targets ?? [], after = new.targets
        for target in before where !after.contains(target) { slots[Int(target)].referrers.remove(referrer) }
        for target in after where !before.contains(target) { slots[Int(target)].referrers.insert(referrer) }
        return old
    }

    /// Changes one relationship of a live object in place (the collection is taken out of the
    /// state first, so adding one member does not copy all the others) and records that it now
    /// holds `added` and no longer holds `removed`.
    private mutating func modify(
        _ property: Int32, of object: Int32, adding added: Int32? = nil, removing removed: Int32? = nil,
        _ change: (inout Stored?) -> Stored
    ) {
        guard slots[Int(object)].isLive else { return }
        var current = slots[Int(object)].properties.removeValue(forKey: property)
        slots[Int(object)].properties[property] = change(&current)
        let referrer = Self.pair(object, property)
        if let removed { slots[Int(removed)].referrers.remove(referrer) }
        if let added { slots[Int(added)].referrers.insert(referrer) }
    }

    /// Removes `member` from one relationship of one object (a to-one holding it becomes null).
    private mutating func detach(_ member: Int32, from relationship: Int32, of object: Int32) {
        enum Holding { case none, toOne, toMany, ordered }
        // Decided first, so that no reference to the collection is alive while it is changed.
        let holding: Holding =
            switch slots[Int(object)].properties[relationship] {
            case .toOne(let target?)? where target == member: .toOne
            case .toMany(let members)? where members.contains(member): .toMany
            case .ordered(let order)? where order.contains(member): .ordered
            default: .none
            }
        switch holding {
        case .toOne:
            store(.toOne(nil), as: relationship, of: object)
        case .toMany:
            modify(relationship, of: object, removing: member) { value in
                guard case .toMany(var members)? = value.take() else { return .toMany([]) }
                members.remove(member)
                return .toMany(members)
            }
        case .ordered:
            modify(relationship, of: object, removing: member) { value in
                guard case .ordered(var order)? = value.take() else { return .ordered([]) }
                order.removeAll { $0 == member }
                return .ordered(order)
            }
        case .none:
            break
        }
    }

    // MARK: - Delete

    /// Detaches the object from every relationship that holds it, then removes it.
    private mutating func delete(_ object: Int32) {
        guard slots[Int(object)].isLive else { return }
        // The object's properties and referrers are moved out of its slot, not copied (a copy
        // retained them and what they hold); its relationships are read without building sets.
        var properties = SmallMap<Int32, Stored>()
        swap(&properties, &slots[Int(object)].properties)
        properties.withMembers { members in
            // In place: iterating the map copied each value (a retain and a release).
            for index in members.indices {
                let referrer = Self.pair(object, members[index].key)
                switch members[index].value {
                case .toOne(let target?): slots[Int(target)].referrers.remove(referrer)
                case .toMany(let members): for (target, _) in members { slots[Int(target)].referrers.remove(referrer) }
                case .ordered(let order): for target in order { slots[Int(target)].referrers.remove(referrer) }
                case .toOne(nil), .attribute, .dataFile: break
                }
            }
        }
        resetProvenance(of: object)
        // The slot's fields read in place: a copy retained its lists.
        let probe =
            slots[Int(object)].isUUID
            ? LiveIndex.probe(upperCaseUUID: slots[Int(object)].uuid) : LiveIndex.probe(textIdentifiers.removeValue(forKey: object) ?? "")
        live.remove(probe, object: object)
        liveCount -= 1
        // Taken after the loop above, which drops the object's references to itself.
        var referrers = SmallMap<Int64, Void>()
        swap(&referrers, &slots[Int(object)].referrers)
        slots[Int(object)].isLive = false
        for (referrer, _) in referrers {
            let holder = Int32(truncatingIfNeeded: referrer >> 32), relationship = Int32(truncatingIfNeeded: referrer)
            if case .ordered? = slots[Int(holder)].properties[relationship] {
                orderedRemovals[referrer, default: []].append(object)
            } else {
                detach(object, from: relationship, of: holder)
            }
        }
        freeSlots.append(object)
    }
}

extension NumberedEvent.Kind {
    /// A to-many or an ordered to-many: a change that edits a relationship's members.
    fileprivate var isToManyEdit: Bool {
        switch self {
        case .toMany, .orderedToMany: true
        case .attribute, .dataFile, .toOne: false
        }
    }
}
