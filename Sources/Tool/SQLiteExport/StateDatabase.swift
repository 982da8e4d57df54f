import SQLiteConnection
import Foundation
import JSONDocument
import EnsembleModel
import DataModel
import MergeEngine
import TemporaryFiles

/// Writes a merged state into a new SQLite database (Spec/merge.md, "SQLite output"): one table
/// per entity with a column per attribute and to-one relationship, one join table per to-many.
package enum StateDatabase {
    /// Writes `state` to `path`, which must not exist unless `replacing`. The database is built
    /// under a temporary name beside it and renamed at the end, so a crash never leaves a
    /// half-written file and a replaced file is replaced whole.
    package static func write(_ state: StoreState, to path: String, replacing: Bool = false) throws(FormatError) {
        try Connection.writeNewDatabase(at: path, replacing: replacing) { database in try fill(database, with: state) }
    }

    /// The tables: from the model when there is one (every entity, attribute and relationship),
    /// else from what the state holds.
    private static func fill(_ database: Connection, with state: StoreState) throws {
        let objects = state.objectsInOrder
        // Names by their bytes: entities and properties named in NFC and NFD are two tables or columns.
        var columns: [ExactString: [(name: String, type: String)]] = [:]
        var joins: [ExactString: Set<ExactString>] = [:]  // entity -> to-many relationship names
        var ordered: Set<ExactString> = []  // "entity\0relationship" of ordered ones
        if let model = state.dataModel {
            for entity in model.entityNames where !(model.entities[entity]?.isAbstract ?? false) {
                var list: [(String, String)] = []
                for ancestor in model.lineage(of: entity).reversed() {
                    for attribute in ancestor.attributes.values.sorted(by: { utf8Precedes($0.name, $1.name) }) where !attribute.isTransient {
                        list.append((attribute.name, sqlType(attribute.type)))
                    }
                    for relationship in ancestor.relationships.values.sorted(by: { utf8Precedes($0.name, $1.name) }) where !relationship.isTransient {
                        if relationship.isToMany {
                            joins[ExactString(entity), default: []].insert(ExactString(relationship.name))
                            if relationship.isOrdered { ordered.insert(ExactString("\(entity)\u{0}\(relationship.name)")) }
                        } else {
                            list.append((relationship.name, "TEXT"))
                        }
                    }
                }
                columns[ExactString(entity)] = list
            }
        }
        for object in objects {
            for property in object.properties {
                switch property.value {
                case .toMany, .ordered:
                    joins[ExactString(object.entity), default: []].insert(ExactString(property.name))
                    if case .ordered = property.value { ordered.insert(ExactString("\(object.entity)\u{0}\(property.name)")) }
                default:
                    if !(columns[ExactString(object.entity)] ?? []).contains(where: { exactlyEqual($0.name, property.name) }) {
                        columns[ExactString(object.entity), default: []].append((property.name, ""))
                    }
                }
            }
            if columns[ExactString(object.entity)] == nil { columns[ExactString(object.entity)] = [] }
        }
        for (exactEntity, list) in columns.sorted(by: { utf8Precedes($0.key.value, $1.key.value) }) {
            let entity = exactEntity.value
            let definitions = [#""globalIdentifier" TEXT PRIMARY KEY"#] + list.map { "\(quote($0.name)) \($0.type)".trimmingCharacters(in: .whitespaces) }
            try database.execute("CREATE TABLE \(quote(entity)) (\(definitions.joined(separator: ", ")))")
        }
        for (exactEntity, relationships) in joins.sorted(by: { utf8Precedes($0.key.value, $1.key.value) }) {
            let entity = exactEntity.value
            for relationship in relationships.map(\.value).sorted(by: utf8Precedes) {
                let position = ordered.contains(ExactString("\(entity)\u{0}\(relationship)")) ? #", "position" INTEGER NOT NULL"# : ""
                try database.execute(
                    "CREATE TABLE \(quote("\(entity)_\(relationship)")) (\"owner\" TEXT NOT NULL, \"member\" TEXT NOT NULL\(position), PRIMARY KEY (\"owner\", \"member\"))"
                )
            }
        }
        for object in objects {
            let scalar = object.properties.filter {
                if case .toMany = $0.value { return false }; if case .ordered = $0.value { return false }; return true
            }
            let names = ["globalIdentifier"] + scalar.map(\.name)
            let statement = try database.prepare(
                "INSERT INTO \(quote(object.entity)) (\(names.map(quote).joined(separator: ", "))) VALUES (\(Array(repeating: "?", count: names.count).joined(separator: ", ")))"
            )
            try statement.bind(1, .text(object.id))
            for (index, property) in scalar.enumerated() { try statement.bind(Int32(index + 2), sqlValue(property.value)) }
            try statement.run()
            for property in object.properties {
                let table = quote("\(object.entity)_\(property.name)")
                switch property.value {
                case .toMany(let members):
                    for member in members.map(\.id.value).sorted(by: utf8Precedes) {
                        let insert = try database.prepare("INSERT INTO \(table) (\"owner\", \"member\") VALUES (?, ?)")
                        try insert.bind(1, .text(object.id))
                        try insert.bind(2, .text(member))
                        try insert.run()
                    }
                case .ordered(let order):
                    for (position, member) in order.map(\.id.value).enumerated() {
                        let insert = try database.prepare("INSERT INTO \(table) (\"owner\", \"member\", \"position\") VALUES (?, ?, ?)")
                        try insert.bind(1, .text(object.id))
                        try insert.bind(2, .text(member))
                        try insert.bind(3, .integer(Int64(position)))
                        try insert.run()
                    }
                default:
                    continue
                }
            }
        }
    }

    private static func sqlType(_ type: AttributeType) -> String {
        switch type {
        case .integer16, .integer32, .integer64, .boolean: "INTEGER"
        case .double, .float, .date: "REAL"
        case .binary, .transformable: "BLOB"
        case .decimal, .string, .uuid, .uri: "TEXT"
        case .undefined, .objectID: ""
        }
    }

    /// Stored values: dates as milliseconds since 1970, decimals as their exact text, data-file
    /// values as the file name, NaN as NULL (SQLite has no NaN).
    private static func sqlValue(_ value: StoreState.Value) -> SQLValue {
        switch value {
        case .attribute(let attribute):
            switch attribute {
            case .null: return .null
            case .bool(let flag): return .integer(flag ? 1 : 0)
            case .integer(let int): return .integer(int)
            case .double(let double): return double.isNaN ? .null : .real(double)
            case .decimal(let text), .string(let text), .url(let text): return .text(text)
            case .date(let milliseconds): return .real(milliseconds)
            case .binary(let data): return .blob([UInt8](data))
            case .uuid(let uuid): return .text(uuid.uuidString.uppercased())
            }
        case .dataFile(let name): return .text(name)
        case .toOne(let target): return target.map { .text($0.id.value) } ?? .null
        case .toMany, .ordered: return .null
        }
    }

    private static func quote(_ identifier: String) -> String {
        "\"" + identifier.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
