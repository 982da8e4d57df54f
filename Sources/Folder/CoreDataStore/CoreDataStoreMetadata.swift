import Foundation
import JSONDocument
import DataModel
import SQLiteConnection

extension FormatError.Code {
    /// The file is not a readable Core Data SQLite store: missing, not SQLite, or without its
    /// `Z_METADATA` / `Z_PRIMARYKEY` tables (Spec/model.md 8.4).
    public static let coreDataUnreadableStore = Self("coredata.unreadable-store")
    /// `Z_METADATA.Z_PLIST` is not a property list dictionary whose `NSStoreModelVersionHashes`
    /// maps entity names to data (Spec/model.md 8.4).
    public static let coreDataInvalidMetadata = Self("coredata.invalid-metadata")
}

/// What an app's Core Data SQLite store says about itself: its metadata (store type, UUID, the
/// model version that wrote it, with every entity's version hash) and its entity tables
/// (Spec/model.md 8.4, Spec/inspect.md 2.5). Read-only: the file is opened immutable.
package struct CoreDataStoreMetadata: Sendable, Hashable {
    /// One entity, as `Z_PRIMARYKEY` numbers it and the metadata hashes it.
    package struct Entity: Sendable, Hashable {
        package var name: String
        /// `Z_ENT`; nil when only the metadata names the entity.
        package var number: Int64?
        /// `Z_SUPER`, nil for a root entity (0).
        package var superNumber: Int64?
        /// The name of the entity `superNumber` numbers.
        package var parent: String?
        /// `Z_MAX`: the largest primary key handed out.
        package var maxPrimaryKey: Int64?
        /// The table holding its rows: `Z` + the upper-cased name of its root entity; nil when the
        /// store has no such table.
        package var table: String?
        /// Rows of exactly this entity (`Z_ENT` equal to its number) in ``table``.
        package var rows: Int64?
        /// From `NSStoreModelVersionHashes`.
        package var versionHash: [UInt8]?
    }

    /// The largest `Z_PLIST` read.
    package static let maximumMetadataBytes = 16 * 1024 * 1024

    package var path: String
    package var storeType: String?
    package var uuid: String?
    package var versionIdentifiers: [String]
    package var persistenceFrameworkVersion: Int64?
    package var hashesVersion: Int64?
    package var hashesDigest: String?
    package var entityHashes: [String: [UInt8]]
    /// The other keys of the metadata dictionary (app-defined ones among them), sorted.
    package var otherMetadataKeys: [String]
    /// Sorted by name (UTF-8).
    package var entities: [Entity]

    /// The model version that wrote this store, for the 204 check (Spec/merge.md 5.7).
    package var modelVersion: KnownModelVersion {
        KnownModelVersion(name: URL(fileURLWithPath: path).lastPathComponent, source: path, entityHashes: entityHashes)
    }

    /// The type of what `path` names, through a link (the path as given may be one, as a
    /// model's, Spec/model.md 2.1); nil when nothing is there. A store is opened only when this
    /// is a regular file: SQLite's open of a FIFO, or a look at its header, waits for a writer
    /// forever.
    package static func fileType(_ path: String) -> FileAttributeType? {
        (try? FileManager.default.attributesOfItem(atPath: URL(fileURLWithPath: path).resolvingSymlinksInPath().path))?[.type] as? FileAttributeType
    }

    /// Reads the store at `path` (never writing to it).
    package static func read(path: String) throws(FormatError) -> CoreDataStoreMetadata {
        guard let type = fileType(path) else {
            throw FormatError(.coreDataUnreadableStore, "no such file", location: .init(file: path))
        }
        guard type == .typeRegular else {
            throw FormatError(.coreDataUnreadableStore, "not a regular file (a folder, FIFO, socket or device is never read)", location: .init(file: path))
        }
        do {
            let connection = try Connection(readOnly: path)
            defer { connection.close() }
            return try read(connection, path: path)
        } catch  where error.code == .sqliteFailed {
            throw FormatError(.coreDataUnreadableStore, error.message, location: .init(file: path))
        }
    }

    private static let knownKeys: Set<String> = [
        "NSStoreType", "NSStoreUUID", "NSStoreModelVersionIdentifiers", "NSPersistenceFrameworkVersion", "NSStoreModelVersionHashes",
        "NSStoreModelVersionHashesVersion", "NSStoreModelVersionHashesDigest",
    ]

    private static func read(_ connection: Connection, path: String) throws(FormatError) -> CoreDataStoreMetadata {
        let location = FormatError.Location(file: path)
        var tables = Set<String>()
        let master = try connection.prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
        while try master.step() { tables.insert(master.text(0)) }
        guard tables.contains("Z_METADATA"), tables.contains("Z_PRIMARYKEY") else {
            throw FormatError(
                .coreDataUnreadableStore, "an SQLite database without the Z_METADATA and Z_PRIMARYKEY tables of a Core Data store", location: location)
        }
        let row = try connection.prepare("SELECT Z_UUID, Z_PLIST FROM Z_METADATA ORDER BY Z_VERSION DESC LIMIT 1")
        guard try row.step() else { throw FormatError(.coreDataUnreadableStore, "Z_METADATA has no row", location: location) }
        let columnUUID = row.isNull(0) ? nil : row.text(0)
        let plist = try PropertyListGuard.read(row.blob(1), limit: maximumMetadataBytes, code: .coreDataInvalidMetadata, location: location)
        guard let metadata = plist as? [String: Any] else {
            throw FormatError(.coreDataInvalidMetadata, "Z_METADATA.Z_PLIST is not a dictionary", location: location)
        }
        guard let rawHashes = metadata["NSStoreModelVersionHashes"] as? [String: Any] else {
            throw FormatError(.coreDataInvalidMetadata, "the metadata has no dictionary NSStoreModelVersionHashes", location: location)
        }
        var hashes: [String: [UInt8]] = [:]
        for (entity, value) in rawHashes {
            guard let data = value as? Data else {
                throw FormatError(.coreDataInvalidMetadata, "the version hash of entity \(entity) is not data", location: location)
            }
            hashes[entity] = Array(data)
        }
        var result = CoreDataStoreMetadata(
            path: path, storeType: metadata["NSStoreType"] as? String, uuid: columnUUID ?? metadata["NSStoreUUID"] as? String,
            versionIdentifiers: (metadata["NSStoreModelVersionIdentifiers"] as? [Any])?.compactMap { $0 as? String } ?? [],
            persistenceFrameworkVersion: integer(metadata["NSPersistenceFrameworkVersion"]),
            hashesVersion: integer(metadata["NSStoreModelVersionHashesVersion"]),
            hashesDigest: metadata["NSStoreModelVersionHashesDigest"] as? String, entityHashes: hashes,
            otherMetadataKeys: metadata.keys.filter { !knownKeys.contains($0) }.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) },
            entities: [])
        result.entities = try entities(connection, tables: tables, hashes: hashes, location: location)
        return result
    }

    /// An integer metadata value (a number, never a string or a Boolean).
    private static func integer(_ value: Any?) -> Int64? {
        guard let value, !(value is Bool) else { return nil }
        if let int = value as? Int { return Int64(int) }
        if let int = value as? Int64 { return int }
        return nil
    }

    /// `Z_PRIMARYKEY` joined with the hashes, and the rows of each entity in its root's table.
    private static func entities(
        _ connection: Connection, tables: Set<String>, hashes: [String: [UInt8]], location: FormatError.Location
    ) throws(FormatError) -> [Entity] {
        var numbered: [Int64: Entity] = [:]
        let keys = try connection.prepare("SELECT Z_ENT, Z_NAME, Z_SUPER, Z_MAX FROM Z_PRIMARYKEY")
        while try keys.step() {
            let number = keys.int64(0)
            let superNumber = keys.isNull(2) || keys.int64(2) == 0 ? nil : keys.int64(2)
            numbered[number] = Entity(
                name: keys.text(1), number: number, superNumber: superNumber, parent: nil, maxPrimaryKey: keys.isNull(3) ? nil : keys.int64(3),
                table: nil, rows: nil, versionHash: hashes[keys.text(1)])
        }
        // The root of each entity: sub-entities share their root's table (Z_ENT tells them apart).
        let roots = try rootNumbers(numbered, location: location)
        let parents = Set(numbered.values.compactMap(\.superNumber))
        var countsByTable: [String: [Int64: Int64]?] = [:]
        for (number, entity) in numbered {
            let parent = entity.superNumber.flatMap { numbered[$0]?.name }
            numbered[number]?.parent = parent
            guard let rootNumber = roots[number] ?? nil, let rootEntity = numbered[rootNumber] else { continue }
            let table = "Z" + rootEntity.name.uppercased()
            guard tables.contains(table) else { continue }
            numbered[number]?.table = table
            if countsByTable[table] == nil { countsByTable[table] = try rowCounts(connection, table: table) }
            if let counts = countsByTable[table] ?? nil {
                numbered[number]?.rows = counts[number] ?? 0
            } else if rootEntity.number == number && !parents.contains(number) {
                // A table without Z_ENT holds one entity only.
                let count = try connection.prepare("SELECT COUNT(*) FROM \(quoted(table))")
                numbered[number]?.rows = try count.step() ? count.int64(0) : 0
            }
        }
        var result = Array(numbered.values)
        let names = Set(result.map(\.name))
        for (name, hash) in hashes where !names.contains(name) {
            result.append(Entity(name: name, number: nil, superNumber: nil, parent: nil, maxPrimaryKey: nil, table: nil, rows: nil, versionHash: hash))
        }
        return result.sorted { $0.name == $1.name ? ($0.number ?? -1) < ($1.number ?? -1) : $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
    }

    /// The root entity of each entity (nil when its `Z_SUPER` chain reaches a number no row has),
    /// each chain walked once: walking it from scratch for every entity made a chain of 20,000
    /// entities take half a minute. A chain that comes back to an entity it passed is
    /// `coredata.invalid-metadata` (Spec/inspect.md 2.5), never a loop.
    static func rootNumbers(_ numbered: [Int64: Entity], location: FormatError.Location) throws(FormatError) -> [Int64: Int64?] {
        var roots: [Int64: Int64?] = [:]
        for start in numbered.keys.sorted() where roots[start] == nil {
            var path: [Int64] = []
            var onPath = Set<Int64>()
            var current = start
            var root: Int64?
            while true {
                if let known = roots[current] {
                    root = known
                    break
                }
                guard let entity = numbered[current] else { break }
                guard onPath.insert(current).inserted else {
                    let name = numbered[start]?.name ?? ""
                    throw FormatError(
                        .coreDataInvalidMetadata,
                        "Z_PRIMARYKEY: following Z_SUPER from entity \(name) (Z_ENT \(start)) comes back to entity \(entity.name) (Z_ENT \(current)): the entity hierarchy has a cycle",
                        location: location)
                }
                path.append(current)
                guard let parent = entity.superNumber else {
                    root = current
                    break
                }
                current = parent
            }
            for number in path { roots[number] = .some(root) }
        }
        return roots
    }

    /// Rows per `Z_ENT` of `table`, or nil when it has no `Z_ENT` column.
    private static func rowCounts(_ connection: Connection, table: String) throws(FormatError) -> [Int64: Int64]? {
        let columns = try connection.prepare("PRAGMA table_info(\(quoted(table)))")
        var hasEntityColumn = false
        while try columns.step() {
            if columns.text(1) == "Z_ENT" { hasEntityColumn = true }
        }
        guard hasEntityColumn else { return nil }
        var counts: [Int64: Int64] = [:]
        let query = try connection.prepare("SELECT Z_ENT, COUNT(*) FROM \(quoted(table)) GROUP BY Z_ENT")
        while try query.step() {
            if !query.isNull(0) { counts[query.int64(0)] = query.int64(1) }
        }
        return counts
    }

    private static func quoted(_ identifier: String) -> String {
        "\"" + identifier.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
