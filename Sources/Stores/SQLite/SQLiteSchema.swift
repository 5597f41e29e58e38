import Foundation
import ObjectGraph

/// How a model maps onto SQLite tables: one table per root entity (`_pk`, `_ent`, `_opt`, a column
/// per attribute, a foreign-key column per to-one relationship), a join table per many-to-many or
/// inverse-less to-many relationship, and the indexes the model and the relationships need.
///
/// Column names are the property names; when two sibling entities sharing a table declare the same
/// name, the later one is prefixed with its entity (`Entity_name`). Entity numbers (`_ent`) are the
/// entity's position in the model plus one; the model's version hash pins them.
final class SQLiteSchema {
    struct Column {
        var name: String
        var declaration: String
    }

    struct Index {
        var name: String
        var table: String
        var columns: [String]
        var isUnique: Bool
        var sql: String {
            "CREATE \(isUnique ? "UNIQUE " : "")INDEX IF NOT EXISTS \(quote(name)) ON \(quote(table)) "
                + "(\(columns.map(quote).joined(separator: ", ")))"
        }
    }

    final class Table {
        let name: String
        let root: EntityDescription
        /// Columns after `_pk`, `_ent`, `_opt`; a row read with `selectList` has column `i` at `3 + i`.
        var columns: [Column] = []
        init(name: String, root: EntityDescription) {
            self.name = name
            self.root = root
        }

        func add(_ name: String, _ declaration: String, owner: EntityDescription) -> String {
            var unique = name
            if columns.contains(where: { $0.name == unique }) || unique.hasPrefix("_") {
                unique = "\(owner.name)_\(name)"
            }
            var n = 2
            while columns.contains(where: { $0.name == unique }) {
                unique = "\(owner.name)_\(name)_\(n)"
                n += 1
            }
            columns.append(Column(name: unique, declaration: declaration))
            return unique
        }

        func position(of column: String) -> Int { 3 + columns.firstIndex { $0.name == column }! }

        /// The unqualified select list, built once (row loads by key use it per fault).
        lazy var plainSelectList: String = selectList()

        /// `_pk, _ent, _opt` and every column, qualified with `alias` when given.
        func selectList(alias: String? = nil) -> String {
            (["_pk", "_ent", "_opt"] + columns.map(\.name)).map { (alias.map { $0 + "." } ?? "") + quote($0) }.joined(
                separator: ", ")
        }
    }

    /// Where a to-one relationship lives: its foreign-key column and, when the destination has
    /// sub-entities, the column holding the destination's entity number.
    struct ForeignKey {
        var column: String
        var entityColumn: String?
    }

    final class JoinTable {
        let name: String
        /// The relationship whose destinations are in `destination` (its inverse, if any, reads the table the other
        /// way).
        let owner: RelationshipDescription
        var sourceEntityColumn: String?
        var destinationEntityColumn: String?
        var sourceOrderColumn: String?
        var destinationOrderColumn: String?
        init(name: String, owner: RelationshipDescription) {
            self.name = name
            self.owner = owner
        }

        /// The table's columns seen from one relationship: `near` holds the reading object's key,
        /// `far` its destinations'; entity and order columns follow the same sides.
        struct Side {
            var near: String, far: String
            var nearEntity: String?, farEntity: String?
            var order: String?
        }

        func side(isSource: Bool) -> Side {
            isSource
                ? Side(
                    near: "source", far: "destination", nearEntity: sourceEntityColumn,
                    farEntity: destinationEntityColumn, order: sourceOrderColumn)
                : Side(
                    near: "destination", far: "source", nearEntity: destinationEntityColumn,
                    farEntity: sourceEntityColumn, order: destinationOrderColumn)
        }
    }

    /// How one to-many relationship is stored.
    enum ToMany {
        /// The inverse is to-one: destinations are the rows of `table` whose `column` holds the owner's key.
        case foreignKey(table: Table, key: ForeignKey, orderColumn: String?)
        /// Links in a join table; `isSource` tells which side of it the relationship reads from.
        case joinTable(JoinTable, isSource: Bool)
    }

    final class EntityMap {
        let entity: EntityDescription
        let number: Int64
        let table: Table
        /// By attribute index: the column, or `nil` for transient attributes.
        var attributeColumns: [String?] = []
        /// By relationship index: the foreign key of to-one relationships.
        var foreignKeys: [ForeignKey?] = []
        /// By relationship index: the storage of to-many relationships.
        var toMany: [ToMany?] = []
        /// Entity numbers of this entity and its descendants.
        var kindNumbers: [Int64] = []
        /// Whether other entities share the table (fetches must filter on `_ent`).
        var sharesTable = false
        init(entity: EntityDescription, number: Int64, table: Table) {
            self.entity = entity
            self.number = number
            self.table = table
        }
    }

