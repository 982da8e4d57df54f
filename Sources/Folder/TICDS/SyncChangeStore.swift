import CoreDataStore
import Foundation
import JSONDocument
import KeyedArchive
import SQLiteConnection
import TemporaryFiles

extension FormatError.Code {
    /// A sync change set that is neither Apple's binary store nor a Core Data SQLite store of the
    /// TICDSSyncChange model: no `ZTICDSSYNCCHANGE` table, too many rows (Spec/ticds.md 4.3).
    public static let ticdsInvalidChangeSet = Self("ticds.invalid-change-set")
    /// `AppliedSyncChangeSets.ticdsync` is not a Core Data SQLite store of the
    /// TICDSSyncChangeSet model (Spec/ticds.md 3.9).
    public static let ticdsInvalidAppliedSets = Self("ticds.invalid-applied-sets")
    /// A sync change set in Apple's binary store form: only Apple's Core Data reads it
    /// (Spec/ticds.md 4.2).
    public static let fileKindBinaryStore = Self("file.kind-binary-store")
}

/// One TICDSSyncChange row of a change set in SQLite form (Spec/ticds.md 4.1).
package struct TICDSChange: Sendable, Hashable {
    package var primaryKey: Int64
    /// 1 insert, 2 attribute, 3 to-one, 4 to-many add, 5 to-many remove, 10 delete.
    package var changeType: Int64?
    package var entity: String?
    package var syncID: String?
    package var relevantKey: String?
    package var relatedEntity: String?
    /// Seconds since 2001-01-01, as Core Data stores a date.
    package var localTimeStamp: Double?
    /// The keyed archives' root values as JSON; null when the column is empty.
    package var changedAttributes: JSONValue
    package var changedRelationships: JSONValue
    /// A payload that is not a keyed archive the reader accepts (the row is kept).
    package var damagedPayload: FormatError?
}

/// One row of AppliedSyncChangeSets (Spec/ticds.md 3.9).
package struct TICDSAppliedSet: Sendable, Hashable {
    package var identifier: String
    package var client: String?
    /// Seconds since 2001-01-01.
    package var creationDate: Double?
}

/// What the first bytes of a decrypted sync change set say it is (Spec/ticds.md 4.2): the
/// framework's own reader opens a set as SQLite when it starts with SQLite's header and as
/// Apple's binary store otherwise.
package enum ChangeSetForm: String, Sendable, Hashable {
    case sqlite
    case binaryStore = "binary-store"

    static let sqliteMagic = Array("SQLite format 3".utf8) + [0]

    package static func detect(_ bytes: [UInt8]) -> ChangeSetForm {
        bytes.starts(with: sqliteMagic) ? .sqlite : .binaryStore
    }
}

