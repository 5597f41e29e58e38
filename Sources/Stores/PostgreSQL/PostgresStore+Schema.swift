import Drivers
import Foundation
import ObjectGraph

/// The store's tables in PostgreSQL terms, its metadata row by row, and its key counters.
extension PostgresStore {
    /// The SQL type of every column of every table (key columns, attributes, foreign keys, entity and
    /// order columns), walking the plain layout's maps.
    static func columnTypes(of schema: SQLiteSchema) -> [String: [String: String]] {
        var types: [String: [String: String]] = [:]
        func keyType(_ table: SQLiteSchema.Table) -> String { table.keyAttribute?.type == .string ? "text" : "bigint" }
        for table in schema.tables {
            types[table.name, default: [:]][table.keyColumn] = keyType(table)
            if let column = table.entityColumn { types[table.name]![column] = "integer" }
        }
        for entity in schema.model.entities where schema.makesTable(of: entity) {
            let map = schema.map(for: entity)
            for attribute in entity.attributes {
                guard let column = map.attributeColumns[attribute.index], column != map.table.keyColumn else {
                    continue
                }
                types[map.table.name]![column] = PostgresCoding.columnType(of: attribute)
            }
            for relationship in entity.relationships {
                guard let key = map.foreignKeys[relationship.index] else { continue }
                let target = schema.map(for: relationship.destinationEntity).table
                types[map.table.name]![key.column] = keyType(target)
                if let column = key.entityColumn { types[map.table.name]![column] = "integer" }
            }
        }
        for join in schema.joinTables {
            let source = schema.map(for: join.owner.entity).table
            let destination = schema.map(for: join.owner.destinationEntity).table
            var columns = [join.sourceColumn: keyType(source), join.destinationColumn: keyType(destination)]
            for column in [
                join.sourceEntityColumn, join.destinationEntityColumn, join.sourceOrderColumn,
                join.destinationOrderColumn,
            ] {
                if let column { columns[column] = "integer" }
            }
            types[join.name] = columns
        }
        return types
    }

    /// The layout's statements: CREATE TABLE, the primary keys and unique indexes of each table
    /// (`uniques`: what checks a write's keys), then the other indexes and the foreign keys (which a
    /// new store's first load adds at its end, in one pass each). Foreign keys are checked at commit
    /// (DEFERRABLE INITIALLY DEFERRED), so a save may write rows in any order.
    ///
    /// A table keyed by a counter of the store (no key attribute) gets its primary key with the
    /// indexes (`keys`): the counter never repeats, so a load need not maintain that index.
    func tableStatements() -> (
        tables: [String], uniques: [(table: String, sql: String)], keys: [String], indexes: [String],
        foreignKeys: [String]
    ) {
        var keys: [String] = []
        var statements: [String] = []
        var uniques: [(table: String, sql: String)] = []
        var foreignKeys: [String] = []
        for table in schema.tables {
            let types = columnTypes[table.name] ?? [:]
            let keyType = types[table.keyColumn] ?? "bigint"
            let key = "\(quote(table.keyColumn)) \(keyType) NOT NULL"
            let primaryKey =
                "ALTER TABLE \(qualified(table.name)) ADD CONSTRAINT \(quote(indexName("\(table.name)_pkey"))) "
                + "PRIMARY KEY (\(quote(table.keyColumn)))"
            if table.keyAttribute == nil { keys.append(primaryKey) } else { uniques.append((table.name, primaryKey)) }
            // The columns in SQLite's order (the model's `columnOrder`); a key SQLite keeps in its
            // rowid is a column here, first.
            let ordered = schema.tableColumns.first { $0.table == table.name }?.columns ?? []
            var columns = ordered.contains { $0.name == table.keyColumn } ? [] : [key]
            for column in ordered {
                if column.name == table.keyColumn {
                    columns.append(key)
                } else if column.name == table.entityColumn {
                    columns.append("\(quote(column.name)) integer NOT NULL")
                } else {
                    let notNull = column.declaration.hasSuffix("NOT NULL") ? " NOT NULL" : ""
                    columns.append("\(quote(column.name)) \(types[column.name] ?? "integer")\(notNull)")
                }
            }
            statements.append("CREATE TABLE \(qualified(table.name)) (\(columns.joined(separator: ", ")))")
        }
        for entity in model.entities where schema.makesTable(of: entity) {
            let map = schema.map(for: entity)
            for relationship in entity.relationships where relationship.entity === entity {
                // A reference into another configuration's store has no table here to point at.
                guard let key = map.foreignKeys[relationship.index],
                    schema.makesTable(of: relationship.destinationEntity)
                else { continue }
                let target = schema.map(for: relationship.destinationEntity).table
                foreignKeys.append(foreignKey(map.table.name, key.column, target))
            }
        }
        for join in schema.joinTables {
            let types = columnTypes[join.name] ?? [:]
            let columns =
                [join.sourceColumn, join.destinationColumn].map { "\(quote($0)) \(types[$0]!) NOT NULL" }
                + [
                    join.sourceEntityColumn, join.destinationEntityColumn, join.sourceOrderColumn,
                    join.destinationOrderColumn,
                ].compactMap { $0.map { "\(quote($0)) integer" } }
            statements.append("CREATE TABLE \(qualified(join.name)) (\(columns.joined(separator: ", ")))")
            // A link goes with either of its rows.
            foreignKeys.append(
                foreignKey(join.name, join.sourceColumn, schema.map(for: join.owner.entity).table, cascades: true))
            foreignKeys.append(
                foreignKey(
                    join.name, join.destinationColumn, schema.map(for: join.owner.destinationEntity).table,
                    cascades: true))
        }
        var indexes: [String] = []
        for index in schema.indexes {
            let sql =
                "CREATE \(index.isUnique ? "UNIQUE " : "")INDEX \(quote(indexName(index.name))) ON "
                + "\(qualified(index.table)) (\(index.columns.map(quote).joined(separator: ", ")))"
            if index.isUnique { uniques.append((index.table, sql)) } else { indexes.append(sql) }
        }
        return (statements, uniques, keys, indexes, foreignKeys)
    }

