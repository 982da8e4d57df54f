import JSONDocument
import SQLiteConnection

/// The event files of `events/`, indexed in SQLite (a private temporary database) as they are
/// found, so that a long history is never held as a list: they come back grouped by event and
/// in name order (global count, store by UTF-8 bytes, revision), parts in part order.
final class EventFileIndex {
    private let database: Connection
    private let insert: Connection.Statement

    init() throws(FormatError) {
        database = try Connection.scratch()
        try database.execute(
            """
            CREATE TABLE file(global_count INTEGER NOT NULL, store TEXT NOT NULL, revision INTEGER NOT NULL,
                              part_index INTEGER, part_count INTEGER, path TEXT NOT NULL, size INTEGER);
            BEGIN;
            """)
        insert = try database.prepare("INSERT INTO file VALUES (?, ?, ?, ?, ?, ?, ?)")
    }

    func add(_ name: EventFileName, _ listed: ListedEntry) throws(FormatError) {
        try insert.bind(1, .integer(name.globalCount))
        try insert.bind(2, .text(name.storeIdentifier))
        try insert.bind(3, .integer(name.revision))
        try insert.bind(4, name.part.map { .integer(Int64($0.index)) } ?? .null)
        try insert.bind(5, name.part.map { .integer(Int64($0.count)) } ?? .null)
        try insert.bind(6, .text(listed.path))
        try insert.bind(7, listed.size.map { .integer($0) } ?? .null)
        try insert.run()
    }

    /// The files, one event's group at a time.
    func groups() throws(FormatError) -> Groups {
        try database.execute("COMMIT")
        return Groups(try database.prepare("SELECT * FROM file ORDER BY global_count, store, revision, part_index, path"))
    }

    /// Reads the groups in order.
    final class Groups {
        private let query: Connection.Statement
        private var pending: (name: EventFileName, listed: ListedEntry)?

        init(_ query: Connection.Statement) { self.query = query }

        /// The files of the next (global count, store, revision), or nil after the last.
        func next() throws(FormatError) -> (name: EventFileName, files: [(part: PartNumber?, entry: ListedEntry)])? {
            let first: (name: EventFileName, listed: ListedEntry)
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

        private func row() throws(FormatError) -> (name: EventFileName, listed: ListedEntry)? {
            guard try query.step() else { return nil }
            let part = query.isNull(3) ? nil : PartNumber(index: Int(query.int64(3)), count: Int(query.int64(4)))
            let name = EventFileName(globalCount: query.int64(0), storeIdentifier: query.text(1), revision: query.int64(2), part: part)
            return (name, ListedEntry(path: query.text(5), entry: .event(name), size: query.isNull(6) ? nil : query.int64(6)))
        }
    }
}
