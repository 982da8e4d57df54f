import Foundation
import Testing
import CSQLite
import JSONDocument
import CoreDataStore

/// Spec/inspect.md 2.5: each entity's rows are counted in the table of its root entity, found by
/// following `Z_SUPER`. Generated stores: a chain of 20,000 entities (each walked once: walking
/// every chain from scratch took 26-41 s), and a chain that ends in a cycle (reported, never a
/// loop).
@Suite("Core Data stores: the entity hierarchy of Z_PRIMARYKEY")
struct CoreDataHierarchyTests {
    /// A store whose `Z_PRIMARYKEY` has the rows `(Z_ENT, Z_NAME, Z_SUPER)` of `entities`, the
    /// table `ZE1` with a `Z_ENT` column and `rows` rows of each entity number given, and
    /// metadata hashing every entity.
    static func store(at path: String, entities: [(number: Int64, name: String, superNumber: Int64)], rows: [Int64: Int]) throws {
        var database: OpaquePointer?
        guard sqlite3_open(path, &database) == SQLITE_OK, let database else { throw CocoaError(.fileWriteUnknown) }
        defer { sqlite3_close(database) }
        func exec(_ sql: String) throws {
            guard sqlite3_exec(database, sql, nil, nil, nil) == SQLITE_OK else {
                throw CocoaError(.fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: String(cString: sqlite3_errmsg(database))])
            }
        }
        try exec("BEGIN")
        try exec("CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER)")
        try exec("CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB)")
        try exec("CREATE TABLE ZE1 (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER)")
        for entity in entities {
            try exec("INSERT INTO Z_PRIMARYKEY VALUES (\(entity.number), '\(entity.name)', \(entity.superNumber), 0)")
        }
        for (number, count) in rows {
            for _ in 0..<count { try exec("INSERT INTO ZE1 (Z_ENT, Z_OPT) VALUES (\(number), 1)") }
        }
        let hashes = Dictionary(uniqueKeysWithValues: entities.map { ($0.name, Data([1, 2, 3])) })
        let metadata: [String: Any] = ["NSStoreType": "SQLite", "NSStoreUUID": "U", "NSStoreModelVersionHashes": hashes]
        let plist = try PropertyListSerialization.data(fromPropertyList: metadata, format: .binary, options: 0)
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(database, "INSERT INTO Z_METADATA VALUES (1, 'U', ?)", -1, &statement, nil) == SQLITE_OK else {
            throw CocoaError(.fileWriteUnknown)
        }
        defer { sqlite3_finalize(statement) }
        _ = plist.withUnsafeBytes { sqlite3_bind_blob(statement, 1, $0.baseAddress, Int32($0.count), unsafeBitCast(-1, to: sqlite3_destructor_type.self)) }
        guard sqlite3_step(statement) == SQLITE_DONE else { throw CocoaError(.fileWriteUnknown) }
        try exec("COMMIT")
    }

    static func scratchStore() throws -> (folder: URL, path: String) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("hierarchy-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return (folder, folder.appendingPathComponent("Store.sqlite").path)
    }

    @Test("a chain of 20,000 entities: every entity's table is its root's, its rows counted apart, in seconds")
    func longChain() throws {
        let (folder, path) = try Self.scratchStore()
        defer { try? FileManager.default.removeItem(at: folder) }
        // E1 is the root; E(n) is a sub-entity of E(n-1).
        let chain = (1...20_000).map { (number: Int64($0), name: "E\($0)", superNumber: Int64($0 - 1)) }
        try Self.store(at: path, entities: chain, rows: [1: 2, 20_000: 3])
        let clock = ContinuousClock()
        let start = clock.now
        let metadata = try CoreDataStoreMetadata.read(path: path)
        let elapsed = clock.now - start
        // Generous: the walk from scratch took 26-41 s (release build) on this chain.
        #expect(elapsed < .seconds(5), "\(elapsed)")
        #expect(metadata.entities.count == 20_000)
        #expect(metadata.entities.allSatisfy { $0.table == "ZE1" })
        let byName = Dictionary(uniqueKeysWithValues: metadata.entities.map { ($0.name, $0) })
        #expect(byName["E1"]?.rows == 2 && byName["E20000"]?.rows == 3 && byName["E2"]?.rows == 0)
        #expect(byName["E20000"]?.parent == "E19999" && byName["E1"]?.parent == nil)
    }

    @Test("a Z_SUPER chain that ends in a cycle is coredata.invalid-metadata naming the entities, not a hang")
    func cycle() throws {
        let (folder, path) = try Self.scratchStore()
        defer { try? FileManager.default.removeItem(at: folder) }
        // E1 -> E3 -> E2 -> E1 is a cycle; E4 ... E20000 each lead to the entity before them.
        var entities: [(number: Int64, name: String, superNumber: Int64)] = [(1, "E1", 3), (2, "E2", 1), (3, "E3", 2)]
        entities += (4...20_000).map { (number: Int64($0), name: "E\($0)", superNumber: Int64($0 - 1)) }
        try Self.store(at: path, entities: entities, rows: [:])
        let clock = ContinuousClock()
        let start = clock.now
        do {
            _ = try CoreDataStoreMetadata.read(path: path)
            Issue.record("a cyclic hierarchy was read")
        } catch {
            #expect(error.code == .coreDataInvalidMetadata)
            #expect(error.location.file == path)
            #expect(error.message.contains("cycle") && error.message.contains("Z_ENT 1"), "\(error.message)")
        }
        #expect(clock.now - start < .seconds(5))
    }

    @Test("an entity whose Z_SUPER names no row has no table, as before; its sub-entities neither")
    func missingParent() throws {
        let (folder, path) = try Self.scratchStore()
        defer { try? FileManager.default.removeItem(at: folder) }
        try Self.store(at: path, entities: [(1, "E1", 0), (2, "E2", 1), (3, "E3", 99), (4, "E4", 3)], rows: [2: 1])
        let metadata = try CoreDataStoreMetadata.read(path: path)
        let tables = Dictionary(uniqueKeysWithValues: metadata.entities.map { ($0.name, $0.table) })
        #expect(tables == ["E1": "ZE1", "E2": "ZE1", "E3": nil, "E4": nil])
        #expect(metadata.entities.first { $0.name == "E2" }?.rows == 1)
    }
}
