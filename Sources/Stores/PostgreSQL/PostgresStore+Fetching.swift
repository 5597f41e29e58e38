import Drivers
import Foundation
import ObjectGraph

extension PostgresStore {
    // MARK: Reading rows

    /// The object ID of row `key` of `entity` (derived from a template per entity).
    func objectID(of entity: EntityDescription, primaryKey: ManagedObjectID.Reference) -> ManagedObjectID {
        if idTemplates.isEmpty { idTemplates = Array(repeating: nil, count: model.entities.count) }
        if let template = idTemplates[entity.index], template.storeIdentifier == metadata.identifier {
            return template.withReference(primaryKey)
        }
        let id = ManagedObjectID(entityName: entity.name, storeIdentifier: metadata.identifier, reference: primaryKey)
        idTemplates[entity.index] = id
        return id
    }

    /// The row key of an object of this store (`nil` for temporary IDs and other stores' objects).
    func primaryKey(of objectID: ManagedObjectID) -> ManagedObjectID.Reference? {
        guard objectID.storeIdentifier == metadata.identifier, !objectID.isTemporaryID else { return nil }
        return objectID.reference
    }

    func isTextKeyed(_ table: SQLiteSchema.Table) -> Bool { table.keyAttribute?.type == .string }

    private func entity(
        number: Int64?, in table: SQLiteSchema.Table, row key: ManagedObjectID.Reference
    ) throws
        -> EntityDescription
    {
        guard let number, let entity = schema.entity(number: number) else {
            throw StoreError(
                .corrupt, "Row \(key.keyText) of table \(table.name) names an entity the model does not have",
                url: url)
        }
        return entity
    }

    /// Row `index` of a result selected with `table.selectList`.
    func readRow(_ result: PostgresResult, _ index: Int, table: SQLiteSchema.Table) throws -> StoreRow {
        guard let key = PostgresCoding.reference(result.bytes(index, 0), isText: isTextKeyed(table)) else {
            throw StoreError(.corrupt, "A row of table \(table.name) has no valid key", url: url)
        }
        let entity = try entity(number: result.integer(index, 1), in: table, row: key)
        let id = objectID(of: entity, primaryKey: key)
        let reader = readers[entity.index] ?? SQLiteStore.RowReader(schema.map(for: entity))
        readers[entity.index] = reader
        var values = [AttributeValue](repeating: .null, count: entity.attributes.count)
        for (attribute, position, type) in reader.attributePositions where !result.isNull(index, Int(position)) {
            guard let value = PostgresCoding.decode(result.bytes(index, Int(position)), as: type) else {
                throw StoreError(
                    .corrupt,
                    "Column \(result.columnName(Int(position))) of table \(table.name), row \(key.keyText), holds a "
                        + "value that is not a valid \(type) value",
                    url: url, objectID: id)
            }
            values[attribute] = value
        }
        var destinations = [ManagedObjectID?](repeating: nil, count: reader.relationshipCount)
        for (relationship, position, entityPosition, destination) in reader.foreignKeys
        where !result.isNull(index, Int(position)) {
            let target = schema.map(for: destination).table
            guard
                let reference = PostgresCoding.reference(
                    result.bytes(index, Int(position)), isText: isTextKeyed(target))
            else { continue }
            var entity = destination
            if let entityPosition, let number = result.integer(index, Int(entityPosition)) {
                entity = try self.entity(number: number, in: table, row: key)
            }
            destinations[relationship] = objectID(of: entity, primaryKey: reference)
        }
        var row = StoreRow(
            objectID: id, entity: entity, version: 0, attributeValues: values, toOneDestinations: destinations)
        row.version = row.contentVersion
        return row
    }

    func read(_ sql: String, _ parameters: [PostgresValue], table: SQLiteSchema.Table) throws -> [StoreRow] {
        let result = try connection.run(sql, parameters)
        return try (0..<result.rowCount).map { try readRow(result, $0, table: table) }
    }

    // MARK: Fetching

    public func fetchRows(_ request: StoreFetchRequest) throws -> [StoreRow] {
        try buildUniques()
        let table = schema.map(for: request.entity).table
        let builder = PostgresQueryBuilder(store: self)
        let sql = try builder.select(request, columns: table.selectList(alias: "t0"))
        let rows = try reading("Reading the rows of \(request.entity.name)") {
            try read(sql, builder.parameters, table: table)
        }
        guard !builder.isExact else { return rows }
        return try request.apply(to: rows) { StoredRowSubject(store: self, row: $0) }
    }

    /// Reads through a cursor, `batchSize` rows at a time, when the request is exact in SQL.
    public func enumerateRows(
        _ request: StoreFetchRequest, batchSize: Int, _ body: ([StoreRow]) throws -> Void
    ) throws {
        try buildUniques()
        let table = schema.map(for: request.entity).table
        let builder = PostgresQueryBuilder(store: self)
        let sql = try builder.select(request, columns: table.selectList(alias: "t0"))
        guard builder.isExact, builder.parameters.isEmpty else {
            return try Self.handOut(try fetchRows(request), batchSize: batchSize, body)
        }
        cursors += 1
        let cursor = "sluice_rows_\(cursors)"
        try reading("Reading the rows of \(request.entity.name)") {
            try connection.execute("DECLARE \(cursor) NO SCROLL CURSOR WITH HOLD FOR \(sql)")
        }
        defer { try? connection.execute("CLOSE \(cursor)") }
        while true {
            let rows = try reading("Reading the rows of \(request.entity.name)") {
                try read("FETCH \(max(1, batchSize)) FROM \(cursor)", [], table: table)
            }
            if rows.isEmpty { break }
            try body(rows)
        }
    }

