import CPrefetch

/// A small map: an object's set properties by property number; with `Void` values, as a set,
/// the (holder, relationship) pairs that hold an object, or the members of a to-many.
///
/// All have a few members: a list searched from the front is faster than hashing each key
/// into a dictionary or a set (measured: Benchmarks/README.md). A list that grows past 16 gets
/// an index as well, so that a hostile history setting thousands of properties on one object,
/// or pointing thousands of objects at one, does not make each step cost their number.
struct SmallMap<Key: Hashable & Sendable, Value: Sendable>: Sequence, Sendable {
    private var members: [(key: Key, value: Value)] = []
    private var index: [Key: Int]?

    init() {}

    private func position(of key: Key) -> Int? {
        if let index { return index[key] }
        return members.firstIndex { $0.key == key }
    }

    subscript(key: Key) -> Value? {
        get { position(of: key).map { members[$0].value } }
        set {
            if let newValue {
                updateValue(newValue, forKey: key)
            } else {
                removeValue(forKey: key)
            }
        }
    }

    /// Sets `value`, moved in (a copy was a retain here and a release by the caller, on memory
    /// the applying thread touches nowhere else); returns the value it replaced.
    @discardableResult
    mutating func updateValue(_ value: consuming Value, forKey key: Key) -> Value? {
        if let position = position(of: key) {
            // Swapped in place: a copy of the old value was retained, then released by the store.
            var old = consume value
            swap(&old, &members[position].value)
            return old
        }
        members.append((key, consume value))
        if index != nil {
            index?[key] = members.count - 1
        } else if members.count > 16 {
            index = Dictionary(uniqueKeysWithValues: members.enumerated().map { ($1.key, $0) })
        }
        return nil
    }

    /// Removes the value of `key` and returns it (the last member takes its place).
    @discardableResult
    mutating func removeValue(forKey key: Key) -> Value? {
        guard let position = position(of: key) else { return nil }
        let last = members.count - 1
        if position != last {
            // Through the buffer: the collection's swapAt copied both members (a retain and a
            // release of each value).
            members.withUnsafeMutableBufferPointer { $0.swapAt(position, last) }
            index?[members[position].key] = position
        }
        index?[key] = nil
        // Moved out, not copied: a copy was retained, then the member released.
        return members.removeLast().value
    }

    /// Makes room for `count` properties at least.
    mutating func reserveCapacity(_ count: Int) { members.reserveCapacity(count) }

    var count: Int { members.count }

    var isEmpty: Bool { members.isEmpty }

    func makeIterator() -> IndexingIterator<[(key: Key, value: Value)]> { members.makeIterator() }
}

extension SmallMap {
    /// Asks for the count and first members of the map stored at `map`, which are read next: a
    /// hint that does not wait for the memory. The map's bits are read, not the map, since a
    /// copy retains its list, and a retain is an atomic write that waits for the very line the
    /// hint is for. An array is a pointer to a buffer whose 32-byte header (count at 16)
    /// precedes the members; four lines from the count cover five or six members wherever the
    /// buffer starts. A wrong guess about this layout would cost time, never a wrong answer.
    static func prefetch(at map: UnsafeRawPointer) {
        guard let field = MemoryLayout<Self>.offset(of: \.members) else { return }
        let buffer = map.load(fromByteOffset: field, as: UInt.self)
        for offset in stride(from: 16, through: 208, by: 64) { cpf_prefetch(UnsafeRawPointer(bitPattern: buffer &+ UInt(offset))) }
    }
}

extension SmallMap where Key == Int32 {
    /// Puts into `positions` the members' positions by the `rank` of their keys (ascending;
    /// ranks are distinct). Each position is sorted with its rank packed above it: a comparison
    /// that read the members through a closure retained and released them every time. The
    /// caller's buffer is reused from object to object.
    func positions(byRank rank: [Int32], into positions: inout [Int64]) {
        positions.removeAll(keepingCapacity: true)
        for position in members.indices { positions.append(Int64(rank[Int(members[position].key)]) << 32 | Int64(position)) }
        positions.sort()
        for index in positions.indices { positions[index] &= 0xFFFF_FFFF }
    }

    func key(at position: Int) -> Int32 { members[position].key }

    /// Calls `body` with the members in place, where ``value(at:)`` copies a member out (a
    /// retain, then a release, of memory no other step touches).
    func withMembers<Result, Failure: Error>(
        _ body: (UnsafeBufferPointer<(key: Key, value: Value)>) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try members.withUnsafeBufferPointer(body)
    }

    func value(at position: Int) -> Value { members[position].value }
}

extension SmallMap: ExpressibleByArrayLiteral where Value == Void {
    init(arrayLiteral keys: Key...) {
        self.init()
        for key in keys { insert(key) }
    }

    func contains(_ key: Key) -> Bool { position(of: key) != nil }

    mutating func insert(_ key: Key) {
        // Room for four at first: most sets reach two to four members, and growing from the
        // allocator's smallest block (two keys) reallocated most of them once more.
        if members.isEmpty { members.reserveCapacity(4) }
        updateValue((), forKey: key)
    }

    mutating func remove(_ key: Key) { removeValue(forKey: key) }
}
