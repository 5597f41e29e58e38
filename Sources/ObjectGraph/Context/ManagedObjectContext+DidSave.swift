import Foundation
import OrderedCollections

extension PersistentStoreCoordinator {
    /// Calls `callback` after each save of any root context of this coordinator (on the saving
    /// context's queue, right after the save: keep it short, e.g. hand the notification to another
    /// context with `perform`).
    public func observeDidSave(_ callback: @escaping @Sendable (ContextDidSave) -> Void) -> DidSaveObservation {
        didSaveObservers.add(callback)
    }

    /// The did-save notifications of every root context of this coordinator, from now on.
    public func didSaves() -> AsyncStream<ContextDidSave> { didSaveObservers.stream() }
}

extension ManagedObjectContext {
    /// Calls `callback` after each save of this context (on its queue, right after the save).
    public func observeDidSave(_ callback: @escaping @Sendable (ContextDidSave) -> Void) -> DidSaveObservation {
        didSaveObservers.add(callback)
    }

    /// The did-save notifications of this context, from now on.
    public func didSaves() -> AsyncStream<ContextDidSave> { didSaveObservers.stream() }

    /// Whether the saves of the other contexts of the coordinator (for a root context) or of the
    /// parent (for a child) are merged into this context as they happen, on its queue. Needs a
    /// `.privateQueue` or `.mainQueue` context.
    public var automaticallyMergesChangesFromParent: Bool {
        get {
            checkQueue()
            return automaticMerging != nil
        }
        set {
            checkQueue()
            automaticMerging?.cancel()
            automaticMerging = nil
            guard newValue else { return }
            precondition(
                concurrencyType != .confinement,
                "automatic merging needs a context with a queue: make it .privateQueue or .mainQueue")
            let merge: @Sendable (ContextDidSave) -> Void = { [weak self] save in
                guard let self, save.origin != ObjectIdentifier(self) else { return }
                self.perform { self.mergeChanges(fromContextDidSave: save) }
            }
            automaticMerging =
                parent.map { $0.observeDidSave(merge) } ?? persistentStoreCoordinator.observeDidSave(merge)
        }
    }

    /// Tells every observer about a save that just happened.
    func postDidSave(inserted: [ManagedObjectID], updated: [ManagedObjectID], deleted: [ManagedObjectID]) {
        let save = ContextDidSave(
            inserted: inserted, updated: updated, deleted: deleted, contextName: name,
            reachedStores: parent == nil, origin: ObjectIdentifier(self))
        didSaveObservers.post(save)
        if parent == nil { persistentStoreCoordinator.didSaveObservers.post(save) }
        NotificationCenter.default.post(
            name: .managedObjectContextDidSave, object: self,
            userInfo: [
                "inserted": inserted, "updated": updated, "deleted": deleted, "didSave": save,
            ])
    }

    /// Applies another context's save to this one, on this context's queue: updated objects without
    /// local changes are refreshed (they reload the saved values on next access), deleted ones leave
    /// the context (and the loaded relationships that pointed at them), inserted ones are fetchable as
    /// any stored object. An object the save updated or deleted that this context has changed too is
    /// settled by `mergePolicy`; under `.error` it is left alone and this context's next save fails,
    /// naming it.
    public func mergeChanges(fromContextDidSave save: ContextDidSave) {
        checkQueue()
        var conflicting: [ManagedObject] = []
        for id in save.updated {
            guard let object = registry[id], !object.faultState else { continue }
            switch object.changeState {
            case .none:
                pendingObjectChanges?.refreshed.append(object)
                object.turnIntoFault(notify: true)
            case .updated where object.original == nil:
                reloadToManyRelationships(of: object)  // only to-many edits here: keep them, reload the rest
            case .updated, .deleted:
                conflicting.append(object)
            case .inserted, .insertedThenDeleted:
                break
            }
        }
        if !conflicting.isEmpty, mergePolicy != .error {
            var current: [ManagedObjectID: StoreRow] = [:]
            do {
                for row in try source.sourceRows(for: conflicting.map(\.objectID)) { current[row.objectID] = row }
            } catch {
                // The rows cannot be read now: the objects stay as they are, and the next save settles them.
                conflicting = []
            }
            for object in conflicting where settle(object, with: current[object.objectID]) == .kept {
                reloadToManyRelationships(of: object)
            }
        }
        for id in save.deleted {
            guard let object = registry[id] else { continue }
            let changed = object.changeState == .updated && object.original != nil
            if changed, mergePolicy == .error || mergePolicy == .objectTrumps || mergePolicy == .overwrite { continue }
            forgetDeletedElsewhere(object)
        }
        flushSnapshotReleases()
    }

    /// `mergeChanges(fromContextDidSave:)` for a `.managedObjectContextDidSave` notification.
    public func mergeChanges(fromContextDidSave notification: Notification) {
        guard let save = notification.userInfo?["didSave"] as? ContextDidSave else {
            preconditionFailure("\(notification.name.rawValue) is not a did-save notification of a Sluice context")
        }
        mergeChanges(fromContextDidSave: save)
    }

    /// An object whose row another save deleted leaves the context; the loaded relationships of other
    /// objects that point at it (through inverses) stop doing so, without counting as changes.
    func forgetDeletedElsewhere(_ object: ManagedObject) {
        if !object.faultState {
            for relationship in object.entity.relationships {
                guard let inverse = relationship.inverse, relationship.index < object.relationshipSlots.count else {
                    continue
                }
                let destinations: [ManagedObject]
                switch object.relationshipSlots[relationship.index] {
                case .one(let destination): destinations = destination.map { [$0] } ?? []
                case .many(let storage): destinations = Array(storage.members ?? []) + storage.added
                }
                for destination in destinations
                where !destination.faultState && inverse.index < destination.relationshipSlots.count {
                    switch destination.relationshipSlots[inverse.index] {
                    case .one(let current) where current === object:
                        destination.relationshipSlots[inverse.index] = .one(nil)
                    case .many(let storage):
                        storage.members?.remove(object)
                        storage.added.remove(object)
                    default:
                        break
                    }
                }
            }
        }
        object.original = nil
        pendingObjectChanges?.invalidated.append(object)
        forget(object)
    }

    /// To-many relationships load again on next access; edits not yet saved are kept.
    private func reloadToManyRelationships(of object: ManagedObject) {
        for (index, slot) in object.relationshipSlots.enumerated() {
            // A transient relationship has nothing in the store to reload.
            if case .many(let storage) = slot, !object.entity.relationships[index].isTransient { storage.members = nil }
        }
    }
}