    public func fetchObjectIDs(_ request: StoreFetchRequest) throws -> [ManagedObjectID] {
        try buildUniques()
        let table = schema.map(for: request.entity).table
        let builder = PostgresQueryBuilder(store: self)
        let sql = try builder.select(request, columns: table.identityList(alias: "t0"))
        guard builder.isExact else { return try fetchRows(request).map(\.objectID) }
        return try reading("Reading the objects of \(request.entity.name)") {
            let result = try connection.run(sql, builder.parameters)
            return try (0..<result.rowCount).map { row in
                guard let key = PostgresCoding.reference(result.bytes(row, 0), isText: isTextKeyed(table)) else {
                    throw StoreError(.corrupt, "A row of table \(table.name) has no valid key", url: url)
                }
                return objectID(of: try entity(number: result.integer(row, 1), in: table, row: key), primaryKey: key)
            }
        }
    }

    public func countRows(_ request: StoreFetchRequest) throws -> Int {
        try buildUniques()
        let builder = PostgresQueryBuilder(store: self)
        let sql = try builder.select(request.unpaged, columns: "count(*)", sorted: false)
        guard builder.isExact else { return try fetchRows(request.unpaged).count }
        return try reading("Counting the rows of \(request.entity.name)") {
            Int(try connection.run(sql, builder.parameters).integer(0, 0) ?? 0)
        }
    }

    public func row(for objectID: ManagedObjectID) throws -> StoreRow? { try rows(for: [objectID]).first }

    public func rows(for objectIDs: [ManagedObjectID]) throws -> [StoreRow] {
        try reading("Could not read rows") { try readRows(of: objectIDs, locking: false) }
    }

    /// The current rows of objects of this store, by key, 500 at a time (`locking`: `FOR UPDATE`,
    /// until the transaction ends). An ID naming another entity than its row's has no row.
    func readRows(of objectIDs: [ManagedObjectID], locking: Bool) throws -> [StoreRow] {
        try buildPending()
        var byTable: [ObjectIdentifier: (table: SQLiteSchema.Table, keys: [ManagedObjectID.Reference])] = [:]
        for id in objectIDs {
            guard let key = primaryKey(of: id), let entity = model.entity(named: id.entityName) else { continue }
            let table = schema.map(for: entity).table
            byTable[ObjectIdentifier(table), default: (table, [])].keys.append(key)
        }
        let wanted = Set(objectIDs)
        var rows: [StoreRow] = []
        // One statement per table, the keys as one array.
        for (table, keys) in byTable.values {
            let type: PostgresType = isTextKeyed(table) ? .text : .bigint
            let sql =
                "SELECT \(table.plainSelectList) FROM \(qualified(table.name)) WHERE \(quote(table.keyColumn)) "
                + "= ANY($1::\(type.arrayType!.sqlName))" + (locking ? " FOR UPDATE" : "")
            rows += try read(sql, [PostgresValue.array(of: keys.map(PostgresCoding.key), type: type)], table: table)
                .filter { wanted.contains($0.objectID) }
        }
        return rows
    }

    public func destinations(
        of relationship: RelationshipDescription, for objectID: ManagedObjectID
    ) throws -> [ManagedObjectID] {
        // A transient relationship is never stored.
        guard !relationship.isTransient, let key = primaryKey(of: objectID) else { return [] }
        try buildPending()
        let sql: String
        let keyTable = schema.map(for: relationship.destinationEntity).table
        switch schema.map(for: relationship.entity).toMany[relationship.index] {
        case .foreignKey(let table, let foreignKey, let orderColumn)?:
            sql =
                "SELECT \(table.identityList(alias: "t0")) FROM \(qualified(table.name)) t0 WHERE "
                + "t0.\(quote(foreignKey.column)) = $1 ORDER BY \(orderColumn.map { "t0." + quote($0) + ", " } ?? "")"
                + table.key("t0")
        case .joinTable(let join, let isSource)?:
            let side = join.side(isSource: isSource)
            sql =
                "SELECT \(quote(side.far)), \(side.farEntity.map(quote) ?? "NULL::integer") FROM "
                + "\(qualified(join.name)) WHERE \(quote(side.near)) = $1 ORDER BY "
                + "\(side.order.map { quote($0) + ", " } ?? "")\(quote(side.far))"
        case nil:
            preconditionFailure("\(relationship) is not a to-many relationship")
        }
        let destination = schema.map(for: relationship.destinationEntity)
        return try reading("Could not load \(relationship) of \(objectID)") {
            let result = try connection.run(sql, [PostgresCoding.key(key)])
            return try (0..<result.rowCount).compactMap { row in
                guard let reference = PostgresCoding.reference(result.bytes(row, 0), isText: isTextKeyed(keyTable))
                else { return nil }
                let entity = try self.entity(
                    number: result.integer(row, 1) ?? destination.number, in: keyTable, row: reference)
                return self.objectID(of: entity, primaryKey: reference)
            }
        }
    }

    /// Runs `body`, turning a server error into a store error saying what was being done.
    func reading<T>(_ what: String, _ body: () throws -> T) throws -> T {
        do { return try body() } catch let error as PostgresError { throw storeError(error, what) }
    }
}
