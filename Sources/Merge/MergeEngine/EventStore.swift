import Foundation
import JSONDocument
import EnsembleModel
import SQLiteConnection
import EventCodecs

extension FormatError.Code {
    public static let mergeEventStore = Self("merge.event-store")
}

/// The events of a merge, indexed in SQLite: a folder's history can be far longer than
/// memory allows, so the analysis sorts and groups it with SQL, and the replay reads it back in
/// order, a page at a time.
///
/// The database is SQLite's private temporary database: it lives in SQLite's page cache while it
/// is small, spills to a file in the system's temporary folder when it grows, and is deleted when
/// the store is released. Nothing is written into the folder being merged.
///
/// Summaries (``SourcedEvent/isSummary``) are stored whole in SQL; an event whose object changes
/// are in memory (a loose file, a test) stays in memory and its row points to it. One thread at
/// a time uses a store; a lock makes that safe.
package final class EventStore: @unchecked Sendable {
    /// What the analysis decided for an event (Spec/merge.md 4 and 5).
    enum Role: Int64 {
        /// `replayed`, what every row starts with: a save or merge event the analysis gives no
        /// other role is replayed, so that no statement rewrites every row to say so (it was a
        /// tenth of a merge's analysis: Benchmarks/README.md). `copy`: another file of an event
        /// that takes part; `conflictingCopy`: another, different event with the same (store,
        /// revision), checked in step 6 but never replayed.
        case replayed = 0, covered = 1, copy = 2, conflictingCopy = 3

        /// The SQL condition selecting the rows of this role: a replayed row is also a save or
        /// a merge event (incomplete events keep the role they start with, and take no part).
        var rows: String {
            self == .replayed ? "role = \(rawValue) AND \(EventStore.savesAndMerges)" : "role = \(rawValue)"
        }
    }

    // Recursive: a query's row handler may record roles while the query runs.
    private let lock = NSRecursiveLock()
    private let database: Connection
    private let insert: Connection.Statement
    private var held: [SourcedEvent] = []
    package private(set) var count = 0
    /// How many incomplete events (type 0) were added: none, usually, and then no query looks.
    private var incompleteCount = 0
    /// Whether a row has a role other than the one it started with.
    private var hasRoles = false
    /// Store identifiers by number, for the revision column: a set is kept as (number, revision)
    /// pairs of varints, not as JSON naming every store in full. The JSON was most of a row, and
    /// reading it back most of the analysis of a long history; pairs of 64-bit integers were
    /// still half of a row, and a bigger table to write, scan and sort (Benchmarks/README.md).
    private var stores = Numbering()

    static let columns =
        "id, file, held, store, revision, global_count, timestamp, type, unique_id, model_version, revisions, parts, data_files, inserts, updates, deletes, digest, unknown"
    /// The columns an event read in part holds (``forEachRevision(whole:_:)``).
    private static let partColumns = "id, file, held, store, global_count, type, model_version, revisions, data_files"

    package init() throws(FormatError) {
        database = try Connection.scratch()
        try database.execute(
            """
            CREATE TABLE event(
                id INTEGER PRIMARY KEY, file TEXT NOT NULL, held INTEGER,
                store TEXT NOT NULL, revision INTEGER NOT NULL, global_count INTEGER NOT NULL, timestamp REAL NOT NULL, type INTEGER NOT NULL,
                unique_id TEXT NOT NULL, model_version TEXT, revisions BLOB NOT NULL, parts TEXT NOT NULL, data_files TEXT NOT NULL,
                inserts INTEGER NOT NULL, updates INTEGER NOT NULL, deletes INTEGER NOT NULL, digest INTEGER, unknown TEXT,
                role INTEGER NOT NULL DEFAULT 0)
            """)
        insert = try database.prepare("INSERT INTO event(\(Self.columns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
    }

    /// Adds events (in one transaction).
    package func add(_ events: [SourcedEvent]) throws(FormatError) {
        lock.lock()
        defer { lock.unlock() }
        try database.execute("BEGIN")
        do {
            // By index, each read in place: iterating the list copied each event (a retain and
            // a release of each of its strings and lists).
            for index in events.indices { try add(events[index]) }
        } catch {
            try? database.execute("ROLLBACK")
            throw error
        }
        try database.execute("COMMIT")
    }

    private func add(_ sourced: SourcedEvent) throws(FormatError) {
        count += 1
        if sourced.event.type == .incomplete { incompleteCount += 1 }
        try insert.bind(1, .integer(Int64(count)))
        try insert.bind(2, .text(sourced.file))
        if sourced.isSummary {
            try insert.bind(3, .null)
        } else {
            try insert.bind(3, .integer(Int64(held.count)))
            held.append(sourced)
        }
        // The event's fields read where they are: copying the event retained and released each of them.
        try insert.bind(4, .text(sourced.event.storeIdentifier))
        try insert.bind(5, .integer(sourced.event.revision))
        try insert.bind(6, .integer(sourced.event.globalCount))
        try insert.bind(7, .real(sourced.event.timestamp))
        try insert.bind(8, .integer(sourced.event.type.rawValue))
        try insert.bind(9, .text(sourced.event.uniqueIdentifier))
        try insert.bind(10, sourced.event.modelVersion.map { .text($0) } ?? .null)
        try insert.bind(11, .blob(revisionColumn(sourced.event.revisionSet)))
        // Lists as canonical JSON: the toolkit's exact strings, no second encoding.
        let writer = JSONWriter()
        try insert.bind(12, .text(writer.string(.array(sourced.parts.map(JSONValue.string)))))
        try insert.bind(13, .text(writer.string(.array(sourced.dataFileReferences.map(JSONValue.string)))))
        try insert.bind(14, .integer(Int64(sourced.changeCounts.inserts)))
        try insert.bind(15, .integer(Int64(sourced.changeCounts.updates)))
        try insert.bind(16, .integer(Int64(sourced.changeCounts.deletes)))
        try insert.bind(17, sourced.contentDigest.map { .integer(Int64(bitPattern: $0)) } ?? .null)
        try insert.bind(18, sourced.event.unknownFields.isEmpty ? .null : .text(JSONWriter().string(.object(sourced.event.unknownFields))))
        try insert.run()
    }

    /// The events that `condition` selects, in `order` (SQL over the columns of ``columns`` and
    /// `role`; text compares by its UTF-8 bytes, SQLite's BINARY collation); not `whole`, each
    /// as ``partialSourced(_:)`` reads it.
    func cursor(where condition: String, orderBy order: String, whole: Bool = true) throws(FormatError) -> Cursor {
        lock.lock()
        defer { lock.unlock() }
        let query = "SELECT \(whole ? Self.columns : Self.partColumns) FROM event WHERE \(condition) ORDER BY \(order)"
        return Cursor(store: self, query: try database.prepare(query), whole: whole)
    }

    /// Calls `body` with each row that `condition` selects, in `order`, holding only `columns`
    /// (SQL over the names of ``columns``): a pass that reads a few fields of every event reads
    /// them without rebuilding the events (a whole event is a dozen strings and lists).
    func forEachRow(
        _ columns: String, where condition: String, orderBy order: String, _ body: (Connection.Statement) throws(FormatError) -> Void
    ) throws(FormatError) {
        lock.lock()
        defer { lock.unlock() }
        let query = try database.prepare("SELECT \(columns) FROM event WHERE \(condition) ORDER BY \(order)")
        while try query.step() { try body(query) }
    }

    /// Reads the rows of one query in order.
    package final class Cursor {
        private let store: EventStore
        private let query: Connection.Statement
        /// Whether the query reads ``columns`` (whole events) or ``partColumns``.
        private let whole: Bool

        fileprivate init(store: EventStore, query: Connection.Statement, whole: Bool) {
            self.store = store
            self.query = query
            self.whole = whole
        }

        /// The next event and its row number, or nil after the last.
        func row() throws(FormatError) -> (id: Int64, sourced: SourcedEvent)? {
            store.lock.lock()
            defer { store.lock.unlock() }
            guard try query.step() else { return nil }
            return (query.int64(0), whole ? try store.sourced(query) : try store.partialSourced(query))
        }

        /// The next event, or nil after the last.
        package func next() throws(FormatError) -> SourcedEvent? { try row()?.sourced }
    }

    /// The greatest global count of each store among the events that `condition` selects.
    func greatestGlobalCounts(where condition: String) throws(FormatError) -> [Int64] {
        lock.lock()
        defer { lock.unlock() }
        let query = try database.prepare("SELECT max(global_count) FROM event WHERE \(condition) GROUP BY store")
        var counts: [Int64] = []
        while try query.step() { counts.append(query.int64(0)) }
        return counts
    }

    /// How many events name a model version, and the first such version in store order.
    package func modelVersions() throws(FormatError) -> (count: Int, example: String?) {
        lock.lock()
        defer { lock.unlock() }
        let query = try database.prepare("SELECT count(*), min(model_version) FROM event WHERE model_version IS NOT NULL")
        guard try query.step() else { return (0, nil) }
        return (Int(query.int64(0)), query.isNull(1) ? nil : query.text(1))
    }

    /// Calls `body` with the save and merge events of each (store, revision), in (store,
    /// revision) order: several when files disagree or repeat one event. Copies come in file
    /// order (UTF-8), so the first names the event whatever order the inputs were given in
    /// (Spec/merge.md 4.2).
    ///
    /// Not `whole`: an event that is its revision's only copy comes in part, as
    /// ``partialSourced(_:)`` reads it (the analysis's checks read nothing else of it); several
    /// copies, which are compared, come whole. Sorting and reading whole rows was most of the
    /// analysis, which runs on one core at the end of a merge (Benchmarks/README.md).
    func forEachRevision(whole: Bool = true, _ body: ([(id: Int64, sourced: SourcedEvent)]) throws(FormatError) -> Void) throws(FormatError) {
        let candidates = try cursor(where: Self.savesAndMerges, orderBy: "store, revision, file, id", whole: whole)
        var copies: [(id: Int64, sourced: SourcedEvent)] = []
        // The revision the copies claim, kept apart: reading it from the first copy copied that
        // event for every row (a retain and a release of each of its strings and lists).
        var claimed: (store: String, revision: Int64)?
        while let row = try candidates.row() {
            let store = row.sourced.event.storeIdentifier, revision = row.sourced.event.revision
            if let claimed, !(ExactString(claimed.store) == ExactString(store) && claimed.revision == revision) {
                try body(whole || copies.count == 1 ? copies : wholeEvents(copies))
                copies = []
            }
            claimed = (store, revision)
            copies.append(row)
        }
        if !copies.isEmpty { try body(whole || copies.count == 1 ? copies : wholeEvents(copies)) }
    }

    /// `rows` read again whole, by row number.
    private func wholeEvents(_ rows: [(id: Int64, sourced: SourcedEvent)]) throws(FormatError) -> [(id: Int64, sourced: SourcedEvent)] {
        lock.lock()
        defer { lock.unlock() }
        let query = try database.prepare("SELECT \(Self.columns) FROM event WHERE id = ?")
        var whole: [(id: Int64, sourced: SourcedEvent)] = []
        for row in rows {
            try query.bind(1, .integer(row.id))
            guard try query.step() else { throw FormatError(.mergeEventStore, "the event store lost an event it listed") }
            whole.append((row.id, try sourced(query)))
            query.reset()
        }
        return whole
    }

    /// The incomplete events (type 0), in the order they were added.
    func incompleteEvents() throws(FormatError) -> [SourcedEvent] {
        incompleteCount == 0 ? [] : try all(where: "type = \(EventType.incomplete.rawValue)", orderBy: "id")
    }

    /// Every event, in the order they were added.
    package func allEvents() throws(FormatError) -> [SourcedEvent] { try all(where: "1", orderBy: "id") }

    /// The events with a global count above `globalCount`, in the order they were added.
    package func events(globalCountAbove globalCount: Int64) throws(FormatError) -> [SourcedEvent] {
        try all(where: "global_count > \(globalCount)", orderBy: "id")
    }

    /// Every event that `condition` selects, in `order`.
    func all(where condition: String, orderBy order: String) throws(FormatError) -> [SourcedEvent] {
        let cursor = try cursor(where: condition, orderBy: order)
        var result: [SourcedEvent] = []
        while let next = try cursor.next() { result.append(next) }
        return result
    }

    private static let savesAndMerges = "type IN (\(EventType.save.rawValue), \(EventType.merge.rawValue))"

    /// Records the role of event `id`.
    func setRole(_ role: Role, of id: Int64) throws(FormatError) {
        lock.lock()
        defer { lock.unlock() }
        hasRoles = true
        if setRoleStatement == nil { setRoleStatement = try database.prepare("UPDATE event SET role = ? WHERE id = ?") }
        guard let statement = setRoleStatement else { return }
        try statement.bind(1, .integer(role.rawValue))
        try statement.bind(2, .integer(id))
        try statement.run()
    }
    private var setRoleStatement: Connection.Statement?

    /// Runs `body` inside one transaction (many role updates at once).
    func transaction(_ body: () throws(FormatError) -> Void) throws(FormatError) {
        lock.lock()
        try database.execute("BEGIN")
        lock.unlock()
        do {
            try body()
        } catch {
            lock.lock()
            try? database.execute("ROLLBACK")
            lock.unlock()
            throw error
        }
        lock.lock()
        defer { lock.unlock() }
        try database.execute("COMMIT")
    }

    /// Forgets the roles of an earlier analysis.
    func resetRoles() throws(FormatError) {
        lock.lock()
        defer { lock.unlock() }
        // Only the rows that have one, and no pass at all over a store whose rows never had one:
        // rewriting every row cost a pass of page writes, and finding none a pass of reads.
        guard hasRoles else { return }
        try database.execute("UPDATE event SET role = \(Role.replayed.rawValue) WHERE role != \(Role.replayed.rawValue)")
        hasRoles = false
    }

    /// The revision column of `revisions`: each (store number, revision) pair as a varint and a
    /// zigzag varint (Spec/v2-binary.md 3.2's encodings).
    private func revisionColumn(_ revisions: RevisionSet) -> [UInt8] {
        Self.revisionColumn(revisions, numbering: &stores)
    }

    /// ``revisionColumn(_:)`` with the numbering borrowed once: reached through the store for
    /// each pair, it was checked for exclusive access each time (a quarter of the column's cost).
    private static func revisionColumn(_ revisions: RevisionSet, numbering: inout Numbering) -> [UInt8] {
        var column = ByteWriter()
        column.bytes.reserveCapacity(4 * revisions.count)
        revisions.forEachPair { store, revision in
            column.varint(UInt64(numbering.number(store)))
            column.zigzag(revision)
        }
        return column.bytes
    }

    /// The revision set of a revision column. Under the lock: the store numbering it reads grows
    /// as events are added, and the analysis calls it too (``MergeAnalysis/forEachReplayedFields(revisions:_:)``).
    func revisionSet(_ column: [UInt8]) throws(FormatError) -> RevisionSet {
        lock.lock()
        defer { lock.unlock() }
        let pairs = column.withUnsafeBufferPointer { (bytes) -> [(String, Int64)]? in
            var reader = ByteReader(bytes, offset: 0, limits: BinaryReadingLimits())
            var pairs: [(String, Int64)] = []
            // Room for them all (a pair takes two bytes at least): grown one at a time, the list
            // was reallocated four times for each event the analysis reads.
            pairs.reserveCapacity(bytes.count / 2)
            do throws(FormatError) {
                while reader.remaining > 0 {
                    let number = try reader.varint()
                    guard number < stores.count else { return nil }
                    pairs.append((stores[Int32(number)], try reader.zigzag()))
                }
            } catch {
                return nil
            }
            return pairs
        }
        guard let pairs, let revisions = RevisionSet(uniquePairs: pairs) else {
            throw FormatError(.mergeEventStore, "the event store holds a revision set it cannot read")
        }
        return revisions
    }

    private func sourced(_ row: Connection.Statement) throws(FormatError) -> SourcedEvent {
        if let held = try heldEvent(row) { return held }
        func strings(_ column: Int32) throws(FormatError) -> [String] { try Self.strings(row, column) }
        let revisions = try revisionSet(row.blob(10))
        var unknown = JSONObject()
        if !row.isNull(17), case .object(let object)? = try? JSONParser.parse(row.text(17)) { unknown = object }
        let type = try Self.type(row, 7)
        let event = Event(
            uniqueIdentifier: row.text(8), type: type, storeIdentifier: row.text(3), globalCount: row.int64(5),
            timestamp: row.double(6), modelVersion: row.isNull(9) ? nil : row.text(9), revisionSet: revisions,
            objectChanges: [], unknownFields: unknown)
        var counts = SourcedEvent.ChangeCounts()
        counts.inserts = Int(row.int64(13))
        counts.updates = Int(row.int64(14))
        counts.deletes = Int(row.int64(15))
        return SourcedEvent(
            summary: event, file: row.text(1), parts: try strings(11), dataFileReferences: try strings(12),
            changeCounts: counts, contentDigest: row.isNull(16) ? nil : UInt64(bitPattern: row.int64(16)))
    }

    /// An event from a row of ``partColumns``: its file, store, global count, type, model
    /// version, revision set and data files; no unique identifier, timestamp, parts, counts,
    /// digest or unknown fields. An event held in memory comes whole.
    private func partialSourced(_ row: Connection.Statement) throws(FormatError) -> SourcedEvent {
        if let held = try heldEvent(row) { return held }
        let event = Event(
            uniqueIdentifier: "", type: try Self.type(row, 5), storeIdentifier: row.text(3), globalCount: row.int64(4), timestamp: 0,
            modelVersion: row.isNull(6) ? nil : row.text(6), revisionSet: try revisionSet(row.blob(7)), objectChanges: [])
        return SourcedEvent(
            summary: event, file: row.text(1), parts: [], dataFileReferences: try Self.strings(row, 8), changeCounts: SourcedEvent.ChangeCounts(),
            contentDigest: nil)
    }

    /// The event held in memory that a row names in its `held` column (2 in both column lists),
    /// if it names one.
    private func heldEvent(_ row: Connection.Statement) throws(FormatError) -> SourcedEvent? {
        guard !row.isNull(2) else { return nil }
        let index = Int(row.int64(2))
        guard held.indices.contains(index) else { throw FormatError(.mergeEventStore, "the event store lost an event held in memory") }
        return held[index]
    }

    /// The event type stored in `column`.
    private static func type(_ row: Connection.Statement, _ column: Int32) throws(FormatError) -> EventType {
        guard let type = EventType(rawValue: row.int64(column)) else { throw FormatError(.mergeEventStore, "the event store holds an unknown event type") }
        return type
    }

    /// A list of strings stored as JSON in `column`. Most lists are empty: read without a JSON tree.
    private static func strings(_ row: Connection.Statement, _ column: Int32) throws(FormatError) -> [String] {
        guard row.text(column) != "[]" else { return [] }
        do {
            return try JSONParser.parse(row.text(column)).arrayValue?.compactMap(\.stringValue) ?? []
        } catch {
            throw FormatError(.mergeEventStore, "the event store holds a value it cannot read: \(error.message)")
        }
    }
}
