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
///   KEY`, so foreign keys hold the source's key values); others that something refers to get an
///   integer key column of their own (`id`, else `<table>_id`), the rest are kept under SQLite's
///   `rowid` with no column added (as is a key attribute whose column is `rowid`). Columns follow
///   the root entity's `columnOrder`. `_ent` (entity number) only where sub-entities share a table,
///   `_opt` (row version) only with the `version_column` option.
/// - **graph**: every table has `_pk INTEGER PRIMARY KEY`, `_ent` and `_opt`; columns are the
///   property names, tables the entity names.
///
/// When two properties want one column name (sibling sub-entities declaring the same attribute),
/// the later one is prefixed with its entity (`Entity_name`). Entity numbers are the entity's
/// position in the model plus one; the model's version hash pins them.
final class SQLiteSchema {
    let model: ManagedObjectModel
    let layout: SQLiteLayout
    private(set) var tables: [Table] = []
    private(set) var joinTables: [JoinTable] = []
    private(set) var indexes: [Index] = []
    private var maps: [EntityMap] = []
    private var entitiesByNumber: [Int64: EntityDescription] = [:]

    /// `configuration`: the model configuration the store holds (`nil`: every entity). Every entity
    /// gets a map (routing never sends others here), but only the configuration's tables, join
    /// tables and indexes are made.
    init(model: ManagedObjectModel, layout: SQLiteLayout, configuration: String? = nil) {
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
                guard relationship.isToMany, !relationship.isTransient else { return nil }
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
        if let configuration, let members = model.configurations[configuration] {
            keepOnly(Set(members))
        }
    }

    /// Whether the store makes the table of `entity` (every entity's, unless it holds a configuration).
    func makesTable(of entity: EntityDescription) -> Bool {
        let name = map(for: entity).table.name
        return tables.contains { $0.name == name }
    }

    /// Drops the tables of root entities outside a configuration (an entity named there brings
    /// its root's table), the join tables of relationships they take part in, and their indexes.
    private func keepOnly(_ members: Set<String>) {
        let roots = Set(model.entities.filter { members.contains($0.name) }.map { ObjectIdentifier($0.rootEntity) })
        tables.removeAll { !roots.contains(ObjectIdentifier($0.root)) }
        joinTables.removeAll { join in
            !roots.contains(ObjectIdentifier(join.owner.entity.rootEntity))
                || !roots.contains(ObjectIdentifier(join.owner.destinationEntity.rootEntity))
        }
        let kept = Set(tables.map(\.name) + joinTables.map(\.name))
        indexes.removeAll { !kept.contains($0.table) }
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
            name: name, root: root, rootNumber: number, keyColumn: model.storageKeyColumnName(of: root),
            keyAttribute: nil, entityColumn: entityColumn, versionColumn: versionColumn)
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
            guard !relationship.isToMany, !relationship.isTransient else { return nil }
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
}
