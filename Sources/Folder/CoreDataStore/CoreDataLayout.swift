import DataModel
import JSONDocument

/// Where Core Data's SQLite store keeps the objects of a model: one table per root entity, its
/// columns, the join tables of many-to-many relationships (Spec/device-state.md 2). Computed from
/// the model and the store's entity numbers (`Z_PRIMARYKEY.Z_ENT`); nothing here reads a file.
package struct CoreDataLayout: Hashable, Sendable {
    /// What a column of an entity table holds.
    package enum ColumnRole: Hashable, Sendable {
        /// A persistent attribute of `entity`.
        case attribute(entity: String, name: String)
        /// A to-one relationship of `entity`: the destination's `Z_PK`.
        case toOne(entity: String, name: String)
        /// The destination's entity number (`Z<n>_NAME`), written when the destination has sub-entities.
        case toOneEntity(entity: String, name: String)
        /// The position of this object in the ordered to-many relationship that is the inverse of
        /// the to-one `name` (`Z_FOK_NAME`).
        case orderKey(entity: String, name: String)
    }

    package struct Column: Hashable, Sendable {
        package var name: String
        package var role: ColumnRole
    }

    /// One entity: its number, its root and the table it shares with its root's hierarchy.
    package struct EntityTable: Hashable, Sendable {
        package var name: String
        package var number: Int64
        package var root: String
        package var table: String
        /// Its own number and those of every entity below it: the `Z_ENT` values of its objects.
        package var kinds: [Int64]
    }

    /// The table of one many-to-many relationship pair.
    package struct JoinTable: Hashable, Sendable {
        /// The names Core Data may have given it, the expected one first: `Z_<n><NAME>` after the
        /// relationship of the entity with the smaller number; for a relationship between an entity
        /// and itself, both names of the pair (the real stores show either).
        package var candidateNames: [String]
        /// The relationship and its inverse: (entity, relationship name).
        package var relationship: (entity: String, name: String)
        package var inverse: (entity: String, name: String)
        /// The column holding the `Z_PK` of `relationship`'s entity (named after `inverse`, whose
        /// destination it is) and the column holding the `Z_PK` of its destination.
        package var sourceColumn: String
        package var destinationColumn: String

        package static func == (lhs: JoinTable, rhs: JoinTable) -> Bool {
            lhs.candidateNames == rhs.candidateNames && lhs.relationship == rhs.relationship && lhs.inverse == rhs.inverse
                && lhs.sourceColumn == rhs.sourceColumn && lhs.destinationColumn == rhs.destinationColumn
        }

        package func hash(into hasher: inout Hasher) {
            hasher.combine(candidateNames)
            hasher.combine(relationship.entity)
            hasher.combine(relationship.name)
        }
    }

    /// By entity name.
    package var entities: [String: EntityTable]
    /// Root table name -> its columns after `Z_PK`, `Z_ENT` and `Z_OPT`, in the model's name order.
    package var columns: [String: [Column]]
    package var joinTables: [JoinTable]
    /// Column names that two entities of one hierarchy define independently: Core Data then
    /// numbers them (`ZNAME1`, `ZNAME2`) in an order the real stores do not pin down, so the
    /// toolkit does not map them (Spec/device-state.md 2.3).
    package var ambiguousColumns: [String: [String]]

    /// The column name of a property: `Z` and the name in upper case.
    package static func columnName(_ property: String) -> String { "Z" + property.uppercased() }

    /// The table of a root entity: `Z` and its name in upper case.
    package static func tableName(_ rootEntity: String) -> String { "Z" + rootEntity.uppercased() }

    /// The entity numbers Core Data hands out for a hierarchy (Spec/device-state.md 2.1): a
    /// pre-order walk, parents before their sub-entities, roots and siblings in case-insensitive
    /// name order (ties by the exact name), numbered from 1.
    package static func entityNumbers(parents: [String: String?]) -> [String: Int64] {
        var children: [String?: [String]] = [:]
        for (name, parent) in parents {
            let key = parent.flatMap { parents[$0] != nil ? $0 : nil }
            children[key, default: []].append(name)
        }
        func ordered(_ names: [String]) -> [String] {
            names.sorted {
                let left = $0.lowercased(), right = $1.lowercased()
                return left == right ? $0.utf8.lexicographicallyPrecedes($1.utf8) : left.utf8.lexicographicallyPrecedes(right.utf8)
            }
        }
        var numbers: [String: Int64] = [:]
        var stack = ordered(children[nil] ?? []).reversed().map { $0 }
        while let name = stack.popLast() {
            guard numbers[name] == nil else { continue }
            numbers[name] = Int64(numbers.count + 1)
            stack.append(contentsOf: ordered(children[name] ?? []).reversed())
        }
        return numbers
    }

    /// The layout of `model` in a store whose `Z_PRIMARYKEY` gives `numbers` (entity name -> `Z_ENT`).
    /// An entity of the model without a number is `coredata.layout-mismatch`.
    package init(model: DataModel, numbers: [String: Int64], file: String? = nil) throws(FormatError) {
        let location = FormatError.Location(file: file)
        var entities: [String: EntityTable] = [:]
        for name in model.entityNames {
            guard let number = numbers[name] else {
                throw FormatError(.coreDataLayoutMismatch, "the model's entity \(name) has no row in Z_PRIMARYKEY", location: location)
            }
            let root = model.lineage(of: name).last?.name ?? name
            entities[name] = EntityTable(name: name, number: number, root: root, table: Self.tableName(root), kinds: [])
        }
        for name in model.entityNames {
            for other in model.entityNames where model.entity(other, isKindOf: name) {
                if let kind = entities[other]?.number { entities[name]?.kinds.append(kind) }
            }
            entities[name]?.kinds.sort()
        }
        var columns: [String: [Column]] = [:]
        var definedBy: [String: [String: [String]]] = [:]  // table -> column -> entities defining it
        var joinTables: [JoinTable] = []
        for name in model.entityNames {
            guard let entity = model.entities[name], let mapping = entities[name] else { continue }
            var own: [Column] = []
            for attributeName in entity.attributes.keys.map(\.value).sorted() {
                guard let attribute = entity.attributes[attributeName], !attribute.isTransient else { continue }
                own.append(Column(name: Self.columnName(attributeName), role: .attribute(entity: name, name: attributeName)))
            }
            for relationshipName in entity.relationships.keys.map(\.value).sorted() {
                guard let relationship = entity.relationships[relationshipName], !relationship.isTransient else { continue }
                let inverse = relationship.inverseName.flatMap { inverseName in
                    model.property(inverseName, of: relationship.destinationEntity).flatMap { property -> Relationship? in
                        if case .relationship(let value) = property { return value }
                        return nil
                    }
                }
                if !relationship.isToMany {
                    own.append(Column(name: Self.columnName(relationshipName), role: .toOne(entity: name, name: relationshipName)))
                    if let destination = entities[relationship.destinationEntity], destination.kinds.count > 1 {
                        own.append(
                            Column(name: "Z\(destination.number)_" + relationshipName.uppercased(), role: .toOneEntity(entity: name, name: relationshipName)))
                    }
                    if let inverse, inverse.isToMany, inverse.isOrdered {
                        own.append(Column(name: "Z_FOK_" + relationshipName.uppercased(), role: .orderKey(entity: name, name: relationshipName)))
                    }
                } else if let inverse, inverse.isToMany, let destination = entities[relationship.destinationEntity] {
                    // Many-to-many: one join table per pair, listed once, from the entity with the
                    // smaller number (for an entity and itself, from the relationship whose name sorts first).
                    let here = mapping.number, there = destination.number
                    guard here < there || (here == there && relationshipName.utf8.lexicographicallyPrecedes(inverse.name.utf8)) else { continue }
                    var candidates = ["Z_\(here)" + relationshipName.uppercased()]
                    if here == there { candidates.append("Z_\(there)" + inverse.name.uppercased()) }
                    joinTables.append(
                        JoinTable(
                            candidateNames: candidates, relationship: (name, relationshipName), inverse: (relationship.destinationEntity, inverse.name),
                            sourceColumn: "Z_\(here)" + inverse.name.uppercased(), destinationColumn: "Z_\(there)" + relationshipName.uppercased()))
                }
            }
            for column in own { definedBy[mapping.table, default: [:]][column.name, default: []].append(name) }
            columns[mapping.table, default: []] += own
        }
        var ambiguous: [String: [String]] = [:]
        for (table, names) in definedBy {
            let repeated = names.filter { $0.value.count > 1 }.keys.sorted()
            guard !repeated.isEmpty else { continue }
            ambiguous[table] = repeated
            columns[table]?.removeAll { repeated.contains($0.name) }
        }
        self.entities = entities
        self.columns = columns
        self.joinTables = joinTables
        self.ambiguousColumns = ambiguous
    }
}

extension FormatError.Code {
    /// A store whose tables or columns are not those Core Data's rules give for the model
    /// (Spec/device-state.md 2.5).
    public static let coreDataLayoutMismatch = Self("coredata.layout-mismatch")
    /// A foreign key, entity number or join-table row of a store that names no object
    /// (Spec/device-state.md 2.5).
    public static let coreDataDanglingReference = Self("coredata.dangling-reference")
    /// The tables read hold more rows than the reader holds in memory (Spec/device-state.md 2.5).
    public static let coreDataTooManyRows = Self("coredata.too-many-rows")
}
