/// The errors one checking stage finds in one file, kept within a fixed bound (Spec/README.md
/// section 6.2): the first ``limit`` in report order, then one `format.too-many-errors` entry that
/// counts the rest. A file of a million violations then costs a report of a hundred and one
/// entries, not a million errors with their messages and pointers.
package struct BoundedErrorList {
    /// The report order of a stage.
    package enum Order {
        /// By JSON pointer (string order), then code: the schema stage (Spec/v2-json.md 4), whose
        /// violations are found in another order than they are reported.
        case pointerThenCode
        /// In the order found: the model stage (Spec/model.md 9.3), which finds them in report order.
        case found
    }

    package static let defaultLimit = 100

    package let limit: Int
    package let order: Order
    /// Every error appended, duplicates included: a stage compares it before and after a step to
    /// learn whether the step failed.
    package private(set) var count = 0
    private var kept: [Entry] = []
    /// The largest key kept after the last pruning, once `limit` entries are kept: no error with a
    /// larger key can be reported any more, so it is only counted.
    private var ceiling: Key?
    /// Hashes of the (pointer, code) pairs that are only counted, so that a pair found twice is
    /// counted once. Eight bytes a pair, against hundreds for a kept error.
    private var dropped = Set<Int>()
    private var droppedInOrder = 0

    package init(limit: Int = defaultLimit, order: Order) {
        self.limit = max(limit, 1)
        self.order = order
    }

    /// Adds an error; with ``Order/found`` the error is built only while it can still be reported.
    package mutating func append(_ error: @autoclosure () -> FormatError) {
        count += 1
        switch order {
        case .found:
            if kept.count < limit {
                let error = error()
                kept.append(Entry(key: Key(error), error: error))
            } else {
                droppedInOrder += 1
            }
        case .pointerThenCode:
            let error = error()
            let key = Key(error)
            if let ceiling, !(key < ceiling) {
                if key != ceiling { dropped.insert(key.hashValue) }
                return
            }
            kept.append(Entry(key: key, error: error))
            if kept.count >= 2 * limit { prune() }
        }
    }

    /// The report: the kept errors in report order, one per (code, pointer), then the count of the
    /// rest when there is a rest.
    package mutating func finish() -> [FormatError] {
        if order == .pointerThenCode { prune() }
        var report = kept.map(\.error)
        let rest = order == .found ? droppedInOrder : dropped.count
        if rest > 0 {
            report.append(
                FormatError(
                    .formatTooManyErrors,
                    "this file has \(rest) more error\(rest == 1 ? "" : "s") of one kind than are listed here (a report keeps the first \(limit))"))
        }
        return report
    }

    /// Sorts and deduplicates the kept errors, keeps the first `limit` and counts the others.
    private mutating func prune() {
        kept.sort { $0.key < $1.key }
        var unique: [Entry] = []
        unique.reserveCapacity(min(kept.count, limit))
        for entry in kept where unique.last?.key != entry.key {
            if unique.count < limit {
                unique.append(entry)
            } else {
                dropped.insert(entry.key.hashValue)
            }
        }
        kept = unique
        if kept.count == limit { ceiling = kept.last?.key }
    }

    private struct Entry {
        var key: Key
        var error: FormatError
    }

    private struct Key: Hashable, Comparable {
        var pointer: [UInt8]
        var code: String

        init(_ error: FormatError) {
            pointer = Array((error.location.pointer ?? .root).description.utf8)
            code = error.code.rawValue
        }

        static func < (lhs: Key, rhs: Key) -> Bool {
            lhs.pointer != rhs.pointer ? lhs.pointer.lexicographicallyPrecedes(rhs.pointer) : lhs.code < rhs.code
        }
    }
}

extension FormatError.Code {
    /// A stage found more errors in one file than a report keeps (Spec/README.md section 6.2).
    public static let formatTooManyErrors = Self("format.too-many-errors")
}
