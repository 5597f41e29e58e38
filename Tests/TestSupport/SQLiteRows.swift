import Drivers

/// Every row `sql` selects from the SQLite file at `path`, each row its columns' values in order.
/// The file is opened read-only on a connection of its own, as `sqlite3` would open it.
///
/// ```swift
/// #expect(try sqliteRows(store, "SELECT count(*) FROM customers") == [[.integer(3)]])
/// ```
public func sqliteRows(_ path: String, _ sql: String) throws -> [[SQLiteValue]] {
    let connection = try SQLiteConnection(path: path, mode: .readOnly)
    let statement = try connection.makeStatement(sql)
    var rows: [[SQLiteValue]] = []
    while try statement.step() { rows.append((0..<Int32(statement.columnCount)).map { statement.value($0) }) }
    return rows
}
