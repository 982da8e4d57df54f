import JSONDocument
import CPrefetch

/// Live objects by global identifier: for each identifier, the (entity, object number) pairs
/// live with it, usually one (Spec/merge.md 7: (Base, x) and (Sub, x) are two objects).
///
/// Every object change of a replay looks an identifier up here, and on a large state each
/// lookup is a cache miss: `perf` put 84% of a lookup's time on the first read of the element
/// it probed. So the table is this type's own, open addressing with linear probing over
/// 32-byte buckets that hold the identifier's bytes (a UUID packed into 16) and its first pair,
/// and a lookup is split in two: ``probe(_:)`` hashes an identifier without reading the table,
/// ``prefetch(_:)`` asks for the bucket it starts at, so that a replay can hash all of an
/// event's identifiers, ask for all their buckets, and only then look them up (measured:
/// Benchmarks/README.md). Identifiers that do not pack (longer than 16 bytes and not
/// a canonical UUID) and the pairs after an identifier's first are kept in dictionaries.
///
/// Buckets are placed by a `Hasher` hash, which is seeded at random in each process (unless
/// `SWIFT_DETERMINISTIC_HASHING` is set): a hostile folder cannot choose identifiers that collide.
struct LiveIndex: Sendable {
    typealias Candidate = (entity: Int32, object: Int32)

    /// The pairs live with one identifier, in the order they became live.
    struct Entry: Sequence, Sendable {
        fileprivate var first: Candidate
        fileprivate var more: [Candidate] = []

        /// An entry still without a pair (object numbers are never negative).
        fileprivate static var empty: Entry { Entry(first: (-1, -1)) }

        fileprivate mutating func add(_ candidate: Candidate) {
            if first.object < 0 { first = candidate } else { more.append(candidate) }
        }

        /// Removes the pair of `object`; returns whether a pair is left.
        fileprivate mutating func remove(object: Int32) -> Bool {
            more.removeAll { $0.object == object }
            if first.object == object {
                guard !more.isEmpty else { return false }
                first = more.removeFirst()
            }
            return true
        }

        func makeIterator() -> Iterator { Iterator(entry: self) }

        struct Iterator: IteratorProtocol {
            fileprivate let entry: Entry
            private var index = -1

            fileprivate init(entry: Entry) { self.entry = entry }

            mutating func next() -> Candidate? {
                defer { index += 1 }
                if index < 0 { return entry.first }
                return index < entry.more.count ? entry.more[index] : nil
            }
        }
    }

    /// An identifier's key and, when it packs, its hash, computed without reading the table (a
    /// probe holds no position, so it stays valid while the table changes).
    struct Probe: Sendable {
        fileprivate let key: IdentifierKey
        /// The hash's low 32 bits, which are all a bucket's place uses: a table has at most 2^32
        /// buckets, since object numbers are 32-bit and a table is at least a quarter empty.
        fileprivate let hash: UInt32
    }

    private struct Bucket: Sendable {
        var key = PackedIdentifier()
        /// The probe's hash, where a search for the identifier starts: read again when buckets
        /// move, without hashing again.
        var hash: UInt32 = 0
        var first: Candidate = (-1, -1)
    }

    /// A power of two buckets, at most three quarters used; empty until the first pair.
    private var buckets: [Bucket] = []
    private var used = 0
    /// The pairs after the first of a packed identifier (its bucket's key has `hasMore` set).
    private var more: [PackedIdentifier: [Candidate]] = [:]
    private var unpacked: [ExactString: Entry] = [:]

    static func probe(_ id: String) -> Probe { ExactString.withUTF8(of: id) { probe($0) } }

    /// ``probe(_:)`` of the identifier with these UTF-8 bytes.
    static func probe(_ id: UnsafeBufferPointer<UInt8>) -> Probe {
        let key = IdentifierKey(id)
        guard case .packed(let packed) = key else { return Probe(key: key, hash: 0) }
        return probe(packed)
    }

    /// ``probe(_:)`` of the canonical upper-case text of the UUID with these big-endian halves.
    static func probe(upperCaseUUID halves: (high: UInt64, low: UInt64)) -> Probe { probe(PackedIdentifier(upperCaseUUID: halves)) }

    private static func probe(_ packed: PackedIdentifier) -> Probe {
        var hasher = Hasher()
        hasher.combine(packed)
        return Probe(key: .packed(packed), hash: UInt32(truncatingIfNeeded: hasher.finalize()))
    }

    /// Asks for the bucket where the lookup of `probe` starts: a hint that does not wait for the
    /// memory, so that the misses of many probes overlap.
    func prefetch(_ probe: Probe) {
        guard case .packed = probe.key, !buckets.isEmpty else { return }
        let position = home(probe.hash)
        buckets.withUnsafeBufferPointer { cpf_prefetch($0.baseAddress.map { $0 + position }) }
    }

