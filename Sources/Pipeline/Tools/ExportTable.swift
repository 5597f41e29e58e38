import Foundation
import ObjectGraph
import Stores

/// One table of an export (`StoreExport`): the rows of an entity (sub-entities included), or the
/// links of a many-to-many (or inverse-less to-many) relationship — its columns, and how each row
/// becomes values.
struct ExportTable {
    /// How an object is named where something refers to it: by its key attribute (the entity's
    /// first uniqueness constraint, when that is one attribute), else by its store's reference.
    enum Key {
        case reference
        case attribute(AttributeDescription)

        init(of entity: EntityDescription) {
            let root = entity.rootEntity
            if let first = root.uniquenessConstraints.first, first.count == 1,
                let attribute = root.attribute(named: first[0]), !attribute.isTransient
            {
                self = .attribute(attribute)
            } else {
                self = .reference
            }
        }

        var attribute: AttributeDescription? {
            if case .attribute(let attribute) = self { return attribute }
            return nil
        }

        /// The plain SQL type of the key's values.
        var sqlType: String {
            if case .attribute(let attribute) = self { return ExportTable.sqlType(attribute) }
            return "INTEGER"
        }
    }

    enum Value {
        /// The row's own reference.
        case reference
        /// The row's entity name (tables that sub-entities share).
        case entityName
        /// An attribute, by name (sub-entity rows have attributes their root does not).
        case attribute(String)
        /// A to-one relationship, by name, as its destination's key.
        case destination(String, Key)
        /// Link tables: the owner's key, then the destination's.
        case linkSource(Key)
        case linkDestination(Key)
    }

    struct Column {
        var name: String
        var value: Value
        var sqlType: String
        /// `PRIMARY KEY` or `REFERENCES …` for a SQL dump.
        var constraint: String = ""
        /// The attribute whose values the column holds (a reference's: its destination's key), for
        /// how values are written (calendar dates, decimal scales).
        var attribute: AttributeDescription?
    }

    let name: String
    let entity: EntityDescription
    /// For a link table: the relationship whose links it holds.
    let link: RelationshipDescription?
    var columns: [Column] = []

    /// The tables exporting `names` (every root entity and link table when empty).
    /// - Throws: `UsageError` for a name the model does not have.
    static func plan(
        model: ManagedObjectModel, entities names: [String]
    ) throws -> [ExportTable] {
        var entities: [EntityDescription] = []
        for name in names {
            guard let entity = model.entity(named: name) else {
                throw UsageError(
                    "the store's model has no entity \(name.debugDescription) (it has: "
                        + "\(model.entities.map(\.name).sorted().joined(separator: ", ")))")
            }
            entities.append(entity)
        }
        let all = names.isEmpty
        if all { entities = model.entities.filter { $0.superentity == nil } }
        var tables = entities.map { ExportTable(entity: $0, model: model) }
        for entity in model.entities {
            for relationship in entity.relationships
            where relationship.entity === entity && relationship.usesJoinTable
                && relationship.joinTableOwner === relationship
                && (all || entities.contains { relationship.entity.isKind(of: $0) })
            {
                tables.append(ExportTable(link: relationship))
            }
        }
        return tables
    }

    /// The table of an entity's objects (and its sub-entities').
    init(entity: EntityDescription, model: ManagedObjectModel) {
        self.entity = entity
        link = nil
        name = entity.superentity == nil ? entity.storageTableName : entity.tableName ?? entity.name
        let kinds = model.entities.filter { $0.isKind(of: entity) }
        var taken = Set<String>()
        var attributes: [Column] = [], references: [Column] = []
        for kind in kinds {
            // A key kept in SQLite's rowid (a keyless table's row places) is no column of the source.
            for attribute in kind.attributes
            where !attribute.isTransient && !attribute.isStoredInRowID && !taken.contains(attribute.name) {
                taken.insert(attribute.name)
                var column = Column(
                    name: attribute.storageColumnName, value: .attribute(attribute.name),
                    sqlType: Self.sqlType(attribute), attribute: attribute)
                if case .attribute(let key) = Key(of: entity), key.name == attribute.name {
                    column.constraint = " PRIMARY KEY"
                }
                // Required where every row of the table has the attribute (no sub-entity without it).
                if !attribute.isOptional, kinds.count == 1 { column.constraint += " NOT NULL" }
                attributes.append(column)
            }
            for relationship in kind.relationships
            where !relationship.isToMany && !relationship.isTransient && !taken.contains(relationship.name) {
                taken.insert(relationship.name)
                // The plain layout's column: the model's `column`, else `<relationship>_id`.
                let key = Key(of: relationship.destinationEntity)
                let columnName = relationship.storageColumnName
                let destination = ExportTable.tableName(of: relationship.destinationEntity)
                let referenced: String
                switch key {
                case .attribute(let attribute): referenced = attribute.storageColumnName
                case .reference: referenced = relationship.destinationEntity.storageKeyColumnName
                }
                references.append(
                    Column(
                        name: columnName, value: .destination(relationship.name, key), sqlType: key.sqlType,
                        constraint: (!relationship.isOptional && kinds.count == 1 ? " NOT NULL" : "")
                            + " REFERENCES \(Self.quote(destination))(\(Self.quote(referenced)))",
                        attribute: key.attribute))
            }
        }
        if case .reference = Key(of: entity), model.storageKeyColumnName(of: entity) != "rowid" {
            columns.append(
                Column(
                    name: entity.storageKeyColumnName, value: .reference, sqlType: "INTEGER",
                    constraint: " PRIMARY KEY"))
        }
        if kinds.count > 1 { columns.append(Column(name: "entity", value: .entityName, sqlType: "TEXT")) }
        columns += entity.inColumnOrder(attributes + references) { column in
            switch column.value {
            case .attribute(let name), .destination(let name, _): return name
            default: return nil
            }
        }
        Self.makeUnique(&columns)
    }

