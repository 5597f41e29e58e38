import Foundation
import OrderedCollections

/// The base of stores that read their whole file when added and write it whole on every save — the
/// XML and binary stores, and stores users write (a JSON-lines file, say) — as Core Data's atomic
/// stores (semantics §7). A subclass registers under a type name
/// (`PersistentStoreCoordinator.registerStoreType(MyStore.self, named: "MyFormat")`) and overrides:
///
/// - `load()`: read the file; for each object make its ID with `objectID(for:referenceObject:)`,
///   a cache node, fill it, and `addCacheNodes(_:)`. Not called for a new store (missing or
///   zero-length file): `isNew` tells.
/// - `save()`: write every node (`cacheNodes`) and `metadata` to `url` — `writeAtomically(_:)`
///   writes a temporary file and renames it over the old one, so a crash never leaves a torn file.
/// - optionally `newReferenceObject(for:)` (a stable, never reused key; a UUID by default),
///   `newCacheNode(for:)`, `updateCacheNode(_:from:)`, `willRemoveCacheNodes(_:)`, `willRemove(from:)`.
///
/// Fetches are answered from the nodes by the same predicate evaluator as the in-memory store; a save
/// checks row versions (optimistic locking) and, if the subclass's `save()` fails, leaves the nodes
/// as they were. Like every store, it is called only with the coordinator's lock held.
///
/// With the option `deferred_writes: true` saves change the nodes only and `flush()` writes the file
/// once: for a file nobody reads until it is finished (an import's work copy), which a save per
/// batch would rewrite whole each time — quadratic in the number of objects.
open class AtomicStore: PersistentStore {
    public let url: URL?
    public let configurationName: String?
    public var metadata: StoreMetadata
    public let model: ManagedObjectModel
    public let options: [String: String]
    /// Whether the store had no file, or an empty one, when added: nothing to load.
    public let isNew: Bool
    /// Whether this store created an empty file at `url` that no save has written yet.
    private let foundEmptyFile: Bool
    private var hasSaved = false
    private var nodes: OrderedDictionary<ManagedObjectID, AtomicStoreCacheNode> = [:]
    /// `deferred_writes`: saves wait for `flush()`.
    private let defersWrites: Bool
    /// Saves applied to the nodes since the file was last written (`deferred_writes`).
    private var unwritten = false
    /// Hash indexes of uniqueness keys, built at the first lookup of each and kept by saves.
    private var keyIndexes: StoredKeyIndexes

    public required init(
        coordinator: PersistentStoreCoordinator, configurationName: String?, url: URL?, options: [String: String]
    ) throws {
        self.url = url
        self.configurationName = configurationName
        self.options = options
        model = coordinator.managedObjectModel
        var size: Int?
        if let url, let attributes = try? FileManager.default.attributesOfItem(atPath: url.path) {
            size = (attributes[.size] as? NSNumber)?.intValue ?? 0
        }
        isNew = size == nil || size == 0
        foundEmptyFile = size == 0
        defersWrites = options["deferred_writes"] == "true"
        keyIndexes = StoredKeyIndexes(model: coordinator.managedObjectModel)
        metadata = StoreMetadata(storeType: String(describing: Swift.type(of: self)))
    }

    // MARK: For subclasses

    /// Reads the file into cache nodes. The default fails for an existing file (a subclass that can
    /// read must override); a new store has nothing to read.
    open func load() throws {
        guard isNew else {
            throw StoreError(
                .invalidOption, "\(Swift.type(of: self)) does not read stores (it does not override load())", url: url)
        }
    }

    /// Writes every cache node and the metadata to `url`. The default fails.
    open func save() throws {
        throw StoreError(
            .invalidOption, "\(Swift.type(of: self)) does not write stores (it does not override save())", url: url)
    }

    /// A new, never reused reference for an object of `entity` about to be saved for the first time:
    /// its key in the file for good (IDs survive "save as" and migration). A UUID by default.
    open func newReferenceObject(for entity: EntityDescription) -> String {
        UUID().uuidString
    }