    let model: ManagedObjectModel
    private(set) var tables: [Table] = []
    private(set) var joinTables: [JoinTable] = []
    private(set) var indexes: [Index] = []
    private var maps: [EntityMap] = []
    private var entitiesByNumber: [Int64: EntityDescription] = [:]

    init(model: ManagedObjectModel) {
        self.model = model
        var tablesByRoot: [ObjectIdentifier: Table] = [:]
        for entity in model.entities where entity.superentity == nil {
            let table = Table(name: entity.name, root: entity)
            tables.append(table)
            tablesByRoot[ObjectIdentifier(entity)] = table
        }
        for (position, entity) in model.entities.enumerated() {
            precondition(entity.index == position, "model entities are indexed in order")
            let map = EntityMap(
                entity: entity, number: Int64(position + 1), table: tablesByRoot[ObjectIdentifier(entity.rootEntity)]!)
            maps.append(map)
            entitiesByNumber[map.number] = entity
        }
        for map in maps {
            map.kindNumbers = maps.filter { $0.entity.isKind(of: map.entity) }.map(\.number)
            map.sharesTable = maps.contains { $0.table === map.table && !$0.entity.isKind(of: map.entity) }
        }
        // Columns: an entity's inherited properties use the parent's columns, so walk parents first.
        for map in maps.sorted(by: { depth($0.entity) < depth($1.entity) }) {
            let entity = map.entity
            let parent = entity.superentity.map { maps[$0.index] }
            map.attributeColumns = entity.attributes.map { attribute in
                if attribute.isTransient { return nil }
                if let parent, attribute.index < parent.attributeColumns.count, attribute.entity !== entity {
                    return parent.attributeColumns[attribute.index]
                }
                return map.table.add(attribute.name, Self.columnType(attribute.type), owner: entity)
            }
            map.foreignKeys = entity.relationships.map { relationship in
                guard !relationship.isToMany else { return nil }
                if let parent, relationship.index < parent.foreignKeys.count, relationship.entity !== entity {
                    return parent.foreignKeys[relationship.index]
                }
                let destination = relationship.destinationEntity!
                let column = map.table.add(
                    relationship.name, "INTEGER REFERENCES \(quote(destination.rootEntity.name))(_pk)", owner: entity)
                let entityColumn =
                    destination.subentities.isEmpty
                    ? nil : map.table.add(relationship.name + "_ent", "INTEGER", owner: entity)
                return ForeignKey(column: column, entityColumn: entityColumn)
            }
        }
        // To-many storage; both sides of a many-to-many share one join table.
        var joinTablesByOwner: [ObjectIdentifier: JoinTable] = [:]
        for map in maps {
            map.toMany = map.entity.relationships.map { relationship in
                guard relationship.isToMany else { return nil }
                if let inverse = relationship.inverse, !inverse.isToMany {
                    let destination = maps[relationship.destinationEntity.index]
                    let key = destination.foreignKeys[inverse.index]!
                    var orderColumn: String?
                    if relationship.isOrdered {
                        let name = key.column + "_order"
                        orderColumn =
                            destination.table.columns.first { $0.name == name }?.name
                            ?? destination.table.add(name, "INTEGER", owner: relationship.destinationEntity)
                    }
                    return .foreignKey(table: destination.table, key: key, orderColumn: orderColumn)
                }
                let owner = Self.joinTableOwner(relationship)
                let table =
                    joinTablesByOwner[ObjectIdentifier(owner)]
                    ?? {
                        let table = JoinTable(name: "\(owner.entity.rootEntity.name)_\(owner.name)", owner: owner)
                        if !owner.entity.rootEntity.subentities.isEmpty { table.sourceEntityColumn = "source_ent" }
                        if !owner.destinationEntity.subentities.isEmpty {
                            table.destinationEntityColumn = "destination_ent"
                        }
                        if owner.isOrdered { table.sourceOrderColumn = "source_order" }
                        if owner.inverse?.isOrdered == true { table.destinationOrderColumn = "destination_order" }
                        joinTablesByOwner[ObjectIdentifier(owner)] = table
                        joinTables.append(table)
                        return table
                    }()
                return .joinTable(table, isSource: owner === relationship)
            }
        }
        makeIndexes()
    }

