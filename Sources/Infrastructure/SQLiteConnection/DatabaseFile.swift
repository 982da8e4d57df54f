import Foundation
import JSONDocument
import TemporaryFiles

extension FormatError.Code {
    /// A database file a command was asked to write exists, or appeared while it was written.
    public static let sqliteDestinationExists = Self("sqlite.destination-exists")
}

extension Connection {
    /// Writes a new database at `path` with `fill`, in one transaction: built under a temporary
    /// name beside it and published at the end (never over a file that appeared meanwhile unless
    /// `replacing`), so a crash never leaves a half-written file and a replaced file is replaced
    /// whole (Spec/README.md 6.1).
    package static func writeNewDatabase(
        at path: String, replacing: Bool, fill: (Connection) throws -> Void
    ) throws(FormatError) {
        let destination = URL(fileURLWithPath: path).standardizedFileURL
        guard replacing || (try? FileManager.default.attributesOfItem(atPath: destination.path)) == nil else {
            throw FormatError(.sqliteDestinationExists, "the database file already exists; it is never overwritten", location: .init(file: path))
        }
        let temporary = TemporaryFiles.reserveSibling(of: destination)
        defer { TemporaryFiles.release(temporary) }
        do {
            let database = try Connection(path: temporary.path)
            try database.execute("PRAGMA journal_mode=DELETE")
            try database.execute("BEGIN")
            try fill(database)
            try database.execute("COMMIT")
            database.close()
        } catch let error as FormatError {
            throw error.inFile(path)
        } catch {
            throw FormatError(.sqliteFailed, "\(error)", location: .init(file: path))
        }
        do {
            try TemporaryFiles.publish(temporary, at: destination, replacing: replacing)
        } catch {
            switch error {
            case .destinationExists:
                throw FormatError(.sqliteDestinationExists, "appeared while the database was written; it is never overwritten", location: .init(file: path))
            case .failed(let reason):
                throw FormatError(.sqliteFailed, reason, location: .init(file: path))
            }
        }
    }
}
