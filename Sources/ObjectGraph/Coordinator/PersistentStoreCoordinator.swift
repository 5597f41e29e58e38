import Foundation

/// Holds a model and one or more stores; routes fetches, fault loads and saves to them, one call at a
/// time, and keeps each store's metadata.
///
/// ```swift
/// let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
/// try coordinator.addPersistentStore(type: InMemoryStore.storeType)
/// ```
///
/// `@unchecked Sendable`: every access to the store list and to the stores happens under `lock`.
public final class PersistentStoreCoordinator: @unchecked Sendable {
    public let managedObjectModel: ManagedObjectModel
    private let lock = NSRecursiveLock()
    private var stores: [any PersistentStore] = []
    private var storesByIdentifier: [String: any PersistentStore] = [:]
    /// Whether some store versions rows by content (`RowVersioning.contentHash`): saves then ask each
    /// row's store for its new version instead of counting.
    private(set) var versionsByContent = false
    /// Whether every store versions rows by content (no per-row store lookup to tell).
    private var allVersionByContent = false
    /// The snapshot of every stored row some object of some root context was filled from (a fetch, a
    /// fault, a key conflict), with the number of such objects. Saves through this coordinator keep the rows current (a
    /// deleted row's entry stays, row-less, while objects still refer to it); an entry goes when its count reaches 0.
    var snapshots: [ManagedObjectID: Snapshot] = [:]
    let didSaveObservers = DidSaveObservers()

    public init(managedObjectModel: ManagedObjectModel) {
        self.managedObjectModel = managedObjectModel
    }

    // MARK: Adding and removing stores

    /// Creates a store of a registered type at `url` and adds it. A new store records this model's
    /// version hash; an existing one must have been written with this model.
    /// - Throws: `StoreError` (`.unknownStoreType`, `.incompatibleModel`) or the store's own error.
    @discardableResult
    public func addPersistentStore(
        type: String, configurationName: String? = nil, at url: URL? = nil,
        options: [String: String] = [:]
    ) throws -> any PersistentStore {
        guard let storeClass = Self.storeClass(named: type) else {
            throw StoreError(
                .unknownStoreType,
                "Store type \(type.debugDescription) is not registered; known types: "
                    + "\(Self.registeredStoreTypes.joined(separator: ", "))",
                url: url)
        }
        if let configurationName, managedObjectModel.configurations[configurationName] == nil {
            throw StoreError(
                .noStoreForEntity, "The model has no configuration named \(configurationName.debugDescription)",
                url: url)
        }
        return try lock.withLock {
            let store = try storeClass.init(
                coordinator: self, configurationName: configurationName, url: url, options: options)
            try store.load()
            if !managedObjectModel.isCompatible(withStoreMetadata: store.metadata) {
                store.willRemove(from: self)
                throw StoreError(
                    .incompatibleModel,
                    "The store was written with a different model "
                        + "(\(managedObjectModel.differences(fromStoreMetadata: store.metadata))); open it with the "
                        + "model that wrote it, or migrate it",
                    url: url)
            }
            if store.metadata.modelVersionHash == nil {
                store.metadata.modelVersionHash = managedObjectModel.versionHash
                store.metadata.entityVersionHashes = managedObjectModel.entityVersionHashes
            }
            if store.metadata.storeType != type { store.metadata.storeType = type }
            stores.append(store)
            storesByIdentifier[store.identifier] = store
            noteVersioning()
            return store
        }
    }

    /// How the stores version rows (call with the lock held, after the stores changed).
    private func noteVersioning() {
        versionsByContent = stores.contains { $0.rowVersioning == .contentHash }
        allVersionByContent = !stores.isEmpty && stores.allSatisfy { $0.rowVersioning == .contentHash }
    }

    /// Removes a store; it is told first so it can clean up.
    public func removePersistentStore(_ store: any PersistentStore) {
        lock.withLock {
            store.willRemove(from: self)
            stores.removeAll { $0 === store }
            storesByIdentifier.removeValue(forKey: store.identifier)
            noteVersioning()
        }
    }

