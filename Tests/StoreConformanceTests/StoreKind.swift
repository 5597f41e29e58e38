import Foundation
import ObjectGraph
import Stores
import TestSupport
import Testing

/// The store types the tests of this target run on: the in-memory store, the SQLite store in both
/// layouts (plain, the default, whose row versions are content hashes; graph, with `_opt`
/// counters), and the two atomic stores (XML, binary), which read their whole file when added and
/// write it whole at every save, and the PostgreSQL store (a schema of its own in the test server,
/// dropped after the test). A test takes one as its argument
/// (`@Test(arguments: StoreKind.allCases)`).
enum StoreKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case inMemory, sqlite, sqliteGraph, xml, binary, postgres

    /// The store's registered type name (registering the type on first use).
    var storeType: String {
        switch self {
        case .inMemory:
            return InMemoryStore.storeType
        case .sqlite, .sqliteGraph:
            SQLiteStore.register()
            return SQLiteStore.storeType
        case .xml:
            XMLStore.register()
            return XMLStore.storeType
        case .binary:
            BinaryStore.register()
            return BinaryStore.storeType
        case .postgres:
            PostgresStore.register()
            return PostgresStore.storeType
        }
    }

    /// The name of the store's file in its temporary directory; `nil` for the in-memory store (and
    /// the PostgreSQL store, whose URL names a schema).
    var fileName: String? {
        switch self {
        case .inMemory, .postgres: return nil
        case .sqlite, .sqliteGraph: return "store.sqlite"
        case .xml: return "store.xml"
        case .binary: return "store.sluicebin"
        }
    }

    /// Whether the store's row versions are hashes of the rows' values rather than counters (the
    /// plain SQLite layout, PostgreSQL).
    var versionsByContent: Bool { self == .sqlite || self == .postgres }

    /// Whether the store keeps objects keyed by one integer or text attribute under that key (the
    /// plain layout, in SQLite and PostgreSQL).
    var keepsObjectsUnderKeys: Bool { self == .sqlite || self == .postgres }

    /// Options the store is opened with.
    var options: [String: String] { self == .sqliteGraph ? ["layout": "graph"] : [:] }

    /// Options for a store opened only to read what another coordinator wrote.
    var readOnlyOptions: [String: String] {
        self == .sqlite || self == .sqliteGraph || self == .postgres
            ? options.merging(["read_only": "true"]) { $1 } : options
    }

    var testDescription: String {
        switch self {
        case .inMemory: return "in-memory"
        case .sqlite: return "SQLite"
        case .sqliteGraph: return "SQLite graph layout"
        case .xml: return "XML"
        case .binary: return "binary"
        case .postgres: return "PostgreSQL"
        }
    }
}

/// A store of one kind for one test — a file in a temporary directory, or memory — opened through a
/// test graph. The `stored…` helpers tell what the store holds through a context that never saw the
/// test's changes, so the same assertions hold on every kind of store (and every table layout).
final class StoreFile {
    let kind: StoreKind
    let model: ManagedObjectModel
    /// The store's file; `nil` for the in-memory store.
    let url: URL?
    private let directory: TemporaryDirectory?
    private(set) var graph: TestGraph

    init(_ kind: StoreKind, model: ManagedObjectModel) throws {
        self.kind = kind
        self.model = model
        if let name = kind.fileName {
            let directory = try TemporaryDirectory()
            self.directory = directory
            url = directory.url.appendingPathComponent(name)
        } else if kind == .postgres {
            directory = nil
            url = PostgresTestServer.freshSchemaURL()
        } else {
            directory = nil
            url = nil
        }
        graph = try TestGraph(model: model, storeType: kind.storeType, url: url, options: kind.options)
    }

    deinit {
        if kind == .postgres, let url { PostgresTestServer.dropSchema(of: url) }
    }

    var context: ManagedObjectContext { graph.context }

    /// Opens the store again, as the next run of an import would: a new coordinator on the same file
    /// with a new context (the old coordinator gives the store up). An in-memory store lives in its
    /// coordinator only — a new coordinator would find it empty — so for it this is a new context on
    /// the same coordinator, which reads only what was saved.
    @discardableResult
    func reopen() throws -> TestGraph {
        if let url {
            graph.coordinator.removePersistentStore(graph.store)
            graph = try TestGraph(model: model, storeType: kind.storeType, url: url, options: kind.options)
        } else {
            graph = graph.withNewContext()
        }
        return graph
    }

    /// How many objects of `entity`, sub-entities included, the store holds (those matching
    /// `predicate`, when given).
    func storedCount(_ entity: String, where predicate: String? = nil) throws -> Int {
        try reading { context in
            try context.count(
                for: FetchRequest(entityName: entity, predicate: try predicate.map { try FetchPredicate(format: $0) }))
        }
    }

    /// The values of `keys` of every stored object of `entity`, sub-entities included, as text, the
    /// rows sorted. A key is an attribute or a path through to-one relationships (`department.name`);
    /// `nil` stands for no value, and for a property the object's entity lacks (a `Person` that is not
    /// an `Employee` has no department).
    func stored(_ entity: String, _ keys: [String]) throws -> [[String]] {
        try reading { context in
            try context.fetch(FetchRequest(entityName: entity)).map { object in
                keys.map { Self.text(of: $0, in: object) }
            }
        }
        .sorted { $0.lexicographicallyPrecedes($1) }
    }

    /// The IDs of the stored objects of `entity`, sub-entities included.
    func storedIDs(_ entity: String) throws -> [ManagedObjectID] {
        try reading { context in try context.fetchObjectIDs(FetchRequest(entityName: entity)) }
    }

    /// The keys (values of `properties`) that more than one stored object of `entity`, sub-entities
    /// included, holds: the store's own answer, without reading the objects into a context.
    func storedDuplicates(_ entity: String, on properties: [String]) throws -> [DuplicateKey] {
        try reading { context in
            let coordinator = context.persistentStoreCoordinator
            let entity = try #require(coordinator.managedObjectModel.entity(named: entity))
            let properties = try properties.map { name -> PropertyDescription in
                try #require(entity.attribute(named: name) ?? entity.relationship(named: name), "\(name)")
            }
            return try coordinator.duplicateKeys(of: entity, on: properties, limit: 10)
        }
    }

    /// Runs `body` on a context that never saw the test's changes: on a new coordinator that opens the
    /// file to read only (and gives it up after), or, for the in-memory store, a new context on the
    /// test's coordinator.
    private func reading<T>(_ body: (ManagedObjectContext) throws -> T) throws -> T {
        guard let url else { return try body(graph.makeContext()) }
        let reader = try TestGraph(model: model, storeType: kind.storeType, url: url, options: kind.readOnlyOptions)
        defer { reader.coordinator.removePersistentStore(reader.store) }
        return try body(reader.context)
    }

    private static func text(of keyPath: String, in object: ManagedObject) -> String {
        var object = object
        let path = keyPath.split(separator: ".").map(String.init)
        for relationship in path.dropLast() {
            guard object.entity.relationship(named: relationship) != nil,
                let destination = object.relatedObject(forKey: relationship)
            else { return "nil" }
            object = destination
        }
        guard let attribute = path.last, object.entity.attribute(named: attribute) != nil else { return "nil" }
        switch object[attribute] {
        case .string(let text): return text
        case let value: return value.description
        }
    }
}
