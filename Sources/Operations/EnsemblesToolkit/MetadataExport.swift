import Foundation
import JSONDocument
import EnsembleModel
import CloudFolder
import SQLiteConnection

extension Ensemble {
    /// Writes the folder's metadata as SQLite tables at `path` (Spec/inspect.md 6): files,
    /// stores, events, revisions, baselines, object and property changes, data files and verify's
    /// findings, for questions no command answers. The folder is read once, as `verify` reads it;
    /// `path` must not exist unless `replacing`.
    public func exportMetadata(toSQLite path: String, replacing: Bool = false) throws(EnsembleError) {
        // A folder that cannot be read is the folder's error, not the database's.
        var folderError: EnsembleError?
        do {
            try Connection.writeNewDatabase(at: path, replacing: replacing) { database in
                let tables = try MetadataTables(database)
                var failure: Error?
                do throws(EnsembleError) {
                    try forEachVerified(observe: { ensemble, file, event in
                        guard failure == nil else { return }
                        do { try tables.changes(of: event, file: file, ensemble: ensemble) } catch { failure = error }
                    }) { contents, verification throws(EnsembleError) in
                        do {
                            try tables.ensemble(contents, verification, ensembleFolder: self.ensembleFolder(contents))
                        } catch {
                            throw EnsembleError(.failure, FormatError(.sqliteFailed, "\(error)", location: .init(file: path)))
                        }
                    }
                } catch {
                    folderError = error
                    throw error
                }
                if let failure { throw failure }
            }
        } catch {
            if let folderError { throw folderError }
            throw EnsembleError(error.code == .sqliteDestinationExists ? .usage : .failure, error)
        }
    }

    /// The ensemble folder of `contents` on disk, for file dates.
    private func ensembleFolder(_ contents: EnsembleContents) -> String {
        let root = inputs.first ?? "."
        return contents.displayPath == "." ? root : root + "/" + contents.displayPath
    }
}

/// The tables of Spec/inspect.md 6 and their insert statements, filled an ensemble at a time;
/// object and property changes are inserted as the events are read, so that memory does not grow
/// with the history.
private final class MetadataTables {
    private let database: Connection
    private let insertObject: Connection.Statement
    private let insertProperty: Connection.Statement

    init(_ database: Connection) throws {
        self.database = database
        try database.execute(
            """
            CREATE TABLE files (ensemble TEXT NOT NULL, path TEXT NOT NULL, kind TEXT NOT NULL, size INTEGER, sha256 TEXT, mtime REAL,
                PRIMARY KEY (ensemble, path));
            CREATE TABLE stores (ensemble TEXT NOT NULL, store TEXT NOT NULL, file TEXT NOT NULL, leech_date TEXT);
            CREATE TABLE events (ensemble TEXT NOT NULL, file TEXT NOT NULL, store TEXT NOT NULL, revision INTEGER NOT NULL,
                global_count INTEGER NOT NULL, timestamp REAL NOT NULL, type INTEGER NOT NULL, unique_identifier TEXT NOT NULL,
                model_version TEXT, parts INTEGER, inserts INTEGER NOT NULL, updates INTEGER NOT NULL, deletes INTEGER NOT NULL);
            CREATE TABLE revisions (ensemble TEXT NOT NULL, file TEXT NOT NULL, store TEXT NOT NULL, revision INTEGER NOT NULL);
            CREATE TABLE baselines (ensemble TEXT NOT NULL, file TEXT NOT NULL, store TEXT NOT NULL, global_count INTEGER NOT NULL,
                timestamp REAL NOT NULL, unique_identifier TEXT NOT NULL, model_version TEXT, parts INTEGER, changes INTEGER NOT NULL);
            CREATE TABLE object_changes (ensemble TEXT NOT NULL, file TEXT NOT NULL, entity TEXT NOT NULL, global_identifier TEXT NOT NULL,
                type INTEGER NOT NULL);
            CREATE TABLE property_changes (ensemble TEXT NOT NULL, file TEXT NOT NULL, entity TEXT NOT NULL, global_identifier TEXT NOT NULL,
                property TEXT NOT NULL, type INTEGER NOT NULL);
            CREATE TABLE data_files (ensemble TEXT NOT NULL, name TEXT NOT NULL, file TEXT NOT NULL, size INTEGER NOT NULL);
            CREATE TABLE findings (ensemble TEXT NOT NULL, code TEXT NOT NULL, severity TEXT NOT NULL, number INTEGER, files TEXT NOT NULL,
                details TEXT NOT NULL);
            """)
        insertObject = try database.prepare("INSERT INTO object_changes VALUES (?, ?, ?, ?, ?)")
        insertProperty = try database.prepare("INSERT INTO property_changes VALUES (?, ?, ?, ?, ?, ?)")
    }

