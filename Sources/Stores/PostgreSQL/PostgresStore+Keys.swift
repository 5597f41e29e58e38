import Drivers
import Foundation
import ObjectGraph

/// Lookups by key in one statement each: the keys go as arrays (`unnest`), whatever their number.
extension PostgresStore {
    /// The column of a key property and its type: an attribute's column, or the foreign key of a
    /// to-one relationship (`nil` for one whose destination shares its table with other entities).
    func keyColumn(
        _ property: PropertyDescription, _ map: SQLiteSchema.EntityMap
    ) -> (column: String, type: PostgresType, attribute: AttributeType?)? {
        if let attribute = property as? AttributeDescription, let column = map.attributeColumns[attribute.index] {
            return (column, PostgresCoding.wireType(attribute.type), attribute.type)
        }
        guard let relationship = property as? RelationshipDescription, !relationship.isToMany,
            let key = map.foreignKeys[relationship.index], key.entityColumn == nil
        else { return nil }
        let target = schema.map(for: relationship.destinationEntity).table
        return (key.column, isTextKeyed(target) ? .text : .bigint, nil)
    }

    /// Values one part after another (`parts.count` each) as one array parameter per part; `nil`
    /// when a value has no form in its column's type.
    func keyArrays(
        _ values: [AttributeValue], parts: [(column: String, type: PostgresType, attribute: AttributeType?)]
    ) -> [PostgresValue]? {
        var arrays = [[PostgresValue]](repeating: [], count: parts.count)
        for (offset, value) in values.enumerated() {
            let part = parts[offset % parts.count]
            let encoded: PostgresValue?
            if let type = part.attribute {
                encoded = try? PostgresCoding.encode(value, as: type)
            } else {
                switch value {
                case .integer(let key) where part.type == .bigint: encoded = .bigint(key)
                case .string(let key) where part.type == .text: encoded = .text(key)
                case .null: encoded = .null(part.type)
                default: encoded = nil
                }
            }
            guard let encoded else { return nil }
            arrays[offset % parts.count].append(encoded)
        }
        return zip(arrays, parts).map { PostgresValue.array(of: $0, type: $1.type) }
    }

    /// `SELECT columns FROM table t0 WHERE (key columns) IN (the keys)`, with the keys as one array
    /// parameter per column; `nil` when a property or value has no such form (the default answers).
    private func keyedSelect(
        _ entity: EntityDescription, keys: [AttributeValue], properties: [PropertyDescription],
        columns: (SQLiteSchema.Table) -> String
    ) -> (sql: String, parameters: [PostgresValue], map: SQLiteSchema.EntityMap)? {
        let map = schema.map(for: entity)
        let parts = properties.compactMap { keyColumn($0, map) }
        guard parts.count == properties.count, !parts.isEmpty else { return nil }
        guard let parameters = keyArrays(keys, parts: parts) else { return nil }
        let tuple = parts.map { "t0.\(quote($0.column))" }.joined(separator: ", ")
        let unnest = parts.indices.map { "$\($0 + 1)::\(parts[$0].type.arrayType!.sqlName)" }.joined(separator: ", ")
        var sql =
            "SELECT \(columns(map.table)) FROM \(qualified(map.table.name)) t0 WHERE (\(tuple)) IN "
            + "(SELECT * FROM unnest(\(unnest)))"
        if let kinds = map.kindFilter("t0") { sql += " AND " + kinds }
        return (sql, parameters, map)
    }

    public func rows(
        of entity: EntityDescription, matching keys: [AttributeValue], on properties: [PropertyDescription]
    ) throws -> [StoreRow] {
        try buildUniques()
        guard !keys.isEmpty else { return [] }
        guard
            let select = keyedSelect(
                entity, keys: keys, properties: properties, columns: { $0.selectList(alias: "t0") })
        else {
            // Keys of a form SQL does not take here: every row of the entity, compared in memory.
            let width = properties.count
            let wanted = Set(stride(from: 0, to: keys.count, by: width).map { Array(keys[$0..<$0 + width]) })
            let all = StoreFetchRequest(
                entity: entity, predicate: nil, sortDescriptors: [], includesSubentities: true, fetchLimit: 0,
                fetchOffset: 0)
            return try fetchRows(all).filter { row in wanted.contains(properties.map { row.keyValue(of: $0) }) }
        }
        return try reading("Looking up \(entity.name) objects by key") {
            try read(select.sql, select.parameters, table: select.map.table)
        }
    }

    public func objectIDs(
        of entity: EntityDescription, matching keys: [AttributeValue], on properties: [PropertyDescription]
    ) throws -> [KeyedObjectID] {
        try buildUniques()
        guard !keys.isEmpty else { return [] }
        let map = schema.map(for: entity)
        let parts = properties.compactMap { keyColumn($0, map) }
        guard parts.count == properties.count,
            let select = keyedSelect(
                entity, keys: keys, properties: properties,
                columns: { table in
                    ([table.identityList(alias: "t0")] + parts.map { "t0.\(quote($0.column))" }).joined(separator: ", ")
                })
        else {
            return try rows(of: entity, matching: keys, on: properties).map { row in
                KeyedObjectID(key: properties.map { row.keyValue(of: $0) }, objectID: row.objectID)
            }
        }
        return try reading("Looking up \(entity.name) objects by key") {
            let result = try connection.run(select.sql, select.parameters)
            let table = map.table
            return try (0..<result.rowCount).map { row in
                guard let reference = PostgresCoding.reference(result.bytes(row, 0), isText: isTextKeyed(table)),
                    let entity = schema.entity(number: result.integer(row, 1) ?? map.number)
                else { throw StoreError(.corrupt, "A row of table \(table.name) has no valid key", url: url) }
                let key = try parts.enumerated().map { offset, part in
                    try decodeKey(result, row, 2 + offset, part.attribute, part.type, table: table)
                }
                return KeyedObjectID(key: key, objectID: objectID(of: entity, primaryKey: reference))
            }
        }
    }

