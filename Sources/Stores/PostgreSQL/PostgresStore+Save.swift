import Drivers
import Foundation
import ObjectGraph

extension PostgresStore {
    /// An entity's columns as INSERT and COPY write them: key, entity number, then values.
    final class WritePlan {
        let table: SQLiteSchema.Table
        let number: Int64
        /// Attribute indexes and types, in column order after key and entity number.
        let attributes: [(index: Int, type: AttributeType)]
        /// To-one relationship indexes, each written as key then (when `true`) entity number.
        let foreignKeys: [(index: Int, hasEntityColumn: Bool)]
        let columns: [String]
        /// By attribute index: the declared scale of a decimal (`numeric(38, s)`).
        let scales: [Int?]

        init(_ map: SQLiteSchema.EntityMap) {
            table = map.table
            number = map.number
            scales = map.entity.attributes.map(\.scale)
            var columns = [map.table.keyColumn] + (map.table.entityColumn.map { [$0] } ?? [])
            var attributes: [(Int, AttributeType)] = []
            var foreignKeys: [(Int, Bool)] = []
            for attribute in map.entity.attributes {
                guard let column = map.attributeColumns[attribute.index], column != map.table.keyColumn else {
                    continue
                }
                columns.append(column)
                attributes.append((attribute.index, attribute.type))
            }
            for relationship in map.entity.relationships {
                guard let key = map.foreignKeys[relationship.index] else { continue }
                columns.append(key.column)
                if let column = key.entityColumn { columns.append(column) }
                foreignKeys.append((relationship.index, key.entityColumn != nil))
            }
            self.columns = columns
            self.attributes = attributes
            self.foreignKeys = foreignKeys
        }

        var columnList: String { columns.map(quote).joined(separator: ", ") }
    }

    func plan(for entity: EntityDescription) -> WritePlan {
        if let plan = writePlans[entity.index] { return plan }
        let plan = WritePlan(schema.map(for: entity))
        writePlans[entity.index] = plan
        return plan
    }

    /// One object's values in the plan's column order (key first).
    func values(
        key: ManagedObjectID.Reference, _ attributes: ArraySlice<AttributeValue>,
        _ destinations: ArraySlice<ManagedObjectID?>, of objectID: ManagedObjectID, _ plan: WritePlan
    ) throws -> [PostgresValue] {
        var values = [PostgresCoding.key(key)]
        if plan.table.entityColumn != nil { values.append(.integer(Int32(plan.number))) }
        for (index, type) in plan.attributes {
            do {
                values.append(
                    try PostgresCoding.encode(
                        attributes[attributes.startIndex + index], as: type, scale: plan.scales[index]))
            } catch let refusal as PostgresCoding.Refusal {
                let entity = model.entity(named: objectID.entityName)
                throw StoreError(
                    .constraintViolation,
                    "\(objectID.entityName).\(entity?.attributes[index].name ?? "?") cannot be kept: \(refusal.reason)",
                    url: url, objectID: objectID)
            }
        }
        for (index, hasEntityColumn) in plan.foreignKeys {
            guard let destination = destinations[destinations.startIndex + index] else {
                values.append(.null(.bigint))
                if hasEntityColumn { values.append(.null(.integer)) }
                continue
            }
            guard let key = primaryKey(of: destination), let entity = model.entity(named: destination.entityName)
            else {
                throw StoreError(
                    .noStoreForEntity,
                    "\(objectID.entityName) \(objectID) points to \(destination), which is not in this store "
                        + "(relationships across stores are not supported)",
                    url: url, objectID: objectID)
            }
            values.append(PostgresCoding.key(key))
            if hasEntityColumn { values.append(.integer(Int32(schema.map(for: entity).number))) }
        }
        return values
    }

    func existingKey(_ objectID: ManagedObjectID) throws -> ManagedObjectID.Reference {
        guard let key = primaryKey(of: objectID) else {
            throw StoreError(
                .objectNotFound, "\(objectID) is not an object of this store", url: url, objectID: objectID)
        }
        return key
    }

    // MARK: Saving

