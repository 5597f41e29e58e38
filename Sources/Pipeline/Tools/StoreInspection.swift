import Foundation
import ModelFiles
import ObjectGraph
import Stores

/// What `sluice inspect` shows about a store.
public struct StoreSummary: Sendable, Codable {
    public var path: String
    public var type: String
    public var identifier: String
    public var modelVersionHash: String?
    /// Where the model came from: `stored` (the store's metadata), `given` (`--model`) or `none`.
    public var model: String
    /// Objects per entity (each entity's own, sub-entities counted on their own line); `nil` when no
    /// model is known.
    public var entities: [String: Int]?
    /// Whether the store holds the checkpoint of an interrupted `commit: batches` run.
    public var interruptedRun: Bool
    /// The metadata's other entries (the stored model and checkpoint left out).
    public var userInfo: [String: String]
    /// Each entity's schema and first objects (`nil` when no model is known).
    public var schema: [EntitySchema]?

    /// An entity as `inspect` shows it: its properties with their types, and a few of its objects.
    public struct EntitySchema: Sendable, Codable {
        public var entity: String
        /// `name: type`, `?` after optional ones; relationships as `→ Destination` or `→> Destination`.
        public var properties: [String]
        /// The first objects (by storage order): property name → value as text (`nil` left out;
        /// a to-one as the destination's key).
        public var rows: [[String: String]]
    }
}

/// Opens stores a run wrote, for `sluice inspect` and `sluice validate`.
public enum StoreInspection {
    /// `summary(ofStoreAt:model:)` with the model file at `modelPath`, or the stored model when `nil`.
    /// - Throws: `ModelFileError`; what `summary(ofStoreAt:model:)` throws.
    /// - Parameter rows: how many objects of each entity to show.
    public static func summary(
        ofStoreAt path: String, modelAt modelPath: String?, rows: Int = 3
    ) throws
        -> StoreSummary
    {
        try summary(ofStoreAt: URL(fileURLWithPath: path), model: loadModel(modelPath), rows: rows)
    }

    /// `violations(inStoreAt:model:)` with the model file at `modelPath`, or the stored model when `nil`.
    /// - Throws: `ModelFileError`; what `violations(inStoreAt:model:)` throws.
    public static func violations(inStoreAt path: String, modelAt modelPath: String?) throws -> [GraphViolation] {
        try violations(inStoreAt: URL(fileURLWithPath: path), model: loadModel(modelPath))
    }

    /// The model file at `path`, when one is given.
    static func loadModel(_ path: String?) throws -> ManagedObjectModel? {
        try path.map { try ModelFile.load(contentsOf: URL(fileURLWithPath: $0)) }
    }

    /// Reads the store's metadata and, when a model is known (given, or stored by the run that wrote
    /// the store), counts its objects per entity. Opens the file read-only.
    /// - Throws: `StoreError`; `ModelFileError` for a stored model that does not read.
    public static func summary(
        ofStoreAt url: URL, model given: ManagedObjectModel? = nil, rows: Int = 0
    ) throws
        -> StoreSummary
    {
        let metadata = try TargetStore.metadata(ofStoreAt: url)
        let model = try given ?? StoredModel.model(in: metadata, store: url.path)
        var summary = StoreSummary(
            path: url.path, type: metadata.storeType, identifier: metadata.identifier,
            modelVersionHash: metadata.modelVersionHash,
            model: given != nil ? "given" : model != nil ? "stored" : "none",
            entities: nil, interruptedRun: metadata.userInfo[BatchCheckpoint.key] != nil,
            userInfo: metadata.userInfo.filter { $0.key != StoredModel.key && $0.key != BatchCheckpoint.key })
        if let model {
            (summary.entities, summary.schema) = try withStore(at: url, model: model) { context in
                var counts: [String: Int] = [:]
                var schema: [StoreSummary.EntitySchema] = []
                for entity in model.entities.sorted(by: { $0.name < $1.name }) {
                    var request = FetchRequest(entityName: entity.name)
                    request.includesSubentities = false
                    counts[entity.name] = try context.count(for: request)
                    request.fetchLimit = rows
                    let objects = rows > 0 ? try context.fetch(request) : []
                    schema.append(
                        .init(entity: entity.name, properties: properties(of: entity), rows: objects.map(row)))
                }
                return (counts, schema)
            }
        }
        return summary
    }

    /// Every rule of the model the stored graph breaks (`GraphValidation`).
    /// - Parameter given: the model to validate against; by default the one stored with the store.
    /// - Throws: `StoreError`; `ModelFileError`; `StoreInspection.NoModel` when none is known.
    public static func violations(inStoreAt url: URL, model given: ManagedObjectModel? = nil) throws -> [GraphViolation]
    {
        let metadata = try TargetStore.metadata(ofStoreAt: url)
        guard let model = try given ?? StoredModel.model(in: metadata, store: url.path) else {
            throw NoModel(path: url.path)
        }
        return try withStore(at: url, model: model) { context in
            try GraphValidation.violations(in: context.persistentStoreCoordinator)
        }
    }

    private static func properties(of entity: EntityDescription) -> [String] {
        entity.attributes.map { "\($0.name): \($0.type)\($0.isOptional ? "?" : "")" }
            + entity.relationships.map {
                "\($0.name): \($0.isToMany ? "->>" : "->") \($0.destinationEntityName)\($0.isOptional ? "?" : "")"
            }
    }

    /// An object's values as text: attributes as stored, a to-one as its destination's key (or
    /// object ID).
    private static func row(_ object: ManagedObject) -> [String: String] {
        var row: [String: String] = [:]
        func text(_ value: AttributeValue) -> String {
            if case .string(let text) = value { return text }
            return value.description
        }
        for attribute in object.entity.attributes where !object[attribute.name].isNull {
            row[attribute.name] = text(object[attribute.name])
        }
        for relationship in object.entity.relationships where !relationship.isToMany {
            guard let destination = object.value(forKey: relationship.name) as? ManagedObject else { continue }
            let key = destination.entity.uniquenessConstraints.first ?? []
            row[relationship.name] =
                key.isEmpty ? "\(destination.objectID)" : key.map { text(destination[$0]) }.joined(separator: ", ")
        }
        return row
    }

    /// The store holds no model and none was given.
    public struct NoModel: Error, CustomStringConvertible {
        public var path: String
        public var description: String {
            "\(path) does not hold the model it was written with (it was not written by `sluice run` or `sluice "
                + "import`); give it with --model"
        }
    }

    private static func withStore<T>(
        at url: URL, model: ManagedObjectModel, _ body: (ManagedObjectContext) throws -> T
    ) throws -> T {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        let type = TargetStore.type(ofStoreAt: url)
        let store = try TargetStore.add(
            to: coordinator, at: url, type: type, options: type == SQLiteStore.storeType ? ["read_only": "true"] : [:])
        defer { coordinator.removePersistentStore(store) }
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        return try context.performAndWait { try body(context) }
    }
}
