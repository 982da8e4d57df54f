/// A vector clock: for each store, the latest revision known (BRIEF section 2).
///
/// A store absent from the set means "no revision of it is known", which is below every
/// revision including 0; that is what makes comparisons correct when the sets name different
/// stores.
public struct RevisionSet: Hashable, Sendable {
    public enum Ordering: Sendable, Hashable {
        case equal
        /// Every store is at least as new, one strictly newer.
        case dominates
        case isDominated
        /// Each set knows something the other does not.
        case concurrent
    }

    public private(set) var revisions: [String: Int64]

    public init(_ revisions: [String: Int64] = [:]) { self.revisions = revisions }

    public subscript(store: String) -> Int64? {
        get { revisions[store] }
        set { revisions[store] = newValue }
    }

    /// Store identifiers in UTF-8 byte order.
    public var stores: [String] { revisions.keys.sorted(by: utf8Precedes) }

    public func compare(_ other: RevisionSet) -> Ordering {
        var selfNewer = false, otherNewer = false
        for store in Set(revisions.keys).union(other.revisions.keys) {
            switch (revisions[store], other.revisions[store]) {
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
        let mine = stores, theirs = other.stores
        for (a, b) in zip(mine, theirs) {
            if a != b { return utf8Precedes(a, b) }
            let (x, y) = (revisions[a] ?? -1, other.revisions[b] ?? -1)
            if x != y { return x < y }
        }
        return mine.count < theirs.count
    }

    /// The store-wise maximum: what a merged baseline knows.
    public func merged(with other: RevisionSet) -> RevisionSet {
        RevisionSet(revisions.merging(other.revisions, uniquingKeysWith: max))
    }
}
