import Dispatch
import Foundation
import OrderedCollections

/// A scratch pad of managed objects: inserts, updates and deletes stay here until `save()`.
///
/// A context tracks its inserted, updated and deleted objects, keeps at most one object per ID
/// (uniquing), loads values on first access (faulting), keeps both ends of relationships in step,
/// applies delete rules, validates at save, and can `rollback()` to the last committed state or
/// `reset()` to forget every object (how a long import keeps memory flat).
///
/// ```swift
/// let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
/// try context.performAndWait {
///     let d = context.insertNewObject(forEntityName: "Department")
///     d["name"] = "Sales"
///     try context.save()
/// }
/// ```
///
/// `@unchecked Sendable`: a context may be handed to other threads only to call `perform` /
/// `performAndWait`, which run work on its own serial queue; all mutable state is touched only there
/// (or, for `.confinement`, only on the thread that uses it).
public final class ManagedObjectContext: @unchecked Sendable {
    public enum ConcurrencyType: Sendable {
        /// The context owns a private serial queue; use it through `perform` / `performAndWait`.
        case privateQueue
        /// The context is bound to one designated serial queue (the main queue).
        case mainQueue
        /// The context is used only from the thread that made it; no queue.
        case confinement
    }

    public let concurrencyType: ConcurrencyType
    public let persistentStoreCoordinator: PersistentStoreCoordinator
    /// The context a child context loads from and saves into; `nil` for a context of a coordinator.
    public let parent: ManagedObjectContext?
    /// The parent, or the coordinator for a root context.
    let source: any RowSource
    public var name: String?
    /// How `save()` settles objects that changed in the store since this context read them.
    public var mergePolicy: MergePolicy = .error
    /// Uniqueness constraints whose conflicts `save()` never settles by `mergePolicy` but fails on
    /// (a `MergeError` naming them), as under `.error` (a Sluice extension: an import merges a
    /// record into a stored object by its key only, and rejects one that collides on another
    /// constraint). Named by the declaring entity and the constraint's property names.
    public var unmergedConstraints: Set<UniquenessConstraintName> = []
    /// Rules `save()` does not check (a Sluice extension for importers that validate the whole graph
    /// once at the end): an order saved before the lines of a later source arrive may defer
    /// `.minCount`. Empty by default: every rule is checked at every save.
    public var deferredValidationRules: Set<ValidationRule> = []
    /// The first failure of a store to give this context a row or a relationship it asked for while
    /// firing a fault (an I/O error, a damaged file). Such an object gets its entity's default values
    /// instead of trapping; until `reset()`, `save()`, `fetch` and `count` throw this error, so
    /// nothing made up is ever written.
    public private(set) var storeFailure: StoreError?
    let queue: DispatchQueue?
    private let queueToken = UUID()
    /// The thread that made a `.confinement` context.
    private let creatorThread = pthread_self()
    static let queueKey = DispatchSpecificKey<UUID>()

    /// Objects by permanent ID. Inserted objects with temporary IDs are found through `changedObjects`
    /// instead, so inserting and saving costs one dictionary insertion per object, not three.
    ///
    /// `@exclusivity(unchecked)` (both collections): touched once or more per object of an import, only
    /// on the context's queue, and never passed `inout` to code that could reach them again.
    @exclusivity(unchecked) var registry: [ManagedObjectID: ManagedObject] = [:]
    /// Objects whose change state left `.none` since the last save or rollback (append-only; states are checked).
    @exclusivity(unchecked) var changedObjects: [ManagedObject] = []
    /// IDs of objects that stopped using their snapshot, handed to the coordinator in batches.
    @exclusivity(unchecked) var releasedSnapshots: [ManagedObjectID] = []
    /// Whether an object was inserted with a temporary ID since a child last read from this context.
    @exclusivity(unchecked) var hasTemporaryIDs = false
    let didSaveObservers = DidSaveObservers()
    var automaticMerging: DidSaveObservation?