    /// The table of a relationship's links: the owner's key and the destination's.
    init(link relationship: RelationshipDescription) {
        entity = relationship.entity
        link = relationship
        name = relationship.joinTableName
        let sourceKey = Key(of: relationship.entity), destinationKey = Key(of: relationship.destinationEntity)
        // As the plain layout names them: after the key each side holds (`sku`), `<entity>_id` for an `id` key.
        let (source, destination) = relationship.joinColumnNames { entity in
            let key = Key(of: entity).attribute?.storageColumnName ?? entity.storageKeyColumnName
            return key.lowercased() == "id" ? snakeCaseName(entity.rootEntity.name) + "_id" : key
        }
        columns = [
            Column(
                name: source, value: .linkSource(sourceKey), sqlType: sourceKey.sqlType,
                constraint: " NOT NULL REFERENCES \(Self.quote(Self.tableName(of: relationship.entity)))",
                attribute: sourceKey.attribute),
            Column(
                name: destination, value: .linkDestination(destinationKey), sqlType: destinationKey.sqlType,
                constraint: " NOT NULL REFERENCES \(Self.quote(Self.tableName(of: relationship.destinationEntity)))",
                attribute: destinationKey.attribute),
        ]
    }

    /// The columns of each uniqueness constraint of the entity the table does not make its
    /// primary key (a to-one in one is its foreign-key column), for a SQL export's `UNIQUE (…)`.
    var uniqueColumns: [[String]] {
        guard link == nil else { return [] }
        let primary = columns.first { $0.constraint.hasPrefix(" PRIMARY KEY") }?.name
        return entity.uniquenessConstraints.compactMap { constraint in
            let names = constraint.map { property in
                columns.first { column in
                    switch column.value {
                    case .attribute(let name), .destination(let name, _): return name == property
                    default: return false
                    }
                }?.name
            }
            guard names.allSatisfy({ $0 != nil }), names != [primary] else { return nil }
            return names.compactMap { $0 }
        }
    }

    static func tableName(of entity: EntityDescription) -> String { entity.storageTableName }

    /// Names that clash take their value's property name after them (`name`, `name_2`).
    private static func makeUnique(_ columns: inout [Column]) {
        var seen = Set<String>()
        for index in columns.indices {
            var name = columns[index].name, n = 2
            while seen.contains(name.lowercased()) {
                name = "\(columns[index].name)_\(n)"
                n += 1
            }
            seen.insert(name.lowercased())
            columns[index].name = name
        }
    }

    /// The plain layout's declared type of an attribute; a decimal's scale as SQL declares one
    /// (`NUMERIC(38,2)`, still NUMERIC affinity), so a script of the export says it too.
    static func sqlType(_ attribute: AttributeDescription) -> String {
        if let scale = attribute.scale { return "NUMERIC(38,\(scale))" }
        return SQLiteLayout.plainColumnType(attribute.type)
    }

