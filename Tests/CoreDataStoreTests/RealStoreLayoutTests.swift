import CoreDataStore
import Foundation
import JSONDocument
import SQLiteConnection
import Testing

/// Core Data's layout rules (Spec/device-state.md 2) checked against the six real stores of
/// Fixtures/external/coredata-sqlite, whose models are not available: what can be checked from
/// `Z_PRIMARYKEY` and the tables alone. The expected counts per store were taken by hand from the
/// stores' schemas (listed with Python's sqlite3), not from this code.
@Suite("Core Data layout rules on the real stores")
struct RealStoreLayoutTests {
    static let folder = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/external/coredata-sqlite")

    struct Expected: Sendable, CustomStringConvertible {
        var file: String
        var roots: Int
        var subEntities: Int
        var joinTables: Int
        var selfJoinTables: Int
        var typedToOneColumns: Int
        var orderColumns: Int
        var historyEntities: Int
        var description: String { file }
    }

    static let stores = [
        Expected(
            file: "Accounts3.sqlite", roots: 7, subEntities: 0, joinTables: 5, selfJoinTables: 0, typedToOneColumns: 0, orderColumns: 0, historyEntities: 0),
        Expected(
            file: "DataUsage.sqlite", roots: 9, subEntities: 0, joinTables: 0, selfJoinTables: 0, typedToOneColumns: 0, orderColumns: 0, historyEntities: 0),
        Expected(
            file: "NoteStore.sqlite", roots: 5, subEntities: 13, joinTables: 0, selfJoinTables: 0, typedToOneColumns: 1, orderColumns: 0, historyEntities: 3),
        Expected(file: "kik.sqlite", roots: 7, subEntities: 0, joinTables: 4, selfJoinTables: 3, typedToOneColumns: 0, orderColumns: 0, historyEntities: 0),
        Expected(
            file: "knowledgec-10.14.db", roots: 12, subEntities: 5, joinTables: 1, selfJoinTables: 0, typedToOneColumns: 4, orderColumns: 0, historyEntities: 0),
        Expected(
            file: "netusage.sqlite", roots: 17, subEntities: 1, joinTables: 0, selfJoinTables: 0, typedToOneColumns: 1, orderColumns: 1, historyEntities: 0),
    ]

    /// Persistent history's entities are numbered from 16001 and live outside the model's tables.
    static let historyStart: Int64 = 16001

    struct Store {
        var connection: Connection
        var names: [Int64: String] = [:]
        var parents: [Int64: Int64] = [:]
        var maxKeys: [Int64: Int64] = [:]
        var columns: [String: [String]] = [:]

        init(_ path: String) throws {
            connection = try Connection(readOnly: path)
            let keys = try connection.prepare("SELECT Z_ENT, Z_NAME, Z_SUPER, Z_MAX FROM Z_PRIMARYKEY")
            while try keys.step() {
                names[keys.int64(0)] = keys.text(1)
                if keys.int64(2) != 0 { parents[keys.int64(0)] = keys.int64(2) }
                maxKeys[keys.int64(0)] = keys.int64(3)
            }
            let tables = try connection.prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
            var tableNames: [String] = []
            while try tables.step() { tableNames.append(tables.text(0)) }
            for table in tableNames {
                let info = try connection.prepare("PRAGMA table_info(\"\(table)\")")
                while try info.step() { columns[table, default: []].append(info.text(1)) }
            }
        }

        func root(_ number: Int64) -> Int64 {
            var current = number
            while let parent = parents[current] { current = parent }
            return current
        }

        /// The entity and every entity below it.
        func kinds(_ number: Int64) -> Set<Int64> {
            Set(
                names.keys.filter { candidate in
                    var current: Int64? = candidate
                    while let value = current {
                        if value == number { return true }
                        current = parents[value]
                    }
                    return false
                })
        }