    public func save(_ request: SaveChangesRequest) throws {
        try buildUniques()
        guard !readOnly else {
            throw StoreError(.io, "The store was opened with read_only=true; it cannot save", url: url)
        }
        var current: ManagedObjectID?
        for row in request.insertedRows { forgetFreshness(of: row.objectID.entityName) }
        for row in request.updatedRows { forgetFreshness(of: row.objectID.entityName) }
        do {
            try transaction {
                try checkVersions(
                    request.updatedRows.map { ($0.objectID, $0.version) }
                        + request.deletedObjects.map { ($0.objectID, $0.version) })
                // An entity's rows in a few statements when there are many (`PostgresStore+BulkSave`).
                for rows in byEntity(request.insertedRows, \.entity) {
                    let one = { (row: StoreRow) in
                        current = row.objectID
                        try self.insert(row)
                    }
                    if rows.count >= Self.bulkRows { try insertInBulk(rows, one: one) } else { try rows.forEach(one) }
                }
                for rows in byEntity(request.updatedRows, \.entity) {
                    let one = { (row: StoreRow) in
                        current = row.objectID
                        try self.update(row)
                    }
                    if rows.count >= Self.bulkRows { try updateInBulk(rows, one: one) } else { try rows.forEach(one) }
                }
                for change in request.toManyChanges {
                    current = change.objectID
                    try apply(change)
                }
                let deleted = request.deletedObjects.compactMap { id, _ in
                    model.entity(named: id.entityName).map { (id, $0) }
                }
                for rows in byEntity(deleted, \.1) {
                    guard rows.count < Self.bulkRows else {
                        try deleteInBulk(rows.map(\.0), entity: rows[0].1)
                        continue
                    }
                    for (objectID, _) in rows {
                        current = objectID
                        try delete(objectID)
                    }
                }
                current = nil
                try writeKeys()
                try writeMetadata()
            }
            if !inRunTransaction { writtenKeys = nextKeys }
        } catch let error as PostgresError {
            if error.sqlState == "23505", let current {
                throw StoreError(
                    .constraintViolation,
                    "Saving \(current.entityName) breaks a uniqueness constraint of the model: "
                        + "\(error.detail ?? error.message); nothing was written",
                    url: url, objectID: current, underlying: error)
            }
            throw storeError(error, "The save failed and was rolled back", objectID: current)
        }
    }

    /// Optimistic locking: every object must still be stored with the values it was read with (its
    /// content version). The rows are locked until the save ends.
    private func checkVersions(_ objects: [(objectID: ManagedObjectID, version: Int64)]) throws {
        guard !objects.isEmpty else { return }
        for (id, _) in objects { _ = try existingKey(id) }
        let stored = Dictionary(
            try readRows(of: objects.map(\.objectID), locking: true).map { ($0.objectID, $0.version) },
            uniquingKeysWith: { first, _ in first })
        for (id, version) in objects {
            guard let current = stored[id] else {
                throw StoreError(
                    .conflict, "\(id.entityName) \(id) was deleted from the store after it was read", url: url,
                    objectID: id)
            }
            guard current == version else {
                throw StoreError(
                    .conflict,
                    "\(id.entityName) \(id) changed in the store since it was read (read version \(version), "
                        + "store version \(current))",
                    url: url, objectID: id)
            }
        }
    }

    private func insert(_ row: StoreRow) throws {
        let plan = plan(for: row.entity)
        let key = try existingKey(row.objectID)
        let values = try values(
            key: key, row.attributeValues[...], row.toOneDestinations[...], of: row.objectID, plan)
        let placeholders = (1...values.count).map { "$\($0)" }.joined(separator: ", ")
        try connection.run(
            "INSERT INTO \(qualified(plan.table.name)) (\(plan.columnList)) VALUES (\(placeholders))", values)
    }

    private func update(_ row: StoreRow) throws {
        let plan = plan(for: row.entity)
        let key = try existingKey(row.objectID)
        try checkKeyUnchanged(row, plan: plan)
        let values = try values(
            key: key, row.attributeValues[...], row.toOneDestinations[...], of: row.objectID, plan)
        let skip = plan.table.entityColumn == nil ? 1 : 2
        var assignments: [String] = []
        var parameters: [PostgresValue] = [values[0]]
        var position = skip
        func assign(_ count: Int, if changed: Bool) {
            defer { position += count }
            guard changed else { return }
            for offset in 0..<count {
                parameters.append(values[position + offset])
                assignments.append("\(quote(plan.columns[position + offset])) = $\(parameters.count)")
            }
        }
        for (index, _) in plan.attributes { assign(1, if: row.changes?.containsAttribute(at: index) ?? true) }
        for (index, hasEntityColumn) in plan.foreignKeys {
            assign(hasEntityColumn ? 2 : 1, if: row.changes?.containsRelationship(at: index) ?? true)
        }
        guard !assignments.isEmpty else { return }
        try connection.run(
            "UPDATE \(qualified(plan.table.name)) SET \(assignments.joined(separator: ", ")) "
                + "WHERE \(quote(plan.table.keyColumn)) = $1", parameters)
    }

    private func delete(_ objectID: ManagedObjectID) throws {
        let key = try existingKey(objectID)
        guard let entity = model.entity(named: objectID.entityName) else { return }
        let table = schema.map(for: entity).table
        try connection.run(
            "DELETE FROM \(qualified(table.name)) WHERE \(quote(table.keyColumn)) = $1", [PostgresCoding.key(key)])
        for (join, side) in linkSides(of: entity) {
            try connection.run(
                "DELETE FROM \(qualified(join.name)) WHERE \(quote(side)) = $1", [PostgresCoding.key(key)])
        }
    }
}