    public var persistentStores: [any PersistentStore] { lock.withLock { stores } }

    public func persistentStore(for url: URL) -> (any PersistentStore)? {
        lock.withLock { stores.first { $0.url?.standardizedFileURL == url.standardizedFileURL } }
    }

    public func metadata(for store: any PersistentStore) -> StoreMetadata { lock.withLock { store.metadata } }

    /// Replaces a store's metadata (type, identifier and model hash are kept); written with the next save.
    public func setMetadata(_ metadata: StoreMetadata, for store: any PersistentStore) {
        lock.withLock {
            var updated = metadata
            updated.storeType = store.metadata.storeType
            updated.identifier = store.metadata.identifier
            updated.modelVersionHash = store.metadata.modelVersionHash
            updated.entityVersionHashes = store.metadata.entityVersionHashes
            store.metadata = updated
        }
    }

    /// The ID a URI made by `ManagedObjectID.uriRepresentation` stands for, when its store is in this
    /// coordinator and its entity in the model.
    public func managedObjectID(forURIRepresentation uri: URL) -> ManagedObjectID? {
        guard let id = ManagedObjectID(uriRepresentation: uri), managedObjectModel.entity(named: id.entityName) != nil
        else { return nil }
        if id.isTemporaryID { return id }
        return lock.withLock { storesByIdentifier[id.storeIdentifier ?? ""] != nil ? id : nil }
    }

    // MARK: Routing (used by contexts)

    /// Whether `store` is one of the coordinator's and holds objects of `entity` (its configuration
    /// names the entity or its root, or it has none).
    public func store(_ store: any PersistentStore, holds entity: EntityDescription) -> Bool {
        lock.withLock { stores(for: entity).contains { $0 === store } }
    }

    private func stores(for entity: EntityDescription) -> [any PersistentStore] {
        stores.filter { store in
            guard let configuration = store.configurationName else { return true }
            return managedObjectModel.configurations[configuration]?.contains(entity.rootEntity.name) == true
                || managedObjectModel.configurations[configuration]?.contains(entity.name) == true
        }
    }

    private func store(for objectID: ManagedObjectID) throws -> any PersistentStore {
        guard let identifier = objectID.storeIdentifier, let store = storesByIdentifier[identifier] else {
            throw StoreError(.objectNotFound, "No store of this coordinator holds \(objectID)", objectID: objectID)
        }
        return store
    }

    func fetchRows(_ request: StoreFetchRequest) throws -> (rows: [StoreRow], merged: Bool) {
        try lock.withLock {
            let targets = stores(for: request.entity)
            if targets.count == 1 { return (try targets[0].fetchRows(request), false) }
            return (try targets.flatMap { try $0.fetchRows(request.unpaged) }, true)
        }
    }

    func fetchObjectIDs(_ request: StoreFetchRequest) throws -> (ids: [ManagedObjectID], merged: Bool) {
        try lock.withLock {
            let targets = stores(for: request.entity)
            if targets.count == 1 { return (try targets[0].fetchObjectIDs(request), false) }
            return (try targets.flatMap { try $0.fetchObjectIDs(request.unpaged) }, true)
        }
    }

    /// Rows of objects possibly in several stores, one request per store; with `cached`, rows held as
    /// snapshots come from there (objects deleted by a save of this coordinator are left out).
    func rows(for objectIDs: [ManagedObjectID], cached: Bool) throws -> [StoreRow] {
        try lock.withLock {
            var found: [StoreRow] = []
            var byStore: [String: [ManagedObjectID]] = [:]
            for id in objectIDs {
                if cached, let snapshot = snapshots[id] {
                    if let row = snapshot.row { found.append(row) }
                    continue
                }
                byStore[try store(for: id).identifier, default: []].append(id)
            }
            for (identifier, ids) in byStore {
                let store = storesByIdentifier[identifier]!
                found += ids.count == 1 ? try store.row(for: ids[0]).map { [$0] } ?? [] : try store.rows(for: ids)
            }
            return found
        }
    }

