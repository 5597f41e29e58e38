import Foundation
import ObjectGraph
import Stores
import TestSupport

/// A PostgreSQL store in a schema of its own on the tests' server, opened through a test graph;
/// the schema is dropped when the value goes away.
final class PostgresSchema {
    let schema = PostgresTestSchema()
    var url: URL { schema.url }
    let model: ManagedObjectModel
    private(set) var graph: TestGraph

    init(model: ManagedObjectModel, options: [String: String] = [:]) throws {
        PostgresStore.register()
        self.model = model
        graph = try TestGraph(model: model, storeType: PostgresStore.storeType, url: schema.url, options: options)
    }

    var context: ManagedObjectContext { graph.context }

    @discardableResult
    func reopen(options: [String: String] = [:]) throws -> TestGraph {
        graph.coordinator.removePersistentStore(graph.store)
        graph = try TestGraph(model: model, storeType: PostgresStore.storeType, url: url, options: options)
        return graph
    }

    /// Runs SQL on the database as `psql` would (`PostgresTestSchema.query`).
    func query(_ sql: String) throws -> [[String?]] { try schema.query(sql) }
}
