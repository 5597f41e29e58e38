import Foundation
import OrderedCollections

/// What changed in a context since the last `processPendingChanges()`: Core Data's
/// objects-did-change notification. Delivered on the context's queue.
public struct ObjectsDidChange {
    /// Objects inserted (or whose delete was undone) in the event.
    public let inserted: [ManagedObject]
    /// Objects changed in the event that were neither inserted nor deleted in it.
    public let updated: [ManagedObject]
    /// Objects deleted (or whose insert was undone) in the event.
    public let deleted: [ManagedObject]
    /// Objects refreshed: `refresh(_:mergeChanges:)`, or turned into faults by a merged save.
    public let refreshed: [ManagedObject]
    /// Objects that left the context because another context's save deleted their rows.
    public let invalidated: [ManagedObject]
    /// The context was reset: every object it had is gone.
    public let invalidatedAll: Bool
}

/// A registration for objects-did-change callbacks; `cancel()` ends it.
public final class ObjectsDidChangeObservation {
    weak var context: ManagedObjectContext?
    let id: UInt64
    init(context: ManagedObjectContext, id: UInt64) {
        self.context = context
        self.id = id
    }
    public func cancel() { context?.removeObjectsDidChangeObserver(id) }
}

/// The changes of the current event, kept only while somebody observes them.
final class PendingObjectChanges {
    var inserted: OrderedSet<ManagedObject> = []
    var deleted: OrderedSet<ManagedObject> = []
    var touched: OrderedSet<ManagedObject> = []
    var refreshed: OrderedSet<ManagedObject> = []
    var invalidated: OrderedSet<ManagedObject> = []
    var invalidatedAll = false
    var isEmpty: Bool {
        inserted.isEmpty && deleted.isEmpty && touched.isEmpty && refreshed.isEmpty && invalidated.isEmpty
            && !invalidatedAll
    }
}

extension Notification.Name {
    /// Posted by `processPendingChanges()` when the context's `postsObjectsDidChangeNotifications`
    /// is on; `userInfo` holds the `ObjectsDidChange` under `objectsDidChange`.
    public static let managedObjectContextObjectsDidChange = Notification.Name(
        "SluiceManagedObjectContextObjectsDidChange")
}

extension ManagedObjectContext {
    // MARK: Objects did change

    /// Calls `block` with the changes of each event (see `processPendingChanges()`), on the context's
    /// queue, until the observation is cancelled. A context nobody observes keeps no record of them.
    public func observeObjectsDidChange(_ block: @escaping (ObjectsDidChange) -> Void) -> ObjectsDidChangeObservation {
        checkQueue()
        nextObserverID += 1
        objectsDidChangeObservers[nextObserverID] = block
        if pendingObjectChanges == nil { pendingObjectChanges = PendingObjectChanges() }
        return ObjectsDidChangeObservation(context: self, id: nextObserverID)
    }

    func removeObjectsDidChangeObserver(_ id: UInt64) {
        checkQueue()
        objectsDidChangeObservers.removeValue(forKey: id)
        updateChangeRecording()
    }

    func updateChangeRecording() {
        let wanted = !objectsDidChangeObservers.isEmpty || postsObjectsDidChangeNotifications
        if wanted, pendingObjectChanges == nil { pendingObjectChanges = PendingObjectChanges() }
        if !wanted { pendingObjectChanges = nil }
    }

    /// Ends the current event: closes the undo manager's automatic group and tells observers what
    /// changed since the last call (nothing is posted when nothing changed). Runs at the end of
    /// every `perform` / `performAndWait` block, at the start of `save()`, and after undo and redo.
    public func processPendingChanges() {
        checkQueue()
        undoManager?.endEvent()
        guard let pending = pendingObjectChanges, !pending.isEmpty else { return }
        pendingObjectChanges = PendingObjectChanges()
        let change = ObjectsDidChange(
            inserted: pending.inserted.filter { !$0.isDeleted },
            updated: pending.touched.filter {
                !$0.isDeleted && !pending.inserted.contains($0) && !pending.deleted.contains($0)
            },
            deleted: pending.deleted.filter { $0.isDeleted && !pending.inserted.contains($0) },
            refreshed: Array(pending.refreshed), invalidated: Array(pending.invalidated),
            invalidatedAll: pending.invalidatedAll)
        for observer in objectsDidChangeObservers.sorted(by: { $0.key < $1.key }) { observer.value(change) }
        if postsObjectsDidChangeNotifications {
            NotificationCenter.default.post(
                name: .managedObjectContextObjectsDidChange, object: self, userInfo: ["objectsDidChange": change])
        }
    }

    /// The end of a `perform` block: an event ends when somebody listens for events.
    func endOfBlock() {
        if pendingObjectChanges != nil || recordsUndo { processPendingChanges() }
    }

    /// The per-key validators of a class (`ManagedObject.propertyValidators`), asked once per context.
    func validators(for type: ManagedObject.Type) -> [String: PropertyValidator] {
        if let known = validatorsByClass[ObjectIdentifier(type)] { return known }
        let validators = type.propertyValidators
        validatorsByClass[ObjectIdentifier(type)] = validators
        return validators
    }

    // MARK: Undo

    @inline(__always) func registerUndo(_ action: @autoclosure () -> ContextUndoManager.Action) {
        guard recordsUndo, !changeTrackingSuspended, let undoManager else { return }
        undoManager.register(action())
    }

    /// Undo and redo of an insert or a delete: the object's change state as it was.
    func restoreChangeState(
        of object: ManagedObject, to state: ManagedObject.ChangeState,
        original: (attributes: [AttributeValue], toOne: [ManagedObject?])?
    ) {
        let wasDeleted = object.isDeleted
        object.original = original
        setChangeState(object, state)
        if wasDeleted, !object.isDeleted { pendingObjectChanges?.inserted.append(object) }
        if !wasDeleted, object.isDeleted { pendingObjectChanges?.deleted.append(object) }
    }

    // MARK: Change tracking off

    /// Runs `body` with change tracking off (around `awakeFromFetch`): values set do not make
    /// objects updated, register no undo and are not recorded for observers.
    func withoutChangeTracking(_ body: () -> Void) {
        let was = changeTrackingSuspended
        changeTrackingSuspended = true
        body()
        changeTrackingSuspended = was
    }

    // MARK: Property observers

    func addPropertyObserver(
        for object: ManagedObject, key: String?, _ handler: @escaping (PropertyChange) -> Void
    ) -> UInt64 {
        checkQueue()
        nextObserverID += 1
        propertyObservers[ObjectIdentifier(object), default: []].append((nextObserverID, key, handler))
        return nextObserverID
    }

    func removePropertyObserver(_ id: UInt64, of object: ManagedObject?) {
        checkQueue()
        guard let object else { return }
        let key = ObjectIdentifier(object)
        propertyObservers[key]?.removeAll { $0.id == id }
        if propertyObservers[key]?.isEmpty == true {
            propertyObservers.removeValue(forKey: key)
            object.isObserved = type(of: object).notifiesPropertyChanges
        }
    }

    func notifyPropertyObservers(_ change: PropertyChange) {
        guard !changeTrackingSuspended, let observers = propertyObservers[ObjectIdentifier(change.object)] else {
            return
        }
        for observer in observers where observer.key == nil || observer.key == change.key { observer.handler(change) }
    }

    /// An object leaving the context takes its observers and fetched results with it.
    func forgetObservers(of object: ManagedObject) {
        if object.isObserved { propertyObservers.removeValue(forKey: ObjectIdentifier(object)) }
    }
}
