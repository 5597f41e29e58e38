import Foundation
import ObjectGraph

/// The SQL that makes a schema's tables: their columns with declared types, and the statements.
extension SQLiteSchema {
    /// Every table with its columns and their declarations, as the store makes them.
    var tableColumns: [(table: String, columns: [Column])] {
        tables.map { table in
            var columns = [
                Column(
                    name: table.keyColumn,
                    declaration: "\(table.keyType) PRIMARY KEY" + (table.keyType == "TEXT" ? " NOT NULL" : ""))
            ]
            if let column = table.entityColumn { columns.append(Column(name: column, declaration: "INTEGER NOT NULL")) }
            if let column = table.versionColumn {
                columns.append(Column(name: column, declaration: "INTEGER NOT NULL"))
            }
            return (table.name, columns + table.columns)
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
