import Drivers
import ObjectGraph

extension SQLiteStore {
    /// `PersistentStore.storedEqual` in SQL: the states are bound as rows of a `VALUES` list, each
    /// value as a write binds it, joined to the table by the key's unique index; a state is held
    /// when every other column `IS` its value. No row is read into memory.
    public func storedEqual(
        _ entity: EntityDescription, values: [AttributeValue], properties: [PropertyDescription], keyCount: Int
    ) throws -> [Bool] {
        let map = schema.map(for: entity), width = properties.count
        let columns = keyColumns(map, properties)
        // A property without a column (none in practice) is left to the comparison of rows.
        guard width > 0, keyCount > 0, columns.count == width else {
            return try storedEqualByRows(entity, values: values, properties: properties, keyCount: keyCount)
        }
        let count = values.count / width
        let types = properties.map(Self.boundType)
        var held = [Bool](repeating: false, count: count)
        // At most 500 states a statement, and fewer for wide ones (SQLite's limit of 32,766 parameters).
        let chunk = max(1, min(500, 30_000 / (width + 1)))
        var start = 0
        do {
            while start < count {
                let end = min(start + chunk, count)
                // Statements for 1, 2, 4, … states and `chunk` (unused places bound to NULL: no key matches).
                let places =
                    end - start == 1 ? 1 : min(chunk, 1 << (Int.bitWidth - (end - start - 1).leadingZeroBitCount))
                let statement = try matchStatement(map, columns, keyCount: keyCount, count: places)
                var parameter: Int32 = 1
                for state in start..<end {
                    statement.bind(Int64(state), at: parameter)
                    parameter += 1
                    for (offset, value) in values[state * width..<(state + 1) * width].enumerated() {
                        coding.bind(value, as: types[offset], to: statement, at: parameter)
                        parameter += 1
                    }
                }
                while parameter <= Int32(statement.parameterCount) {
                    statement.bindNull(at: parameter)
                    parameter += 1
                }
                while try statement.step() { held[Int(statement.int64(0))] = true }
                start = end
            }
        } catch let error as SQLiteError {
            throw storeError(error, "Could not compare stored objects of \(entity.name)")
        }
        return held
    }

    /// The prepared comparison of `count` states on `columns` (the first `keyCount` the key).
    private func matchStatement(
        _ map: SQLiteSchema.EntityMap, _ columns: [String], keyCount: Int, count: Int
    ) throws -> SQLiteStatement {
        let key = MatchKey(entity: map.number, columns: columns, keyCount: keyCount, count: count)
        if let statement = matchStatements[key] {
            try statement.reset()
            return statement
        }
        let names = ["p"] + columns.indices.map { "c\($0)" }
        let tuple = "(" + Array(repeating: "?", count: names.count).joined(separator: ", ") + ")"
        let join = (0..<keyCount).map { "t0.\(quote(columns[$0])) = k.c\($0)" }.joined(separator: " AND ")
        // `+` keeps the planner from weighing the column's own index (the key's is the way in), which
        // would also make `PRAGMA optimize` analyze it. It takes the column's affinity away too: a
        // value compares as stored, so one a write would have converted is only ever found unequal
        // (and goes the usual way), never equal by mistake.
        var conditions = (keyCount..<columns.count).map { "+t0.\(quote(columns[$0])) IS k.c\($0)" }
        if map.sharesTable, let column = map.table.entityColumn {
            conditions.append("t0.\(quote(column)) = \(map.number)")
        }
        let sql =
            "WITH k(\(names.joined(separator: ", "))) AS (VALUES "
            + Array(repeating: tuple, count: count).joined(separator: ", ")
            + ") SELECT k.p FROM k CROSS JOIN \(quote(map.table.name)) t0 ON \(join)"
            + (conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND "))
        let statement = try connection.makeStatement(sql)
        matchStatements[key] = statement
        return statement
    }

    /// What a prepared comparison is for: the entity, its columns (the first `keyCount` the key)
    /// and the number of states.
    struct MatchKey: Hashable {
        let entity: Int64
        let columns: [String]
        let keyCount: Int
        let count: Int
    }
}
