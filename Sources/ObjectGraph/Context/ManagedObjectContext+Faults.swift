import OrderedCollections

/// Faults filled from the context's source on first access (objects and to-many relationships),
/// refreshing, and the snapshots a root context's objects hold at the coordinator.
extension ManagedObjectContext {
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
        withoutChangeTracking { object.awakeFromFetch() }
    }

    /// A fault whose row could not be read (an I/O error, a damaged file): the object is filled
    /// with its entity's default values and no relationships so the caller goes on without a trap,
    /// and the failure is kept — `save()`, `fetch` and `count` throw it until `reset()`, so made-up
    /// values never reach a store. (A row deleted elsewhere stays a programming error, as in Core Data.)
    private func recordStoreFailure(_ error: any Error, loading object: ManagedObject) {
        noteStoreFailure(error, "could not load \(object.objectID) from its store", objectID: object.objectID)
        object.fill(from: StoreRow(placeholderFor: object.objectID, entity: object.entity), in: self)
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
        pendingObjectChanges?.refreshed.append(object)
        forgetFetchedObjects(of: object)
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

    /// Refreshes every registered object (Core Data's `refreshAllObjects`): objects without unsaved
    /// changes become faults that load the stored values on next access; changed ones keep their
    /// changes and take the stored values of what they did not change.
    public func refreshAllObjects() {
        checkQueue()
        for object in Array(registry.values)
        where !object.faultState
            && (object.changeState == .none || object.changeState == .updated && object.original != nil)
        {
            refresh(object, mergeChanges: true)
        }
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
