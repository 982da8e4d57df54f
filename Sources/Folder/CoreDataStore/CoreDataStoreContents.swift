import DataModel
import Foundation
import JSONDocument
import SQLiteConnection
import TemporaryFiles

/// One object of a Core Data store: its entity and primary key (`Z_PK`).
package struct CoreDataObjectID: Hashable, Sendable, Comparable, CustomStringConvertible {
    package var entity: String
    package var primaryKey: Int64

    package init(entity: String, primaryKey: Int64) {
        self.entity = entity
        self.primaryKey = primaryKey
    }

    package static func < (lhs: Self, rhs: Self) -> Bool {
        lhs.entity == rhs.entity ? lhs.primaryKey < rhs.primaryKey : lhs.entity.utf8.lexicographicallyPrecedes(rhs.entity.utf8)
    }

    package var description: String { "\(entity)/\(primaryKey)" }
}

/// One row of an entity table, read with the model (Spec/device-state.md 2.4).
package struct CoreDataRow: Sendable {
    package var id: CoreDataObjectID
    /// `Z_OPT`: Core Data's optimistic-locking counter.
    package var version: Int64
    /// Persistent attributes of the entity and its ancestors, by name, as SQLite stores them.
    package var attributes: [String: SQLValue]
    /// Set to-one relationships.
    package var toOne: [String: CoreDataObjectID]
    /// To-many relationships (through the inverse foreign key or the join table): in the stored
    /// order for ordered ones, else by primary key. Empty relationships are absent.
    package var toMany: [String: [CoreDataObjectID]]
}

