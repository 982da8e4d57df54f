import JSONDocument

/// Live objects by global identifier: for each identifier, the (entity, object number) pairs
/// live with it, usually one (Spec/merge.md 7: (Base, x) and (Sub, x) are two objects).
///
/// Every object change of a replay looks an identifier up here. The identifier's bytes are
/// kept in the key itself when they fit (a UUID does), and the first pair in the entry: a
/// lookup then reads the table and nothing else, where a `String` key and an array of pairs
/// cost two more cache misses on a large state (measured: Benchmarks/README.md).
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

    /// One identifier's key and entry in one element: a lookup reads one place in memory, where
    /// a dictionary keeps keys and values apart and costs two cache misses on a large state.
    private struct Record: Hashable, Sendable {
        var key: IdentifierKey
        var entry: Entry

        static func == (lhs: Record, rhs: Record) -> Bool { lhs.key == rhs.key }
        func hash(into hasher: inout Hasher) { hasher.combine(key) }
    }

    private var table: Set<Record> = []

    subscript(id: String) -> Entry? {
        table.firstIndex(of: Record(key: IdentifierKey(id), entry: .empty)).map { table[$0].entry }
    }

    mutating func add(_ id: String, _ candidate: Candidate) {
        let probe = Record(key: IdentifierKey(id), entry: .empty)
        var record = table.remove(probe) ?? probe
        record.entry.add(candidate)
        table.insert(record)
    }

    mutating func remove(_ id: String, object: Int32) {
        guard var record = table.remove(Record(key: IdentifierKey(id), entry: .empty)) else { return }
        record.entry.more.removeAll { $0.object == object }
        if record.entry.first.object == object {
            guard !record.entry.more.isEmpty else { return }
            record.entry.first = record.entry.more.removeFirst()
        }
        table.insert(record)
    }
}

/// A global identifier as a hash key, compared by its exact bytes (as ``ExactString``) in 40
/// bytes: a UUID in its canonical text form (8-4-4-4-12 hex digits, all upper or all lower case,
/// as devices write them) packed into 16; any other identifier's first 16 bytes, and the whole
/// text as well when it is longer.
struct IdentifierKey: Hashable, Sendable {
    private var high: UInt64 = 0
    private var low: UInt64 = 0
    /// The byte count, with ``upperUUID`` or ``lowerUUID`` set when `high` and `low` hold a
    /// packed UUID (a packed and a raw identifier then never compare equal).
    private var form: UInt64 = 0
    /// The whole text of an identifier longer than 16 bytes that is not a canonical UUID (the
    /// string itself: a key is made for every lookup, and a box would be an allocation each).
    private var long: ExactString?

    private static let upperUUID: UInt64 = 1 << 62
    private static let lowerUUID: UInt64 = 1 << 61

    init(_ id: String) {
        var id = id
        let count = id.withUTF8 { bytes in
            if bytes.count == 36, let packed = Self.packedUUID(UnsafeRawBufferPointer(bytes)) {
                (high, low, form) = packed
            } else {
                withUnsafeMutableBytes(of: &high) { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(bytes).prefix(8))) }
                withUnsafeMutableBytes(of: &low) { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(bytes).dropFirst(8).prefix(8))) }
                form = UInt64(bytes.count)
            }
            return bytes.count
        }
        if count > 16 && form == UInt64(count) { long = ExactString(id) }
    }

    /// The 32 hex digits of a canonical UUID as 128 bits, with the form of their letters; nil for
    /// anything else. Eight digits at a time: checked and converted in a few word operations,
    /// since every object change of a replay makes a key.
    private static func packedUUID(_ bytes: UnsafeRawBufferPointer) -> (UInt64, UInt64, UInt64)? {
        guard bytes[8] == UInt8(ascii: "-"), bytes[13] == UInt8(ascii: "-"), bytes[18] == UInt8(ascii: "-"), bytes[23] == UInt8(ascii: "-") else {
            return nil
        }
        func word(_ offset: Int) -> UInt64 { UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)) }
        func halves(_ first: Int, _ second: Int) -> UInt64 {
            UInt64(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: first, as: UInt32.self)))
                | UInt64(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: second, as: UInt32.self))) << 32
        }
        let (a, b, c, d) = (digits(word(0)), digits(halves(9, 14)), digits(halves(19, 24)), digits(word(28)))
        // Each word's check bits: bit 1 set for all digits or upper case letters, bit 2 for all
        // digits or lower case letters.
        let cases = a.cases & b.cases & c.cases & d.cases
        guard cases != 0 else { return nil }
        // The four words hold the 32 digits once each (the last group is split 4 + 8).
        return (a.value << 32 | b.value, c.value << 32 | d.value, cases & 1 != 0 ? upperUUID : lowerUUID)
    }

    /// Eight hex digit characters as 32 bits, and which letter cases they fit (see
    /// ``packedUUID(_:)``); `cases` is 0 when they are not all hex digits of one case.
    @inline(__always)
    private static func digits(_ x: UInt64) -> (value: UInt64, cases: UInt64) {
        let ones: UInt64 = 0x0101_0101_0101_0101, high: UInt64 = 0x8080_8080_8080_8080
        // Every byte below 0x80, so that adding up to 0x50 to each carries into no other.
        guard x & high == 0 else { return (0, 0) }
        @inline(__always) func inRange(_ first: UInt64, _ end: UInt64) -> UInt64 {
            (x &+ ones &* (0x80 - first)) & ~(x &+ ones &* (0x80 - end)) & high
        }
        let digit = inRange(0x30, 0x3A)
        let upper: UInt64 = (digit | inRange(0x41, 0x47)) == high ? 1 : 0
        let lower: UInt64 = (digit | inRange(0x61, 0x67)) == high ? 2 : 0
        // A digit's value is its low four bits; a letter's is those plus 9 (bit 6 set).
        var nibbles = (x & (ones &* 0x0F)) &+ ((x >> 6) & ones) &* 9
        nibbles = (nibbles | nibbles >> 4) & 0x00FF_00FF_00FF_00FF
        nibbles = (nibbles | nibbles >> 8) & 0x0000_FFFF_0000_FFFF
        return ((nibbles | nibbles >> 16) & 0xFFFF_FFFF, upper | lower)
    }

    static func == (lhs: IdentifierKey, rhs: IdentifierKey) -> Bool {
        lhs.high == rhs.high && lhs.low == rhs.low && lhs.form == rhs.form && lhs.long == rhs.long
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(high)
        hasher.combine(low)
        hasher.combine(form)
        if let long { hasher.combine(long) }
    }
}
