import JSONDocument

/// A vector clock: for each store, the latest revision known (Spec/README.md section 3).
///
/// A store absent from the set means "no revision of it is known", which is below every
/// revision including 0; that is what makes comparisons correct when the sets name different
/// stores. Stores are told apart by their exact UTF-8 bytes: two identifiers that differ only in
/// Unicode normalisation (é as U+00E9, or e + U+0301) are two stores (Spec/README.md 4).
public struct RevisionSet: Hashable, Sendable {
    public enum Ordering: Sendable, Hashable {
        case equal
        /// Every store is at least as new, one strictly newer.
        case dominates
        case isDominated
        /// Each set knows something the other does not.
        case concurrent
    }

    private var storage: [ExactString: Int64]

    public init() { storage = [:] }

    /// From (store, revision) pairs, keeping stores apart by their exact bytes; a later pair for
    /// the same store wins.
    public init(pairs: [(String, Int64)]) {
        storage = [:]
        for (store, revision) in pairs { storage[ExactString(store)] = revision }
    }

    /// From a dictionary. Swift's `String` keys already merge canonically equivalent
    /// identifiers, so readers of files use ``init(pairs:)``; this one is for sets written in code.
    public init(_ revisions: [String: Int64]) {
        self.init(pairs: revisions.map { ($0.key, $0.value) })
    }

    public subscript(store: String) -> Int64? {
        get { storage[ExactString(store)] }
        set { storage[ExactString(store)] = newValue }
    }

    /// Store identifiers in UTF-8 byte order.
    public var stores: [String] { storage.keys.map(\.value).sorted(by: utf8Precedes) }

    /// Every (store, revision), stores in UTF-8 byte order.
    public var revisions: [(store: String, revision: Int64)] {
        stores.map { ($0, storage[ExactString($0)] ?? -1) }
    }

    public var count: Int { storage.count }

    public func compare(_ other: RevisionSet) -> Ordering {
        var selfNewer = false, otherNewer = false
        for store in Set(storage.keys).union(other.storage.keys) {
            switch (storage[store], other.storage[store]) {
            case let (a?, b?):
                if a > b { selfNewer = true } else if a < b { otherNewer = true }
            case (_?, nil): selfNewer = true
            case (nil, _?): otherNewer = true
            case (nil, nil): break
            }
        }
        switch (selfNewer, otherNewer) {
        case (false, false): return .equal
        case (true, false): return .dominates
        case (false, true): return .isDominated
        case (true, true): return .concurrent
        }
    }

    /// A total order on sets (Spec/merge.md 4.4 step 4): the (store, revision) pairs sorted by
    /// store, compared pair by pair, store (UTF-8 bytes) first, then revision; a prefix comes first.
    public func listPrecedes(_ other: RevisionSet) -> Bool {
        for (a, b) in zip(revisions, other.revisions) {
            if ExactString(a.store) != ExactString(b.store) { return utf8Precedes(a.store, b.store) }
            if a.revision != b.revision { return a.revision < b.revision }
        }
        return count < other.count
    }

    /// The store-wise maximum: what a merged baseline knows.
    public func merged(with other: RevisionSet) -> RevisionSet {
        var result = self
        result.storage.merge(other.storage, uniquingKeysWith: max)
        return result
    }
}
