import Drivers
import Foundation
import ObjectGraph

extension SQLiteStore {
    // MARK: Fetching

    public func fetchRows(_ request: StoreFetchRequest) throws -> [StoreRow] {
        let table = schema.map(for: request.entity).table
        let query = try SQLiteQueryBuilder(store: self).select(request, columns: table.selectList(alias: "t0"))
        let rows = try run(query) { try readRow($0, table: table) }
        guard !query.isExact else { return rows }
        return try request.apply(to: rows) { StoredRowSubject(store: self, row: $0) }
    }

    /// Steps through the query as `body` takes each batch: memory holds one batch of rows. When the
    /// predicate or sort cannot be answered in SQL exactly, falls back to `fetchRows`.
    public func enumerateRows(
        _ request: StoreFetchRequest, batchSize: Int, _ body: ([StoreRow]) throws -> Void
    ) throws {
        let table = schema.map(for: request.entity).table
        let query = try SQLiteQueryBuilder(store: self).select(request, columns: table.selectList(alias: "t0"))
        guard query.isExact else { return try Self.handOut(try fetchRows(request), batchSize: batchSize, body) }
        try buildPendingIndexes(on: query.tables)
        var batch: [StoreRow] = []
        do {
            // A statement of its own: `body` may run the cached ones meanwhile.
            let statement = try connection.makeStatement(query.sql)
            for (offset, value) in query.arguments.enumerated() { statement.bind(value, at: Int32(offset + 1)) }
            while try statement.step() {
                batch.append(try readRow(statement, table: table))
                if batch.count >= max(1, batchSize) {
                    try body(batch)
                    batch.removeAll(keepingCapacity: true)
                }
            }
        } catch let error as SQLiteError {
            throw storeError(error, "Reading the rows of \(request.entity.name) failed")
        }
        if !batch.isEmpty { try body(batch) }
    }

    public func fetchObjectIDs(_ request: StoreFetchRequest) throws -> [ManagedObjectID] {
        let table = schema.map(for: request.entity).table
        let query = try SQLiteQueryBuilder(store: self).select(request, columns: table.identityList(alias: "t0"))
        guard query.isExact else { return try fetchRows(request).map(\.objectID) }
        return try run(query) { try objectID(primaryKey: $0.key(0), entityNumber: $0.int64(1), table: table.name) }
    }

    public func countRows(_ request: StoreFetchRequest) throws -> Int {
        let query = try SQLiteQueryBuilder(store: self).select(request.unpaged, columns: "count(*)", sorted: false)
        guard query.isExact else { return try fetchRows(request.unpaged).count }
        return Int(try run(query) { $0.int64(0) }.first ?? 0)
    }

    /// Rows whose constrained attributes hold one of `keys`, for a save's uniqueness check: answered
    /// from the constraint's unique index (always built), without building the indexes a bulk load
    /// defers — a lookup per save would otherwise build them after the first save and make every
    /// later insert of the load maintain them.
    public func rows(
        of entity: EntityDescription, matching keys: [AttributeValue], on properties: [PropertyDescription]
    ) throws -> [StoreRow] {
        let map = schema.map(for: entity)
        var found: [StoreRow] = []
        try lookUp(keys, of: entity, on: properties, selectingRows: true) { statement, _ in
            found.append(try readRow(statement, table: map.table))
        }
        return found
    }

    /// Only the key columns, the row's key and entity: SQLite answers from the unique index alone (it
    /// holds the rowid).
    public func objectIDs(
        of entity: EntityDescription, matching keys: [AttributeValue], on properties: [PropertyDescription]
    ) throws -> [KeyedObjectID] {
        var found: [KeyedObjectID] = []
        try lookUp(keys, of: entity, on: properties, selectingRows: false) { statement, table in
            let primaryKey = statement.key(0)
            let entity = try self.entity(number: statement.int64(1), primaryKey: primaryKey, table: table)
            var key: [AttributeValue] = []
            key.reserveCapacity(properties.count)
            for (offset, property) in properties.enumerated() {
                let position = Int32(2 + offset)
                guard let attribute = property as? AttributeDescription else {
                    // A to-one relationship: the destination's primary key, as `ManagedObjectID.keyValue` has it.
                    key.append(statement.isNull(position) ? .null : statement.key(position).keyValue)
                    continue
                }
                let stored = statement.value(position)
                guard let value = coding.attributeValue(stored, as: attribute.type) else {
                    throw StoreError(
                        .corrupt,
                        "Column \(attribute.name) of table \(table), row \(primaryKey.keyText), holds \(stored), "
                            + "which is not a valid \(attribute.type) value",
                        url: url)
                }
                key.append(value)
            }
            found.append(KeyedObjectID(key: key, objectID: objectID(of: entity, primaryKey: primaryKey)))
        }
        return found
    }