        func integers(_ sql: String) throws -> [[Int64?]] {
            let statement = try connection.prepare(sql)
            var result: [[Int64?]] = []
            while try statement.step() {
                result.append((0..<Int32(2)).map { statement.isNull($0) ? nil : statement.int64($0) })
            }
            return result
        }

        /// Z_ENT of the row with this primary key in the table of `entity`'s root, or nil.
        func kind(ofRow key: Int64, inTableOf entity: Int64) throws -> Int64? {
            let table = CoreDataLayout.tableName(names[root(entity)] ?? "")
            return try integers("SELECT Z_ENT, Z_PK FROM \"\(table)\" WHERE Z_PK = \(key)").first?[0] ?? nil
        }
    }

    static func match(_ pattern: String, _ text: String) -> [String]? {
        guard let regex = try? NSRegularExpression(pattern: pattern),
            let found = regex.firstMatch(in: text, range: NSRange(text.startIndex..., in: text))
        else { return nil }
        return (1..<found.numberOfRanges).compactMap { Range(found.range(at: $0), in: text).map { String(text[$0]) } }
    }

    @Test("entity numbers: a pre-order walk of the hierarchy, siblings in case-insensitive name order", arguments: stores)
    func entityNumbers(_ expected: Expected) throws {
        let store = try Store(Self.folder.appendingPathComponent(expected.file).path)
        var parents: [String: String?] = [:]
        for (number, name) in store.names where number < Self.historyStart {
            parents[name] = store.parents[number].flatMap { store.names[$0] }
        }
        let computed = CoreDataLayout.entityNumbers(parents: parents)
        for (number, name) in store.names where number < Self.historyStart {
            #expect(computed[name] == number, "\(expected.file): \(name)")
        }
        #expect(store.names.keys.filter { $0 < Self.historyStart }.count == expected.roots + expected.subEntities)
        #expect(store.parents.count == expected.subEntities)
        #expect(store.names.keys.filter { $0 >= Self.historyStart }.count == expected.historyEntities)
    }

