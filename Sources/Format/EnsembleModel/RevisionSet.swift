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

    private var storage: [ExactString: Int64]

    package init() { storage = [:] }

    /// From (store, revision) pairs, keeping stores apart by their exact bytes; a later pair for
    /// the same store wins.
    package init(pairs: [(String, Int64)]) {
        storage = Dictionary(minimumCapacity: pairs.count)
        for (store, revision) in pairs { storage[ExactString(store)] = revision }
    }

    /// From pairs that name each store once (by exact bytes); nil when a store comes twice.
    /// (One hash per store, into a table made at its size: a set grown a store at a time hashed
    /// every store again at each growth, for every event read.)
    package init?(uniquePairs pairs: [(String, Int64)]) {
        storage = Dictionary(minimumCapacity: pairs.count)
        for (store, revision) in pairs where storage.updateValue(revision, forKey: ExactString(store)) != nil { return nil }
    }

    /// From a dictionary. Swift's `String` keys already merge canonically equivalent
    /// identifiers, so readers of files use ``init(pairs:)``; this one is for sets written in code.
    package init(_ revisions: [String: Int64]) {
        self.init(pairs: revisions.map { ($0.key, $0.value) })
    }

    package subscript(store: String) -> Int64? {
        get { storage[ExactString(store)] }
        set { storage[ExactString(store)] = newValue }
    }

    /// Store identifiers in UTF-8 byte order.
    package var stores: [String] { storage.keys.map(\.value).sorted(by: utf8Precedes) }

    /// Every (store, revision), stores in UTF-8 byte order. (The pairs are sorted as they are:
    /// looking each store up again cost more than the sort, for every event indexed.)
    package var revisions: [(store: String, revision: Int64)] {
        storage.map { (store: $0.key.value, revision: $0.value) }.sorted { utf8Precedes($0.store, $1.store) }
    }

    package var count: Int { storage.count }

    /// Calls `body` with every (store, revision), in no particular order: for a caller that keeps
    /// its own order, the sort of ``revisions`` is wasted.
    package func forEachPair(_ body: (_ store: String, _ revision: Int64) -> Void) {
        for (store, revision) in storage { body(store.value, revision) }
    }

    /// Walks each set once without building the union of their stores: merges compare
    /// thousands of baselines and history compares every change with others (Spec/merge.md 4.3).
    package func compare(_ other: RevisionSet) -> Ordering {
        var selfNewer = false, otherNewer = false
        var shared = 0
        for (store, a) in storage {
            guard let b = other.storage[store] else {
                selfNewer = true
                continue
            }
            shared += 1
            if a > b { selfNewer = true } else if a < b { otherNewer = true }
        }
        // A store only the other set has makes it newer there.
        if other.storage.count > shared { otherNewer = true }
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
        guard storage.count >= other.storage.count else { return false }
        for (store, revision) in other.storage {
            guard let own = storage[store], own >= revision else { return false }
        }
        return true
    }

    /// A total order on sets (Spec/merge.md 4.4 step 4): the (store, revision) pairs sorted by
    /// store, compared pair by pair, store (UTF-8 bytes) first, then revision; a prefix comes first.
    package func listPrecedes(_ other: RevisionSet) -> Bool {
        for (a, b) in zip(revisions, other.revisions) {
            if ExactString(a.store) != ExactString(b.store) { return utf8Precedes(a.store, b.store) }
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
        storage.merge(other.storage, uniquingKeysWith: max)
    }
}