    /// The cache node of an object saved for the first time (its ID already holds its reference).
    open func newCacheNode(for row: StoreRow) -> AtomicStoreCacheNode {
        let node = AtomicStoreCacheNode(objectID: row.objectID, entity: row.entity)
        node.attributeValues = row.attributeValues
        node.toOneDestinations = row.toOneDestinations
        return node
    }

    /// Copies an updated object's values into its node.
    open func updateCacheNode(_ node: AtomicStoreCacheNode, from row: StoreRow) {
        node.attributeValues = row.attributeValues
        node.toOneDestinations = row.toOneDestinations
    }

    /// The nodes of deleted objects are about to go.
    open func willRemoveCacheNodes(_ nodes: [AtomicStoreCacheNode]) {}

    /// The store leaves its coordinator: a zero-length file it found and never saved into is removed.
    open func willRemove(from coordinator: PersistentStoreCoordinator) {
        if foundEmptyFile, !hasSaved, let url,
            (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? NSNumber)?.intValue == 0
        {
            try? FileManager.default.removeItem(at: url)
        }
    }

    /// The ID of the object of `entity` with `referenceObject` (its key in the file).
    public func objectID(for entity: EntityDescription, referenceObject: String) -> ManagedObjectID {
        ManagedObjectID(
            entityName: entity.name, storeIdentifier: metadata.identifier, reference: .string(referenceObject))
    }

    /// The reference object (key in the file) of an ID of this store.
    public func referenceObject(for objectID: ManagedObjectID) -> String? {
        guard case .string(let reference) = objectID.reference else { return nil }
        return reference
    }

    /// Registers nodes `load` made.
    public func addCacheNodes(_ added: [AtomicStoreCacheNode]) {
        for node in added {
            nodes[node.objectID] = node
            keyIndexes.update(node, adding: true)
        }
    }

    /// Answered from a hash index of the key (built on first use, then kept by every save): a save's
    /// key lookups cost its keys, not the number of objects stored.
    public func rows(
        of entity: EntityDescription, matching keys: [AttributeValue], on properties: [PropertyDescription]
    ) throws -> [StoreRow] {
        keyIndexes.objectIDs(of: entity, matching: keys, on: properties) { nodes.values }.compactMap {
            nodes[$0]?.storeRow
        }
    }

    /// Every node, in the order they were added (loaded, then inserted).
    public var cacheNodes: [AtomicStoreCacheNode] { Array(nodes.values) }

    public func cacheNode(for objectID: ManagedObjectID) -> AtomicStoreCacheNode? { nodes[objectID] }

    /// Writes `data` to `url` through a temporary file next to it, flushed to disk and renamed over
    /// the old file: readers see the old contents or the new, never a torn file.
    public func writeAtomically(_ data: Data) throws {
        guard let url else { throw StoreError(.io, "\(Swift.type(of: self)) has no URL to write to") }
        let temporary = url.path + ".sluice-save-\(getpid())"
        // A file of this process's own (never another's, nor a link's destination): one a process
        // gone before, that had this number, left at the name is removed first.
        var descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
        if descriptor < 0 && errno == EEXIST {
            unlink(temporary)
            descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
        }
        guard descriptor >= 0 else {
            throw StoreError(.io, "Could not write \(temporary): \(String(cString: strerror(errno)))", url: url)
        }
        let written = data.withUnsafeBytes { bytes -> Bool in
            var offset = 0
            while offset < bytes.count {
                let count = write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { return false }
                offset += count
            }
            return fsync(descriptor) == 0
        }
        let failure = errno
        close(descriptor)
        guard written else {
            unlink(temporary)
            throw StoreError(.io, "Could not write \(temporary): \(String(cString: strerror(failure)))", url: url)
        }
        guard rename(temporary, url.path) == 0 else {
            let reason = String(cString: strerror(errno))
            try? FileManager.default.removeItem(atPath: temporary)
            throw StoreError(.io, "Could not move the saved store into place: \(reason)", url: url)
        }
        hasSaved = true
    }

    // MARK: PersistentStore

    public func fetchRows(_ request: StoreFetchRequest) throws -> [StoreRow] {
        try matchingNodes(request).map(\.storeRow)
    }

    public func countRows(_ request: StoreFetchRequest) throws -> Int {
        try matchingNodes(request.unpaged).count
    }

