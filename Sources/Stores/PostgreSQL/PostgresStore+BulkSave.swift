import Drivers
import Foundation
import ObjectGraph

/// A save's rows of one entity in a few statements rather than one per row — what a nightly merge
/// of a whole export writes: new rows by one COPY, changed rows by a COPY into a staging table and
/// one `UPDATE … FROM` it, deleted rows by one `DELETE … WHERE key = ANY(…)`. When the server
/// refuses the statement (a unique key taken), the rows go again one by one under a savepoint, so
/// that the error names the object that broke it, as a row-by-row save does.
extension PostgresStore {
    /// Fewer rows of an entity than this are written one statement each.
    static let bulkRows = 8

    /// The rows grouped by entity, in the order each entity first comes.
    func byEntity<T>(_ items: [T], _ entity: (T) -> EntityDescription) -> [[T]] {
        var groups: [[T]] = []
        var position: [Int: Int] = [:]
        for item in items {
            let index = entity(item).index
            if let at = position[index] {
                groups[at].append(item)
            } else {
                position[index] = groups.count
                groups.append([item])
            }
        }
        return groups
    }

    /// New rows of one entity: one COPY into the table.
    func insertInBulk(_ rows: [StoreRow], one: (StoreRow) throws -> Void) throws {
        let plan = plan(for: rows[0].entity)
        try inBulk(rows, one: one) {
            try copy(rows, plan: plan, into: qualified(plan.table.name))
        }
    }

    /// Changed rows of one entity: their values into a staging table, then one UPDATE from it (every
    /// column: the rows are locked and as they were read, so the columns not changed keep their
    /// values).
    func updateInBulk(_ rows: [StoreRow], one: (StoreRow) throws -> Void) throws {
        let plan = plan(for: rows[0].entity)
        for row in rows { try checkKeyUnchanged(row, plan: plan) }
        let written = plan.columns.filter { $0 != plan.table.keyColumn && $0 != plan.table.entityColumn }
        guard !written.isEmpty else { return }
        try inBulk(rows, one: one) {
            let stage = quote("_sluice_update_\(plan.number)")
            try connection.execute(
                "CREATE TEMPORARY TABLE IF NOT EXISTS \(stage) AS SELECT \(plan.columnList) FROM "
                    + "\(qualified(plan.table.name)) WITH NO DATA; TRUNCATE \(stage)")
            try copy(rows, plan: plan, into: stage)
            let key = quote(plan.table.keyColumn)
            try connection.execute(
                "UPDATE \(qualified(plan.table.name)) AS t SET "
                    + written.map { "\(quote($0)) = s.\(quote($0))" }.joined(separator: ", ")
                    + " FROM \(stage) AS s WHERE t.\(key) = s.\(key)")
        }
    }

    /// Deleted rows of one entity: one DELETE of the table's rows, one of each join table's links.
    func deleteInBulk(_ objectIDs: [ManagedObjectID], entity: EntityDescription) throws {
        let table = schema.map(for: entity).table
        let keys = try objectIDs.map { PostgresCoding.key(try existingKey($0)) }
        let type: PostgresType = isTextKeyed(table) ? .text : .bigint
        let array = PostgresValue.array(of: keys, type: type)
        let cast = "$1::\(type.arrayType!.sqlName)"
        try connection.run(
            "DELETE FROM \(qualified(table.name)) WHERE \(quote(table.keyColumn)) = ANY(\(cast))", [array])
        for (join, side) in linkSides(of: entity) {
            try connection.run("DELETE FROM \(qualified(join.name)) WHERE \(quote(side)) = ANY(\(cast))", [array])
        }
    }

    /// The join tables' columns that hold rows of `entity`: its links go with its rows (links that
    /// inverse-less relationships of other rows hold to it stay).
    func linkSides(of entity: EntityDescription) -> [(SQLiteSchema.JoinTable, String)] {
        schema.joinTables.flatMap { join in
            var sides: [(SQLiteSchema.JoinTable, String)] = []
            if entity.isKind(of: join.owner.entity) { sides.append((join, join.sourceColumn)) }
            if let inverse = join.owner.inverse, entity.isKind(of: inverse.entity) {
                sides.append((join, join.destinationColumn))
            }
            return sides
        }
    }

    func checkKeyUnchanged(_ row: StoreRow, plan: WritePlan) throws {
        let key = try existingKey(row.objectID)
        if let attribute = plan.table.keyAttribute, row.attributeValues[attribute.index] != key.keyValue {
            throw StoreError(
                .constraintViolation,
                "\(row.entity.name) \(key.keyText) cannot change its \(attribute.name) to "
                    + "\(row.attributeValues[attribute.index]): the store keeps it under that key (delete it and "
                    + "insert a new one instead)",
                url: url, objectID: row.objectID)
        }
    }

    /// `statement` under a savepoint; when the server refuses it for a constraint, the rows one by one.
    private func inBulk(_ rows: [StoreRow], one: (StoreRow) throws -> Void, statement: () throws -> Void) throws {
        try connection.execute("SAVEPOINT sluice_bulk")
        do {
            try statement()
            try connection.execute("RELEASE SAVEPOINT sluice_bulk")
        } catch let error as PostgresError where error.sqlState.hasPrefix("23") {
            try connection.execute("ROLLBACK TO SAVEPOINT sluice_bulk; RELEASE SAVEPOINT sluice_bulk")
            for row in rows { try one(row) }
        }
    }

    /// Binary COPY of the rows' values, in the plan's column order.
    private func copy(_ rows: [StoreRow], plan: WritePlan, into table: String) throws {
        try connection.copyIn("COPY \(table) (\(plan.columnList)) FROM STDIN (FORMAT binary)") { copy in
            for row in rows {
                let values = try values(
                    key: try existingKey(row.objectID), row.attributeValues[...], row.toOneDestinations[...],
                    of: row.objectID, plan)
                try copy.startRow(fields: values.count)
                for value in values { copy.add(value) }
            }
        }
    }
}
