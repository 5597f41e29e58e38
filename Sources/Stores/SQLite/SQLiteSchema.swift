import Foundation
import ObjectGraph

/// How a model maps onto SQLite tables, in one of two layouts (`SQLiteLayout`): a table per root
/// entity (sub-entities share it) with a key column, a column per attribute and a foreign-key column
/// per to-one relationship; a join table per many-to-many or inverse-less to-many relationship; the
/// indexes the model and the relationships need.
///
/// - **plain**: tables and columns carry the model's storage names (`EntityDescription.tableName`,
///   `PropertyDescription.columnName`; else the entity's and attribute's names, `<relationship>_id`
///   for a foreign key). A root entity whose first uniqueness constraint is one required integer
///   or text attribute keeps its rows under that attribute (`INTEGER PRIMARY KEY`, `TEXT PRIMARY
///   KEY`, so foreign keys hold the source's key values); others get an integer key column of their
///   own (`id`, else `<table>_id`). `_ent` (entity number) only where sub-entities share a table, `_opt` (row
///   version) only with the `version_column` option.
/// - **graph**: every table has `_pk INTEGER PRIMARY KEY`, `_ent` and `_opt`; columns are the
///   property names, tables the entity names.
///
/// When two properties want one column name (sibling sub-entities declaring the same attribute),
/// the later one is prefixed with its entity (`Entity_name`). Entity numbers are the entity's
/// position in the model plus one; the model's version hash pins them.
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
        /// The primary key column: `_pk`, an attribute's column, or a key column of its own.
        let keyColumn: String
        /// The attribute whose column is `keyColumn` (plain layout, entities keyed by one integer or
        /// text attribute).
        let keyAttribute: AttributeDescription?
        /// The declared type of `keyColumn`, and of the columns referring to it: `INTEGER`, or
        /// `TEXT` when the rows are kept under a text attribute.
        var keyType: String { keyAttribute?.type == .string ? "TEXT" : "INTEGER" }
        /// The column holding each row's entity number (`nil`: every row is of `root`).
        let entityColumn: String?
        /// The column holding each row's version (`nil`: versions are content hashes).
        let versionColumn: String?
        /// The other columns; a row read with `selectList` has column `i` at `3 + i`.
        var columns: [Column] = []
        /// The entity number of `root`.
        let rootNumber: Int64

        init(
            name: String, root: EntityDescription, rootNumber: Int64, keyColumn: String,
            keyAttribute: AttributeDescription?, entityColumn: String?, versionColumn: String?
        ) {
            self.name = name
            self.root = root
            self.rootNumber = rootNumber
            self.keyColumn = keyColumn
            self.keyAttribute = keyAttribute
            self.entityColumn = entityColumn
            self.versionColumn = versionColumn
        }

        /// The names no other column may take.
        var reservedNames: [String] { [keyColumn] + [entityColumn, versionColumn].compactMap { $0 } }

        /// Adds a column named `name` (or, when taken, `<owner>_<name>`, `<owner>_<name>_2`, …).
        func add(_ name: String, _ declaration: String, owner: EntityDescription) -> String {
            func isTaken(_ name: String) -> Bool {
                reservedNames.contains { $0.caseInsensitiveCompare(name) == .orderedSame }
                    || columns.contains { $0.name.caseInsensitiveCompare(name) == .orderedSame }
            }
            var unique = name
            // The graph layout keeps `_`-names for its own columns (stores written before the
            // plain layout named columns this way).
            if isTaken(unique) || (keyColumn == "_pk" && name.hasPrefix("_")) { unique = "\(owner.name)_\(name)" }
            var n = 2
            while isTaken(unique) {
                unique = "\(owner.name)_\(name)_\(n)"
                n += 1
            }
            columns.append(Column(name: unique, declaration: declaration))
            return unique
        }

        /// Where a column sits in a row read with `selectList` (the key column at 0).
        func position(of column: String) -> Int {
            column == keyColumn ? 0 : 3 + columns.firstIndex { $0.name == column }!
        }

        /// The unqualified select list, built once (row loads by key use it per fault).
        lazy var plainSelectList: String = selectList()

        /// Key, entity number, version, then every column, qualified with `alias` when given; the
        /// entity number and version are constants where the table has no column for them.
        func selectList(alias: String? = nil) -> String {
            let prefix = alias.map { $0 + "." } ?? ""
            let head = [
                prefix + quote(keyColumn), entityColumn.map { prefix + quote($0) } ?? String(rootNumber),
                versionColumn.map { prefix + quote($0) } ?? "0",
            ]
            return (head + columns.map { prefix + quote($0.name) }).joined(separator: ", ")
        }

        /// Key and entity number of each row (`fetchObjectIDs`, key lookups).
        func identityList(alias: String) -> String {
            "\(alias).\(quote(keyColumn)), " + (entityColumn.map { "\(alias).\(quote($0))" } ?? String(rootNumber))
        }

        /// `alias.key`.
        func key(_ alias: String) -> String { "\(alias).\(quote(keyColumn))" }
    }

    /// Where a to-one relationship lives: its foreign-key column and, when the destination has
    /// sub-entities, the column holding the destination's entity number.
    struct ForeignKey {
        var column: String
        var entityColumn: String?
    }

    final class JoinTable {
        let name: String
        /// The relationship whose destinations are in `destinationColumn` (its inverse, if any, reads the table
        /// the other way).
        let owner: RelationshipDescription
        let sourceColumn: String
        let destinationColumn: String
        var sourceEntityColumn: String?
        var destinationEntityColumn: String?
        var sourceOrderColumn: String?
        var destinationOrderColumn: String?
        init(name: String, owner: RelationshipDescription, sourceColumn: String, destinationColumn: String) {
            self.name = name
            self.owner = owner
            self.sourceColumn = sourceColumn
            self.destinationColumn = destinationColumn
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
                    near: sourceColumn, far: destinationColumn, nearEntity: sourceEntityColumn,
                    farEntity: destinationEntityColumn, order: sourceOrderColumn)
                : Side(
                    near: destinationColumn, far: sourceColumn, nearEntity: destinationEntityColumn,
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
        /// Whether other entities share the table (fetches must filter on the entity column).
        var sharesTable = false
        init(entity: EntityDescription, number: Int64, table: Table) {
            self.entity = entity
            self.number = number
            self.table = table
        }

        /// `alias.<entity column> IN (…)` when other entities share the table, else `nil`.
        func kindFilter(_ alias: String) -> String? {
            guard sharesTable, let column = table.entityColumn else { return nil }
            return "\(alias).\(quote(column)) IN (\(kindNumbers.map(String.init).joined(separator: ", ")))"
        }
    }

    let model: ManagedObjectModel
    let layout: SQLiteLayout
    private(set) var tables: [Table] = []
    private(set) var joinTables: [JoinTable] = []
    private(set) var indexes: [Index] = []
    private var maps: [EntityMap] = []
    private var entitiesByNumber: [Int64: EntityDescription] = [:]

    init(model: ManagedObjectModel, layout: SQLiteLayout) {
        self.model = model
        self.layout = layout
        var tablesByRoot: [ObjectIdentifier: Table] = [:]
        for entity in model.entities where entity.superentity == nil {
            let table = makeTable(for: entity)
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
            addColumns(of: map)
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
                let owner = relationship.joinTableOwner
                let table = joinTablesByOwner[ObjectIdentifier(owner)] ?? makeJoinTable(owner)
                joinTablesByOwner[ObjectIdentifier(owner)] = table
                return .joinTable(table, isSource: owner === relationship)
            }
        }
        makeIndexes()
    }

    /// The table of a root entity, with its key column.
    private func makeTable(for root: EntityDescription) -> Table {
        let number = Int64(root.index + 1)
        guard !layout.isGraph else {
            return Table(
                name: root.name, root: root, rootNumber: number, keyColumn: "_pk", keyAttribute: nil,
                entityColumn: "_ent", versionColumn: "_opt")
        }
        let name = root.storageTableName
        let entityColumn = root.subentities.isEmpty ? nil : "_ent"
        let versionColumn = layoutOptions.versionColumn ? "_opt" : nil
        if let attribute = Self.keyAttribute(of: root, textKeys: layoutOptions.textKeys) {
            return Table(
                name: name, root: root, rootNumber: number, keyColumn: attribute.storageColumnName,
                keyAttribute: attribute, entityColumn: entityColumn, versionColumn: versionColumn)
        }
        return Table(
            name: name, root: root, rootNumber: number, keyColumn: root.storageKeyColumnName, keyAttribute: nil,
            entityColumn: entityColumn, versionColumn: versionColumn)
    }

    /// The attribute a plain table keeps a root entity's rows under: the first uniqueness constraint
    /// the entity declares, when it is one required, stored integer attribute (or text attribute,
    /// with `textKeys`).
    static func keyAttribute(of root: EntityDescription, textKeys: Bool) -> AttributeDescription? {
        guard let first = root.uniquenessConstraints.first, first.count == 1,
            let attribute = root.attribute(named: first[0]), !attribute.isOptional, !attribute.isTransient,
            [.integer16, .integer32, .integer64].contains(attribute.type) || (textKeys && attribute.type == .string)
        else { return nil }
        return attribute
    }

    private var layoutOptions: SQLiteLayout.Options {
        if case .plain(let options) = layout { return options }
        return SQLiteLayout.Options()
    }

    private func addColumns(of map: EntityMap) {
        let entity = map.entity
        let parent = entity.superentity.map { maps[$0.index] }
        // Only what every row of the table has may be NOT NULL: attributes declared by the root.
        let declaresForAll = entity.superentity == nil
        map.attributeColumns = entity.attributes.map { attribute in
            if attribute.isTransient { return nil }
            if let parent, attribute.index < parent.attributeColumns.count, attribute.entity !== entity {
                return parent.attributeColumns[attribute.index]
            }
            if attribute === map.table.keyAttribute { return map.table.keyColumn }
            var declaration = columnType(attribute.type)
            if !layout.isGraph, declaresForAll, !attribute.isOptional { declaration += " NOT NULL" }
            return map.table.add(
                layout.isGraph ? attribute.name : attribute.storageColumnName, declaration, owner: entity)
        }
        map.foreignKeys = entity.relationships.map { relationship in
            guard !relationship.isToMany else { return nil }
            if let parent, relationship.index < parent.foreignKeys.count, relationship.entity !== entity {
                return parent.foreignKeys[relationship.index]
            }
            let destination = relationship.destinationEntity!
            let target = maps[destination.rootEntity.index].table
            let name = layout.isGraph ? relationship.name : relationship.storageColumnName
            let column = map.table.add(
                name, "\(target.keyType) REFERENCES \(quote(target.name))(\(quote(target.keyColumn)))", owner: entity)
            let entityColumn =
                destination.subentities.isEmpty ? nil : map.table.add(column + "_ent", "INTEGER", owner: entity)
            return ForeignKey(column: column, entityColumn: entityColumn)
        }
    }

    private func makeJoinTable(_ owner: RelationshipDescription) -> JoinTable {
        let sourceTable = maps[owner.entity.rootEntity.index].table
        let destinationTable = maps[owner.destinationEntity.rootEntity.index].table
        var source = "source", destination = "destination"
        let name: String
        if layout == .graph {
            name = "\(owner.entity.rootEntity.name)_\(owner.name)"
        } else {
            name = owner.joinTableName
            // Each side named after the key it holds: `customer_id`, or `<entity>_id` for an `id` key.
            (source, destination) = owner.joinColumnNames { entity in
                let table = entity === owner.entity ? sourceTable : destinationTable
                return table.keyColumn.lowercased() == "id" ? snakeCaseName(table.root.name) + "_id" : table.keyColumn
            }
        }
        let table = JoinTable(name: name, owner: owner, sourceColumn: source, destinationColumn: destination)
        if !owner.entity.rootEntity.subentities.isEmpty { table.sourceEntityColumn = "source_ent" }
        if !owner.destinationEntity.subentities.isEmpty { table.destinationEntityColumn = "destination_ent" }
        if owner.isOrdered { table.sourceOrderColumn = "source_order" }
        if owner.inverse?.isOrdered == true { table.destinationOrderColumn = "destination_order" }
        joinTables.append(table)
        return table
    }

    private func depth(_ entity: EntityDescription) -> Int {
        var depth = 0, current = entity
        while let parent = current.superentity {
            depth += 1
            current = parent
        }
        return depth
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
                // The key a plain table keeps its rows under is unique already.
                if cols == [map.table.keyColumn] { continue }
                addIndex(
                    Index(
                        name: "\(map.table.name)_unique_\(cols.joined(separator: "_"))", table: map.table.name,
                        columns: cols, isUnique: true))
            }
            for index in entity.indexes {
                let cols = columns(index.propertyNames)
                // Plain: an index the model named after its entity and properties is named after the
                // table's columns instead.
                let generated = index.name == "\(entity.name)_" + index.propertyNames.joined(separator: "_")
                let name = layout.isGraph || !generated ? index.name : cols.joined(separator: "_")
                addIndex(
                    Index(name: "\(map.table.name)_\(name)", table: map.table.name, columns: cols, isUnique: false))
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
                    name: "\(table.name)_link", table: table.name,
                    columns: [table.sourceColumn, table.destinationColumn],
                    isUnique: true))
            addIndex(
                Index(
                    name: "\(table.name)_\(table.destinationColumn)", table: table.name,
                    columns: [table.destinationColumn], isUnique: false))
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

    /// Every table with its columns and their declarations, as the store makes them.
    var tableColumns: [(table: String, columns: [Column])] {
        tables.map { table in
            var columns = [
                Column(
                    name: table.keyColumn,
                    declaration: "\(table.keyType) PRIMARY KEY" + (table.keyType == "TEXT" ? " NOT NULL" : ""))
            ]
            if let column = table.entityColumn { columns.append(Column(name: column, declaration: "INTEGER NOT NULL")) }
            if let column = table.versionColumn {
                columns.append(Column(name: column, declaration: "INTEGER NOT NULL"))
            }
            return (table.name, columns + table.columns)
        }
            + joinTables.map { join in
                let source = maps[join.owner.entity.rootEntity.index].table
                let destination = maps[join.owner.destinationEntity.rootEntity.index].table
                var columns = [
                    Column(
                        name: join.sourceColumn,
                        declaration:
                            "\(source.keyType) NOT NULL REFERENCES \(quote(source.name))(\(quote(source.keyColumn)))"
                    ),
                    Column(
                        name: join.destinationColumn,
                        declaration: "\(destination.keyType) NOT NULL REFERENCES "
                            + "\(quote(destination.name))(\(quote(destination.keyColumn)))"),
                ]
                for name in [
                    join.sourceEntityColumn, join.destinationEntityColumn, join.sourceOrderColumn,
                    join.destinationOrderColumn,
                ].compactMap({ $0 }) {
                    columns.append(Column(name: name, declaration: "INTEGER"))
                }
                return (join.name, columns)
            }
    }

    /// The DDL creating every table (not the indexes).
    var tableStatements: [String] {
        tableColumns.map { table, columns in
            let list = columns.map { "\(quote($0.name)) \($0.declaration)" }.joined(separator: ", ")
            return "CREATE TABLE IF NOT EXISTS \(quote(table)) (\(list))"
        }
    }

    /// The declared column type of an attribute type. Graph layout: the affinity that keeps values
    /// exact (decimals as canonical text compared through `SLUICE_DECIMAL`, dates as REAL seconds
    /// since 2001). Plain layout: what other tools read (decimals `NUMERIC`, dates `DATETIME` text or
    /// unix seconds, booleans `BOOLEAN` 0/1).
    func columnType(_ type: AttributeType) -> String {
        switch (layout, type) {
        case (_, .integer16), (_, .integer32), (_, .integer64): return "INTEGER"
        case (.graph, .boolean): return "INTEGER"
        case (.plain(let options), _): return SQLiteLayout.plainColumnType(type, dates: options.dates)
        case (.graph, .double), (.graph, .float), (.graph, .date): return "REAL"
        case (.graph, .decimal), (.graph, .string), (.graph, .uuid), (.graph, .uri): return "TEXT"
        case (.graph, .binary): return "BLOB"
        }
    }
}

/// An SQL identifier in double quotes (entity names such as `Order` are SQL keywords).
func quote(_ identifier: String) -> String {
    "\"" + identifier.replacingOccurrences(of: "\"", with: "\"\"") + "\""
}
