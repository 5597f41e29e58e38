import Drivers
import Foundation
import ObjectGraph

extension PostgresStore {
    // MARK: To-many relationships

    func apply(_ change: ToManyChange) throws {
        let owner = try existingKey(change.objectID)
        switch schema.map(for: change.relationship.entity).toMany[change.relationship.index] {
        case .foreignKey(let table, _, let orderColumn)?:
            // The destinations' foreign keys already say who belongs; only an order needs writing.
            guard let orderColumn, let ordered = change.orderedMembers else { return }
            for (position, member) in ordered.enumerated() {
                try connection.run(
                    "UPDATE \(qualified(table.name)) SET \(quote(orderColumn)) = $1 "
                        + "WHERE \(quote(table.keyColumn)) = $2",
                    [.integer(Int32(clamping: position)), PostgresCoding.key(try existingKey(member))])
            }
        case .joinTable(let join, let isSource)?:
            let side = join.side(isSource: isSource)
            let (near, far) = (quote(side.near), quote(side.far))
            for member in change.removed {
                try connection.run(
                    "DELETE FROM \(qualified(join.name)) WHERE \(near) = $1 AND \(far) = $2",
                    [PostgresCoding.key(owner), PostgresCoding.key(try existingKey(member))])
            }
            let columns = [side.near, side.far] + [side.nearEntity, side.farEntity].compactMap { $0 }
            let placeholders = (1...columns.count).map { "$\($0)" }.joined(separator: ", ")
            for member in change.added {
                var values = [PostgresCoding.key(owner), PostgresCoding.key(try existingKey(member))]
                if side.nearEntity != nil { values.append(.integer(Int32(try entityNumber(of: change.objectID)))) }
                if side.farEntity != nil { values.append(.integer(Int32(try entityNumber(of: member)))) }
                try connection.run(
                    "INSERT INTO \(qualified(join.name)) (\(columns.map(quote).joined(separator: ", "))) VALUES "
                        + "(\(placeholders)) ON CONFLICT DO NOTHING", values)
            }
            if let ordered = change.orderedMembers, let order = side.order {
                for (position, member) in ordered.enumerated() {
                    try connection.run(
                        "UPDATE \(qualified(join.name)) SET \(quote(order)) = $1 WHERE \(near) = $2 AND \(far) = $3",
                        [
                            .integer(Int32(clamping: position)), PostgresCoding.key(owner),
                            PostgresCoding.key(try existingKey(member)),
                        ])
                }
            }
        case nil:
            preconditionFailure("\(change.relationship) is not a to-many relationship")
        }
    }

    private func entityNumber(of objectID: ManagedObjectID) throws -> Int64 {
        guard let entity = model.entity(named: objectID.entityName) else {
            throw StoreError(
                .corrupt, "\(objectID) names entity \(objectID.entityName), which the model does not have", url: url,
                objectID: objectID)
        }
        return schema.map(for: entity).number
    }

    // MARK: Batch inserts

    public var supportsBatchInsert: Bool { !readOnly }

