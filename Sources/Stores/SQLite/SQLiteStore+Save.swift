import Drivers
import Foundation
import ObjectGraph

extension SQLiteStore {
    /// Binds a row's values from parameter `start` on; returns the next free parameter.
    private func bindValues(
        of row: StoreRow, _ plan: WritePlan, to statement: SQLiteStatement, from start: Int32
    ) throws -> Int32 {
        try bindValues(
            row.attributeValues[...], row.toOneDestinations[...], of: row.objectID, plan, to: statement, from: start)
    }

    /// Binds one object's attribute values and to-one destinations (its slices of the entity's flat
    /// order) from parameter `start` on; returns the next free parameter.
    private func bindValues(
        _ values: ArraySlice<AttributeValue>, _ destinations: ArraySlice<ManagedObjectID?>,
        of objectID: ManagedObjectID,
        _ plan: WritePlan, to statement: SQLiteStatement, from start: Int32
    ) throws -> Int32 {
        var parameter = start
        let valueBase = values.startIndex, destinationBase = destinations.startIndex
        for (index, type) in zip(plan.attributes, plan.attributeTypes) {
            coding.bind(values[valueBase + index], as: type, to: statement, at: parameter)
            parameter += 1
        }
        for (index, hasEntityColumn) in plan.foreignKeys {
            let destination = destinations[destinationBase + index]
            if let destination {
                guard let key = primaryKey(of: destination) else {
                    let entity = model.entity(named: objectID.entityName)
                    throw StoreError(
                        .noStoreForEntity,
                        "\(objectID.entityName).\(entity?.relationships[index].name ?? "?") points to \(destination), "
                            + "which is not in this store (relationships across stores are not supported)",
                        url: url, objectID: objectID)
                }
                statement.bind(key: key, at: parameter)
            } else {
                statement.bindNull(at: parameter)
            }
            parameter += 1
            if hasEntityColumn {
                if let destination {
                    statement.bind(try entityNumber(of: destination), at: parameter)
                } else {
                    statement.bindNull(at: parameter)
                }
                parameter += 1
            }
        }
        return parameter
    }

    func entityNumber(of objectID: ManagedObjectID) throws -> Int64 {
        guard let entity = model.entity(named: objectID.entityName) else {
            throw StoreError(
                .corrupt, "\(objectID) names entity \(objectID.entityName), which the model does not have", url: url,
                objectID: objectID)
        }
        return schema.map(for: entity).number
    }

    public func save(_ request: SaveChangesRequest) throws {
        guard !options.readOnly else {
            throw StoreError(.io, "The store was opened with read_only=true; it cannot save", url: url)
        }
        if !request.deletedObjects.isEmpty { try buildPendingIndexes() }
        var current: ManagedObjectID?
        do {
            try transaction {
                try insertAll(request.insertedRows, current: &current)
                for row in request.updatedRows {
                    current = row.objectID
                    try update(row)
                }
                for change in request.toManyChanges {
                    current = change.objectID
                    try apply(change)
                }
                for (objectID, version) in request.deletedObjects {
                    current = objectID
                    try delete(objectID, version: version)
                }
                current = nil
                try writeKeys()
                try writeMetadata()
            }
            keysWritten()
        } catch let error as SQLiteError {
            if error.isConstraintViolation, let current {
                throw StoreError(
                    .constraintViolation,
                    "Saving \(current.entityName) \(current) breaks a uniqueness constraint of the model "
                        + "(\(error.message)); nothing was written",
                    url: url, objectID: current, underlying: error)
            }
            throw storeError(error, "The save failed and was rolled back", objectID: current)
        }
    }

    public var supportsBatchInsert: Bool { !options.readOnly }