    /// A key column's value as `rows(of:matching:on:)` compares it: the attribute's value, or a
    /// foreign key as its destination's `keyValue`.
    private func decodeKey(
        _ result: PostgresResult, _ row: Int, _ column: Int, _ attribute: AttributeType?, _ type: PostgresType,
        table: SQLiteSchema.Table
    ) throws -> AttributeValue {
        guard !result.isNull(row, column) else { return .null }
        let bytes = result.bytes(row, column)
        let value: AttributeValue? =
            attribute.map { PostgresCoding.decode(bytes, as: $0) }
            ?? PostgresCoding.reference(bytes, isText: type == .text)?.keyValue
        guard let value else {
            throw StoreError(
                .corrupt, "Column \(result.columnName(column)) of table \(table.name) holds an invalid value", url: url)
        }
        return value
    }

    /// Keys held by several objects, counted in the database (`GROUP BY … HAVING count(*) > 1`).
    public func duplicateKeys(
        of entity: EntityDescription, on properties: [PropertyDescription], limit: Int
    ) throws -> [DuplicateKey] {
        try buildUniques()
        let map = schema.map(for: entity)
        let parts = properties.compactMap { keyColumn($0, map) }
        guard parts.count == properties.count, !parts.isEmpty else { return [] }
        // The primary key and the unique indexes of the layout (made with the tables) keep their
        // keys unique already: nothing to count.
        let names = parts.map(\.column)
        if names == [map.table.keyColumn]
            || schema.indexes.contains(where: {
                $0.isUnique && $0.table == map.table.name && Set($0.columns) == Set(names)
            })
        {
            return []
        }
        let columns = parts.map { "t0.\(quote($0.column))" }
        var conditions = columns.map { "\($0) IS NOT NULL" }
        if let kinds = map.kindFilter("t0") { conditions.append(kinds) }
        let sql =
            "SELECT \(columns.joined(separator: ", ")), count(*) FROM \(qualified(map.table.name)) t0 WHERE "
            + conditions.joined(separator: " AND ") + " GROUP BY \(columns.joined(separator: ", ")) "
            + "HAVING count(*) > 1 ORDER BY min(\(map.table.key("t0"))) LIMIT \(max(0, limit))"
        return try reading("Looking for duplicate keys of \(entity.name)") {
            let result = try connection.run(sql)
            return try (0..<result.rowCount).map { row in
                let key = try parts.enumerated().map { offset, part in
                    try decodeKey(result, row, offset, part.attribute, part.type, table: map.table)
                }
                return DuplicateKey(key: key, count: Int(result.integer(row, parts.count) ?? 0))
            }
        }
    }

    /// Yes for a column the table declares NOT NULL, read from the database as it is.
    public func enforcesPresence(of attribute: AttributeDescription, in entity: EntityDescription) throws -> Bool {
        let map = schema.map(for: entity)
        guard let column = map.attributeColumns[attribute.index] else { return false }
        return try reading("Reading the columns of \(map.table.name)") {
            try connection.query(
                "SELECT attnotnull FROM pg_catalog.pg_attribute WHERE attrelid = to_regclass($1) AND attname = $2",
                [qualified(map.table.name), column]
            ).first?.first == "t"
        }
    }
}

extension PostgresStore {
    /// Which states the store holds exactly, in one statement: the states go as one array per
    /// property (`unnest`, with their ordinals), joined to the table by key; a state is held when
    /// a row of `entity` itself has every other value `IS NOT DISTINCT FROM` it (numbers by value,
    /// as content versions compare them). Falls back to reading the rows for properties SQL cannot
    /// compare here.
    public func storedEqual(
        _ entity: EntityDescription, values: [AttributeValue], properties: [PropertyDescription], keyCount: Int
    ) throws -> [Bool] {
        try buildUniques()
        let width = properties.count
        guard width > 0, keyCount > 0, !values.isEmpty else { return [] }
        let map = schema.map(for: entity)
        let parts = properties.compactMap { keyColumn($0, map) }
        guard parts.count == width, let arrays = keyArrays(values, parts: parts) else {
            return try storedEqualByRows(entity, values: values, properties: properties, keyCount: keyCount)
        }
        let count = values.count / width
        let ordinals = PostgresValue.array(of: (0..<count).map { .bigint(Int64($0)) }, type: .bigint)
        let names = (0..<width).map { "c\($0)" }
        let unnest = (0..<width).map { "$\($0 + 1)::\(parts[$0].type.arrayType!.sqlName)" }
        var conditions = (0..<width).map { index in
            let column = "t0.\(quote(parts[index].column))"
            return index < keyCount ? "\(column) = k.c\(index)" : "\(column) IS NOT DISTINCT FROM k.c\(index)"
        }
        if let column = map.table.entityColumn { conditions.append("t0.\(quote(column)) = \(map.number)") }
        let sql =
            "SELECT k.ord FROM unnest(\(unnest.joined(separator: ", ")), $\(width + 1)::bigint[]) AS "
            + "k(\(names.joined(separator: ", ")), ord) JOIN \(qualified(map.table.name)) t0 ON "
            + conditions.joined(separator: " AND ")
        return try reading("Comparing \(entity.name) objects with the store") {
            let result = try connection.run(sql, arrays + [ordinals])
            var held = [Bool](repeating: false, count: count)
            for row in 0..<result.rowCount {
                if let ordinal = result.integer(row, 0), ordinal >= 0, ordinal < count { held[Int(ordinal)] = true }
            }
            return held
        }
    }
}