    /// Every stored row of `entity` (sub-entities included when asked), handed to `body` `batchSize`
    /// at a time as each store reads them, one store after another — for exports and copies that
    /// should not hold a whole table (see `PersistentStore.enumerateRows`). The coordinator stays
    /// locked meanwhile; `body` may call it.
    public func enumerateRows(
        of entity: EntityDescription, includingSubentities: Bool = true, batchSize: Int = 1_000,
        _ body: ([StoreRow]) throws -> Void
    ) throws {
        let request = StoreFetchRequest(
            entity: entity, predicate: nil, sortDescriptors: [], includesSubentities: includingSubentities,
            fetchLimit: 0, fetchOffset: 0)
        try lock.withLock {
            for store in stores(for: entity) { try store.enumerateRows(request, batchSize: batchSize, body) }
        }
    }

    /// The stored rows of objects, as their stores have them now (objects no longer stored are left
    /// out; the order is free).
    public func storedRows(for objectIDs: [ManagedObjectID]) throws -> [StoreRow] {
        try rows(for: objectIDs, cached: false)
    }

    /// The stored destinations of a to-many relationship of an object, in stored order.
    public func storedDestinations(
        of relationship: RelationshipDescription, for objectID: ManagedObjectID
    ) throws -> [ManagedObjectID] {
        try destinations(of: relationship, for: objectID)
    }

    /// The stored rows of `entity` (sub-entities included) whose `properties` hold one of `keys`
    /// (`properties.count` values each, one key after another), as the stores have them now; no
    /// object is registered anywhere (a re-run compares its records with them).
    public func storedRows(
        of entity: EntityDescription, matching keys: [AttributeValue], on properties: [PropertyDescription]
    ) throws -> [StoreRow] {
        try rows(of: entity, matching: keys, on: properties)
    }

    /// Whether the stores hold each of several states of objects of `entity` exactly (see
    /// `PersistentStore.storedEqual`): a re-run's unchanged records, told without reading their rows.
    public func storedEqual(
        _ entity: EntityDescription, values: [AttributeValue], properties: [PropertyDescription], keyCount: Int
    ) throws -> [Bool] {
        try lock.withLock {
            var held = [Bool](repeating: false, count: properties.isEmpty ? 0 : values.count / properties.count)
            for store in stores(for: entity) {
                let found = try store.storedEqual(entity, values: values, properties: properties, keyCount: keyCount)
                for (index, equal) in found.enumerated() where equal { held[index] = true }
            }
            return held
        }
    }

    /// Stored rows of `entity` whose `attributes` hold one of `keys` (uniqueness checks).
    func rows(
        of entity: EntityDescription, matching keys: [AttributeValue], on properties: [PropertyDescription]
    ) throws -> [StoreRow] {
        try lock.withLock {
            let stores = stores(for: entity)
            // One store (the usual case): its rows as they are, not copied into a new array.
            if stores.count == 1 { return try stores[0].rows(of: entity, matching: keys, on: properties) }
            return try stores.flatMap { try $0.rows(of: entity, matching: keys, on: properties) }
        }
    }

    /// The IDs of the stored objects of `entity` (sub-entities included) whose `properties` hold one of
    /// `keys` (`properties.count` values each, one key after another), each with its key; read from
    /// the stores' key indexes without reading rows or registering objects anywhere.
    public func objectIDs(
        of entity: EntityDescription, matching keys: [AttributeValue], on properties: [PropertyDescription]
    ) throws -> [KeyedObjectID] {
        try lock.withLock {
            try stores(for: entity).flatMap { try $0.objectIDs(of: entity, matching: keys, on: properties) }
        }
    }

    /// Keys on `properties` more than one stored object of `entity` holds (at most `limit`, per store).
    public func duplicateKeys(
        of entity: EntityDescription, on properties: [PropertyDescription], limit: Int
    ) throws -> [DuplicateKey] {
        try lock.withLock {
            try stores(for: entity).flatMap { try $0.duplicateKeys(of: entity, on: properties, limit: limit) }
        }
    }

