import Drivers
import Foundation
import ObjectGraph
import Stores
import TestSupport

/// A PostgreSQL store in a schema of its own on the tests' server, opened through a test graph;
/// the schema is dropped when the value goes away.
final class PostgresSchema {
    let url: URL
    let schema: String
    let model: ManagedObjectModel
    private(set) var graph: TestGraph

    init(model: ManagedObjectModel, options: [String: String] = [:]) throws {
        PostgresStore.register()
        url = PostgresTestServer.freshSchemaURL()
        schema = URLComponents(url: url, resolvingAgainstBaseURL: false)!.queryItems!.first { $0.name == "schema" }!
            .value!
        self.model = model
        graph = try TestGraph(model: model, storeType: PostgresStore.storeType, url: url, options: options)
    }

    deinit { PostgresTestServer.dropSchema(of: url) }

    var context: ManagedObjectContext { graph.context }

    @discardableResult
    func reopen(options: [String: String] = [:]) throws -> TestGraph {
        graph.coordinator.removePersistentStore(graph.store)
        graph = try TestGraph(model: model, storeType: PostgresStore.storeType, url: url, options: options)
        return graph
    }

    /// Runs SQL on the database with a connection of its own, as `psql` would (the schema first on
    /// the search path); values as text.
    func query(_ sql: String) throws -> [[String?]] {
        let connection = try PostgresConnection(conninfo: PostgresTestServer.conninfo)
        try connection.execute("SET search_path = \"\(schema)\"; SET TIME ZONE 'UTC'")
        return try connection.query(sql)
    }
}