    /// A context of `coordinator` (a root context): it fetches from the stores and saves into them.
    public convenience init(concurrencyType: ConcurrencyType = .privateQueue, coordinator: PersistentStoreCoordinator) {
        self.init(concurrencyType: concurrencyType, coordinator: coordinator, parent: nil)
    }

    /// A child of `parent`: it fetches through the parent (seeing the parent's unsaved changes) and
    /// its `save()` pushes its changes into the parent, not into a store; the parent's save writes
    /// them. Children may have children. Objects a child inserts get permanent IDs when the child
    /// saves, and objects the parent inserted get theirs when a child first reads them, so one ID
    /// names one object at every level.
    public convenience init(concurrencyType: ConcurrencyType = .privateQueue, parent: ManagedObjectContext) {
        self.init(concurrencyType: concurrencyType, coordinator: parent.persistentStoreCoordinator, parent: parent)
    }

    private init(
        concurrencyType: ConcurrencyType, coordinator: PersistentStoreCoordinator, parent: ManagedObjectContext?
    ) {
        self.concurrencyType = concurrencyType
        self.persistentStoreCoordinator = coordinator
        precondition(
            parent?.concurrencyType != .confinement,
            "a parent context needs a queue: make it .privateQueue or .mainQueue")
        self.parent = parent
        if let parent { self.source = parent } else { self.source = coordinator }
        switch concurrencyType {
        case .privateQueue:
            let queue = DispatchQueue(label: "sluice.context")
            queue.setSpecific(key: Self.queueKey, value: queueToken)
            self.queue = queue
        case .mainQueue:
            self.queue = DispatchQueue.main
        case .confinement:
            self.queue = nil
        }
    }

    deinit {
        automaticMerging?.cancel()
        for object in registry.values {
            if object.holdsSnapshot { releasedSnapshots.append(object.objectID) }
            object.context = nil
        }
        for object in changedObjects { object.context = nil }
        persistentStoreCoordinator.releaseSnapshots(releasedSnapshots)
    }

    public var managedObjectModel: ManagedObjectModel { persistentStoreCoordinator.managedObjectModel }

    // MARK: Queues

    private var isOnQueue: Bool {
        switch concurrencyType {
        case .privateQueue: return DispatchQueue.getSpecific(key: Self.queueKey) == queueToken
        case .mainQueue: return Thread.isMainThread
        case .confinement: return pthread_equal(pthread_self(), creatorThread) != 0
        }
    }

    /// Whether using a context or one of its objects off the context's queue (or, for `.confinement`,
    /// off the thread that made it) traps with a message naming the call: always in debug builds; in
    /// release builds when the environment has `SLUICE_CONCURRENCY_CHECKS=1` when the process starts.
    public static let checksQueue: Bool = {
        #if DEBUG
        return true
        #else
        return ProcessInfo.processInfo.environment["SLUICE_CONCURRENCY_CHECKS"] == "1"
        #endif
    }()

    /// Traps when called off the context's queue (only while `checksQueue` is on).
    @inline(__always) func checkQueue(_ function: StaticString = #function, using object: ManagedObject? = nil) {
        if Self.checksQueue, !isOnQueue { queueViolation(function, object) }
    }

    private func queueViolation(_ function: StaticString, _ object: ManagedObject?) -> Never {
        let what = object.map { "an object of the context (\($0.entity.name) \($0.objectID))" } ?? "\(function)"
        let context = name.map { "context \($0.debugDescription)" } ?? "a context"
        let remedy: String
        switch concurrencyType {
        case .privateQueue: remedy = "call it inside context.perform { } or context.performAndWait { }"
        case .mainQueue: remedy = "call it on the main queue"
        case .confinement:
            remedy = "use a .confinement context only on the thread that made it, or use a .privateQueue context"
        }
        fatalError(
            "Sluice concurrency violation: \(what) of \(context) (\(concurrencyType)) was used off its queue; \(remedy)"
        )
    }

    /// Runs `block` on the context's queue and waits for it; runs it at once when already there.
    public func performAndWait<T>(_ block: () throws -> T) rethrows -> T {
        guard let queue, !isOnQueue else { return try block() }
        return try queue.sync(execute: block)
    }