/// The objects of a Core Data SQLite store read with its model (Spec/device-state.md 2).
package struct CoreDataStoreContents: Sendable {
    package var layout: CoreDataLayout
    /// By entity, each sorted by primary key.
    package var rows: [String: [CoreDataRow]]

    /// Reads the store at `path` with `model`. The store and its `-wal` are copied into a private
    /// staging folder first and only the copy is opened, so that the newest rows (which may be in
    /// the `-wal` alone) are read and nothing is ever written beside the user's files. Without
    /// `includingWAL` only the main file is copied: what the store held at its last checkpoint
    /// (Spec/device-state.md 5.4, `onlyInWal`).
    /// The rows a store may have in all the tables the model reads: the reader holds every row
    /// (about 1 KB each with what `inspect` builds from them, measured), so a larger store is
    /// refused before any row is read (Spec/device-state.md 2.5).
    package static let defaultMaximumRows = 4_000_000

    package static func read(
        path: String, model: DataModel, includingWAL: Bool = true, maximumRows: Int = defaultMaximumRows
    ) throws(FormatError) -> CoreDataStoreContents {
        let staged = try StoreStaging.stage(path, includingWAL: includingWAL)
        defer { staged.remove() }
        let connection: Connection
        do {
            connection = try Connection(path: staged.store)
            try connection.execute("PRAGMA query_only = ON")
        } catch {
            throw FormatError(.coreDataUnreadableStore, error.message, location: .init(file: path))
        }
        defer { connection.close() }
        do {
            return try read(connection, model: model, path: path, maximumRows: maximumRows)
        } catch  where error.code == .sqliteFailed {
            throw FormatError(.coreDataUnreadableStore, error.message, location: .init(file: path))
        }
    }

    private static func read(_ connection: Connection, model: DataModel, path: String, maximumRows: Int) throws(FormatError) -> CoreDataStoreContents {
        func failure(_ code: FormatError.Code, _ message: String, _ pointer: JSONPointer? = nil) -> FormatError {
            FormatError(code, message, location: .init(file: path, pointer: pointer))
        }
        var tables: [String: Set<String>] = [:]
        let master = try connection.prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
        while try master.step() { tables[master.text(0)] = [] }
        guard tables["Z_PRIMARYKEY"] != nil, tables["Z_METADATA"] != nil else {
            throw failure(.coreDataUnreadableStore, "an SQLite database without the Z_METADATA and Z_PRIMARYKEY tables of a Core Data store")
        }
        for name in Array(tables.keys) {
            let info = try connection.prepare("PRAGMA table_info(\(quoted(name)))")
            while try info.step() { tables[name]?.insert(info.text(1)) }
        }
        var numbers: [String: Int64] = [:]
        let keys = try connection.prepare("SELECT Z_ENT, Z_NAME FROM Z_PRIMARYKEY")
        while try keys.step() { numbers[keys.text(1)] = keys.int64(0) }
        let layout = try CoreDataLayout(model: model, numbers: numbers, file: path)
        var entityByNumber: [Int64: String] = [:]
        for entity in layout.entities.values { entityByNumber[entity.number] = entity.name }

        // Counted first, without holding a row: a store too large to hold is refused at its
        // largest table.
        var counts: [(table: String, rows: Int)] = []
        for table in Set(layout.entities.values.map(\.table) + layout.joinTables.compactMap { $0.candidateNames.first { tables[$0] != nil } }).sorted()
        where tables[table] != nil {
            let count = try connection.prepare("SELECT count(*) FROM \(quoted(table))")
            if try count.step() { counts.append((table, Int(count.int64(0)))) }
        }
        let total = counts.reduce(0) { $0 + $1.rows }
        if total > maximumRows, let largest = counts.max(by: { $0.rows < $1.rows }) {
            throw failure(
                .coreDataTooManyRows,
                "the store has \(total) rows in the tables read (\(largest.table): \(largest.rows)); at most \(maximumRows) are read, all held in memory",
                .root / largest.table)
        }

        // Every root table with its fixed and model columns; then read every row.
        var rows: [String: [CoreDataRow]] = [:]
        var located: [String: [Int64: (entity: String, index: Int)]] = [:]  // table -> Z_PK -> row
        var references: [(table: String, row: (String, Int), relationship: String, column: String, key: Int64, entityNumber: Int64?)] = []
        var orderKeys: [CoreDataObjectID: [String: Int64]] = [:]
        for table in Set(layout.entities.values.map(\.table)).sorted() {
            guard let present = tables[table] else { throw failure(.coreDataLayoutMismatch, "the table \(table) is missing", .root / table) }
            let columns = layout.columns[table] ?? []
            for name in ["Z_PK", "Z_ENT", "Z_OPT"] + columns.map(\.name) where !present.contains(name) {
                throw failure(.coreDataLayoutMismatch, "the table \(table) has no column \(name)", .root / table / name)
            }
            let selected = (["Z_PK", "Z_ENT", "Z_OPT"] + columns.map(\.name)).map(quoted).joined(separator: ", ")
            let statement = try connection.prepare("SELECT \(selected) FROM \(quoted(table)) ORDER BY Z_PK")
            while try statement.step() {
                let key = statement.int64(0), number = statement.int64(1)
                guard let entity = entityByNumber[number], layout.entities[entity]?.table == table else {
                    throw failure(.coreDataDanglingReference, "row \(key) has Z_ENT \(number), no entity of this table", .root / table / String(key) / "Z_ENT")
                }
                var row = CoreDataRow(
                    id: CoreDataObjectID(entity: entity, primaryKey: key), version: statement.int64(2), attributes: [:], toOne: [:], toMany: [:])
                for (offset, column) in columns.enumerated() {
                    let index = Int32(offset + 3)
                    switch column.role {
                    case .attribute(let owner, let name) where model.entity(entity, isKindOf: owner):
                        row.attributes[name] = statement.value(index)
                    case .toOne(let owner, let name) where model.entity(entity, isKindOf: owner) && !statement.isNull(index):
                        let typed = columns.firstIndex { $0.role == .toOneEntity(entity: owner, name: name) }
                        let kind = typed.flatMap { statement.isNull(Int32($0 + 3)) ? nil : statement.int64(Int32($0 + 3)) }
                        references.append((table, (entity, rows[entity, default: []].count), name, column.name, statement.int64(index), kind))
                    case .orderKey(let owner, let name) where model.entity(entity, isKindOf: owner) && !statement.isNull(index):
                        orderKeys[row.id, default: [:]][name] = statement.int64(index)
                    default: break
                    }
                }
                located[table, default: [:]][key] = (entity, rows[entity, default: []].count)
                rows[entity, default: []].append(row)
            }
        }
        // To-one references resolve to a row of the destination's table and kind.
        for reference in references {
            let (entity, index) = reference.row
            guard case .relationship(let relationship)? = model.property(reference.relationship, of: entity),
                let destination = layout.entities[relationship.destinationEntity]
            else { continue }
            let pointer = JSONPointer.root / reference.table / String(rows[entity]?[index].id.primaryKey ?? 0) / reference.column
            guard let target = located[destination.table]?[reference.key], let targetNumber = layout.entities[target.entity]?.number,
                destination.kinds.contains(targetNumber), reference.entityNumber == nil || reference.entityNumber == targetNumber
            else {
                throw failure(
                    .coreDataDanglingReference,
                    "\(reference.relationship) names \(destination.table) row \(reference.key), no \(relationship.destinationEntity)", pointer)
            }
            let targetID = CoreDataObjectID(entity: target.entity, primaryKey: reference.key)
            rows[entity]?[index].toOne[reference.relationship] = targetID
            // The inverse to-many, when there is one, is this reference seen from the other side.
            if let inverseName = relationship.inverseName, case .relationship(let inverse)? = model.property(inverseName, of: target.entity), inverse.isToMany,
                let source = rows[entity]?[index].id
            {
                rows[target.entity]?[target.index].toMany[inverseName, default: []].append(source)
            }
        }
        // Many-to-many pairs from their join tables.
        for join in layout.joinTables {
            guard let name = join.candidateNames.first(where: { tables[$0] != nil }) else {
                throw failure(.coreDataLayoutMismatch, "no join table \(join.candidateNames.joined(separator: " or "))", .root / join.candidateNames[0])
            }
            // For an entity and itself the table may be named after either relationship, and its
            // columns after either one: both columns are required, the pair read as named.
            guard let present = tables[name], present.contains(join.sourceColumn), present.contains(join.destinationColumn) else {
                throw failure(.coreDataLayoutMismatch, "the join table \(name) lacks \(join.sourceColumn) or \(join.destinationColumn)", .root / name)
            }
            guard let source = layout.entities[join.relationship.entity], let destination = layout.entities[join.inverse.entity] else { continue }
            let statement = try connection.prepare("SELECT \(quoted(join.sourceColumn)), \(quoted(join.destinationColumn)) FROM \(quoted(name))")
            while try statement.step() {
                let from = statement.int64(0), to = statement.int64(1)
                guard let left = located[source.table]?[from], let right = located[destination.table]?[to],
                    let leftNumber = layout.entities[left.entity]?.number, source.kinds.contains(leftNumber),
                    let rightNumber = layout.entities[right.entity]?.number, destination.kinds.contains(rightNumber)
                else {
                    throw failure(.coreDataDanglingReference, "the pair (\(from), \(to)) names no \(source.name) and \(destination.name) rows", .root / name)
                }
                rows[left.entity]?[left.index].toMany[join.relationship.name, default: []].append(CoreDataObjectID(entity: right.entity, primaryKey: to))
                rows[right.entity]?[right.index].toMany[join.inverse.name, default: []].append(CoreDataObjectID(entity: left.entity, primaryKey: from))
            }
        }
        // Order: ordered relationships by the members' order keys, the others by primary key.
        for (entity, list) in rows {
            for index in list.indices {
                for (name, members) in list[index].toMany {
                    var ordered = members.sorted()
                    if case .relationship(let relationship)? = model.property(name, of: entity), relationship.isOrdered, let inverse = relationship.inverseName
                    {
                        ordered.sort { (orderKeys[$0]?[inverse] ?? Int64.max, $0.primaryKey) < (orderKeys[$1]?[inverse] ?? Int64.max, $1.primaryKey) }
                    }
                    rows[entity]?[index].toMany[name] = ordered
                }
            }
        }
        return CoreDataStoreContents(layout: layout, rows: rows)
    }
}