    /// Yes for a column the table declares NOT NULL (the plain layout's required attributes of
    /// tables not shared with entities lacking them) and for its INTEGER PRIMARY KEY (a rowid is
    /// never NULL) — read from the table as it is, not from the model.
    public func enforcesPresence(of attribute: AttributeDescription, in entity: EntityDescription) throws -> Bool {
        let map = schema.map(for: entity)
        guard let column = map.attributeColumns[attribute.index] else { return false }
        do {
            let statement = try connection.cachedStatement(
                "SELECT \"notnull\" OR (pk = 1 AND upper(type) = 'INTEGER' "
                    + "AND (SELECT count(*) FROM pragma_table_info(?1) WHERE pk > 0) = 1) "
                    + "FROM pragma_table_info(?1) WHERE name = ?2")
            defer { try? statement.reset() }
            statement.bind(map.table.name, at: 1)
            statement.bind(column, at: 2)
            return try statement.step() && statement.int64(0) != 0
        } catch let error as SQLiteError {
            throw storeError(error, "Reading the columns of \(map.table.name) failed")
        }
    }

    /// One grouping query over the table (`GROUP BY` the key's columns `HAVING COUNT(*) > 1`).
    public func duplicateKeys(
        of entity: EntityDescription, on properties: [PropertyDescription], limit: Int
    ) throws -> [DuplicateKey] {
        let map = schema.map(for: entity)
        let columns = keyColumns(map, properties).map { quote($0) }
        guard columns.count == properties.count, !columns.isEmpty, limit > 0 else { return [] }
        // A unique index on these columns (or some of them) already rules duplicates out, NULLs
        // apart as here: nothing to look for.
        let keyColumns = Set(self.keyColumns(map, properties))
        do {
            for index in schema.indexes
            where index.isUnique && index.table == map.table.name && Set(index.columns).isSubset(of: keyColumns) {
                let exists = try connection.cachedStatement(
                    "SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = ?")
                exists.bind(index.name, at: 1)
                defer { try? exists.reset() }
                if try exists.step() { return [] }
            }
        } catch let error as SQLiteError {
            throw storeError(error, "Reading the indexes of \(map.table.name) failed")
        }
        var conditions = columns.map { "\($0) IS NOT NULL" }
        if let kinds = map.kindFilter("t0") { conditions.append(kinds) }
        let list = columns.joined(separator: ", ")
        let sql =
            "SELECT \(list), COUNT(*) FROM \(quote(map.table.name)) t0 WHERE \(conditions.joined(separator: " AND ")) "
            + "GROUP BY \(list) HAVING COUNT(*) > 1 LIMIT \(limit)"
        var found: [DuplicateKey] = []
        do {
            let statement = try connection.makeStatement(sql)
            while try statement.step() {
                var key: [AttributeValue] = []
                for (offset, property) in properties.enumerated() {
                    let position = Int32(offset)
                    guard let attribute = property as? AttributeDescription else {
                        key.append(statement.key(position).keyValue)
                        continue
                    }
                    let stored = statement.value(position)
                    guard let value = coding.attributeValue(stored, as: attribute.type) else {
                        throw StoreError(
                            .corrupt,
                            "Column \(attribute.name) of table \(map.table.name) holds \(stored), which is not a "
                                + "valid \(attribute.type) value",
                            url: url)
                    }
                    key.append(value)
                }
                found.append(DuplicateKey(key: key, count: Int(statement.int64(Int32(properties.count)))))
            }
        } catch let error as SQLiteError {
            throw storeError(error, "Looking for duplicate keys of \(entity.name) failed")
        }
        return found
    }

