import CSQLite
import Foundation
import Testing

@Suite("merge --sqlite")
struct SQLiteOutputTests {
    /// Rows of a query, each column as text (NULL as nil).
    static func rows(_ path: String, _ sql: String) throws -> [[String?]] {
        var handle: OpaquePointer?
        guard sqlite3_open_v2(path, &handle, SQLITE_OPEN_READONLY, nil) == SQLITE_OK else { throw CocoaError(.fileReadUnknown) }
        defer { sqlite3_close(handle) }
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(handle, sql, -1, &statement, nil) == SQLITE_OK else { throw CocoaError(.fileReadCorruptFile) }
        defer { sqlite3_finalize(statement) }
        var result: [[String?]] = []
        while sqlite3_step(statement) == SQLITE_ROW {
            result.append(
                (0..<sqlite3_column_count(statement)).map { column in
                    sqlite3_column_text(statement, column).map { String(cString: $0) }
                })
        }
        return result
    }

    @Test("the merged state lands in a table per entity and a join table per to-many; an existing file is refused")
    func tables() throws {
        let scratch = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let database = scratch.appendingPathComponent("state.sqlite").path
        let log = "\(Originals.folder)/IntegratorUpdateTestsFixture1.json"
        let run = try Run("merge", "--lenient", "--model", Originals.model, "--sqlite", database, log)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(
            try Self.rows(database, #"SELECT "globalIdentifier", "name", "child" FROM "Parent" ORDER BY 1"#) == [
                ["parent1", "parent1", "child1"], ["parent2", "parent2", nil],
            ])
        #expect(try Self.rows(database, #"SELECT "owner", "member" FROM "Parent_children""#) == [["parent1", "child1"]])
        #expect(try Self.rows(database, #"SELECT "date" FROM "Parent" WHERE "globalIdentifier" = 'parent1'"#) == [["59450702923000.0"]])
        let again = try Run("merge", "--lenient", "--model", Originals.model, "--sqlite", database, log)
        #expect(again.status == 2)
    }
}