    private func matchingNodes(_ request: StoreFetchRequest) throws -> [AtomicStoreCacheNode] {
        let candidates = nodes.values.filter { node in
            request.includesSubentities ? node.entity.isKind(of: request.entity) : node.entity === request.entity
        }
        return try request.apply(to: Array(candidates)) { StoredObjectSubject(store: self, object: $0) }
    }

    public func row(for objectID: ManagedObjectID) throws -> StoreRow? { nodes[objectID]?.storeRow }

    public func destinations(
        of relationship: RelationshipDescription, for objectID: ManagedObjectID
    ) throws -> [ManagedObjectID] {
        nodes[objectID]?.toManyDestinations[relationship.index] ?? []
    }

    public func newReferences(for entity: EntityDescription, count: Int) throws -> [ManagedObjectID.Reference] {
        (0..<count).map { _ in .string(newReferenceObject(for: entity)) }
    }

    /// Applies the changes to the nodes, then has the subclass write them; if writing fails, the
    /// nodes go back to what they were.
    public func save(_ request: SaveChangesRequest) throws {
        for row in request.insertedRows where nodes[row.objectID] != nil {
            throw StoreError(.conflict, "\(row.objectID) is already in the store", objectID: row.objectID)
        }
        for row in request.updatedRows { try checkVersion(row.objectID, row.version) }
        for deleted in request.deletedObjects { try checkVersion(deleted.objectID, deleted.version) }

        if defersWrites {
            // Nothing after this point fails (the file is written by `flush()`): no copy to go back to.
            apply(request)
            unwritten = true
            return
        }
        let before = nodes
        let touched = Set(request.updatedRows.map(\.objectID)).union(request.toManyChanges.map(\.objectID))
        let saved = touched.compactMap { id in nodes[id].map { (id, copy($0)) } }
        do {
            apply(request)
            try save()
        } catch {
            nodes = before
            for (id, copy) in saved { restore(nodes[id]!, from: copy) }
            keyIndexes = StoredKeyIndexes(model: model)  // built again at the next lookup
            throw error
        }
    }

    /// Writes the saves `deferred_writes` held back (nothing when there are none).
    /// - Throws: what the subclass's `save()` throws; the nodes keep the changes, unwritten.
    public func flush() throws {
        guard unwritten else { return }
        try save()
        unwritten = false
    }

    /// The request's changes made to the nodes.
    private func apply(_ request: SaveChangesRequest) {
        for row in request.insertedRows {
            let node = newCacheNode(for: row)
            nodes[row.objectID] = node
            keyIndexes.update(node, adding: true)
        }
        for row in request.updatedRows {
            let node = nodes[row.objectID]!
            keyIndexes.update(node, adding: false)
            updateCacheNode(node, from: row)
            node.version += 1
            keyIndexes.update(node, adding: true)
        }
        for change in request.toManyChanges {
            guard let node = nodes[change.objectID] else { continue }
            var members = OrderedSet(node.toManyDestinations[change.relationship.index] ?? [])
            members.apply(change)
            node.toManyDestinations[change.relationship.index] = Array(members)
        }
        let removed = request.deletedObjects.compactMap { nodes[$0.objectID] }
        if !removed.isEmpty { willRemoveCacheNodes(removed) }
        for deleted in request.deletedObjects {
            if let node = nodes.removeValue(forKey: deleted.objectID) { keyIndexes.update(node, adding: false) }
        }
    }

    private func copy(
        _ node: AtomicStoreCacheNode
    ) -> (Int64, [AttributeValue], [ManagedObjectID?], [Int: [ManagedObjectID]]) {
        (node.version, node.attributeValues, node.toOneDestinations, node.toManyDestinations)
    }

    private func restore(
        _ node: AtomicStoreCacheNode, from copy: (Int64, [AttributeValue], [ManagedObjectID?], [Int: [ManagedObjectID]])
    ) {
        (node.version, node.attributeValues, node.toOneDestinations, node.toManyDestinations) = copy
    }
}

extension AtomicStore: StoredObjectLookup {
    func storedObject(for objectID: ManagedObjectID) -> AtomicStoreCacheNode? { nodes[objectID] }
}