/// An SQL identifier in double quotes.
private func quoted(_ identifier: String) -> String {
    "\"" + identifier.replacingOccurrences(of: "\"", with: "\"\"") + "\""
}

/// A private copy of a store and its write-ahead log (Spec/device-state.md 2.6).
struct StoreStaging {
    let folder: String
    let store: String

    /// Copies `path` and `path-wal` (when present) into a new folder only this user can read.
    /// A symbolic link is refused rather than followed. The `-shm` index is not copied: SQLite
    /// rebuilds it from the copied log, and a copy of a live one may disagree with it.
    static func stage(_ path: String, includingWAL: Bool = true) throws(FormatError) -> StoreStaging {
        let location = FormatError.Location(file: path)
        let manager = FileManager.default
        for file in [path, path + "-wal"] {
            guard let attributes = try? manager.attributesOfItem(atPath: file) else {
                if file == path { throw FormatError(.coreDataUnreadableStore, "no such file", location: location) }
                continue
            }
            guard attributes[.type] as? FileAttributeType == .typeRegular else {
                throw FormatError(.coreDataUnreadableStore, "\(file) is not a regular file (a link, a folder or a device)", location: location)
            }
        }
        let folder = manager.temporaryDirectory.appendingPathComponent("ensembles-toolkit-store-\(UUID().uuidString)").path
        do {
            try manager.createDirectory(atPath: folder, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        } catch {
            throw FormatError(.coreDataUnreadableStore, "cannot create a staging folder: \(error.localizedDescription)", location: location)
        }
        TemporaryFiles.register(folder)
        let staged = StoreStaging(folder: folder, store: folder + "/store.sqlite")
        do {
            try manager.copyItem(atPath: path, toPath: staged.store)
            if includingWAL, manager.fileExists(atPath: path + "-wal") { try manager.copyItem(atPath: path + "-wal", toPath: staged.store + "-wal") }
        } catch {
            staged.remove()
            throw FormatError(.coreDataUnreadableStore, "cannot copy the store: \(error.localizedDescription)", location: location)
        }
        return staged
    }

    func remove() {
        try? FileManager.default.removeItem(atPath: folder)
        TemporaryFiles.unregister(folder)
    }
}