    /// Every object and property change of one readable event or baseline of `ensemble`.
    func changes(of event: Event, file: String, ensemble: String) throws {
        for change in event.objectChanges {
            try run(insertObject, [.text(ensemble), .text(file), .text(change.entity), .text(change.globalIdentifier), .integer(change.type.rawValue)])
            for property in change.propertyChanges {
                try run(
                    insertProperty,
                    [
                        .text(ensemble), .text(file), .text(change.entity), .text(change.globalIdentifier), .text(property.name),
                        .integer(property.value.kind.rawValue),
                    ])
            }
        }
    }

    /// The facts of one ensemble once it is read and verified; `folder` is its path on disk.
    func ensemble(_ contents: EnsembleContents, _ verification: EnsembleVerification, ensembleFolder folder: String) throws {
        let ensemble = contents.displayPath
        let file = try database.prepare("INSERT INTO files VALUES (?, ?, ?, ?, ?, ?)")
        func add(_ path: String, _ kind: String) throws {
            var status = stat()
            let found = lstat(folder + "/" + path, &status) == 0
            let regular = found && status.st_mode & S_IFMT == S_IFREG
            let mtime: SQLValue = found ? .real(Double(status.st_mtim.tv_sec) + Double(status.st_mtim.tv_nsec) / 1e9) : .null
            // Opened without following a link at its end, as every reader opens a file (Spec/cloud-layout.md 2).
            let digest = regular ? (try? DataFileReader.digest(of: URL(fileURLWithPath: folder + "/" + path))) : nil
            let hex: SQLValue = digest.map { .text(lowercaseHex($0)) } ?? .null
            try run(file, [.text(ensemble), .text(path), .text(kind), regular ? .integer(Int64(status.st_size)) : .null, hex, mtime])
        }
        let events = try database.prepare("INSERT INTO events VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
        let revisions = try database.prepare("INSERT INTO revisions VALUES (?, ?, ?, ?)")
        let baselines = try database.prepare("INSERT INTO baselines VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)")
        try contents.forEachEntry { entry in
            for part in entry.files.keys.sorted() {
                if let path = entry.files[part] { try add(path, entry.file.hasPrefix("baselines/") ? "baseline" : "event") }
            }
            guard let event = entry.event, let counts = entry.changeCounts else { return }
            let parts: SQLValue = entry.partCount.map { .integer(Int64($0)) } ?? .null
            let model: SQLValue = event.modelVersion.map { .text($0) } ?? .null
            if event.type == .baseline {
                try run(
                    baselines,
                    [
                        .text(ensemble), .text(entry.file), .text(event.storeIdentifier), .integer(event.globalCount), .real(event.timestamp),
                        .text(event.uniqueIdentifier), model, parts, .integer(Int64(counts.total)),
                    ])
            } else {
                try run(
                    events,
                    [
                        .text(ensemble), .text(entry.file), .text(event.storeIdentifier), .integer(event.revision), .integer(event.globalCount),
                        .real(event.timestamp), .integer(event.type.rawValue), .text(event.uniqueIdentifier), model, parts,
                        .integer(Int64(counts.inserts)), .integer(Int64(counts.updates)), .integer(Int64(counts.deletes)),
                    ])
            }
            for revision in event.revisionSet.revisions {
                try run(revisions, [.text(ensemble), .text(entry.file), .text(revision.store), .integer(revision.revision)])
            }
        }
        let stores = try database.prepare("INSERT INTO stores VALUES (?, ?, ?, ?)")
        for store in contents.stores {
            try add(store.file, "registration")
            let leech: SQLValue = store.leechDate.map { .text(ISO8601DateFormatter().string(from: $0)) } ?? .null
            try run(stores, [.text(ensemble), .text(store.storeIdentifier), .text(store.file), leech])
        }
        let data = try database.prepare("INSERT INTO data_files VALUES (?, ?, ?, ?)")
        for dataFile in contents.dataFiles {
            try add(dataFile.file, "data")
            try run(data, [.text(ensemble), .text(dataFile.name), .text(dataFile.file), .integer(dataFile.bytes)])
        }
        for debris in contents.debris { try add(debris.path, "debris") }
        let findings = try database.prepare("INSERT INTO findings VALUES (?, ?, ?, ?, ?, ?)")
        for diagnostic in verification.diagnostics {
            try run(
                findings,
                [
                    .text(ensemble), .text(diagnostic.code.rawValue), .text(diagnostic.severity.rawValue),
                    diagnostic.number.map { .integer(Int64($0)) } ?? .null,
                    .text(JSONWriter().string(.array(diagnostic.files.map(JSONValue.string)))), .text(JSONWriter().string(.object(diagnostic.details))),
                ])
        }
    }

    private func run(_ statement: Connection.Statement, _ values: [SQLValue]) throws {
        for (index, value) in values.enumerated() { try statement.bind(Int32(index + 1), value) }
        try statement.run()
        statement.reset()
    }
}