    /// A batch insert: the objects' rows with primary keys allocated ahead, `batchRows` per INSERT,
    /// in one transaction. A multi-row INSERT that breaks a constraint (SQLite undoes just that
    /// statement) is done again row by row, and the rows that break one are left out (`nil`).
    public func insertObjects(_ request: BatchInsertRequest) throws -> [ManagedObjectID?] {
        guard !options.readOnly else {
            throw StoreError(.io, "The store was opened with read_only=true; it cannot insert", url: url)
        }
        let entity = request.entity, count = request.count
        guard count > 0 else { return [] }
        let plan = plan(forInserting: entity)
        let width = entity.attributes.count, slots = entity.relationships.count
        let keys = try references(for: request)
        var ids = keys.map { Optional(objectID(of: entity, primaryKey: $0)) }
        /// Binds object `object` from parameter `start`; returns the next free parameter.
        func bind(_ object: Int, to statement: SQLiteStatement, from start: Int32) throws -> Int32 {
            statement.bind(key: keys[object], at: start)
            return try bindValues(
                request.attributeValues[object * width..<(object + 1) * width],
                request.toOneDestinations[object * slots..<(object + 1) * slots],
                of: ids[object]!, plan, to: statement, from: start + 1)
        }
        func insertOne(_ object: Int) throws {
            let statement = try plan.prepared(on: connection)
            _ = try bind(object, to: statement, from: 1)
            do { try statement.stepToEnd() } catch let error as SQLiteError where error.isConstraintViolation {
                ids[object] = nil
            }
        }
        do {
            try transaction {
                var index = 0
                while index < count {
                    let end = index + plan.batchRows
                    guard plan.batchRows > 1, end <= count else {
                        try insertOne(index)
                        index += 1
                        continue
                    }
                    let statement: SQLiteStatement
                    if let prepared = plan.batchStatement {
                        statement = prepared
                        try statement.reset()
                    } else {
                        statement = try connection.makeStatement(plan.batchSQL!)
                        plan.batchStatement = statement
                    }
                    var parameter: Int32 = 1
                    for object in index..<end { parameter = try bind(object, to: statement, from: parameter) }
                    do { try statement.stepToEnd() } catch let error as SQLiteError where error.isConstraintViolation {
                        for object in index..<end { try insertOne(object) }
                    }
                    index = end
                }
                try writeKeys()
                try writeMetadata()
            }
            keysWritten()
        } catch let error as SQLiteError {
            throw storeError(error, "The batch insert of \(entity.name) failed and was rolled back")
        }
        return ids
    }

    private func plan(forInserting entity: EntityDescription) -> WritePlan {
        if let plan = insertPlans[ObjectIdentifier(entity)] { return plan }
        let plan = insertPlan(for: entity)
        insertPlans[ObjectIdentifier(entity)] = plan
        return plan
    }

    /// Inserts rows, runs of one entity `batchRows` at a time with one multi-row INSERT. When a
    /// multi-row INSERT fails (SQLite undoes just that statement), its rows are inserted one by one
    /// so the error names the row that broke a constraint.
    private func insertAll(_ rows: [StoreRow], current: inout ManagedObjectID?) throws {
        var index = 0
        while index < rows.count {
            let entity = rows[index].entity
            let plan = plan(forInserting: entity)
            let end = index + plan.batchRows
            if plan.batchRows > 1, end <= rows.count, rows[index..<end].allSatisfy({ $0.entity === entity }) {
                current = rows[index].objectID
                do {
                    let statement: SQLiteStatement
                    if let prepared = plan.batchStatement {
                        statement = prepared
                        try statement.reset()
                    } else {
                        statement = try connection.makeStatement(plan.batchSQL!)
                        plan.batchStatement = statement
                    }
                    var parameter: Int32 = 1
                    for row in rows[index..<end] { parameter = try bind(row, plan, to: statement, from: parameter) }
                    try statement.stepToEnd()
                } catch let error as SQLiteError where error.isConstraintViolation {
                    // SQLite undid just that statement: insert its rows one by one to name the culprit.
                    for row in rows[index..<end] { try insertOne(row, plan, current: &current) }
                }
                index = end
            } else {
                try insertOne(rows[index], plan, current: &current)
                index += 1
            }
        }
    }