    /// Whether every store of `entity` refuses objects without `attribute` (see the store's method).
    public func enforcesPresence(of attribute: AttributeDescription, in entity: EntityDescription) throws -> Bool {
        try lock.withLock {
            let candidates = stores(for: entity)
            return try !candidates.isEmpty
                && candidates.allSatisfy { try $0.enforcesPresence(of: attribute, in: entity) }
        }
    }

    func countRows(_ request: StoreFetchRequest) throws -> Int {
        try lock.withLock { try stores(for: request.entity).reduce(0) { $0 + (try $1.countRows(request)) } }
    }

    func destinations(
        of relationship: RelationshipDescription, for objectID: ManagedObjectID
    ) throws -> [ManagedObjectID] {
        guard !relationship.isTransient else { return [] }  // no store holds them
        return try lock.withLock { try store(for: objectID).destinations(of: relationship, for: objectID) }
    }

    /// Permanent IDs for `count` new objects of `entity` from the store that will hold them: references
    /// it hands out, or — when it keeps the entity under a key (`referenceAttribute(for:)`) — each
    /// object's value of that attribute, which `value(i, attribute)` gives for object `i`.
    /// - Throws: `StoreError.constraintViolation` when an object has no value for the key yet.
    func newObjectIDs(
        for entity: EntityDescription, in assigned: String? = nil, count: Int,
        value: (Int, AttributeDescription) -> AttributeValue
    ) throws -> [ManagedObjectID] {
        try lock.withLock {
            let candidates = stores(for: entity)
            guard let store = assigned.flatMap({ id in candidates.first { $0.identifier == id } }) ?? candidates.first
            else {
                throw StoreError(
                    .noStoreForEntity,
                    "No store of this coordinator holds entity \(entity.name); add a store (or one whose "
                        + "configuration includes it) before saving"
                )
            }
            let template = ManagedObjectID(
                entityName: entity.name, storeIdentifier: store.identifier, reference: .temporary(0))
            guard let attribute = store.referenceAttribute(for: entity) else {
                return try store.newReferences(for: entity, count: count).map { template.withReference($0) }
            }
            return try (0..<count).map { index in
                guard let key = ManagedObjectID.Reference(key: value(index, attribute)) else {
                    throw StoreError(
                        .constraintViolation,
                        "\(entity.name).\(attribute.name) is the key the store keeps \(entity.name) objects under; "
                            + "give it a value before the object is saved or gets its permanent ID",
                        url: store.url)
                }
                return template.withReference(key)
            }
        }
    }

    /// Whether the store holding `entity` keeps its objects under one of their attributes (see
    /// `PersistentStore.referenceAttribute(for:)`).
    public func referenceAttribute(for entity: EntityDescription) -> AttributeDescription? {
        referenceAttribute(for: entity, inStore: nil)
    }

    /// The same for the store with identifier `store` (`nil`: the first that holds the entity).
    func referenceAttribute(for entity: EntityDescription, inStore store: String?) -> AttributeDescription? {
        lock.withLock {
            let candidates = stores(for: entity)
            let chosen = store.flatMap { id in candidates.first { $0.identifier == id } } ?? candidates.first
            return chosen?.referenceAttribute(for: entity)
        }
    }

    /// The versions of rows a save wrote (`previous`: the versions they were read at, `nil` for new
    /// rows), as their stores count them.
    func writtenVersions(of rows: [StoreRow], previous: (Int) -> Int64?) -> [Int64] {
        zip(rows, countedVersions(of: rows, previous: previous)).map { $1 ?? $0.contentVersion }
    }