/// Core Data SQLite stores read from bytes (Spec/ticds.md 4.3): written to a private copy in a
/// folder only this user can read, opened immutable, removed after. Nothing is written into
/// the folder read.
package enum SyncChangeStore {
    /// The most rows one set may have.
    package static let maximumRows = 1_000_000

    /// Runs `body` with the path of a private copy of `bytes`, removed after.
    static func withPrivateCopy<T>(_ bytes: [UInt8], code: FormatError.Code, _ body: (String) throws(FormatError) -> T) throws(FormatError) -> T {
        let manager = FileManager.default
        let folder = manager.temporaryDirectory.appendingPathComponent("ensembles-toolkit-ticds-\(UUID().uuidString)").path
        do {
            try manager.createDirectory(atPath: folder, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        } catch {
            throw FormatError(code, "cannot create a private folder for the store: \(error.localizedDescription)")
        }
        TemporaryFiles.register(folder)
        defer {
            try? manager.removeItem(atPath: folder)
            TemporaryFiles.unregister(folder)
        }
        let path = folder + "/store.sqlite"
        guard manager.createFile(atPath: path, contents: Data(bytes), attributes: [.posixPermissions: 0o600]) else {
            throw FormatError(code, "cannot write the private copy of the store")
        }
        return try body(path)
    }

    /// Runs `body` on a read-only connection to a private copy of `bytes`.
    static func withDatabase<T>(_ bytes: [UInt8], code: FormatError.Code, _ body: (Connection) throws(FormatError) -> T) throws(FormatError) -> T {
        try withPrivateCopy(bytes, code: code) { path throws(FormatError) in
            let connection: Connection
            do throws(FormatError) {
                connection = try Connection(readOnly: path)
            } catch {
                throw FormatError(code, error.message)
            }
            defer { connection.close() }
            do throws(FormatError) {
                return try body(connection)
            } catch  where error.code == .sqliteFailed {
                throw FormatError(code, error.message)
            }
        }
    }

    /// The columns `table` has, with ASCII letters upper-cased as SQLite matches column names
    /// (only ASCII letters: `uppercased()` made a column spelt with U+0131 or U+017F, or with
    /// U+212A KELVIN SIGN for K, match one the framework names), compared by bytes; empty when
    /// there is no such table.
    static func columns(_ connection: Connection, table: String) throws(FormatError) -> Set<ExactString> {
        let statement = try connection.prepare("SELECT name FROM pragma_table_info(?1)")
        try statement.bind(1, .text(table))
        var names: Set<ExactString> = []
        while try statement.step() {
            let upper = statement.text(0).utf8.map { (0x61...0x7A).contains($0) ? $0 - 0x20 : $0 }
            names.insert(ExactString(String(decoding: upper, as: UTF8.self)))
        }
        return names
    }

    /// `SELECT` of `wanted` columns from `table`, NULL for the missing ones.
    static func select(_ wanted: [String], from table: String, present: Set<ExactString>) -> String {
        "SELECT " + wanted.map { present.contains(ExactString($0)) ? "\"\($0)\"" : "NULL" }.joined(separator: ", ") + " FROM \"\(table)\" ORDER BY 1"
    }

    /// The changes of a set in SQLite form, by primary key (Spec/ticds.md 4.3).
    package static func changes(_ bytes: [UInt8]) throws(FormatError) -> [TICDSChange] {
        try withDatabase(bytes, code: .ticdsInvalidChangeSet) { connection throws(FormatError) in
            let present = try columns(connection, table: "ZTICDSSYNCCHANGE")
            guard !present.isEmpty else {
                throw FormatError(.ticdsInvalidChangeSet, "an SQLite database without the ZTICDSSYNCCHANGE table of the TICDSSyncChange model")
            }
            let wanted = [
                "Z_PK", "ZCHANGETYPE", "ZOBJECTENTITYNAME", "ZOBJECTSYNCID", "ZRELEVANTKEY", "ZRELATEDOBJECTENTITYNAME", "ZLOCALTIMESTAMP",
                "ZCHANGEDATTRIBUTES", "ZCHANGEDRELATIONSHIPS",
            ]
            let statement = try connection.prepare(select(wanted, from: "ZTICDSSYNCCHANGE", present: present))
            var rows: [TICDSChange] = []
            while try statement.step() {
                guard rows.count < maximumRows else {
                    throw FormatError(.ticdsInvalidChangeSet, "more than \(maximumRows) changes in one set")
                }
                func text(_ column: Int32) -> String? {
                    if case .text(let value) = statement.value(column) { return value }
                    return nil
                }
                func number(_ column: Int32) -> Double? {
                    switch statement.value(column) {
                    case .integer(let value): Double(value)
                    case .real(let value): value
                    default: nil
                    }
                }
                var damaged: FormatError?
                func payload(_ column: Int32) -> JSONValue {
                    guard case .blob(let archive) = statement.value(column), !archive.isEmpty else { return .null }
                    do {
                        return try SyncChangeStore.payload(archive)
                    } catch {
                        damaged = damaged ?? error
                        return .null
                    }
                }
                let type: Int64? = if case .integer(let value) = statement.value(1) { value } else { nil }
                let attributes = payload(7)
                let relationships = payload(8)
                rows.append(
                    TICDSChange(
                        primaryKey: statement.int64(0), changeType: type, entity: text(2), syncID: text(3), relevantKey: text(4), relatedEntity: text(5),
                        localTimeStamp: number(6), changedAttributes: attributes, changedRelationships: relationships, damagedPayload: damaged))
            }
            return rows
        }
    }

    /// The root value of one change's keyed-archive payload (`ZCHANGEDATTRIBUTES`,
    /// `ZCHANGEDRELATIONSHIPS`) as JSON, with Foundation's classes only (Spec/ticds.md 4.3).
    package static func payload(_ archive: [UInt8]) throws(FormatError) -> JSONValue {
        try KeyedArchiveReader(classes: .foundation).read(archive).root?.jsonValue ?? .null
    }

    /// The rows of AppliedSyncChangeSets.ticdsync (Spec/ticds.md 3.9), by primary key.
    package static func appliedSets(_ bytes: [UInt8]) throws(FormatError) -> [TICDSAppliedSet] {
        guard bytes.starts(with: ChangeSetForm.sqliteMagic) else {
            throw FormatError(.ticdsInvalidAppliedSets, "not an SQLite database", location: .init(offset: 0))
        }
        return try withDatabase(bytes, code: .ticdsInvalidAppliedSets) { connection throws(FormatError) in
            let present = try columns(connection, table: "ZTICDSSYNCCHANGESET")
            guard present.contains(ExactString("ZSYNCCHANGESETIDENTIFIER")) else {
                throw FormatError(.ticdsInvalidAppliedSets, "no ZTICDSSYNCCHANGESET table with a ZSYNCCHANGESETIDENTIFIER column")
            }
            let statement = try connection.prepare(
                select(["Z_PK", "ZSYNCCHANGESETIDENTIFIER", "ZCLIENTIDENTIFIER", "ZCREATIONDATE"], from: "ZTICDSSYNCCHANGESET", present: present))
            var rows: [TICDSAppliedSet] = []
            while try statement.step() {
                guard rows.count < maximumRows else { throw FormatError(.ticdsInvalidAppliedSets, "more than \(maximumRows) rows") }
                guard case .text(let identifier) = statement.value(1) else { continue }
                let client: String? = if case .text(let value) = statement.value(2) { value } else { nil }
                let date: Double? =
                    switch statement.value(3) {
                    case .real(let value): value
                    case .integer(let value): Double(value)
                    default: nil
                    }
                rows.append(TICDSAppliedSet(identifier: identifier, client: client, creationDate: date))
            }
            return rows
        }
    }

    /// What a WholeStore (after decryption and unzipping) says about itself: the store's
    /// metadata as the store inspection reads it (Spec/ticds.md 3.8).
    package static func storeMetadata(_ bytes: [UInt8], shownAs shown: String) throws(FormatError) -> CoreDataStoreMetadata {
        guard bytes.starts(with: ChangeSetForm.sqliteMagic) else {
            throw FormatError(.coreDataUnreadableStore, "not an SQLite database: \(bytes.prefix(8).map { String(format: "%02X", $0) }.joined(separator: " "))")
        }
        return try withPrivateCopy(bytes, code: .coreDataUnreadableStore) { path throws(FormatError) in
            var metadata = try CoreDataStoreMetadata.read(path: path)
            metadata.path = shown
            return metadata
        }
    }
}
