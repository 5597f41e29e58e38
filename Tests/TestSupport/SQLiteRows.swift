import Drivers
import Foundation

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

/// What `sqlite3 DB .dump` writes for the database at `path` (the sqlite3 shell, which CI
/// installs): a dump as users make them.
public func sqliteDump(_ path: String) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["sqlite3", path, ".dump"]
    let out = Pipe()
    process.standardOutput = out
    try process.run()
    let data = out.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else { throw CocoaError(.fileReadUnknown) }
    return String(decoding: data, as: UTF8.self)
}