    private func insertOne(_ row: StoreRow, _ plan: WritePlan, current: inout ManagedObjectID?) throws {
        current = row.objectID
        let statement = try plan.prepared(on: connection)
        _ = try bind(row, plan, to: statement, from: 1)
        try statement.stepToEnd()
    }

    /// Binds one row of an INSERT (key, then values) from `start`; returns the next free parameter.
    private func bind(
        _ row: StoreRow, _ plan: WritePlan, to statement: SQLiteStatement, from start: Int32
    ) throws -> Int32 {
        guard let key = primaryKey(of: row.objectID) else {
            throw StoreError(
                .corrupt, "\(row.objectID) does not have a primary key from this store", url: url,
                objectID: row.objectID)
        }
        statement.bind(key: key, at: start)
        return try bindValues(of: row, plan, to: statement, from: start + 1)
    }

    private func update(_ row: StoreRow) throws {
        let key = try existingKey(row.objectID)
        let planKey = UpdatePlanKey(entity: ObjectIdentifier(row.entity), changes: row.changes)
        let plan =
            updatePlans[planKey]
            ?? {
                let plan = updatePlan(for: row.entity, changes: row.changes)
                updatePlans[planKey] = plan
                return plan
            }()
        let table = schema.map(for: row.entity).table
        if let attribute = table.keyAttribute, row.attributeValues[attribute.index] != key.keyValue {
            throw StoreError(
                .constraintViolation,
                "\(row.entity.name) \(key.keyText) cannot change its \(attribute.name) to "
                    + "\(row.attributeValues[attribute.index]): "
                    + "the store keeps it under that key (delete it and insert a new one instead)",
                url: url, objectID: row.objectID)
        }
        let statement = try plan.prepared(on: connection)
        let next = try bindValues(of: row, plan, to: statement, from: 1)
        statement.bind(key: key, at: next)
        if table.versionColumn != nil { statement.bind(row.version, at: next + 1) }
        try statement.stepToEnd()
        if connection.changes != 1 { throw try conflict(row.objectID, key: key, readVersion: row.version) }
    }

    private func delete(_ objectID: ManagedObjectID, version: Int64) throws {
        let key = try existingKey(objectID)
        let entity = model.entity(named: objectID.entityName)!
        let table = schema.map(for: entity).table
        let versionCheck = table.versionColumn.map { " AND \(quote($0)) = ?" } ?? ""
        let statement = try connection.cachedStatement(
            "DELETE FROM \(quote(table.name)) WHERE \(quote(table.keyColumn)) = ?\(versionCheck)")
        statement.bind(key: key, at: 1)
        if table.versionColumn != nil { statement.bind(version, at: 2) }
        try statement.stepToEnd()
        if connection.changes != 1 { throw try conflict(objectID, key: key, readVersion: version) }
        // The row's own links go with it; links inverse-less relationships of other rows hold to it stay.
        for join in schema.joinTables {
            var sides: [String] = []
            if entity.isKind(of: join.owner.entity) { sides.append(join.sourceColumn) }
            if let inverse = join.owner.inverse, entity.isKind(of: inverse.entity) {
                sides.append(join.destinationColumn)
            }
            for side in sides {
                let unlink = try connection.cachedStatement(
                    "DELETE FROM \(quote(join.name)) WHERE \(quote(side)) = ?")
                unlink.bind(key: key, at: 1)
                try unlink.stepToEnd()
            }
        }
    }

    private func existingKey(_ objectID: ManagedObjectID) throws -> ManagedObjectID.Reference {
        guard let key = primaryKey(of: objectID) else {
            throw StoreError(
                .objectNotFound, "\(objectID) is not an object of this store", url: url, objectID: objectID)
        }
        return key
    }

