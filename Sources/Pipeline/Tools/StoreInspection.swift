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

    /// An entity as `inspect` shows it: its table and columns by their stored names, and a few of
    /// its objects.
    public struct EntitySchema: Sendable, Codable {
        public var entity: String
        /// The table the entity's objects are stored in (a sub-entity shares its root's).
        public var table: String
        public var columns: [Column]
        /// The first objects (by storage order), one value per column (`null` where none).
        public var rows: [[String: Value]]
    }

    /// A stored column: an attribute, or a to-one relationship holding its destination's key.
    public struct Column: Sendable, Codable {
        public var name: String
        /// The attribute's type, or `reference` for a to-one.
        public var type: String
        public var optional: Bool
        /// For a to-one: the destination's table.
        public var references: String?
        /// For a decimal of a declared scale: the digits after the point its values are shown with.
        public var scale: Int?

        /// A decimal of the column as written: with the scale's digits (`2684.00`).
        public func text(_ decimal: Decimal) -> String { DecimalText.text(decimal, scale: scale) }
    }

    /// A stored value with its JSON type: numbers as numbers, booleans as booleans, `null`; dates
    /// (ISO 8601), binary (base64), UUIDs and URIs as text.
    public enum Value: Sendable, Codable, Equatable {
        case null
        case integer(Int64)
        case decimal(Decimal)
        case double(Double)
        case flag(Bool)
        case text(String)

        /// `value` as `attribute` has it written (a calendar date as `2024-01-31`).
        public init(_ value: AttributeValue, as attribute: AttributeDescription? = nil) {
            switch value {
            case .null: self = .null
            case .integer(let integer): self = .integer(integer)
            case .decimal(let decimal): self = .decimal(decimal)
            case .double(let double) where double.isFinite: self = .double(double)
            case .float(let float) where float.isFinite: self = .double(Double(float.description) ?? Double(float))
            case .boolean(let flag): self = .flag(flag)
            default: self = .text(ExportWriter.text(value, as: attribute) ?? "")
            }
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if container.decodeNil() {
                self = .null
            } else if let flag = try? container.decode(Bool.self) {
                self = .flag(flag)
            } else if let integer = try? container.decode(Int64.self) {
                self = .integer(integer)
            } else if let double = try? container.decode(Double.self) {
                self = .double(double)
            } else {
                self = .text(try container.decode(String.self))
            }
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .null: try container.encodeNil()
            case .integer(let integer): try container.encode(integer)
            case .decimal(let decimal): try container.encode(decimal)
            case .double(let double): try container.encode(double)
            case .flag(let flag): try container.encode(flag)
            case .text(let text): try container.encode(text)
            }
        }
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
        try summary(ofStoreAt: TargetStore.url(path), model: loadModel(modelPath), rows: rows)
    }

    /// `violations(inStoreAt:model:)` with the model file at `modelPath`, or the stored model when `nil`.
    /// - Throws: `ModelFileError`; what `violations(inStoreAt:model:)` throws.
    public static func violations(inStoreAt path: String, modelAt modelPath: String?) throws -> [GraphViolation] {
        try violations(inStoreAt: TargetStore.url(path), model: loadModel(modelPath))
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
        let model = try given ?? StoredModel.model(in: metadata, store: TargetStore.name(of: url))
        var summary = StoreSummary(
            path: TargetStore.name(of: url), type: metadata.storeType, identifier: metadata.identifier,
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
                        .init(
                            entity: entity.name, table: entity.storageTableName, columns: columns(of: entity),
                            rows: objects.map(row)))
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
        guard let model = try given ?? StoredModel.model(in: metadata, store: TargetStore.name(of: url)) else {
            throw NoModel(path: TargetStore.name(of: url))
        }
        return try withStore(at: url, model: model) { context in
            try GraphValidation.violations(in: context.persistentStoreCoordinator)
        }
    }

    /// The entity's stored columns, by stored name, in the table's order (`columnOrder`): attributes
    /// and to-ones (their destination's key).
    private static func columns(of entity: EntityDescription) -> [StoreSummary.Column] {
        let properties: [PropertyDescription] =
            entity.attributes.filter { !$0.isTransient }
            + entity.relationships.filter { !$0.isToMany && !$0.isTransient }
        return entity.rootEntity.inColumnOrder(properties) { $0.name }.map { property in
            if let relationship = property as? RelationshipDescription {
                return .init(
                    name: relationship.storageColumnName, type: "reference", optional: relationship.isOptional,
                    references: relationship.destinationEntity?.storageTableName ?? relationship.destinationEntityName)
            }
            let attribute = property as? AttributeDescription
            return .init(
                name: property.storageColumnName, type: attribute.map { "\($0.type)" } ?? "",
                optional: property.isOptional,
                scale: attribute?.scale)
        }
    }

    /// An object's stored values by column: attributes as stored, a to-one as its destination's key
    /// (or object ID).
    private static func row(_ object: ManagedObject) -> [String: StoreSummary.Value] {
        var row: [String: StoreSummary.Value] = [:]
        for attribute in object.entity.attributes where !attribute.isTransient {
            row[attribute.storageColumnName] = .init(object[attribute.name], as: attribute)
        }
        for relationship in object.entity.relationships where !relationship.isToMany {
            guard let destination = object.value(forKey: relationship.name) as? ManagedObject else {
                row[relationship.storageColumnName] = .null
                continue
            }
            let key = destination.entity.uniquenessConstraints.first ?? []
            row[relationship.storageColumnName] =
                key.count == 1
                ? .init(destination[key[0]], as: destination.entity.attribute(named: key[0]))
                : .text(
                    key.isEmpty ? "\(destination.objectID)" : key.map { "\(destination[$0])" }.joined(separator: ", "))
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
            to: coordinator, at: url, type: type,
            options: type == SQLiteStore.storeType || type == PostgresStore.storeType ? ["read_only": "true"] : [:])
        defer { coordinator.removePersistentStore(store) }
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        return try context.performAndWait { try body(context) }
    }
}
