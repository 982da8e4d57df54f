import EnsembleModel
import ParallelWork

/// The object changes of an event in the order a v2 JSON file lists them, made when they are
/// asked for: grouped by entity, the entities in UTF-8 byte order (Spec/v2-json.md 6), the changes
/// of an entity in the event's order. A rebase makes its baseline's changes this way from the
/// folded state, piece by piece as they are written, and never holds them all (Spec/merge.md 13.7).
package struct ChangeRuns: Sendable {
    /// Each entity with the number of its changes, in UTF-8 byte order of the names.
    package var entities: [(name: String, count: Int)]
    /// The changes at `positions` of that order; called from several threads at once.
    package var changes: @Sendable (_ positions: Range<Int>) -> [ObjectChange]
    /// All the changes as one numbered event, in the same order, when their maker can make it:
    /// for a writer that needs them all at once (the v2 binary encoder's string table).
    package var numbered: (@Sendable () -> NumberedEvent)?

    package init(entities: [(name: String, count: Int)], changes: @escaping @Sendable (_ positions: Range<Int>) -> [ObjectChange]) {
        self.entities = entities
        self.changes = changes
    }

    /// The number of changes.
    package var count: Int { entities.reduce(0) { $0 + $1.count } }

    /// Every change, made in pieces on every core and joined in order, for a writer that needs
    /// the whole event (the v2 binary encoder's string table).
    package func all() -> [ObjectChange] {
        var all: [ObjectChange] = []
        all.reserveCapacity(count)
        for piece in Pieces.map(count: count, size: 4_096, changes) { all += piece }
        return all
    }
}