    /// Runs the prepared key lookup of `entity` on `attributes` for `keys`, 500 keys at a time, calling
    /// `row` for each row found (the statement positioned on it, and the table's name).
    func lookUp(
        _ keys: [AttributeValue], of entity: EntityDescription, on properties: [PropertyDescription],
        selectingRows: Bool,
        _ row: (SQLiteStatement, String) throws -> Void
    ) throws {
        let map = schema.map(for: entity)
        let columns = keyColumns(map, properties)
        // Models refuse constraints on transient attributes, which have no column (nothing stored to clash with).
        guard columns.count == properties.count, !columns.isEmpty else { return }
        let types = properties.map(Self.boundType)
        var start = 0
        do {
            while start < keys.count {
                let end = min(start + 500 * columns.count, keys.count)
                // Statements exist for 1, 2, 4, … 256 and 500 keys (unused places bound to NULL, which
                // matches nothing): a handful per key rather than one per count, each holding memory.
                let count = (end - start) / columns.count
                let places = count > 256 ? 500 : 1 << (Int.bitWidth - (count - 1).leadingZeroBitCount)
                let statement = try keyLookupStatement(
                    map, columns, count: count == 1 ? 1 : places, selectingRows: selectingRows)
                var parameter: Int32 = 1
                for (offset, value) in keys[start..<end].enumerated() {
                    coding.bind(value, as: types[offset % types.count], to: statement, at: parameter)
                    parameter += 1
                }
                while parameter <= Int32(statement.parameterCount) {
                    statement.bindNull(at: parameter)
                    parameter += 1
                }
                while try statement.step() { try row(statement, map.table.name) }
                start = end
            }
        } catch let error as SQLiteError {
            throw storeError(error, "Could not look up keys of \(entity.name)")
        }
    }

    /// The type a property's values are bound as: an attribute's own, a foreign key's as a key.
    static func boundType(_ property: PropertyDescription) -> AttributeType {
        (property as? AttributeDescription)?.type ?? .integer64
    }

    /// The columns of key properties: attributes' columns, to-one relationships' foreign keys.
    func keyColumns(_ map: SQLiteSchema.EntityMap, _ properties: [PropertyDescription]) -> [String] {
        properties.compactMap { property in
            property is RelationshipDescription
                ? map.foreignKeys[property.index]?.column : map.attributeColumns[property.index]
        }
    }

    /// The prepared lookup for `count` keys, its SQL built once per entity, columns and count.
    func keyLookupStatement(
        _ map: SQLiteSchema.EntityMap, _ columns: [String], count: Int, selectingRows: Bool
    ) throws -> SQLiteStatement {
        let key = KeyLookup(entity: map.number, columns: columns, count: count, selectingRows: selectingRows)
        if let statement = keyLookups[key] {
            try statement.reset()
            return statement
        }
        let statement = try connection.makeStatement(
            keyLookupSQL(map, columns, count: count, selectingRows: selectingRows))
        keyLookups[key] = statement
        return statement
    }

    struct KeyLookup: Hashable {
        let entity: Int64
        let columns: [String]
        let count: Int
        let selectingRows: Bool
    }