    subscript(probe: Probe) -> Entry? {
        switch probe.key {
        case .unpacked(let text):
            return unpacked[text]
        case .packed(let key):
            guard let position = position(of: key, hash: probe.hash) else { return nil }
            let bucket = buckets[position]
            return Entry(first: bucket.first, more: bucket.key.hasMore ? more[key] ?? [] : [])
        }
    }

    /// The object that became live first with `probe`'s identifier, if any.
    func firstObject(_ probe: Probe) -> Int32? { self[probe]?.first.object }

    mutating func add(_ probe: Probe, _ candidate: Candidate) {
        switch probe.key {
        case .unpacked(let text):
            unpacked[text, default: .empty].add(candidate)
        case .packed(let key):
            if let position = position(of: key, hash: probe.hash) {
                buckets[position].key.hasMore = true
                more[key, default: []].append(candidate)
                return
            }
            if (used + 1) * 4 > buckets.count * 3 { grow() }
            var stored = key
            stored.isUsed = true
            place(Bucket(key: stored, hash: probe.hash, first: candidate))
            used += 1
        }
    }

    mutating func remove(_ probe: Probe, object: Int32) {
        switch probe.key {
        case .unpacked(let text):
            guard var entry = unpacked.removeValue(forKey: text), entry.remove(object: object) else { return }
            unpacked[text] = entry
        case .packed(let key):
            guard let position = position(of: key, hash: probe.hash) else { return }
            var entry = Entry(first: buckets[position].first, more: buckets[position].key.hasMore ? more.removeValue(forKey: key) ?? [] : [])
            guard entry.remove(object: object) else { return empty(position) }
            buckets[position].first = entry.first
            buckets[position].key.hasMore = !entry.more.isEmpty
            if !entry.more.isEmpty { more[key] = entry.more }
        }
    }

    /// Where a search for an identifier with this hash starts (the table is not empty).
    private func home(_ hash: UInt32) -> Int { Int(hash) & (buckets.count - 1) }

    /// The bucket of `key`, if it is in the table.
    private func position(of key: PackedIdentifier, hash: UInt32) -> Int? {
        guard !buckets.isEmpty else { return nil }
        let mask = buckets.count - 1
        var position = home(hash)
        // The table is never full, so an empty bucket ends every search.
        while buckets[position].key.isUsed {
            if buckets[position].key.sameIdentifier(as: key) { return position }
            position = (position + 1) & mask
        }
        return nil
    }

    /// Empties a bucket, moving back the buckets after it that would no longer be found (no
    /// markers of deleted buckets are left, so searches stay as short as the table is full).
    private mutating func empty(_ position: Int) {
        let mask = buckets.count - 1
        var hole = position, next = (position + 1) & mask
        while buckets[next].key.isUsed {
            let start = home(buckets[next].hash)
            // It moves when the hole lies between where its search starts and where it is.
            if (next - start) & mask >= (next - hole) & mask {
                buckets[hole] = buckets[next]
                hole = next
            }
            next = (next + 1) & mask
        }
        buckets[hole] = Bucket()
        used -= 1
    }

    /// Puts a bucket in the first empty place from its home (the identifier is not in the table).
    private mutating func place(_ bucket: Bucket) {
        var position = home(bucket.hash)
        while buckets[position].key.isUsed { position = (position + 1) & (buckets.count - 1) }
        buckets[position] = bucket
    }

    private mutating func grow() {
        let old = buckets
        buckets = Array(repeating: Bucket(), count: max(16, old.count * 2))
        for bucket in old where bucket.key.isUsed { place(bucket) }
    }
}

/// A global identifier as a key, compared by its exact bytes (as ``ExactString``): packed into
/// 16 bytes when it is a UUID in its canonical text form (8-4-4-4-12 hex digits, all upper or
/// all lower case, as devices write them) or 16 bytes at most; otherwise its whole text.
enum IdentifierKey: Sendable {
    case packed(PackedIdentifier)
    case unpacked(ExactString)

    /// The key of the identifier with these UTF-8 bytes (valid UTF-8: a string's).
    init(_ bytes: UnsafeBufferPointer<UInt8>) {
        let raw = UnsafeRawBufferPointer(bytes)
        if bytes.count == 36, let uuid = PackedIdentifier(uuid: raw) {
            self = .packed(uuid)
        } else if bytes.count <= 16 {
            self = .packed(PackedIdentifier(raw: raw))
        } else {
            self = .unpacked(ExactString(String(decoding: bytes, as: UTF8.self)))
        }
    }
}