    @Test(
        "one table Z<ROOT> per root entity, shared by its sub-entities; Z_PK, Z_ENT, Z_OPT first; Z_ENT within the hierarchy; Z_MAX covers the keys",
        arguments: stores)
    func entityTables(_ expected: Expected) throws {
        let store = try Store(Self.folder.appendingPathComponent(expected.file).path)
        for (number, name) in store.names where number < Self.historyStart {
            let table = CoreDataLayout.tableName(name)
            guard store.parents[number] == nil else {
                #expect(store.columns[table] == nil, "\(expected.file): sub-entity \(name) has a table of its own")
                continue
            }
            let columns = try #require(store.columns[table], "\(expected.file): no table \(table)")
            #expect(Array(columns.prefix(3)) == ["Z_PK", "Z_ENT", "Z_OPT"], "\(expected.file): \(table)")
            let kinds = store.kinds(number)
            for row in try store.integers("SELECT DISTINCT Z_ENT, 0 FROM \"\(table)\"") {
                #expect(row[0].map { kinds.contains($0) } == true, "\(expected.file): \(table) has Z_ENT \(row[0].map(String.init) ?? "NULL")")
            }
            let largest = try store.integers("SELECT MAX(Z_PK), 0 FROM \"\(table)\"").first?[0] ?? nil
            if let largest { #expect(largest <= store.maxKeys[number] ?? -1, "\(expected.file): \(table) Z_MAX") }
        }
        // Persistent history: its entities have tables named A<NAME>, not Z<NAME>.
        for (number, name) in store.names where number >= Self.historyStart {
            #expect(store.columns["A" + name.uppercased()] != nil && store.columns[CoreDataLayout.tableName(name)] == nil, "\(expected.file): \(name)")
        }
    }

    @Test("Z<n>_NAME beside a to-one key ZNAME: n has sub-entities, and every key resolves to a row of the kind it names", arguments: stores)
    func typedToOneKeys(_ expected: Expected) throws {
        let store = try Store(Self.folder.appendingPathComponent(expected.file).path)
        var found = 0
        for (table, columns) in store.columns {
            for column in columns {
                guard let parts = Self.match("^Z([0-9]+)_(.+)$", column), let number = Int64(parts[0]) else { continue }
                found += 1
                let keyColumn = "Z" + parts[1]
                #expect(columns.contains(keyColumn), "\(expected.file): \(table).\(column) without \(keyColumn)")
                #expect(store.kinds(number).count > 1, "\(expected.file): \(table).\(column) names entity \(number), which has no sub-entities")
                for row in try store.integers("SELECT \"\(keyColumn)\", \"\(column)\" FROM \"\(table)\" WHERE \"\(keyColumn)\" IS NOT NULL") {
                    let key = try #require(row[0]), kind = try #require(row[1])
                    #expect(store.kinds(number).contains(kind), "\(expected.file): \(table).\(column) = \(kind)")
                    #expect(try store.kind(ofRow: key, inTableOf: number) == kind, "\(expected.file): \(table).\(keyColumn) = \(key) does not resolve")
                }
            }
        }
        #expect(found == expected.typedToOneColumns)
    }

    @Test("Z_FOK_NAME sits beside the to-one key ZNAME it orders", arguments: stores)
    func orderColumns(_ expected: Expected) throws {
        let store = try Store(Self.folder.appendingPathComponent(expected.file).path)
        var found = 0
        for (table, columns) in store.columns where !table.hasPrefix("Z_") {
            for column in columns where column.hasPrefix("Z_FOK_") {
                found += 1
                #expect(columns.contains("Z" + column.dropFirst(6)), "\(expected.file): \(table).\(column)")
            }
        }
        #expect(found == expected.orderColumns)
    }

    @Test("many-to-many: Z_<a><Y> with the columns Z_<a><X> and Z_<b><Y>, a the smaller number, every key a row of its entity", arguments: stores)
    func joinTables(_ expected: Expected) throws {
        let store = try Store(Self.folder.appendingPathComponent(expected.file).path)
        var found = 0, selfJoins = 0
        for (table, columns) in store.columns {
            guard let tableParts = Self.match("^Z_([0-9]+)([A-Z].*)$", table), let number = Int64(tableParts[0]) else { continue }
            found += 1
            let keyColumns = columns.filter { !$0.hasPrefix("Z_FOK_") }
            #expect(keyColumns.count == 2, "\(expected.file): \(table) \(columns)")
            guard keyColumns.count == 2 else { continue }
            let ends = keyColumns.compactMap { Self.match("^Z_([0-9]+)(.+)$", $0) }.compactMap { parts in Int64(parts[0]).map { ($0, parts[1]) } }
            #expect(ends.count == 2)
            guard ends.count == 2 else { continue }
            #expect(number == min(ends[0].0, ends[1].0), "\(expected.file): \(table) is not named after the smaller entity number")
            // Named after the relationship of entity n: the same name as the column of the other end.
            if let other = ends.first(where: { $0.0 != number }) {
                #expect(table == "Z_\(number)" + other.1, "\(expected.file): \(table) is not named after the other end's column")
            }
            if ends[0].0 == ends[1].0 {
                selfJoins += 1
                #expect(ends.contains { "Z_\(number)" + $0.1 == table }, "\(expected.file): \(table) is named after neither relationship")
            }
            for row in try store.integers("SELECT \"\(keyColumns[0])\", \"\(keyColumns[1])\" FROM \"\(table)\"") {
                for (index, end) in ends.enumerated() {
                    let key = try #require(row[index])
                    let kind = try store.kind(ofRow: key, inTableOf: end.0)
                    #expect(kind.map { store.kinds(end.0).contains($0) } == true, "\(expected.file): \(table).\(keyColumns[index]) = \(key)")
                }
            }
        }
        #expect(found == expected.joinTables)
        #expect(selfJoins == expected.selfJoinTables)
    }
}