    /// The conflict error for a row whose version check failed: it changed or was deleted.
    private func conflict(
        _ objectID: ManagedObjectID, key: ManagedObjectID.Reference, readVersion: Int64
    ) throws -> StoreError {
        let entity = model.entity(named: objectID.entityName)!
        let table = schema.map(for: entity).table
        let statement = try connection.cachedStatement(
            "SELECT \(table.versionColumn.map(quote) ?? "0") FROM \(quote(table.name)) "
                + "WHERE \(quote(table.keyColumn)) = ?"
        )
        statement.bind(key: key, at: 1)
        guard let current = try statement.firstInt64() else {
            return StoreError(
                .conflict, "\(objectID.entityName) \(objectID) was deleted from the store after it was read", url: url,
                objectID: objectID)
        }
        return StoreError(
            .conflict,
            "\(objectID.entityName) \(objectID) changed in the store since it was read (read version \(readVersion), "
                + "store version \(current))",
            url: url, objectID: objectID)
    }

    private func apply(_ change: ToManyChange) throws {
        let owner = try existingKey(change.objectID)
        switch schema.map(for: change.relationship.entity).toMany[change.relationship.index] {
        case .foreignKey(let table, _, let orderColumn)?:
            // The destinations' foreign keys already say who belongs; only an order needs writing.
            guard let orderColumn, let ordered = change.orderedMembers else { return }
            let statement = try connection.cachedStatement(
                "UPDATE \(quote(table.name)) SET \(quote(orderColumn)) = ? WHERE \(quote(table.keyColumn)) = ?")
            for (position, member) in ordered.enumerated() {
                try statement.reset()
                statement.bind(Int64(position), at: 1)
                statement.bind(key: try existingKey(member), at: 2)
                try statement.stepToEnd()
            }
        case .joinTable(let join, let isSource)?:
            let side = join.side(isSource: isSource)
            let (near, far) = (quote(side.near), quote(side.far))
            let (nearEntity, farEntity) = (side.nearEntity, side.farEntity)
            if !change.removed.isEmpty {
                let statement = try connection.cachedStatement(
                    "DELETE FROM \(quote(join.name)) WHERE \(near) = ? AND \(far) = ?")
                for member in change.removed {
                    try statement.reset()
                    statement.bind(key: owner, at: 1)
                    statement.bind(key: try existingKey(member), at: 2)
                    try statement.stepToEnd()
                }
            }
            if !change.added.isEmpty {
                let columns = [side.near, side.far] + [nearEntity, farEntity].compactMap { $0 }
                let statement = try connection.cachedStatement(
                    "INSERT OR IGNORE INTO \(quote(join.name)) (\(columns.map(quote).joined(separator: ", "))) VALUES "
                        + "(\(Array(repeating: "?", count: columns.count).joined(separator: ", ")))"
                )
                for member in change.added {
                    try statement.reset()
                    statement.bind(key: owner, at: 1)
                    statement.bind(key: try existingKey(member), at: 2)
                    var parameter: Int32 = 3
                    if nearEntity != nil {
                        statement.bind(try entityNumber(of: change.objectID), at: parameter)
                        parameter += 1
                    }
                    if farEntity != nil { statement.bind(try entityNumber(of: member), at: parameter) }
                    try statement.stepToEnd()
                }
            }
            if let ordered = change.orderedMembers, let order = side.order {
                let statement = try connection.cachedStatement(
                    "UPDATE \(quote(join.name)) SET \(quote(order)) = ? WHERE \(near) = ? AND \(far) = ?")
                for (position, member) in ordered.enumerated() {
                    try statement.reset()
                    statement.bind(Int64(position), at: 1)
                    statement.bind(key: owner, at: 2)
                    statement.bind(key: try existingKey(member), at: 3)
                    try statement.stepToEnd()
                }
            }
        case nil:
            preconditionFailure("\(change.relationship) is not a to-many relationship")
        }
    }
}
