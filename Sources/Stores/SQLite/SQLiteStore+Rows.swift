import Drivers
import Foundation
import ObjectGraph

extension SQLiteStore {
    // MARK: Reading rows

    /// Turns result rows of `SELECT <table.selectList>` into store rows.
    final class RowReader {
        let entity: EntityDescription
        let attributePositions: [(index: Int, position: Int32, type: AttributeType)]
        let foreignKeys: [(index: Int, position: Int32, entityPosition: Int32?, destination: EntityDescription)]
        let relationshipCount: Int

        init(_ map: SQLiteSchema.EntityMap) {
            entity = map.entity
            attributePositions = map.entity.attributes.compactMap { attribute in
                map.attributeColumns[attribute.index].map {
                    (attribute.index, Int32(map.table.position(of: $0)), attribute.type)
                }
            }
            foreignKeys = map.entity.relationships.compactMap { relationship in
                map.foreignKeys[relationship.index].map { key in
                    (
                        relationship.index, Int32(map.table.position(of: key.column)),
                        key.entityColumn.map { Int32(map.table.position(of: $0)) }, relationship.destinationEntity
                    )
                }
            }
            relationshipCount = map.entity.relationships.count
        }
    }

    func reader(for entity: EntityDescription) -> RowReader {
        if let reader = readers[ObjectIdentifier(entity)] { return reader }
        let reader = RowReader(schema.map(for: entity))
        readers[ObjectIdentifier(entity)] = reader
        return reader
    }

    /// The object ID of a stored row given its key and entity number.
    func objectID(primaryKey: ManagedObjectID.Reference, entityNumber: Int64, table: String) throws -> ManagedObjectID {
        objectID(of: try entity(number: entityNumber, primaryKey: primaryKey, table: table), primaryKey: primaryKey)
    }

    func entity(number: Int64, primaryKey: ManagedObjectID.Reference, table: String) throws -> EntityDescription {
        guard let entity = schema.entity(number: number) else {
            throw StoreError(
                .corrupt,
                "Row \(primaryKey.keyText) of table \(table) has entity number \(number), which the model does not "
                    + "have",
                url: url)
        }
        return entity
    }

    /// The ID of row `primaryKey` of `entity` (derived from a template per entity: no allocation).
    func objectID(of entity: EntityDescription, primaryKey: ManagedObjectID.Reference) -> ManagedObjectID {
        if idTemplates.isEmpty { idTemplates = Array(repeating: nil, count: model.entities.count) }
        if let template = idTemplates[entity.index], template.storeIdentifier == metadata.identifier {
            return template.withReference(primaryKey)
        }
        let id = ManagedObjectID(entityName: entity.name, storeIdentifier: metadata.identifier, reference: primaryKey)
        idTemplates[entity.index] = id
        return id
    }

    /// Reads the current row of `statement` (selected with a table's `selectList`, from position 0).
    func readRow(_ statement: SQLiteStatement, table: SQLiteSchema.Table) throws -> StoreRow {
        let primaryKey = statement.key(0)
        let entity = try entity(number: statement.int64(1), primaryKey: primaryKey, table: table.name)
        let id = objectID(of: entity, primaryKey: primaryKey)
        let reader = reader(for: entity)
        var values = [AttributeValue](repeating: .null, count: entity.attributes.count)
        for (index, position, type) in reader.attributePositions {
            let stored = statement.value(position)
            guard let value = coding.attributeValue(stored, as: type) else {
                throw StoreError(
                    .corrupt,
                    "Column \(statement.columnName(position)) of table \(table.name), row \(primaryKey.keyText), holds "
                        + "\(stored), which is not a valid \(type) value",
                    url: url, objectID: id)
            }
            values[index] = value
        }
        var destinations = [ManagedObjectID?](repeating: nil, count: reader.relationshipCount)
        for (index, position, entityPosition, destination) in reader.foreignKeys where !statement.isNull(position) {
            let key = statement.key(position)
            var entity = destination
            if let entityPosition, !statement.isNull(entityPosition) {
                guard let actual = schema.entity(number: statement.int64(entityPosition)) else {
                    throw StoreError(
                        .corrupt,
                        "Column \(statement.columnName(entityPosition)) of table \(table.name), row "
                            + "\(primaryKey.keyText), names an unknown entity",
                        url: url, objectID: id)
                }
                entity = actual
            }
            destinations[index] = objectID(of: entity, primaryKey: key)
        }
        var row = StoreRow(
            objectID: id, entity: entity, version: statement.int64(2), attributeValues: values,
            toOneDestinations: destinations)
        if table.versionColumn == nil { row.version = row.contentVersion }
        return row
    }

    /// The row key of an object of this store (`nil` for temporary IDs and other stores' objects).
    func primaryKey(of objectID: ManagedObjectID) -> ManagedObjectID.Reference? {
        guard objectID.storeIdentifier == metadata.identifier, !objectID.isTemporaryID else { return nil }
        return objectID.reference
    }

    public func row(for objectID: ManagedObjectID) throws -> StoreRow? {
        try rows(for: [objectID]).first
    }

    public func rows(for objectIDs: [ManagedObjectID]) throws -> [StoreRow] {
        var byTable: [ObjectIdentifier: (table: SQLiteSchema.Table, keys: [ManagedObjectID.Reference])] = [:]
        for id in objectIDs {
            guard let key = primaryKey(of: id), let entity = model.entity(named: id.entityName) else { continue }
            let table = schema.map(for: entity).table
            byTable[ObjectIdentifier(table), default: (table, [])].keys.append(key)
        }
        let wanted = Set(objectIDs)
        var rows: [StoreRow] = []
        do {
            for (table, keys) in byTable.values {
                var start = 0
                while start < keys.count {
                    let chunk = keys[start..<min(start + 500, keys.count)]
                    let placeholders =
                        chunk.count == 1
                        ? "= ?" : "IN (\(Array(repeating: "?", count: chunk.count).joined(separator: ",")))"
                    let statement = try connection.cachedStatement(
                        "SELECT \(table.plainSelectList) FROM \(quote(table.name)) WHERE \(quote(table.keyColumn)) "
                            + placeholders)
                    for (offset, key) in chunk.enumerated() { statement.bind(key: key, at: Int32(offset + 1)) }
                    while try statement.step() {
                        let row = try readRow(statement, table: table)
                        // An ID naming another entity than the row's is not this row.
                        if wanted.contains(row.objectID) { rows.append(row) }
                    }
                    start += chunk.count
                }
            }
        } catch let error as SQLiteError {
            throw storeError(error, "Could not read rows")
        }
        return rows
    }
}
