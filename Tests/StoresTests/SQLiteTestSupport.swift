import Drivers
import Foundation
import ObjectGraph
import Stores
import TestSupport

/// A SQLite store file in a temporary directory, opened through a test graph; `reopen()` opens the
/// same file with a fresh coordinator (what the next run of an import sees).
final class SQLiteFile {
    let directory: TemporaryDirectory
    let url: URL
    let model: ManagedObjectModel
    private(set) var graph: TestGraph

    init(model: ManagedObjectModel, options: [String: String] = [:]) throws {
        SQLiteStore.register()
        directory = try TemporaryDirectory()
        url = directory.url.appendingPathComponent("store.sqlite")
        self.model = model
        graph = try TestGraph(model: model, storeType: SQLiteStore.storeType, url: url, options: options)
    }

    var context: ManagedObjectContext { graph.context }

    @discardableResult
    func reopen(options: [String: String] = [:]) throws -> TestGraph {
        graph.coordinator.removePersistentStore(graph.store)
        graph = try TestGraph(model: model, storeType: SQLiteStore.storeType, url: url, options: options)
        return graph
    }

    /// Runs plain SQL on the file with a separate connection, as `sqlite3` would.
    func query(_ sql: String) throws -> [[SQLiteValue]] {
        let connection = try SQLiteConnection(path: url.path, mode: .readOnly)
        let statement = try connection.makeStatement(sql)
        var rows: [[SQLiteValue]] = []
        while try statement.step() { rows.append((0..<Int32(statement.columnCount)).map { statement.value($0) }) }
        return rows
    }

    /// Every row of every table, as text: equal dumps mean equal stores.
    func dump() throws -> [String] {
        let tables = try query("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").map {
            row -> String in
            if case .text(let name) = row[0] { return name } else { return "" }
        }
        return try tables.flatMap { table in
            try query("SELECT * FROM \"\(table)\" ORDER BY 1, 2").map { "\(table): \($0)" }
        }
    }
}
