import JSONDocument

/// A vector clock: for each store, the latest revision known (Spec/README.md section 3).
///
/// A store absent from the set means "no revision of it is known", which is below every
/// revision including 0; that is what makes comparisons correct when the sets name different
/// stores. Stores are told apart by their exact UTF-8 bytes: two identifiers that differ only in
/// Unicode normalisation (é as U+00E9, or e + U+0301) are two stores (Spec/README.md 4).
package struct RevisionSet: Hashable, Sendable {
    package enum Ordering: Sendable, Hashable {
        case equal
        /// Every store is at least as new, one strictly newer.
        case dominates
        case isDominated
        /// Each set knows something the other does not.
        case concurrent
    }

    /// A store and its revision.
    private struct Pair: Hashable, Sendable {
        var store: ExactString
        var revision: Int64
    }

    /// Up to ``largeCount`` stores, a list sorted by store (UTF-8 bytes), each store once: about a
    /// third of a dictionary's memory, and every reader of a folder keeps one set per event
    /// (Benchmarks/README.md). Above it, a dictionary, so that a hostile set of many thousand
    /// stores built a store at a time costs no quadratic time. Which one is decided by the count
    /// alone, so that equal sets are equal values.
    private enum Storage: Hashable, Sendable {
        case sorted([Pair])
        case table([ExactString: Int64])
    }

    /// The most stores kept as a sorted list.
    static let largeCount = 64

    private var storage: Storage

    package init() { storage = .sorted([]) }

    private init(sorted pairs: [Pair]) {
        storage =
            pairs.count <= Self.largeCount ? .sorted(pairs) : .table(Dictionary(pairs.map { ($0.store, $0.revision) }, uniquingKeysWith: { _, last in last }))
    }

    private init(table: [ExactString: Int64]) {
        storage =
            table.count <= Self.largeCount
            ? .sorted(Self.sortedList(table)) : .table(table)
    }

    /// From (store, revision) pairs, keeping stores apart by their exact bytes; a later pair for
    /// the same store wins.
    package init(pairs: [(String, Int64)]) {
        guard pairs.count <= Self.largeCount else {
            self.init(table: Dictionary(pairs.map { (ExactString($0.0), $0.1) }, uniquingKeysWith: { _, last in last }))
            return
        }
        // Sorted stably, so that of a store's pairs the last given is the last of its run.
        let sorted = pairs.enumerated().sorted { a, b in
            utf8Precedes(a.element.0, b.element.0) || (!utf8Precedes(b.element.0, a.element.0) && a.offset < b.offset)
        }
        var list: [Pair] = []
        list.reserveCapacity(sorted.count)
        for (_, pair) in sorted {
            let store = ExactString(pair.0)
            if list.last?.store == store { list[list.count - 1].revision = pair.1 } else { list.append(Pair(store: store, revision: pair.1)) }
        }
        self.init(sorted: list)
    }

    /// From pairs that name each store once (by exact bytes); nil when a store comes twice.
    /// (Sorted once; a set grown a store at a time hashed every store again at each growth,
    /// for every event read.)
    package init?(uniquePairs pairs: [(String, Int64)]) {
        guard pairs.count <= Self.largeCount else {
            var table: [ExactString: Int64] = Dictionary(minimumCapacity: pairs.count)
            for (store, revision) in pairs where table.updateValue(revision, forKey: ExactString(store)) != nil { return nil }
            storage = .table(table)
            return
        }
        var list = pairs.map { Pair(store: ExactString($0.0), revision: $0.1) }
        if !list.indices.dropFirst().allSatisfy({ utf8Precedes(list[$0 - 1].store.value, list[$0].store.value) }) {
            list.sort { utf8Precedes($0.store.value, $1.store.value) }
            // Sorted, a store given twice is next to itself.
            guard !list.indices.dropFirst().contains(where: { list[$0 - 1].store == list[$0].store }) else { return nil }
        }
        storage = .sorted(list)
    }

    /// From a dictionary. Swift's `String` keys already merge canonically equivalent
    /// identifiers, so readers of files use ``init(pairs:)``; this one is for sets written in code.
    package init(_ revisions: [String: Int64]) {
        self.init(pairs: revisions.map { ($0.key, $0.value) })
    }

    /// Where `store` is in a sorted list, or where it would go.
    private static func position(of store: ExactString, in list: [Pair]) -> (index: Int, found: Bool) {
        var low = 0, high = list.count
        while low < high {
            let middle = (low + high) / 2
            if utf8Precedes(list[middle].store.value, store.value) { low = middle + 1 } else { high = middle }
        }
        return (low, low < list.count && list[low].store == store)
    }

    private func revision(of store: ExactString) -> Int64? {
        switch storage {
        case .sorted(let list):
            let place = Self.position(of: store, in: list)
            return place.found ? list[place.index].revision : nil
        case .table(let table): return table[store]
        }
    }

    package subscript(store: String) -> Int64? {
        get { revision(of: ExactString(store)) }
        set {
            let key = ExactString(store)
            switch storage {
            case .sorted(var list):
                storage = .sorted([])
                let place = Self.position(of: key, in: list)
                switch (place.found, newValue) {
                case (true, let revision?): list[place.index].revision = revision
                case (true, nil): list.remove(at: place.index)
                case (false, let revision?): list.insert(Pair(store: key, revision: revision), at: place.index)
                case (false, nil): break
                }
                self = RevisionSet(sorted: list)
            case .table(var table):
                storage = .sorted([])
                table[key] = newValue
                self = RevisionSet(table: table)
            }
        }
    }

    /// Every pair, stores in UTF-8 byte order.
    private var sortedPairs: [Pair] {
        switch storage {
        case .sorted(let list): list
        case .table(let table): Self.sortedList(table)
        }
    }

    /// The pairs of a dictionary, sorted by store (UTF-8 bytes).
    private static func sortedList(_ table: [ExactString: Int64]) -> [Pair] {
        table.map { Pair(store: $0.key, revision: $0.value) }.sorted { utf8Precedes($0.store.value, $1.store.value) }
    }

    /// Store identifiers in UTF-8 byte order.
    package var stores: [String] { sortedPairs.map(\.store.value) }

    /// Every (store, revision), stores in UTF-8 byte order.
    package var revisions: [(store: String, revision: Int64)] { sortedPairs.map { (store: $0.store.value, revision: $0.revision) } }

    package var count: Int {
        switch storage {
        case .sorted(let list): list.count
        case .table(let table): table.count
        }
    }

    /// Calls `body` with every (store, revision), in no particular order: for a caller that keeps
    /// its own order, the sort of ``revisions`` is wasted.
    package func forEachPair(_ body: (_ store: String, _ revision: Int64) -> Void) {
        switch storage {
        case .sorted(let list): for pair in list { body(pair.store.value, pair.revision) }
        case .table(let table): for (store, revision) in table { body(store.value, revision) }
        }
    }

    /// Walks each set once without building the union of their stores: merges compare
    /// thousands of baselines and history compares every change with others (Spec/merge.md 4.3).
    package func compare(_ other: RevisionSet) -> Ordering {
        var selfNewer = false, otherNewer = false
        var shared = 0
        forEachPair { store, a in
            guard let b = other.revision(of: ExactString(store)) else {
                selfNewer = true
                return
            }
            shared += 1
            if a > b { selfNewer = true } else if a < b { otherNewer = true }
        }
        // A store only the other set has makes it newer there.
        if other.count > shared { otherNewer = true }
        switch (selfNewer, otherNewer) {
        case (false, false): return .equal
        case (true, false): return .dominates
        case (false, true): return .isDominated
        case (true, true): return .concurrent
        }
    }

    /// Whether this set knows at least what `other` knows (`dominates` or `equal`, Spec/merge.md
    /// 4.3), looking only at the stores of `other`.
    package func covers(_ other: RevisionSet) -> Bool {
        guard count >= other.count else { return false }
        var covered = true
        other.forEachPair { store, revision in
            if covered, (self.revision(of: ExactString(store)) ?? .min) < revision { covered = false }
        }
        return covered
    }

    /// A total order on sets (Spec/merge.md 4.4 step 4): the (store, revision) pairs sorted by
    /// store, compared pair by pair, store (UTF-8 bytes) first, then revision; a prefix comes first.
    package func listPrecedes(_ other: RevisionSet) -> Bool {
        for (a, b) in zip(sortedPairs, other.sortedPairs) {
            if a.store != b.store { return utf8Precedes(a.store.value, b.store.value) }
            if a.revision != b.revision { return a.revision < b.revision }
        }
        return count < other.count
    }

    /// The store-wise maximum: what a merged baseline knows.
    package func merged(with other: RevisionSet) -> RevisionSet {
        var result = self
        result.merge(with: other)
        return result
    }

    /// ``merged(with:)`` in place: folding many sets with `merged` copied the growing result
    /// once per set, quadratic in the number of concurrent baselines (Benchmarks/README.md).
    package mutating func merge(with other: RevisionSet) {
        if case .sorted(let theirs) = other.storage, case .sorted(var mine) = storage, mine.count == theirs.count,
            mine.indices.allSatisfy({ mine[$0].store == theirs[$0].store })
        {
            // The same stores, as the sets of one folder's events mostly are: revisions raised
            // in place, with no new list (made per event, it was most of the integrity checks'
            // time after the replay).
            storage = .sorted([])
            for index in mine.indices where theirs[index].revision > mine[index].revision { mine[index].revision = theirs[index].revision }
            storage = .sorted(mine)
            return
        }
        switch (storage, other.storage) {
        case (.sorted(let mine), .sorted(let theirs)):
            // Both lists walked once, side by side.
            var result: [Pair] = []
            result.reserveCapacity(mine.count + theirs.count)
            var i = 0, j = 0
            while i < mine.count || j < theirs.count {
                if j == theirs.count || (i < mine.count && utf8Precedes(mine[i].store.value, theirs[j].store.value)) {
                    result.append(mine[i])
                    i += 1
                } else if i == mine.count || mine[i].store != theirs[j].store {
                    result.append(theirs[j])
                    j += 1
                } else {
                    result.append(Pair(store: mine[i].store, revision: max(mine[i].revision, theirs[j].revision)))
                    i += 1
                    j += 1
                }
            }
            self = RevisionSet(sorted: result)
        default:
            var table: [ExactString: Int64]
            if case .table(let own) = storage { table = own } else { table = Dictionary(sortedPairs.map { ($0.store, $0.revision) }, uniquingKeysWith: max) }
            storage = .sorted([])
            other.forEachPair { store, revision in
                let key = ExactString(store)
                table[key] = max(table[key] ?? .min, revision)
            }
            self = RevisionSet(table: table)
        }
    }
}

/// One revision of one store, the store told apart by its bytes (two identifiers spelt in NFC
/// and NFD are two stores): a key for events by (store, revision).
package struct StoreRevision: Hashable, Sendable {
    package var store: ExactString
    package var revision: Int64

    package init(store: ExactString, revision: Int64) {
        self.store = store
        self.revision = revision
    }

    package init(_ store: String, _ revision: Int64) { self.init(store: ExactString(store), revision: revision) }
}