    /// A batch insert by binary COPY. The rows go straight into the table; when that breaks a
    /// constraint (the COPY is undone to a savepoint), they are copied into a staging table and
    /// inserted from it with `ON CONFLICT DO NOTHING`, so the rows that clash with a stored row or an
    /// earlier row of the batch are left out (`nil`) and the rest written. Rows that break another
    /// constraint are found one by one.
    public func insertObjects(_ request: BatchInsertRequest) throws -> [ManagedObjectID?] {
        guard !readOnly else {
            throw StoreError(.io, "The store was opened with read_only=true; it cannot insert", url: url)
        }
        let entity = request.entity, count = request.count
        guard count > 0 else { return [] }
        let plan = plan(for: entity)
        let keys = try references(for: request)
        let ids = keys.map { objectID(of: entity, primaryKey: $0) }
        let rows = Rows(request: request, keys: keys, ids: ids, plan: plan, store: self)
        var inserted: [Bool] = []
        do {
            if inRunTransaction {
                // The copy's savepoint is the unit: the key counters are written at the run's commit.
                if try streamIfUnclashable(rows, plan: plan) {
                    inserted = Array(repeating: true, count: count)
                } else {
                    try buildUniques(of: plan.table.name)
                    inserted = try insert(rows, plan: plan)
                }
            } else {
                try transaction {
                    inserted = try insert(rows, plan: plan)
                    try writeKeys()
                    try writeMetadata()
                }
                writtenKeys = nextKeys
            }
        } catch let error as PostgresError {
            throw storeError(error, "The batch insert of \(entity.name) failed and was rolled back")
        } catch let refused as Rows.Refused {
            // A value PostgreSQL cannot hold (the rows were not written): such objects are left out
            // (`nil`: the context's save names them) and the others inserted again.
            let left = Set((0..<count).filter { (try? rows.values($0)) == nil })
            guard !left.isEmpty else { throw refused.error }
            let kept = (0..<count).filter { !left.contains($0) }
            var written = [ManagedObjectID?](repeating: nil, count: count)
            for (object, id) in zip(kept, kept.isEmpty ? [] : try insertObjects(request.keeping(kept))) {
                written[object] = id
            }
            return written
        }
        return zip(ids, inserted).map { $1 ? $0 : nil }
    }

    /// Copies the rows in under a savepoint (sent with the COPY: one round trip); when that breaks
    /// a unique key, goes through the staging table. Which rows were written; on an error, none.
    private func insert(_ rows: Rows, plan: WritePlan) throws -> [Bool] {
        var inserted = [Bool](repeating: true, count: rows.count)
        do {
            do {
                try copy(
                    rows, into: qualified(plan.table.name), columns: plan.columnList, ordinal: false,
                    after: "SAVEPOINT sluice_copy")
            } catch let error as PostgresError where error.sqlState.hasPrefix("23") {
                try connection.execute("ROLLBACK TO SAVEPOINT sluice_copy")
                inserted = try insertThroughStage(rows, keys: rows.keys, plan: plan)
            }
            try connection.execute("RELEASE SAVEPOINT sluice_copy")
        } catch {
            try? connection.execute("ROLLBACK TO SAVEPOINT sluice_copy; RELEASE SAVEPOINT sluice_copy")
            throw error
        }
        return inserted
    }

    /// The objects of a batch insert as COPY rows and as parameters (values in the plan's order).
    struct Rows {
        let request: BatchInsertRequest
        let keys: [ManagedObjectID.Reference]
        let ids: [ManagedObjectID]
        let plan: WritePlan
        unowned let store: PostgresStore
        var count: Int { keys.count }

        /// A value of the rows PostgreSQL cannot hold (`PostgresCoding.Refusal`), as the store error
        /// naming its object.
        struct Refused: Error {
            let error: StoreError
        }

        /// Object `object` as one COPY row, straight from the request (the hot path: no arrays).
        func write(_ object: Int, to copy: PostgresCopy, ordinal: Bool) throws {
            let width = request.entity.attributes.count, slots = request.entity.relationships.count
            try copy.startRow(fields: plan.columns.count + (ordinal ? 1 : 0))
            PostgresCoding.append(key: keys[object], to: copy)
            if plan.table.entityColumn != nil { copy.add(integer: Int32(plan.number)) }
            for (index, type) in plan.attributes {
                do {
                    try PostgresCoding.append(
                        request.attributeValues[object * width + index], as: type, scale: plan.scales[index], to: copy)
                } catch let refusal as PostgresCoding.Refusal {
                    throw Refused(
                        error: StoreError(
                            .constraintViolation,
                            "\(request.entity.name).\(request.entity.attributes[index].name) cannot be kept: "
                                + refusal.reason, url: store.url, objectID: ids[object]))
                }
            }
            for (index, hasEntityColumn) in plan.foreignKeys {
                guard let destination = request.toOneDestinations[object * slots + index] else {
                    copy.addNull()
                    if hasEntityColumn { copy.addNull() }
                    continue
                }
                let key = store.primaryKey(of: destination)
                // The entity's number only where a column keeps it (a name lookup per row otherwise).
                let entity = hasEntityColumn ? store.model.entity(named: destination.entityName) : nil
                guard let key, !hasEntityColumn || entity != nil else {
                    throw StoreError(
                        .noStoreForEntity,
                        "\(ids[object]) points to \(destination), which is not in this store (relationships across "
                            + "stores are not supported)", url: store.url, objectID: ids[object])
                }
                PostgresCoding.append(key: key, to: copy)
                if let entity { copy.add(integer: Int32(store.schema.map(for: entity).number)) }
            }
            if ordinal { copy.add(bigint: Int64(object)) }
        }

