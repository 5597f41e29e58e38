import Drivers
import ObjectGraph

/// The INSERT and UPDATE statements of each entity, planned once per store (and per set of changed
/// columns for updates) and kept with their prepared statements.
extension SQLiteStore {
    /// The SQL and value order of an INSERT or UPDATE for one entity, built once.
    final class WritePlan {
        let sql: String
        /// Attribute indexes bound in order after the leading parameters, and their types.
        let attributes: [Int]
        let attributeTypes: [AttributeType]
        /// To-one relationship indexes, each bound as key then (when `true`) entity number.
        let foreignKeys: [(index: Int, hasEntityColumn: Bool)]
        /// The prepared statement, kept with the plan so the hot path skips the cache lookup by SQL text.
        var statement: SQLiteStatement?
        /// For inserts: the same INSERT with `batchRows` rows of VALUES, one step for many rows.
        var batchSQL: String?
        var batchRows = 1
        var batchStatement: SQLiteStatement?

        func prepared(on connection: SQLiteConnection) throws -> SQLiteStatement {
            if let statement {
                try statement.reset()
                return statement
            }
            let statement = try connection.cachedStatement(sql)
            self.statement = statement
            return statement
        }

        init(
            sql: String, attributes: [Int], types: [AttributeType], foreignKeys: [(index: Int, hasEntityColumn: Bool)]
        ) {
            self.sql = sql
            self.attributes = attributes
            self.attributeTypes = types
            self.foreignKeys = foreignKeys
        }
    }

    private func columnsOf(
        _ map: SQLiteSchema.EntityMap
    ) -> (names: [String], attributes: [Int], foreignKeys: [(index: Int, hasEntityColumn: Bool)]) {
        var names: [String] = [], attributes: [Int] = [], foreignKeys: [(index: Int, hasEntityColumn: Bool)] = []
        for attribute in map.entity.attributes {
            // The key a plain table keeps rows under is bound as the row's key, not as a value.
            guard let column = map.attributeColumns[attribute.index], column != map.table.keyColumn else { continue }
            names.append(column)
            attributes.append(attribute.index)
        }
        for relationship in map.entity.relationships {
            guard let key = map.foreignKeys[relationship.index] else { continue }
            names.append(key.column)
            if let entityColumn = key.entityColumn { names.append(entityColumn) }
            foreignKeys.append((relationship.index, key.entityColumn != nil))
        }
        return (names, attributes, foreignKeys)
    }

    func insertPlan(for entity: EntityDescription) -> WritePlan {
        let map = schema.map(for: entity)
        let (names, attributes, foreignKeys) = columnsOf(map)
        let table = map.table
        // Entity number and first version are constants of the statement, not parameters.
        var heads = [table.keyColumn], constants = ["?"]
        if let column = table.entityColumn {
            heads.append(column)
            constants.append(String(map.number))
        }
        if let column = table.versionColumn {
            heads.append(column)
            constants.append("1")
        }
        let columns = (heads + names).map(quote).joined(separator: ", ")
        let values = "(" + (constants + Array(repeating: "?", count: names.count)).joined(separator: ", ") + ")"
        let head = "INSERT INTO \(quote(map.table.name)) (\(columns)) VALUES "
        let plan = WritePlan(
            sql: head + values, attributes: attributes, types: attributes.map { entity.attributes[$0].type },
            foreignKeys: foreignKeys)
        plan.batchRows = max(1, min(64, 32_000 / (names.count + 1)))
        plan.batchSQL = head + Array(repeating: values, count: plan.batchRows).joined(separator: ", ")
        return plan
    }

    /// The UPDATE of `entity` setting every column, or (with `changes`) only the changed ones.
    func updatePlan(for entity: EntityDescription, changes: ChangedProperties? = nil) -> WritePlan {
        let map = schema.map(for: entity)
        var (names, attributes, foreignKeys) = columnsOf(map)
        if let changes {
            var kept: [String] = [], column = 0
            attributes = attributes.filter { index in
                defer { column += 1 }
                if changes.containsAttribute(at: index) { kept.append(names[column]) }
                return changes.containsAttribute(at: index)
            }
            foreignKeys = foreignKeys.filter { key in
                defer { column += key.hasEntityColumn ? 2 : 1 }
                guard changes.containsRelationship(at: key.index) else { return false }
                kept.append(names[column])
                if key.hasEntityColumn { kept.append(names[column + 1]) }
                return true
            }
            names = kept
        }
        let table = map.table
        var assignments = names.map { "\(quote($0)) = ?" }
        var condition = "\(quote(table.keyColumn)) = ?"
        if let version = table.versionColumn.map(quote) {
            assignments.insert("\(version) = \(version) + 1", at: 0)
            condition += " AND \(version) = ?"
        }
        // Only the key is left to set when nothing else changed (a plain table's key attribute).
        if assignments.isEmpty { assignments = ["\(quote(table.keyColumn)) = \(quote(table.keyColumn))"] }
        return WritePlan(
            sql: "UPDATE \(quote(table.name)) SET \(assignments.joined(separator: ", ")) WHERE \(condition)",
            attributes: attributes, types: attributes.map { entity.attributes[$0].type }, foreignKeys: foreignKeys)
    }
}
