import Foundation
import Testing
import LogToolCore
import SQLiteConnection

/// `inspect --sqlite` (Spec/inspect.md 6): the tables of golden folders, with counts and answers
/// worked out by hand from their files.
@Suite("inspect --sqlite: a folder's metadata as tables")
struct MetadataExportTests {
    static let verifyCases = Run.packageRoot.appendingPathComponent("Fixtures/verify")

    /// Exports `folder` and returns the database, opened read-only.
    static func export(_ folder: URL) throws -> (Connection, URL) {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("metadata-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        let database = scratch.appendingPathComponent("meta.db")
        let run = LogTool.runCapturing(arguments: ["inspect", "--sqlite", database.path, folder.path])
        #expect(run.status == 0 && run.stdout.isEmpty, "\(run.stderr)")
        return (try Connection(readOnly: database.path), scratch)
    }

    static func rows(_ database: Connection, _ sql: String) throws -> [String] {
        let statement = try database.prepare(sql)
        var rows: [String] = []
        while try statement.step() {
            rows.append((0..<statement.columnCount).map { column in statement.isNull(column) ? "NULL" : statement.text(column) }.joined(separator: "|"))
        }
        return rows
    }

    @Test("the healthy folder: every table's rows, and the Spec's two example queries")
    func healthy() throws {
        let (database, scratch) = try Self.export(Self.verifyCases.appendingPathComponent("healthy/cloud"))
        defer {
            database.close()
            try? FileManager.default.removeItem(at: scratch)
        }
        // 5 events, 2 registrations, 1 data file; ALPHA-STORE/2 and BRAVO-STORE/0, /1 name two stores.
        let counts = try ["files", "stores", "events", "revisions", "baselines", "object_changes", "property_changes", "data_files", "findings"].map {
            try Self.rows(database, "SELECT count(*) FROM \($0)")[0]
        }
        #expect(counts == ["8", "2", "5", "8", "0", "9", "12", "1", "0"])
        #expect(
            try Self.rows(database, "SELECT e.store, count(*) FROM object_changes o JOIN events e USING (ensemble, file) GROUP BY e.store ORDER BY 2 DESC")
                == ["ALPHA-STORE|5", "BRAVO-STORE|4"])
        #expect(
            try Self.rows(
                database,
                "SELECT e.global_count, e.store, o.type FROM object_changes o JOIN events e USING (ensemble, file) WHERE o.global_identifier = 't3' ORDER BY e.global_count"
            ) == ["1|BRAVO-STORE|100", "2|BRAVO-STORE|200", "3|ALPHA-STORE|200"])
        #expect(try Self.rows(database, "SELECT DISTINCT ensemble FROM files") == ["E"])
        #expect(try Self.rows(database, "SELECT path, kind, size FROM files WHERE kind = 'data'") == ["data/PHOTO-1|data|2048"])
        // BRAVO-STORE/0's title change of t2 and its three properties of t3.
        #expect(
            try Self.rows(
                database, "SELECT global_identifier, property, type FROM property_changes WHERE file = 'events/1_BRAVO-STORE_0.cdeevent' ORDER BY 1, 2")
                == ["t2|title|0", "t3|done|0", "t3|photo|0", "t3|title|0"])
        #expect(
            try Self.rows(database, "SELECT store, revision FROM revisions WHERE file = 'events/3_ALPHA-STORE_2.cdeevent' ORDER BY 1") == [
                "ALPHA-STORE|2", "BRAVO-STORE|1",
            ])
    }

    @Test("findings, baselines and debris are rows; a file's digest is its SHA-256")
    func findingsAndDigests() throws {
        let (database, scratch) = try Self.export(Self.verifyCases.appendingPathComponent("name-mismatch/cloud"))
        defer {
            database.close()
            try? FileManager.default.removeItem(at: scratch)
        }
        #expect(
            try Self.rows(database, "SELECT code, severity, number, files, details FROM findings") == [
                #"verify.name-mismatch|error|NULL|["events/2_ALPHA-STORE_1.cdeevent"]|{"content":"1","field":"globalCount","name":"2"}"#
            ])
        // The digest the accept-list case recorded with sha256sum (Fixtures/verify/accepted-name-mismatch).
        #expect(
            try Self.rows(database, "SELECT sha256 FROM files WHERE path = 'events/2_ALPHA-STORE_1.cdeevent'") == [
                "3c652f509bce1d39caa2b14301156742bbc7f71894273e76e72c482ea76a79bb"
            ])
        let (baselines, other) = try Self.export(Self.verifyCases.appendingPathComponent("redundant-baseline/cloud"))
        defer {
            baselines.close()
            try? FileManager.default.removeItem(at: other)
        }
        #expect(try Self.rows(baselines, "SELECT count(*) FROM baselines") == ["2"])
        // The two baselines insert t1, t2 and t1, t2, t3: their changes are rows too.
        #expect(
            try Self.rows(baselines, "SELECT file, global_identifier FROM object_changes WHERE file LIKE 'baselines/%' ORDER BY 1, 2") == [
                "baselines/3_BASELINE-1_ALPHA-ST.cdeevent|t1", "baselines/3_BASELINE-1_ALPHA-ST.cdeevent|t2",
                "baselines/5_BASELINE-2_BRAVO-ST.cdeevent|t1", "baselines/5_BASELINE-2_BRAVO-ST.cdeevent|t2",
                "baselines/5_BASELINE-2_BRAVO-ST.cdeevent|t3",
            ])
    }

    @Test("an existing database is never overwritten without --force")
    func existing() throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("metadata-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let database = scratch.appendingPathComponent("meta.db")
        try Data("mine".utf8).write(to: database)
        let folder = Self.verifyCases.appendingPathComponent("healthy/cloud").path
        let run = LogTool.runCapturing(arguments: ["inspect", "--sqlite", database.path, folder])
        #expect(run.status == 2 && run.stderr.contains("sqlite.destination-exists"))
        #expect(try Data(contentsOf: database) == Data("mine".utf8))
        #expect(LogTool.runCapturing(arguments: ["inspect", "--sqlite", database.path, "--force", folder]).status == 0)
        // A path that is no cloud folder is the folder's usage error, and nothing is written.
        let other = scratch.appendingPathComponent("other.db")
        let notFolder = LogTool.runCapturing(arguments: ["inspect", "--sqlite", other.path, scratch.path])
        #expect(notFolder.status == 2 && notFolder.stderr.hasPrefix("folder.not-cloud-folder"), "\(notFolder.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path) == ["meta.db"])
    }
}