    /// `SELECT <row> FROM <table> WHERE col IN (?, ...)`; for compound keys the keys are a table of
    /// constant rows joined to the table (`WITH k(c0, c1) AS (VALUES (?, ?), ...) ... CROSS JOIN`),
    /// since SQLite 3.40 answers `(a, b) IN (VALUES ...)` by scanning the whole index. Either way each
    /// key is one search of the constraint's unique index.
    func keyLookupSQL(
        _ map: SQLiteSchema.EntityMap, _ columns: [String], count: Int, selectingRows: Bool = true
    ) -> String {
        let kinds = map.kindFilter("t0").map { " AND " + $0 } ?? ""
        let selected =
            selectingRows
            ? map.table.selectList(alias: "t0")
            : map.table.identityList(alias: "t0") + ", " + columns.map { "t0.\(quote($0))" }.joined(separator: ", ")
        if columns.count == 1 {
            let list = Array(repeating: "?", count: count).joined(separator: ", ")
            return
                "SELECT \(selected) FROM \(quote(map.table.name)) t0 WHERE t0.\(quote(columns[0])) IN (\(list))\(kinds)"
        }
        let tuple = "(" + Array(repeating: "?", count: columns.count).joined(separator: ", ") + ")"
        let names = columns.indices.map { "c\($0)" }
        let join = columns.indices.map { "t0.\(quote(columns[$0])) = k.c\($0)" }.joined(separator: " AND ")
        return
            "WITH k(\(names.joined(separator: ", "))) AS (VALUES "
            + "\(Array(repeating: tuple, count: count).joined(separator: ", "))) "
            + "SELECT \(selected) FROM k CROSS JOIN \(quote(map.table.name)) t0 ON \(join) WHERE 1\(kinds)"
    }

    /// SQLite's plan (`EXPLAIN QUERY PLAN`, one line per step) for the key lookup of a uniqueness
    /// check of `entity` on `attributes` with `keys` keys, e.g. `SEARCH t0 USING INDEX ...`.
    public func keyLookupPlan(
        of entity: EntityDescription, on properties: [PropertyDescription], keys: Int
    ) throws -> [String] {
        let map = schema.map(for: entity)
        let statement = try connection.makeStatement(
            "EXPLAIN QUERY PLAN " + keyLookupSQL(map, keyColumns(map, properties), count: keys))
        var plan: [String] = []
        while try statement.step() { plan.append(statement.string(3) ?? "") }
        return plan
    }

    func run<T>(
        _ query: SQLiteQuery, buildingIndexes: Bool = true, _ read: (SQLiteStatement) throws -> T
    ) throws -> [T] {
        if buildingIndexes { try buildPendingIndexes(on: query.tables) }
        do {
            let statement = try connection.cachedStatement(query.sql)
            for (offset, value) in query.arguments.enumerated() { statement.bind(value, at: Int32(offset + 1)) }
            var results: [T] = []
            while try statement.step() { results.append(try read(statement)) }
            return results
        } catch let error as SQLiteError {
            throw storeError(error, "A fetch failed")
        }
    }

    public func destinations(
        of relationship: RelationshipDescription, for objectID: ManagedObjectID
    ) throws -> [ManagedObjectID] {
        // A transient relationship is never stored.
        guard !relationship.isTransient, let key = primaryKey(of: objectID) else { return [] }
        let sql: String
        let tableName: String
        switch schema.map(for: relationship.entity).toMany[relationship.index] {
        case .foreignKey(let table, let foreignKey, let orderColumn)?:
            tableName = table.name
            sql =
                "SELECT \(table.identityList(alias: "t0")) FROM \(quote(table.name)) t0 WHERE "
                + "t0.\(quote(foreignKey.column)) = ? ORDER BY \(orderColumn.map { "t0." + quote($0) + ", " } ?? "")"
                + table.key("t0")
        case .joinTable(let join, let isSource)?:
            tableName = join.name
            let side = join.side(isSource: isSource)
            sql =
                "SELECT \(quote(side.far)), \(side.farEntity.map(quote) ?? "NULL") FROM \(quote(join.name)) WHERE "
                + "\(quote(side.near)) = ? ORDER BY \(side.order.map { quote($0) + ", " } ?? "")rowid"
        case nil:
            preconditionFailure("\(relationship) is not a to-many relationship")
        }
        let destination = schema.map(for: relationship.destinationEntity)
        try buildPendingIndexes(on: [tableName])
        do {
            let statement = try connection.cachedStatement(sql)
            statement.bind(key: key, at: 1)
            var ids: [ManagedObjectID] = []
            while try statement.step() {
                let number = statement.isNull(1) ? destination.number : statement.int64(1)
                ids.append(try self.objectID(primaryKey: statement.key(0), entityNumber: number, table: tableName))
            }
            return ids
        } catch let error as SQLiteError {
            throw storeError(error, "Could not load \(relationship) of \(objectID)", objectID: objectID)
        }
    }
}
