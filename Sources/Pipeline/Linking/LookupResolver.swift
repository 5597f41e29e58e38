import Foundation
import ModelFiles
import ObjectGraph

/// Resolves the keys of one lookup (a to-one relationship found by its destination's key) to objects
/// of a context, a batch at a time, as the import advice has it (semantics §8), without reading rows:
///
/// 1. keys met before in the batch come from the batch's cache of objects;
/// 2. keys of objects the context inserted and has not saved yet are found among them;
/// 3. keys of stored objects seen earlier in the run come from `KnownKeys` (IDs only, bounded,
///    shared by the run's workers), turned into faults of the context;
/// 4. the rest is looked up in the store together, 500 keys per query, reading only the key and the
///    ID from the key's index (`PersistentStoreCoordinator.objectIDs(of:matching:on:)`);
/// 5. keys still without an object create one (find-or-create) or stay unresolved (must-exist).
///
/// Linking an object to a fault never loads the fault (its to-many inverse keeps the edit), so a
/// lookup costs no row read. The context must be a root context (its parent's unsaved objects are
/// not seen). Call `reset()` whenever the context is reset.
public final class LookupResolver {
    public let lookup: PipelineConfig.Lookup
    public let entity: EntityDescription
    private let attributes: [AttributeDescription]
    private let known: KnownKeys
    private var batch: [[AttributeValue]: ManagedObject] = [:]
    /// The IDs `resolveIDs` found for the batch's keys.
    private var batchIDs: [[AttributeValue]: ManagedObjectID] = [:]
    private var singleIDs: [AttributeValue: ManagedObjectID] = [:]
    /// How many store queries resolving took (one per 500 new keys of a batch).
    public private(set) var fetchCount = 0

    /// - Parameter known: the run's cache of stored keys, shared by every resolver of the same
    ///   entity and key (a new one by default).
    public init(lookup: PipelineConfig.Lookup, model: ManagedObjectModel, known: KnownKeys? = nil) throws {
        guard let entity = model.entity(named: lookup.entity) else {
            throw PipelineFileError(issues: [
                ModelFileIssue(file: "", line: 0, column: 0, message: "the model has no entity \(lookup.entity)")
            ])
        }
        self.lookup = lookup
        self.entity = entity
        attributes = lookup.key.compactMap { entity.attribute(named: $0.attribute) }
        self.known = known ?? KnownKeys()
    }

    /// The object for each key (`nil` keys stay `nil`; so do unknown keys of a must-exist lookup).
    /// - Throws: errors of the context's store.
    public func resolve(_ keys: [[AttributeValue]?], in context: ManagedObjectContext) throws -> [ManagedObject?] {
        var missing = Set<[AttributeValue]>()
        for case let key? in keys where batch[key] == nil { missing.insert(key) }
        if !missing.isEmpty { findUnsaved(&missing, in: context) }
        if !missing.isEmpty {
            let ids = known.objectIDs(for: missing)
            for (key, id) in ids {
                batch[key] = context.object(with: id)
                missing.remove(key)
            }
        }
        if !missing.isEmpty { try fetch(missing, in: context) }
        return keys.map { key in
            guard let key else { return nil }
            if let object = batch[key] { return object.isDeleted ? nil : object }
            guard lookup.createsMissing else { return nil }
            let object = context.insertNewObject(forEntityName: entity.name)
            for (attribute, value) in zip(attributes, key) { object[attributeAt: attribute.index] = value }
            batch[key] = object
            return object
        }
    }

    /// The stored object's ID for each key, without a context (for batch inserts): from the batch's
    /// cache, `KnownKeys`, then the store, as `resolve` does. Keys nobody holds stay `nil`, whatever
    /// `missing:` says — creating objects takes a context.
    public func resolveIDs(
        _ keys: [[AttributeValue]?], in coordinator: PersistentStoreCoordinator
    ) throws -> [ManagedObjectID?] {
        if attributes.count == 1 { return try resolveIDs(values: keys.map { $0?[0] }, in: coordinator) }
        var missing = Set<[AttributeValue]>()
        for case let key? in keys where batchIDs[key] == nil { missing.insert(key) }
        if !missing.isEmpty {
            for (key, id) in known.objectIDs(for: missing) {
                batchIDs[key] = id
                missing.remove(key)
            }
        }
        if !missing.isEmpty {
            for item in try fetchStored(missing, in: coordinator) where batchIDs[item.key] == nil {
                batchIDs[item.key] = item.objectID
            }
        }
        return keys.map { key in key.flatMap { batchIDs[$0] } }
    }

    /// `resolveIDs` for a key of one attribute, without an array per key: `KnownKeys` answers for the
    /// whole batch under one lock; only what it does not hold is hashed and looked up further.
    func resolveIDs(values: [AttributeValue?], in coordinator: PersistentStoreCoordinator) throws -> [ManagedObjectID?]
    {
        var ids = known.objectIDs(forValues: values)
        var missing = Set<AttributeValue>()
        for position in values.indices where ids[position] == nil {
            guard let value = values[position] else { continue }
            if let id = singleIDs[value] { ids[position] = id } else { missing.insert(value) }
        }
        guard !missing.isEmpty else { return ids }
        for item in try fetchStored(Set(missing.map { [$0] }), in: coordinator) where singleIDs[item.key[0]] == nil {
            singleIDs[item.key[0]] = item.objectID
        }
        for position in values.indices where ids[position] == nil {
            if let value = values[position] { ids[position] = singleIDs[value] }
        }
        return ids
    }

    /// Objects of the entity the context inserted and has not saved (one pass over its inserts).
    private func findUnsaved(_ missing: inout Set<[AttributeValue]>, in context: ManagedObjectContext) {
        for object in context.insertedObjects(of: entity) {
            let key = attributes.map { object[attributeAt: $0.index] }
            if missing.remove(key) != nil { batch[key] = object }
            if missing.isEmpty { return }
        }
    }

    private func fetch(_ missing: Set<[AttributeValue]>, in context: ManagedObjectContext) throws {
        for item in try fetchStored(missing, in: context.persistentStoreCoordinator) where batch[item.key] == nil {
            batch[item.key] = context.object(with: item.objectID)
        }
    }

    /// The stored objects holding the keys, 500 keys per store query; remembered in `KnownKeys`.
    private func fetchStored(
        _ missing: Set<[AttributeValue]>, in coordinator: PersistentStoreCoordinator
    ) throws -> [KeyedObjectID] {
        let keys = Array(missing)
        var found: [KeyedObjectID] = []
        var start = 0
        while start < keys.count {
            let end = min(start + 500, keys.count)
            fetchCount += 1
            found += try coordinator.objectIDs(of: entity, matching: keys[start..<end].flatMap { $0 }, on: attributes)
            start = end
        }
        known.remember(found)
        return found
    }

    /// Forgets the batch's objects (after the context's `reset()`); the run's known IDs stay.
    public func reset() {
        batch.removeAll(keepingCapacity: true)
        batchIDs.removeAll(keepingCapacity: true)
        singleIDs.removeAll(keepingCapacity: true)
    }
}
