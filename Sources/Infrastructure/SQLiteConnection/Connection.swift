import CSQLite
import JSONDocument

extension FormatError.Code {
    public static let sqliteFailed = Self("sqlite.failed")
}

/// A value bound to, or read from, an SQL statement.
package enum SQLValue: Sendable {
    case null, integer(Int64), real(Double), text(String), blob([UInt8])
}

/// A minimal connection to the system SQLite: what the event store and the state export need,
/// with errors that name the SQL. (A package such as GRDB brings Foundation-bound APIs and a
/// build far larger than these few calls.)
package final class Connection {
    private var handle: OpaquePointer?

    /// Opens or creates the database at `path`; an empty path is a private temporary database
    /// that SQLite removes when the connection closes, kept in memory while it is small.
    package init(path: String) throws(FormatError) {
        guard sqlite3_open_v2(path, &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nil) == SQLITE_OK else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open"
            sqlite3_close(handle)
            throw FormatError(.sqliteFailed, "SQLite could not open the database: \(message)")
        }
    }

    /// Opens an existing database for reading only, as immutable (`file:...?immutable=1`): SQLite
    /// takes no locks and writes no journal beside it, so a store given to be inspected is never
    /// changed (Spec/inspect.md 2.5). The file must not change while it is open.
    package init(readOnly path: String) throws(FormatError) {
        let flags = SQLITE_OPEN_READONLY | SQLITE_OPEN_URI
        guard sqlite3_open_v2(Self.immutableURI(path), &handle, flags, nil) == SQLITE_OK else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open"
            sqlite3_close(handle)
            throw FormatError(.sqliteFailed, "SQLite could not open the database: \(message)")
        }
    }

    /// A `file:` URI for `path` with `immutable=1`; every byte outside the unreserved set and `/`
    /// is percent-encoded, so `?`, `#` and `%` in a name stay part of the path.
    static func immutableURI(_ path: String) -> String {
        var uri = "file:"
        for byte in path.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "/"):
                uri.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                uri += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            }
        }
        return uri + "?immutable=1"
    }

    /// A private temporary database for an index that is rebuilt every run: SQLite removes it
    /// when the connection closes. Nothing needs recovering after a crash, so there is no
    /// journal and no syncing; the page cache is capped (4 MiB) so that memory stays bounded
    /// however large the index grows, and it spills to the system's temporary folder.
    package static func scratch() throws(FormatError) -> Connection {
        let connection = try Connection(path: "")
        try connection.execute("PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA cache_size = -4096; PRAGMA temp_store = FILE;")
        return connection
    }

    deinit { close() }

    package func close() {
        sqlite3_close(handle)
        handle = nil
    }

    package func execute(_ sql: String) throws(FormatError) {
        guard sqlite3_exec(handle, sql, nil, nil, nil) == SQLITE_OK else { throw failure(sql) }
    }

    package func prepare(_ sql: String) throws(FormatError) -> Statement {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(handle, sql, -1, &statement, nil) == SQLITE_OK, let statement else { throw failure(sql) }
        return Statement(statement: statement, connection: self, sql: sql)
    }

    /// The statement, SQLite's message and its extended result code, as the boundary reports them.
    func failure(_ sql: String) -> FormatError {
        guard let handle else { return FormatError(.sqliteFailed, "SQLite refused \(sql.prefix(200)): the connection is closed") }
        let code = sqlite3_extended_errcode(handle)
        return FormatError(
            .sqliteFailed,
            "SQLite refused \(sql.prefix(200)): \(String(cString: sqlite3_errmsg(handle))) (result code \(code): \(String(cString: sqlite3_errstr(code))))")
    }

    /// A prepared statement; bind, then `run` or `step` through the rows.
    package final class Statement {
        let statement: OpaquePointer
        let connection: Connection
        let sql: String
        /// The last `step` found no more rows; stepping again would start the query over.
        private var exhausted = false

        init(statement: OpaquePointer, connection: Connection, sql: String) {
            self.statement = statement
            self.connection = connection
            self.sql = sql
        }

        deinit { sqlite3_finalize(statement) }

        /// Binds parameter `index` (from 1). Text is bound with its byte length, so a string
        /// with U+0000 in it is stored whole.
        package func bind(_ index: Int32, _ value: SQLValue) throws(FormatError) {
            let status: Int32
            switch value {
            case .null: status = sqlite3_bind_null(statement, index)
            case .integer(let int): status = sqlite3_bind_int64(statement, index, int)
            case .real(let double): status = sqlite3_bind_double(statement, index, double)
            case .text(let text):
                var text = text
                status = text.withUTF8 { bytes in
                    bytes.withMemoryRebound(to: CChar.self) { characters in
                        // SQLite wants a pointer even for an empty string.
                        sqlite3_bind_text64(
                            statement, index, characters.baseAddress ?? UnsafePointer(bitPattern: 1), sqlite3_uint64(characters.count),
                            csqlite_transient(), UInt8(SQLITE_UTF8))
                    }
                }
            case .blob(let bytes):
                status = bytes.withUnsafeBytes {
                    sqlite3_bind_blob64(statement, index, $0.baseAddress ?? UnsafeRawPointer(bitPattern: 1), sqlite3_uint64($0.count), csqlite_transient())
                }
            }
            guard status == SQLITE_OK else { throw connection.failure(sql) }
        }

        /// Runs a statement that returns no rows, then resets it for the next use.
        package func run() throws(FormatError) {
            defer { sqlite3_reset(statement) }
            guard sqlite3_step(statement) == SQLITE_DONE else { throw connection.failure(sql) }
        }

        /// Advances to the next row; false when there is none, and on every call after that
        /// until ``reset()``.
        package func step() throws(FormatError) -> Bool {
            guard !exhausted else { return false }
            switch sqlite3_step(statement) {
            case SQLITE_ROW: return true
            case SQLITE_DONE:
                exhausted = true
                return false
            default:
                let error = connection.failure(sql)
                sqlite3_reset(statement)
                throw error
            }
        }

        package func reset() {
            sqlite3_reset(statement)
            exhausted = false
        }

        /// The number of columns of the statement's rows.
        package var columnCount: Int32 { sqlite3_column_count(statement) }
        package func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(statement, column) }
        package func double(_ column: Int32) -> Double { sqlite3_column_double(statement, column) }
        package func isNull(_ column: Int32) -> Bool { sqlite3_column_type(statement, column) == SQLITE_NULL }

        /// The column's value in the storage class SQLite keeps it in.
        package func value(_ column: Int32) -> SQLValue {
            switch sqlite3_column_type(statement, column) {
            case SQLITE_NULL: .null
            case SQLITE_INTEGER: .integer(int64(column))
            case SQLITE_FLOAT: .real(double(column))
            case SQLITE_TEXT: .text(text(column))
            default: .blob(blob(column))
            }
        }

        /// The column's bytes (a BLOB, or the bytes of TEXT); empty for NULL.
        package func blob(_ column: Int32) -> [UInt8] {
            // The pointer first, then the length (SQLite's documented order).
            let pointer = sqlite3_column_blob(statement, column)
            let count = Int(sqlite3_column_bytes(statement, column))
            guard count > 0, let pointer else { return [] }
            return Array(UnsafeRawBufferPointer(start: pointer, count: count))
        }

        package func text(_ column: Int32) -> String {
            guard let pointer = sqlite3_column_text(statement, column) else { return "" }
            let count = Int(sqlite3_column_bytes(statement, column))
            return String(decoding: UnsafeBufferPointer(start: pointer, count: count), as: UTF8.self)
        }
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