/// An identifier of 16 bytes at most, or a canonical UUID's 32 hex digits, in two words, with
/// its form: the byte count, or which letter case the UUID's digits have (a packed and a raw
/// identifier then never compare equal). Two bits of the form are the table's; the synthesized
/// `==` and hash include them, so only keys without them (a probe's) are hashed or compared so,
/// and a bucket's key is compared with ``sameIdentifier(as:)``.
struct PackedIdentifier: Hashable, Sendable {
    fileprivate var high: UInt64 = 0
    fileprivate var low: UInt64 = 0
    private var form: UInt32 = 0

    private static let upperUUID: UInt32 = 1 << 29
    private static let lowerUUID: UInt32 = 1 << 28
    private static let usedFlag: UInt32 = 1 << 31
    private static let moreFlag: UInt32 = 1 << 30

    fileprivate init() {}

    fileprivate init(raw bytes: UnsafeRawBufferPointer) {
        withUnsafeMutableBytes(of: &high) { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes.prefix(8))) }
        withUnsafeMutableBytes(of: &low) { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes.dropFirst(8).prefix(8))) }
        form = UInt32(bytes.count)
    }

    /// The 32 hex digits of a canonical UUID as 128 bits, with the form of their letters; nil for
    /// anything else. Eight digits at a time: checked and converted in a few word operations,
    /// since every object change of a replay makes a key.
    fileprivate init?(uuid bytes: UnsafeRawBufferPointer) {
        guard bytes[8] == UInt8(ascii: "-"), bytes[13] == UInt8(ascii: "-"), bytes[18] == UInt8(ascii: "-"), bytes[23] == UInt8(ascii: "-") else {
            return nil
        }
        func word(_ offset: Int) -> UInt64 { UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)) }
        func halves(_ first: Int, _ second: Int) -> UInt64 {
            UInt64(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: first, as: UInt32.self)))
                | UInt64(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: second, as: UInt32.self))) << 32
        }
        let (a, b, c, d) = (Self.digits(word(0)), Self.digits(halves(9, 14)), Self.digits(halves(19, 24)), Self.digits(word(28)))
        // Each word's check bits: bit 1 set for all digits or upper case letters, bit 2 for all
        // digits or lower case letters.
        let cases = a.cases & b.cases & c.cases & d.cases
        guard cases != 0 else { return nil }
        // The four words hold the 32 digits once each (the last group is split 4 + 8).
        (high, low) = (a.value << 32 | b.value, c.value << 32 | d.value)
        form = cases & 1 != 0 ? Self.upperUUID : Self.lowerUUID
    }

    /// The key ``init(uuid:)`` makes of the canonical upper-case text of the UUID whose 16 bytes
    /// are these two big-endian halves. That reads each group of 8 digits (4 bytes) as
    /// ``ByteLanes/hexDigits(_:)`` does, the last digit highest: the group's bytes in little-endian
    /// order, the two digits of each byte swapped.
    fileprivate init(upperCaseUUID halves: (high: UInt64, low: UInt64)) {
        func group(_ bigEndian: UInt32) -> UInt64 {
            let x = bigEndian.byteSwapped
            return UInt64((x & 0x0F0F_0F0F) << 4 | (x >> 4) & 0x0F0F_0F0F)
        }
        func half(_ bytes: UInt64) -> UInt64 { group(UInt32(truncatingIfNeeded: bytes >> 32)) << 32 | group(UInt32(truncatingIfNeeded: bytes)) }
        (high, low) = (half(halves.high), half(halves.low))
        form = Self.upperUUID
    }

    /// Eight hex digit characters as 32 bits, and which letter cases they fit (see
    /// ``init(uuid:)``); `cases` is 0 when they are not all hex digits of one case.
    @inline(__always)
    private static func digits(_ x: UInt64) -> (value: UInt64, cases: UInt32) {
        let digits = ByteLanes.hexDigits(x)
        return (UInt64(digits.value), digits.cases)
    }

    /// Whether a bucket holds an identifier.
    fileprivate var isUsed: Bool {
        get { form & Self.usedFlag != 0 }
        set { form = newValue ? form | Self.usedFlag : form & ~Self.usedFlag }
    }

    /// Whether the identifier has pairs after its first.
    fileprivate var hasMore: Bool {
        get { form & Self.moreFlag != 0 }
        set { form = newValue ? form | Self.moreFlag : form & ~Self.moreFlag }
    }

    /// The same identifier, whatever the table's bits.
    fileprivate func sameIdentifier(as other: PackedIdentifier) -> Bool {
        let identity = ~(Self.usedFlag | Self.moreFlag)
        return high == other.high && low == other.low && form & identity == other.form & identity
    }
}