    static func quote(_ name: String) -> String { "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }

    // MARK: Rows

    /// Streams the table's rows into `writer`; returns how many.
    func write(to writer: ExportWriter, coordinator: PersistentStoreCoordinator) throws -> Int {
        try writer.begin(self)
        var count = 0
        var keys = KeyCache(coordinator: coordinator)
        try coordinator.enumerateRows(of: entity, includingSubentities: true, batchSize: 1_000) { rows in
            if let link {
                for row in rows {
                    let destinations = try coordinator.storedDestinations(of: link, for: row.objectID)
                    guard !destinations.isEmpty else { continue }
                    try keys.prepare(destinations, as: Key(of: link.destinationEntity))
                    let source = try keys.value(of: row, as: Key(of: link.entity))
                    for destination in destinations {
                        try writer.write([source, try keys.value(of: destination, as: Key(of: link.destinationEntity))])
                        count += 1
                    }
                }
                return
            }
            for column in columns {
                guard case .destination(let name, let key) = column.value else { continue }
                try keys.prepare(
                    rows.compactMap { row in
                        row.entity.relationshipIndex(named: name).flatMap { row.toOneDestinations[$0] }
                    }, as: key)
            }
            for row in rows {
                try writer.write(try columns.map { try value(of: $0.value, in: row, keys: &keys) })
                count += 1
            }
            keys.forgetBatch()
        }
        return count
    }

    private func value(of value: Value, in row: StoreRow, keys: inout KeyCache) throws -> AttributeValue {
        switch value {
        case .reference: return Self.referenceValue(row.objectID)
        case .entityName: return .string(row.entity.name)
        case .attribute(let name):
            return row.entity.attributeIndex(named: name).map { row.attributeValues[$0] } ?? .null
        case .destination(let name, let key):
            guard let index = row.entity.relationshipIndex(named: name), let destination = row.toOneDestinations[index]
            else { return .null }
            return try keys.value(of: destination, as: key)
        case .linkSource, .linkDestination: return .null
        }
    }

    /// A store reference as a value: integers as themselves, other references as text.
    static func referenceValue(_ objectID: ManagedObjectID) -> AttributeValue {
        switch objectID.reference {
        case .integer(let key): return .integer(key)
        case .string(let text): return Int64(text).map { .integer($0) } ?? .string(text)
        case .temporary(let number): return .string("temporary:\(number)")
        }
    }

    /// Key values of destinations, read a batch at a time.
    struct KeyCache {
        let coordinator: PersistentStoreCoordinator
        private var values: [ManagedObjectID: AttributeValue] = [:]
        /// By entity name: the attribute its store keeps objects under (`referenceAttribute(for:)`).
        private var referenceAttributes: [String: String?] = [:]

        init(coordinator: PersistentStoreCoordinator) { self.coordinator = coordinator }

        /// Reads the key values of `ids` not known yet (one read per batch).
        mutating func prepare(_ ids: [ManagedObjectID], as key: Key) throws {
            guard case .attribute(let attribute) = key else { return }
            let missing = ids.filter { values[$0] == nil && !isReference(attribute, of: $0) }
            guard !missing.isEmpty else { return }
            for row in try coordinator.storedRows(for: Array(Set(missing))) {
                values[row.objectID] = row.entity.attributeIndex(named: attribute.name).map { row.attributeValues[$0] }
            }
        }

        /// A destination's key value (its reference, when the store keeps it under its key).
        mutating func value(of id: ManagedObjectID, as key: Key) throws -> AttributeValue {
            guard case .attribute(let attribute) = key else { return ExportTable.referenceValue(id) }
            // The reference is the key's own value (an integer, or text such as `007`).
            if isReference(attribute, of: id) { return id.keyValue }
            if let known = values[id] { return known }
            try prepare([id], as: key)
            guard let known = values[id] else {
                throw StoreError(.objectNotFound, "\(id) is referred to but not stored", objectID: id)
            }
            return known
        }

        /// The row's own key value.
        mutating func value(of row: StoreRow, as key: Key) throws -> AttributeValue {
            guard case .attribute(let attribute) = key else { return ExportTable.referenceValue(row.objectID) }
            return row.entity.attributeIndex(named: attribute.name).map { row.attributeValues[$0] } ?? .null
        }

        mutating func forgetBatch() {
            if values.count > 100_000 { values.removeAll(keepingCapacity: true) }
        }

        /// Whether `id`'s store keeps its objects under `attribute` (its reference is then the key).
        private mutating func isReference(_ attribute: AttributeDescription, of id: ManagedObjectID) -> Bool {
            if let known = referenceAttributes[id.entityName] { return known == attribute.name }
            let entity = coordinator.managedObjectModel.entity(named: id.entityName)
            let name = entity.flatMap { coordinator.referenceAttribute(for: $0)?.name }
            referenceAttributes[id.entityName] = .some(name)
            return name == attribute.name
        }
    }
}