    private func foreignKey(
        _ table: String, _ column: String, _ target: SQLiteSchema.Table, cascades: Bool = false
    ) -> String {
        "ALTER TABLE \(qualified(table)) ADD CONSTRAINT \(quote(indexName("\(table)_\(column)_fkey"))) "
            + "FOREIGN KEY (\(quote(column))) REFERENCES \(qualified(target.name)) (\(quote(target.keyColumn))) "
            + (cascades ? "ON DELETE CASCADE " : "") + "DEFERRABLE INITIALLY DEFERRED"
    }

    /// A name PostgreSQL keeps whole: at most 63 bytes (a longer one ends in a hash of it instead).
    func indexName(_ name: String) -> String {
        guard name.utf8.count > 63 else { return name }
        var hash: UInt32 = 2_166_136_261
        for byte in name.utf8 { hash = (hash ^ UInt32(byte)) &* 16_777_619 }
        var prefix = ""
        for character in name where prefix.utf8.count + character.utf8.count <= 54 { prefix.append(character) }
        return prefix + "_" + String(hash, radix: 16)
    }

    // MARK: Metadata

    func readMetadata() throws {
        var values: [String: String] = [:]
        for row in try connection.query("SELECT key, value FROM \(qualified("_sluice_metadata"))") {
            values[row[0] ?? ""] = row[1] ?? ""
        }
        metadata = try SQLiteStore.metadata(from: values, url: url)
        metadata.storeType = Self.storeType
        writtenMetadata = metadata
        nextKeys = [:]
        if let json = values["nextKeys"] {
            guard let keys = try? JSONDecoder().decode([String: Int64].self, from: Data(json.utf8)) else {
                throw StoreError(.corrupt, "The store's key counters are not valid JSON", url: url)
            }
            nextKeys = keys
        }
        writtenKeys = nextKeys
    }

    /// Writes metadata that changed since it was last written (inside the caller's transaction).
    func writeMetadata() throws {
        guard metadata != writtenMetadata else { return }
        let hashes = String(decoding: try JSONEncoder.sorted.encode(metadata.entityVersionHashes), as: UTF8.self)
        var rows = [
            ("storeType", metadata.storeType), ("identifier", metadata.identifier), ("entityVersionHashes", hashes),
            ("schemaVersion", "1"), ("layout", "plain"),
        ]
        if let hash = metadata.modelVersionHash { rows.append(("modelVersionHash", hash)) }
        rows += metadata.userInfo.map { ("user.\($0.key)", $0.value) }
        try connection.run("DELETE FROM \(qualified("_sluice_metadata")) WHERE key <> 'nextKeys'")
        for (key, value) in rows { try setMetadataRow(key, value) }
        writtenMetadata = metadata
    }

    private func setMetadataRow(_ key: String, _ value: String) throws {
        try connection.run(
            "INSERT INTO \(qualified("_sluice_metadata")) VALUES ($1, $2) "
                + "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            [.text(key), .text(value)])
    }

    // MARK: Keys

    /// Keys of tables not kept under an attribute come from a counter per table in
    /// `_sluice_metadata`, written inside each save's transaction and brought past every stored key
    /// when the store opens.
    public func newReferences(for entity: EntityDescription, count: Int) throws -> [ManagedObjectID.Reference] {
        let table = schema.map(for: entity).table
        guard table.keyAttribute == nil else {
            throw StoreError(
                .constraintViolation,
                "\(entity.name) objects are kept under their \(table.keyAttribute!.name); their IDs come from it",
                url: url)
        }
        let first = nextKeys[table.name] ?? 1
        nextKeys[table.name] = first + Int64(count)
        return (0..<Int64(count)).map { .integer(first + $0) }
    }

    public func referenceAttribute(for entity: EntityDescription) -> AttributeDescription? {
        schema.map(for: entity).table.keyAttribute
    }

    public var rowVersioning: RowVersioning { .contentHash }

    func loadKeys() throws {
        for table in schema.tables where table.keyAttribute == nil {
            let largest = try connection.run(
                "SELECT coalesce(max(\(quote(table.keyColumn))), 0) + 1 FROM \(qualified(table.name))")
            nextKeys[table.name] = max(nextKeys[table.name] ?? 1, largest.integer(0, 0) ?? 1)
        }
    }

    func writeKeys() throws {
        guard nextKeys != writtenKeys else { return }
        try setMetadataRow("nextKeys", String(decoding: try JSONEncoder.sorted.encode(nextKeys), as: UTF8.self))
    }
}
