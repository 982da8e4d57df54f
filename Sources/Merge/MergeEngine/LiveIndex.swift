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

    private var table: [IdentifierKey: Entry] = [:]

    subscript(id: String) -> Entry? { table[IdentifierKey(id)] }

    mutating func add(_ id: String, _ candidate: Candidate) {
        // One hash and one probe: a new identifier's entry is made in place, empty at first.
        table[IdentifierKey(id), default: .empty].add(candidate)
    }

    mutating func remove(_ id: String, object: Int32) {
        let key = IdentifierKey(id)
        guard var entry = table.removeValue(forKey: key) else { return }
        entry.more.removeAll { $0.object == object }
        if entry.first.object == object {
            guard !entry.more.isEmpty else { return }
            entry.first = entry.more.removeFirst()
        }
        table[key] = entry
    }
}

/// A global identifier as a hash key, compared by its exact bytes (as ``ExactString``): the first
/// 40 bytes inline, the whole text as well only when it is longer.
struct IdentifierKey: Hashable, Sendable {
    private var head: (UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0)
    private let count: Int
    private var long: ExactString?

    init(_ id: String) {
        var head = self.head
        var id = id
        let count = id.withUTF8 { bytes in
            withUnsafeMutableBytes(of: &head) { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(bytes).prefix($0.count))) }
            return bytes.count
        }
        self.head = head
        self.count = count
        if count > MemoryLayout.size(ofValue: head) { long = ExactString(id) }
    }

    static func == (lhs: IdentifierKey, rhs: IdentifierKey) -> Bool {
        lhs.count == rhs.count && lhs.head.0 == rhs.head.0 && lhs.head.1 == rhs.head.1 && lhs.head.2 == rhs.head.2
            && lhs.head.3 == rhs.head.3 && lhs.head.4 == rhs.head.4 && lhs.long == rhs.long
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(count)
        hasher.combine(head.0)
        hasher.combine(head.1)
        hasher.combine(head.2)
        hasher.combine(head.3)
        hasher.combine(head.4)
        if let long { hasher.combine(long) }
    }
}
