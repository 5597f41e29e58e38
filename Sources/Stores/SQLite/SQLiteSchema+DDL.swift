import Foundation
import ObjectGraph

/// The SQL that makes a schema's tables: their columns with declared types, and the statements.
extension SQLiteSchema {
    /// Every table with its columns and their declarations, as the store makes them.
    var tableColumns: [(table: String, columns: [Column])] {
        tables.map { table in
            // A table kept under SQLite's `rowid` declares no key column.
            var columns =
                table.keyColumn.lowercased() == "rowid"
                ? []
                : [
                    Column(
                        name: table.keyColumn,
                        declaration: "\(table.keyType) PRIMARY KEY" + (table.keyType == "TEXT" ? " NOT NULL" : ""))
                ]
            if let column = table.entityColumn { columns.append(Column(name: column, declaration: "INTEGER NOT NULL")) }
            if let column = table.versionColumn {
                columns.append(Column(name: column, declaration: "INTEGER NOT NULL"))
            }
            return (table.name, inColumnOrder(columns + table.columns, of: table))
        }
            + joinTables.map { join in
                let source = map(for: join.owner.entity.rootEntity).table
                let destination = map(for: join.owner.destinationEntity.rootEntity).table
                var columns = [
                    Column(
                        name: join.sourceColumn,
                        declaration:
                            "\(source.keyType) NOT NULL REFERENCES \(quote(source.name))(\(quote(source.keyColumn)))"
                    ),
                    Column(
                        name: join.destinationColumn,
                        declaration: "\(destination.keyType) NOT NULL REFERENCES "
                            + "\(quote(destination.name))(\(quote(destination.keyColumn)))"),
                ]
                for name in [
                    join.sourceEntityColumn, join.destinationEntityColumn, join.sourceOrderColumn,
                    join.destinationOrderColumn,
                ].compactMap({ $0 }) {
                    columns.append(Column(name: name, declaration: "INTEGER"))
                }
                return (join.name, columns)
            }
    }

    /// A table's columns in its root entity's `columnOrder` (a foreign key's entity column right
    /// after it; the store's own columns first). Rows are read by column name: the order is only
    /// what other tools see.
    private func inColumnOrder(_ columns: [Column], of table: Table) -> [Column] {
        let root = table.root
        guard !root.columnOrder.isEmpty else { return columns }
        let map = self.map(for: root)
        var property: [String: String] = [:]
        if let key = table.keyAttribute { property[table.keyColumn] = key.name }
        for attribute in root.attributes {
            if let column = map.attributeColumns[attribute.index] { property[column] = attribute.name }
        }
        var follows: [String: String] = [:]
        for relationship in root.relationships {
            guard let key = map.foreignKeys[relationship.index] else { continue }
            property[key.column] = relationship.name
            if let entityColumn = key.entityColumn { follows[entityColumn] = key.column }
        }
        let ordered = root.inColumnOrder(columns.filter { follows[$0.name] == nil }) { property[$0.name] }
        return ordered.flatMap { column in [column] + columns.filter { follows[$0.name] == column.name } }
    }

    /// The DDL creating every table (not the indexes).
    var tableStatements: [String] {
        tableColumns.map { table, columns in
            let list = columns.map { "\(quote($0.name)) \($0.declaration)" }.joined(separator: ", ")
            return "CREATE TABLE IF NOT EXISTS \(quote(table)) (\(list))"
        }
    }

    /// The declared column type of an attribute type. Graph layout: the affinity that keeps values
    /// exact (decimals as canonical text compared through `SLUICE_DECIMAL`, dates as REAL seconds
    /// since 2001). Plain layout: what other tools read (decimals `NUMERIC`, dates `DATETIME` text or
    /// unix seconds, booleans `BOOLEAN` 0/1).
    func columnType(_ type: AttributeType) -> String {
        switch (layout, type) {
        case (_, .integer16), (_, .integer32), (_, .integer64): return "INTEGER"
        case (.graph, .boolean): return "INTEGER"
        case (.plain(let options), _): return SQLiteLayout.plainColumnType(type, dates: options.dates)
        case (.graph, .double), (.graph, .float), (.graph, .date), (.graph, .calendarDate): return "REAL"
        case (.graph, .decimal), (.graph, .string), (.graph, .uuid), (.graph, .uri): return "TEXT"
        case (.graph, .binary): return "BLOB"
        }
    }
}

/// An SQL identifier in double quotes (entity names such as `Order` are SQL keywords).
func quote(_ identifier: String) -> String {
    "\"" + identifier.replacingOccurrences(of: "\"", with: "\"\"") + "\""
}