        /// Object `object` as the parameters of an INSERT.
        func values(_ object: Int) throws -> [PostgresValue] {
            let width = request.entity.attributes.count, slots = request.entity.relationships.count
            return try store.values(
                key: keys[object], request.attributeValues[object * width..<(object + 1) * width],
                request.toOneDestinations[object * slots..<(object + 1) * slots], of: ids[object], plan)
        }
    }

    /// Binary COPY of the rows (with their ordinal last, for a staging table).
    /// `after`: statements sent with the COPY, before it (one round trip).
    func copy(_ rows: Rows, into table: String, columns: String, ordinal: Bool, after: String? = nil) throws {
        let statement = "COPY \(table) (\(columns)) FROM STDIN (FORMAT binary)"
        try connection.copyIn(after.map { "\($0); \(statement)" } ?? statement) { copy in
            for object in 0..<rows.count { try rows.write(object, to: copy, ordinal: ordinal) }
        }
    }

    /// Inserts through a staging table, leaving out rows that clash on a unique key; which were written.
    private func insertThroughStage(
        _ rows: Rows, keys: [ManagedObjectID.Reference], plan: WritePlan
    ) throws -> [Bool] {
        let stage = quote("_sluice_stage_\(plan.table.name)")
        try connection.execute(
            "CREATE TEMPORARY TABLE IF NOT EXISTS \(stage) AS SELECT \(plan.columnList) FROM "
                + "\(qualified(plan.table.name)) WITH NO DATA; TRUNCATE \(stage)")
        let ordinal = plan.columns.contains("_sluice_ord") ? "_sluice_ord2" : "_sluice_ord"
        try connection.execute("ALTER TABLE \(stage) ADD COLUMN IF NOT EXISTS \(ordinal) bigint")
        try copy(rows, into: stage, columns: plan.columnList + ", " + ordinal, ordinal: true)
        try connection.execute("SAVEPOINT sluice_stage")
        do {
            let result = try connection.run(
                "INSERT INTO \(qualified(plan.table.name)) (\(plan.columnList)) SELECT \(plan.columnList) FROM "
                    + "\(stage) ORDER BY \(ordinal) ON CONFLICT DO NOTHING RETURNING \(quote(plan.table.keyColumn))")
            try connection.execute("RELEASE SAVEPOINT sluice_stage")
            let isText = isTextKeyed(plan.table)
            var written = Set<ManagedObjectID.Reference>()
            for row in 0..<result.rowCount {
                if let key = PostgresCoding.reference(result.bytes(row, 0), isText: isText) { written.insert(key) }
            }
            // The first of several rows with one key is the one written.
            return keys.map { written.remove($0) != nil }
        } catch let error as PostgresError where error.sqlState.hasPrefix("23") {
            try connection.execute("ROLLBACK TO SAVEPOINT sluice_stage")
            let placeholders = (1...plan.columns.count).map { "$\($0)" }.joined(separator: ", ")
            return try (0..<rows.count).map { object in
                let row = try rows.values(object)
                try connection.execute("SAVEPOINT sluice_row")
                do {
                    try connection.run(
                        "INSERT INTO \(qualified(plan.table.name)) (\(plan.columnList)) VALUES (\(placeholders))", row)
                    try connection.execute("RELEASE SAVEPOINT sluice_row")
                    return true
                } catch let error as PostgresError where error.sqlState.hasPrefix("23") {
                    try connection.execute("ROLLBACK TO SAVEPOINT sluice_row")
                    return false
                }
            }
        }
    }
}