    /// The versions of rows a save wrote where their stores count versions; `nil` where a store
    /// versions rows by content (the row's `contentVersion`, left for the caller to compute when it
    /// needs it, outside the lock).
    func countedVersions(of rows: [StoreRow], previous: (Int) -> Int64?) -> [Int64?] {
        lock.withLock {
            guard versionsByContent else { return rows.indices.map { (previous($0) ?? 0) + 1 } }
            if allVersionByContent { return Array(repeating: nil, count: rows.count) }
            return rows.indices.map { index in
                switch (try? store(for: rows[index].objectID))?.rowVersioning ?? .counter {
                case .counter: return (previous(index) ?? 0) + 1
                case .contentHash: return nil
                }
            }
        }
    }

    /// Runs `body` with the coordinator locked: no other context of the coordinator reads or saves
    /// meanwhile (the lock is recursive, so `body` may call the coordinator).
    func performLocked<T>(_ body: () throws -> T) rethrows -> T {
        try lock.withLock(body)
    }

    /// Runs `body` with the coordinator locked: no context of it reads or saves meanwhile (the lock
    /// is recursive, so `body` may save). How an importer writes its own metadata in the very
    /// transaction of one context's save (`setMetadata`, then `save()`, inside `body`).
    public func performAndWait<T>(_ body: () throws -> T) rethrows -> T {
        try performLocked(body)
    }

    /// Whether objects of `entity` can be written by `execute(_:)`: one store holds the entity and it
    /// supports batch inserts, and no derived value is computed from the entity's objects (a batch
    /// insert writes rows as given, and derived values are computed by saves).
    public func supportsBatchInsert(for entity: EntityDescription) -> Bool {
        guard !entity.hasDerivations else { return false }
        return lock.withLock {
            let candidates = stores(for: entity)
            return candidates.count == 1 && candidates[0].supportsBatchInsert
        }
    }

    /// Runs a batch insert (`BatchInsertRequest`): the objects go straight to the store, bypassing
    /// contexts. Returns their IDs, `nil` for objects that would break a uniqueness constraint.
    /// - Throws: `StoreError` when the store does not support batch inserts or the write fails (then
    ///   nothing of the request is written).
    public func execute(_ request: BatchInsertRequest) throws -> [ManagedObjectID?] {
        try lock.withLock {
            let candidates = stores(for: request.entity)
            guard candidates.count == 1 else {
                throw StoreError(
                    .noStoreForEntity,
                    "A batch insert of \(request.entity.name) needs exactly one store for the entity; there are "
                        + "\(candidates.count)"
                )
            }
            return try candidates[0].insertObjects(request)
        }
    }

    /// Writes each store's metadata now (what `setMetadata(_:for:)` changed), without objects to save.
    public func saveMetadata() throws {
        try lock.withLock { for store in stores { try store.save(SaveChangesRequest()) } }
    }

    /// Splits a save by store and hands each store its part, in the order the stores were added. Each
    /// store writes its part atomically; a failing store stops the save, and the stores before it keep
    /// what they wrote (as in Core Data, no transaction spans stores).
    func save(_ request: SaveChangesRequest) throws {
        try lock.withLock {
            if stores.count == 1 {
                try stores[0].save(request)
            } else {
                try saveByStore(request)
            }
            noteSaved(request)
        }
    }

    private func saveByStore(_ request: SaveChangesRequest) throws {
        var parts: [String: SaveChangesRequest] = [:]
        func part(_ id: ManagedObjectID) throws -> String { try store(for: id).identifier }
        for row in request.insertedRows { parts[try part(row.objectID), default: .init()].insertedRows.append(row) }
        for row in request.updatedRows { parts[try part(row.objectID), default: .init()].updatedRows.append(row) }
        for deleted in request.deletedObjects {
            parts[try part(deleted.objectID), default: .init()].deletedObjects.append(deleted)
        }
        for change in request.toManyChanges {
            parts[try part(change.objectID), default: .init()].toManyChanges.append(change)
        }
        // In the order the stores were added; each writes its part atomically, but no transaction
        // spans two stores: when a later store fails, the earlier ones keep what they wrote.
        for store in stores {
            guard let part = parts[store.identifier] else { continue }
            try store.save(part)
        }
    }
}
