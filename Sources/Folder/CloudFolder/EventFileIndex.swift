import JSONDocument
import EnsembleModel
import SQLiteConnection

/// The event files of `events/`, indexed as they are found, so that a long history is never held
/// as a list: they come back grouped by event and in name order (global count, store by UTF-8
/// bytes, revision), parts in part order (a name without a part first), then by path.
///
/// The first ``memoryLimit`` files are kept in memory and sorted there; past that many, every
/// file goes to SQLite (a private temporary database) and is sorted by it. A folder of tens of
/// thousands of files was indexed and sorted by SQLite in a third of the time before the first
/// event could be read (Benchmarks/README.md); a list of that size is a few megabytes.
final class EventFileIndex {
    typealias Row = (name: EventFileName, listed: ListedEntry)

    /// How many files are kept in memory before the index moves to SQLite: 32,768 (about 10 MB).
    let memoryLimit: Int
    private var rows: [Row] = []
    private var database: (connection: Connection, insert: Connection.Statement)?

    init(memoryLimit: Int = 32_768) {
        self.memoryLimit = memoryLimit
    }

    func add(_ name: EventFileName, _ listed: ListedEntry) throws(FormatError) {
        if database == nil && rows.count < memoryLimit { return rows.append((name, listed)) }
        if database == nil { try moveToSQLite() }
        guard let insert = database?.insert else { return }
        try insert.bind(1, .integer(name.globalCount))
        try insert.bind(2, .text(name.storeIdentifier))
        try insert.bind(3, .integer(name.revision))
        try insert.bind(4, name.part.map { .integer(Int64($0.index)) } ?? .null)
        try insert.bind(5, name.part.map { .integer(Int64($0.count)) } ?? .null)
        try insert.bind(6, .text(listed.path))
        try insert.bind(7, listed.size.map { .integer($0) } ?? .null)
        try insert.run()
    }

    /// Opens the database and moves the rows kept so far into it.
    private func moveToSQLite() throws(FormatError) {
        let connection = try Connection.scratch()
        try connection.execute(
            """
            CREATE TABLE file(global_count INTEGER NOT NULL, store TEXT NOT NULL, revision INTEGER NOT NULL,
                              part_index INTEGER, part_count INTEGER, path TEXT NOT NULL, size INTEGER);
            BEGIN;
            """)
        database = (connection, try connection.prepare("INSERT INTO file VALUES (?, ?, ?, ?, ?, ?, ?)"))
        let kept = rows
        rows = []
        for (name, listed) in kept { try add(name, listed) }
    }

    /// The files, one event's group at a time.
    func groups() throws(FormatError) -> Groups {
        guard let database else {
            defer { rows = [] }
            return Groups(kept: rows, order: Self.order(of: rows))
        }
        try database.connection.execute("COMMIT")
        return Groups(query: try database.connection.prepare("SELECT * FROM file ORDER BY global_count, store, revision, part_index, path"))
    }

    /// The positions of `rows` in the order of the query above (SQLite's: integers as numbers,
    /// text by its bytes, the BINARY collation; no part before any part). Sorted as keys of
    /// numbers, a store as its rank among the few stores: sorting the rows themselves moved and
    /// copied every string in them, and took longer than SQLite.
    private static func order(of rows: [Row]) -> [Int] {
        var stores: [ExactString: Int] = [:]
        for row in rows.indices { stores[ExactString(rows[row].name.storeIdentifier)] = 0 }
        for (rank, store) in stores.keys.sorted(by: { utf8Precedes($0.value, $1.value) }).enumerated() { stores[store] = rank }
        var keys = rows.indices.map { row in
            let name = rows[row].name
            return (name.globalCount, stores[ExactString(name.storeIdentifier)] ?? 0, name.revision, name.part?.index ?? .min, row)
        }
        keys.sort { a, b in
            (a.0, a.1, a.2, a.3) != (b.0, b.1, b.2, b.3)
                ? (a.0, a.1, a.2, a.3) < (b.0, b.1, b.2, b.3) : utf8Precedes(rows[a.4].listed.path, rows[b.4].listed.path)
        }
        return keys.map(\.4)
    }

    /// Reads the groups in order.
    final class Groups {
        /// Each row taken out as it is read, and the lists dropped after the last: a merge's
        /// state grows while the files are read, and they were held to its peak.
        private var kept: [Row?], order: [Int]
        private var position = 0
        private let query: Connection.Statement?
        private var pending: Row?

        init(kept: [Row], order: [Int]) {
            self.kept = kept.map { $0 }
            self.order = order
            query = nil
        }

        init(query: Connection.Statement) {
            kept = []
            order = []
            self.query = query
        }

        /// The files of the next (global count, store, revision), or nil after the last.
        func next() throws(FormatError) -> (name: EventFileName, files: [(part: PartNumber?, entry: ListedEntry)])? {
            let first: Row
            if let pending {
                first = pending
                self.pending = nil
            } else if let read = try row() {
                first = read
            } else {
                return nil
            }
            var files = [(first.name.part, first.listed)]
            while let another = try row() {
                guard another.name.globalCount == first.name.globalCount, another.name.revision == first.name.revision,
                    ExactString(another.name.storeIdentifier) == ExactString(first.name.storeIdentifier)
                else {
                    pending = another
                    break
                }
                files.append((another.name.part, another.listed))
            }
            return (first.name, files)
        }

        private func row() throws(FormatError) -> Row? {
            guard let query else {
                guard position < order.count else {
                    (kept, order) = ([], [])
                    return nil
                }
                defer { position += 1 }
                return kept[order[position]].take()
            }
            guard try query.step() else { return nil }
            let part = query.isNull(3) ? nil : PartNumber(index: Int(query.int64(3)), count: Int(query.int64(4)))
            let name = EventFileName(globalCount: query.int64(0), storeIdentifier: query.text(1), revision: query.int64(2), part: part)
            return (name, ListedEntry(path: query.text(5), entry: .event(name), size: query.isNull(6) ? nil : query.int64(6)))
        }
    }
}