    private func depth(_ entity: EntityDescription) -> Int {
        var depth = 0, current = entity
        while let parent = current.superentity {
            depth += 1
            current = parent
        }
        return depth
    }

    /// Of a relationship and its inverse, the one named first (by entity, then name) owns the join table.
    private static func joinTableOwner(_ relationship: RelationshipDescription) -> RelationshipDescription {
        guard let inverse = relationship.inverse, inverse !== relationship else { return relationship }
        let a = (relationship.entity.name, relationship.name), b = (inverse.entity.name, inverse.name)
        return a <= b ? relationship : inverse
    }

    private func makeIndexes() {
        for map in maps {
            let entity = map.entity
            func columns(_ names: [String]) -> [String] {
                names.compactMap { name in
                    if let index = entity.attributeIndex(named: name) { return map.attributeColumns[index] }
                    if let index = entity.relationshipIndex(named: name) { return map.foreignKeys[index]?.column }
                    return nil
                }
            }
            for constraint in entity.uniquenessConstraints {
                let cols = columns(constraint)
                addIndex(
                    Index(
                        name: "\(map.table.name)_unique_\(cols.joined(separator: "_"))", table: map.table.name,
                        columns: cols, isUnique: true))
            }
            for index in entity.indexes {
                let cols = columns(index.propertyNames)
                addIndex(
                    Index(
                        name: "\(map.table.name)_\(index.name)", table: map.table.name, columns: cols, isUnique: false))
            }
            // A foreign key gets its own index unless an index already starts with its column.
            for case let key? in map.foreignKeys
            where !indexes.contains(where: { $0.table == map.table.name && $0.columns.first == key.column }) {
                addIndex(
                    Index(
                        name: "\(map.table.name)_\(key.column)", table: map.table.name, columns: [key.column],
                        isUnique: false))
            }
        }
        for table in joinTables {
            addIndex(
                Index(
                    name: "\(table.name)_link", table: table.name, columns: ["source", "destination"], isUnique: true))
            addIndex(
                Index(name: "\(table.name)_destination", table: table.name, columns: ["destination"], isUnique: false))
        }
    }

    private func addIndex(_ index: Index) {
        guard !index.columns.isEmpty,
            !indexes.contains(where: {
                $0.table == index.table && $0.columns == index.columns && $0.isUnique == index.isUnique
            })
        else { return }
        indexes.append(index)
    }

    // MARK: Lookup

    func map(for entity: EntityDescription) -> EntityMap { maps[entity.index] }

    func entity(number: Int64) -> EntityDescription? { entitiesByNumber[number] }

    /// The DDL creating every table (not the indexes).
    var tableStatements: [String] {
        tables.map { table in
            let columns =
                ["\"_pk\" INTEGER PRIMARY KEY", "\"_ent\" INTEGER NOT NULL", "\"_opt\" INTEGER NOT NULL"]
                + table.columns.map { "\(quote($0.name)) \($0.declaration)" }
            return "CREATE TABLE IF NOT EXISTS \(quote(table.name)) (\(columns.joined(separator: ", ")))"
        }
            + joinTables.map { table in
                var columns = [
                    "\"source\" INTEGER NOT NULL REFERENCES \(quote(table.owner.entity.rootEntity.name))(_pk)",
                    "\"destination\" INTEGER NOT NULL REFERENCES "
                        + "\(quote(table.owner.destinationEntity.rootEntity.name))(_pk)",
                ]
                for name in [
                    table.sourceEntityColumn, table.destinationEntityColumn, table.sourceOrderColumn,
                    table.destinationOrderColumn,
                ].compactMap({ $0 }) {
                    columns.append("\(quote(name)) INTEGER")
                }
                return "CREATE TABLE IF NOT EXISTS \(quote(table.name)) (\(columns.joined(separator: ", ")))"
            }
    }

    /// The declared column type of an attribute type: the SQLite affinity that keeps values exact.
    /// Decimals are canonical decimal text (exact; compared numerically through `SLUICE_DECIMAL`).
    static func columnType(_ type: AttributeType) -> String {
        switch type {
        case .integer16, .integer32, .integer64, .boolean: return "INTEGER"
        case .double, .float, .date: return "REAL"
        case .decimal, .string, .uuid, .uri: return "TEXT"
        case .binary: return "BLOB"
        }
    }
}

/// An SQL identifier in double quotes (entity names such as `Order` are SQL keywords).
func quote(_ identifier: String) -> String {
    "\"" + identifier.replacingOccurrences(of: "\"", with: "\"\"") + "\""
}
