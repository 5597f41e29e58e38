import Dispatch
import Foundation

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
    /// Set on the main queue (once, by the first `.mainQueue` context) to recognise its blocks.
    static let mainQueueKey: DispatchSpecificKey<Bool> = {
        let key = DispatchSpecificKey<Bool>()
        DispatchQueue.main.setSpecific(key: key, value: true)
        return key
    }()

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
    /// Undo and redo of this context's changes (none by default: set one to opt in).
    public var undoManager: ContextUndoManager? {
        didSet {
            undoManager?.context = self
            recordsUndo = undoManager != nil
        }
    }
    /// `undoManager != nil`, as a plain flag every change reads.
    @exclusivity(unchecked) private(set) var recordsUndo = false
    /// `propertyValidators` of each subclass, read once.
    var validatorsByClass: [ObjectIdentifier: [String: PropertyValidator]] = [:]
    /// Whether `processPendingChanges()` also posts `.managedObjectContextObjectsDidChange` to the
    /// default notification center (observers through `observeObjectsDidChange` need not).
    public var postsObjectsDidChangeNotifications = false {
        didSet { updateChangeRecording() }
    }
    /// The current event's changes, while somebody observes them (`nil`: nothing is recorded).
    @exclusivity(unchecked) var pendingObjectChanges: PendingObjectChanges?
    var objectsDidChangeObservers: [UInt64: (ObjectsDidChange) -> Void] = [:]
    var propertyObservers: [ObjectIdentifier: [(id: UInt64, key: String?, handler: (PropertyChange) -> Void)]] = [:]
    var nextObserverID: UInt64 = 0
    /// Set around `awakeFromFetch`: changes are not tracked.
    @exclusivity(unchecked) var changeTrackingSuspended = false
    /// Results of fetched properties, by object and property index.
    var fetchedResults: [ObjectIdentifier: [Int: [ManagedObject]]] = [:]
    /// Stores new objects were assigned to (`assign(_:to:)`), by object.
    var assignedStores: [ObjectIdentifier: String] = [:]

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
            _ = Self.mainQueueKey
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
        // The main thread, or wherever the main queue runs its blocks: a process parked in
        // `dispatchMain()` (an async `main` on Linux) has them run on another thread.
        case .mainQueue: return Thread.isMainThread || DispatchQueue.getSpecific(key: Self.mainQueueKey) != nil
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
        return try queue.sync {
            defer { endOfBlock() }
            return try block()
        }
    }

    /// Schedules `block` on the context's queue and returns at once.
    public func perform(_ block: @escaping @Sendable () -> Void) {
        guard let queue else { return block() }
        queue.async {
            block()
            self.endOfBlock()
        }
    }

    /// Runs `block` on the context's queue and returns its result to the awaiting task.
    public func perform<T: Sendable>(_ block: @escaping @Sendable () throws -> T) async throws -> T {
        guard let queue else { return try block() }
        return try await withCheckedThrowingContinuation { continuation in
            queue.async {
                let result = Result { try block() }
                self.endOfBlock()
                continuation.resume(with: result)
            }
        }
    }

    // MARK: Store failures

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
                            ? .many(ToManyStorage(storedBy: relationship)) : .one(original.toOne[relationship.index])
                    }
                } else if object.faultState {
                    object.relationshipSlots = []  // drops to-many edits made while a fault
                } else {
                    let slots = object.relationshipSlots
                    object.relationshipSlots = object.entity.relationships.map { relationship in
                        relationship.isToMany ? .many(ToManyStorage(storedBy: relationship)) : slots[relationship.index]
                    }
                }
                object.original = nil
                object.changeState = .none
            }
        }
        changedObjects.removeAll()
        undoManager?.removeAllActions()
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
        propertyObservers.removeAll()
        fetchedResults.removeAll()
        assignedStores.removeAll()
        undoManager?.removeAllActions()
        if pendingObjectChanges != nil {
            pendingObjectChanges = PendingObjectChanges()
            pendingObjectChanges?.invalidatedAll = true
        }
    }

    func forget(_ object: ManagedObject) {
        if !object.objectID.isTemporaryID, registry[object.objectID] === object {
            registry.removeValue(forKey: object.objectID)
        }
        release(object)
    }

    /// Turns an object into a fault that no longer belongs to this context (the registry is the caller's).
    private func release(_ object: ManagedObject) {
        forgetObservers(of: object)
        if !assignedStores.isEmpty { assignedStores.removeValue(forKey: ObjectIdentifier(object)) }
        object.turnIntoFault(notify: true)
        object.changeState = .none
        object.isInChangedList = false
        object.context = nil
    }
}

extension Notification.Name {
    /// Posted after a context saved; `userInfo` holds `[ManagedObjectID]` arrays under `inserted`,
    /// `updated` and `deleted`, and the `ContextDidSave` under `didSave`.
    public static let managedObjectContextDidSave = Notification.Name("SluiceManagedObjectContextDidSave")
}