    /// Schedules `block` on the context's queue and returns at once.
    public func perform(_ block: @escaping @Sendable () -> Void) {
        guard let queue else { return block() }
        queue.async(execute: block)
    }

    /// Runs `block` on the context's queue and returns its result to the awaiting task.
    public func perform<T: Sendable>(_ block: @escaping @Sendable () throws -> T) async throws -> T {
        guard let queue else { return try block() }
        return try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result { try block() }) }
        }
    }

    // MARK: Registered objects

    /// Every object the context currently holds.
    public var registeredObjects: Set<ManagedObject> {
        Set(registry.values).union(changedObjects.lazy.filter { $0.objectID.isTemporaryID && $0.context === self })
    }
    public var insertedObjects: Set<ManagedObject> { Set(changedObjects.lazy.filter { $0.changeState == .inserted }) }
    public var updatedObjects: Set<ManagedObject> { Set(changedObjects.lazy.filter { $0.changeState == .updated }) }
    public var deletedObjects: Set<ManagedObject> { Set(changedObjects.lazy.filter { $0.changeState == .deleted }) }
    /// The inserted, unsaved objects of `entity` or its sub-entities, in no set order (cheaper than
    /// filtering `insertedObjects`: no set is built).
    public func insertedObjects(of entity: EntityDescription) -> [ManagedObject] {
        checkQueue()
        return changedObjects.filter { $0.changeState == .inserted && $0.entity.isKind(of: entity) }
    }
    public var hasChanges: Bool { changedObjects.contains { $0.changeState != .none } }

    /// The registered object for an ID, or `nil` (never touches a store).
    public func registeredObject(for objectID: ManagedObjectID) -> ManagedObject? {
        checkQueue()
        if objectID.isTemporaryID { return changedObjects.first { $0.objectID == objectID && $0.context === self } }
        return registry[objectID]
    }

    /// The object for an ID: the registered one, or a new fault that loads its values on first access.
    /// Accessing a fault whose row no longer exists is a programmer error; use `existingObject(with:)`
    /// when the object may be gone.
    public func object(with objectID: ManagedObjectID) -> ManagedObject {
        checkQueue()
        if let object = registeredObject(for: objectID) { return object }
        precondition(!objectID.isTemporaryID, "\(objectID) is a temporary ID of an object this context does not hold")
        guard let entity = managedObjectModel.entity(named: objectID.entityName) else {
            preconditionFailure("\(objectID) names entity \(objectID.entityName), which the model does not have")
        }
        let object = makeObject(entity)
        object.objectID = objectID
        object.turnIntoFault(notify: false)
        object.context = self
        registry[objectID] = object
        return object
    }

    /// The object for an ID with its values loaded.
    /// - Throws: `StoreError` (`.objectNotFound`) when no store holds the object any more.
    public func existingObject(with objectID: ManagedObjectID) throws -> ManagedObject {
        checkQueue()
        if let object = registeredObject(for: objectID), !object.faultState { return object }
        if objectID.isTemporaryID {
            throw StoreError(
                .objectNotFound, "No object with temporary ID \(objectID) is in this context", objectID: objectID)
        }
        guard let row = try source.sourceRows(for: [objectID]).first else {
            throw StoreError(
                .objectNotFound,
                "\(objectID.entityName) \(objectID) does not exist in its store (it was deleted or never saved)",
                objectID: objectID)
        }
        return materialize(row)
    }

    func makeObject(_ entity: EntityDescription) -> ManagedObject {
        entity.resolvedClass.init(entity: entity, insertInto: nil)
    }

    // MARK: Insert and delete

    /// Creates and inserts an object of the named entity (of its registered class).
    public func insertNewObject(forEntityName name: String) -> ManagedObject {
        guard let entity = managedObjectModel.entity(named: name) else {
            preconditionFailure("the model has no entity named \(name.debugDescription)")
        }
        return entity.resolvedClass.init(entity: entity, insertInto: self)
    }

    /// Creates and inserts an object of the named entity, typed as its class.
    public func insertNewObject<T: ManagedObject>(_ type: T.Type, forEntityName name: String) -> T {
        guard let object = insertNewObject(forEntityName: name) as? T else {
            preconditionFailure("entity \(name) does not make \(T.self) objects; set its managedObjectClass")
        }
        return object
    }

    /// Inserts an object made with `init(entity:insertInto: nil)`; `awakeFromInsert` runs.
    public func insert(_ object: ManagedObject) {
        checkQueue()
        precondition(
            object.context == nil || object.context === self, "\(object.objectID) already belongs to another context")
        guard object.context == nil else { return }
        precondition(
            managedObjectModel.entities.indices.contains(object.entity.index)
                && managedObjectModel.entities[object.entity.index] === object.entity,
            "entity \(object.entity.name) is not from this context's model")
        precondition(!object.entity.isAbstract, "\(object.entity.name) is abstract: insert one of its sub-entities")
        object.context = self
        if object.objectID.isTemporaryID { hasTemporaryIDs = true } else { registry[object.objectID] = object }
        setChangeState(object, .inserted)
        object.awakeFromInsert()
    }

    /// Marks an object deleted and applies the delete rule of each of its relationships at once:
    /// Nullify clears the inverse on each destination, Cascade deletes the destinations (recursively),
    /// Deny is checked at save, No Action leaves destinations pointing at the deleted object.
    public func delete(_ object: ManagedObject) {
        checkQueue()
        precondition(object.context === self, "\(object.objectID) does not belong to this context")
        guard !object.isDeleted else { return }
        object.willAccess()
        if object.changeState == .inserted {
            object.changeState = .insertedThenDeleted
        } else {
            captureOriginal(object)
            setChangeState(object, .deleted)
        }
        for relationship in object.entity.relationships {
            switch relationship.deleteRule {
            case .deny, .noAction:
                continue
            case .nullify:
                guard let inverse = relationship.inverse else { continue }
                for destination in object.destinations(of: relationship) {
                    destination.primitiveUnlink(inverse, object)
                }
            case .cascade:
                for destination in object.destinations(of: relationship) { delete(destination) }
            }
        }
    }

    // MARK: Change tracking

    /// Called before every change to an object: records that it changed and, the first time, its
    /// committed values (for rollback and `changedValues()`).
    @inline(__always) func noteChange(_ object: ManagedObject) {
        if object.changeState == .none {
            captureOriginal(object)
            setChangeState(object, .updated)
        } else if object.changeState == .updated, object.original == nil {
            captureOriginal(object)
        }
    }

    /// Called before an edit of a to-many relationship: the object is updated, but (unless its
    /// attributes or to-one relationships change too) has no row to rewrite, only links.
    @inline(__always) func noteToManyChange(_ object: ManagedObject) {
        if object.changeState == .none { setChangeState(object, .updated) }
    }

    private func captureOriginal(_ object: ManagedObject) {
        guard object.original == nil, object.changeState == .none || object.changeState == .updated else { return }
        let toOne = object.relationshipSlots.map { slot -> ManagedObject? in
            if case .one(let destination) = slot { return destination } else { return nil }
        }
        object.original = (object.attributeValues, toOne)
    }

    func setChangeState(_ object: ManagedObject, _ state: ManagedObject.ChangeState) {
        object.changeState = state
        if !object.isInChangedList {
            object.isInChangedList = true
            changedObjects.append(object)
        }
    }

    // MARK: Faults

    func fulfillFault(_ object: ManagedObject) {
        if let batch = object.faultBatch {
            let pending = batch.ids.filter { registry[$0]?.faultState == true }
            batch.ids = []
            if pending.count > 1 {
                // A batch that cannot be read is read object by object below (and fails there).
                if let rows = try? source.sourceRows(for: pending) { _ = materialize(rows) }
                if !object.faultState { return }
            }
        }
        let row: StoreRow?
        do { row = try source.sourceRows(for: [object.objectID]).first } catch {
            return recordStoreFailure(error, loading: object)
        }
        guard let row else {
            preconditionFailure(
                "could not fulfill a fault for \(object.objectID): the row was deleted; use existingObject(with:) "
                    + "when an object may be gone"
            )
        }
        object.fill(from: row, in: self)
        takeSnapshots(of: [object], rows: [row])
        object.awakeFromFetch()
    }

    /// A fault whose row could not be read (an I/O error, a damaged file): the object is filled
    /// with its entity's default values and no relationships so the caller goes on without a trap,
    /// and the failure is kept — `save()`, `fetch` and `count` throw it until `reset()`, so made-up
    /// values never reach a store. (A row deleted elsewhere stays a programming error, as in Core Data.)
    private func recordStoreFailure(_ error: any Error, loading object: ManagedObject) {
        noteStoreFailure(error, "could not load \(object.objectID) from its store", objectID: object.objectID)
        object.fill(from: StoreRow(placeholderFor: object.objectID, entity: object.entity), in: self)
    }

    /// Keeps the first store failure of the context (see `storeFailure`).
    func noteStoreFailure(_ error: any Error, _ what: String, objectID: ManagedObjectID?) {
        guard storeFailure == nil else { return }
        if let error = error as? StoreError {
            storeFailure = error
        } else {
            storeFailure = StoreError(.io, "\(what): \(error)", objectID: objectID, underlying: error)
        }
    }

    /// Throws the store failure a fault met, if any (before a save, fetch or count).
    func throwIfStoreFailed() throws {
        if let storeFailure { throw storeFailure }
    }

    func fulfillRelationshipFault(
        _ storage: ToManyStorage, of object: ManagedObject, _ relationship: RelationshipDescription
    ) {
        var members = storage.added
        if !object.objectID.isTemporaryID {
            let ids: [ManagedObjectID]
            do { ids = try source.sourceDestinations(of: relationship, for: object.objectID) } catch {
                // As for a fault (see `recordStoreFailure`): the edits made here only, the failure kept.
                noteStoreFailure(
                    error, "could not load \(relationship.name) of \(object.objectID)", objectID: object.objectID)
                ids = []
            }
            var loaded = ids.map { self.object(with: $0) }.filter { !storage.removed.contains($0) }
            loaded.append(contentsOf: storage.added)
            members = .init(loaded)
        }
        storage.members = members
    }

    /// Loads the values of `object` from the store again. With `mergeChanges` false (or no changes),
    /// local changes are discarded and the object becomes a fault; with true, unchanged attributes take
    /// the store's values and local changes are kept.
    public func refresh(_ object: ManagedObject, mergeChanges: Bool) {
        checkQueue()
        precondition(object.context === self, "\(object.objectID) does not belong to this context")
        guard object.changeState != .inserted, object.changeState != .insertedThenDeleted, !object.faultState else {
            return
        }
        if mergeChanges, object.changeState == .updated, let original = object.original {
            guard let row = try? source.sourceCurrentRows(for: [object.objectID]).first else { return }
            for attribute in object.entity.attributes
            where !attribute.isTransient
                && object.attributeValues[attribute.index] == original.attributes[attribute.index]
            {
                object.attributeValues[attribute.index] = row.attributeValues[attribute.index]
            }
            var snapshot = row.attributeValues
            for index in object.entity.transientAttributeIndexes { snapshot[index] = original.attributes[index] }
            object.original = (snapshot, original.toOne)
            object.version = row.version
            return
        }
        object.changeState = .none
        object.turnIntoFault(notify: true)
        flushSnapshotReleases()
    }

    // MARK: Rollback and reset

    /// Discards every unsaved change: inserted objects go away, updated and deleted ones return to their
    /// committed state (their to-many relationships reload from the store on next access).
    public func rollback() {
        checkQueue()
        for object in changedObjects {
            object.isInChangedList = false
            switch object.changeState {
            case .none:
                break
            case .inserted, .insertedThenDeleted:
                forget(object)
            case .updated, .deleted:
                if let original = object.original {
                    object.attributeValues = original.attributes
                    object.relationshipSlots = object.entity.relationships.map { relationship in
                        relationship.isToMany
                            ? .many(ToManyStorage(loaded: false)) : .one(original.toOne[relationship.index])
                    }
                } else if object.faultState {
                    object.relationshipSlots = []  // drops to-many edits made while a fault
                } else {
                    let slots = object.relationshipSlots
                    object.relationshipSlots = object.entity.relationships.map { relationship in
                        relationship.isToMany ? .many(ToManyStorage(loaded: false)) : slots[relationship.index]
                    }
                }
                object.original = nil
                object.changeState = .none
            }
        }
        changedObjects.removeAll()
    }

    /// Forgets every object (their values are released and they must not be used again), as after a
    /// fresh start. Unsaved changes are lost.
    public func reset() {
        checkQueue()
        for object in registry.values { release(object) }
        for object in changedObjects { release(object) }
        registry.removeAll(keepingCapacity: true)
        changedObjects.removeAll(keepingCapacity: true)
        flushSnapshotReleases()
        storeFailure = nil
    }

    func forget(_ object: ManagedObject) {
        if !object.objectID.isTemporaryID, registry[object.objectID] === object {
            registry.removeValue(forKey: object.objectID)
        }
        release(object)
    }

    /// Turns an object into a fault that no longer belongs to this context (the registry is the caller's).
    private func release(_ object: ManagedObject) {
        object.turnIntoFault(notify: true)
        object.changeState = .none
        object.isInChangedList = false
        object.context = nil
    }

    // MARK: Materialising rows

    func materialize(_ row: StoreRow) -> ManagedObject { materialize([row])[0] }

    /// The registered object of each row (new ones made, faults filled), in order.
    func materialize(_ rows: [StoreRow]) -> [ManagedObject] {
        var objects: [ManagedObject] = [], filled: [ManagedObject] = [], filledRows: [StoreRow] = []
        objects.reserveCapacity(rows.count)
        for row in rows {
            let object: ManagedObject
            if let registered = registry[row.objectID] {
                object = registered
                if !object.faultState {
                    objects.append(object)
                    continue
                }
            } else {
                object = makeObject(row.entity)
                object.objectID = row.objectID
                object.context = self
                registry[row.objectID] = object
            }
            object.fill(from: row, in: self)
            filled.append(object)
            filledRows.append(row)
            objects.append(object)
        }
        takeSnapshots(of: filled, rows: filledRows)
        for object in filled { object.awakeFromFetch() }
        return objects
    }

    // MARK: Snapshots

    /// Objects of a root context just filled from `rows` become users of those rows' snapshots at
    /// the coordinator.
    func takeSnapshots(of objects: [ManagedObject], rows: [StoreRow]) {
        guard parent == nil else { return }
        var taken: [StoreRow] = []
        taken.reserveCapacity(rows.count)
        for (object, row) in zip(objects, rows) where !object.holdsSnapshot {
            object.holdsSnapshot = true
            taken.append(row)
        }
        persistentStoreCoordinator.retainSnapshots(taken)
    }

    /// Called when an object stops using its snapshot (it turned into a fault or left the context).
    func snapshotReleased(_ objectID: ManagedObjectID) {
        releasedSnapshots.append(objectID)
        if releasedSnapshots.count >= 4096 { flushSnapshotReleases() }
    }

    func flushSnapshotReleases() {
        guard !releasedSnapshots.isEmpty else { return }
        persistentStoreCoordinator.releaseSnapshots(releasedSnapshots)
        releasedSnapshots.removeAll(keepingCapacity: true)
    }
}

extension Notification.Name {
    /// Posted after a context saved; `userInfo` holds `[ManagedObjectID]` arrays under `inserted`,
    /// `updated` and `deleted`, and the `ContextDidSave` under `didSave`.
    public static let managedObjectContextDidSave = Notification.Name("SluiceManagedObjectContextDidSave")
}
