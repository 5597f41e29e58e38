import Foundation

extension ManagedObjectContext {
    /// Validates every inserted, updated and deleted object and writes the changes to the stores as one
    /// unit. On any failure nothing is written and the context keeps its changes.
    ///
    /// A root context settles optimistic-locking and uniqueness-constraint conflicts by `mergePolicy`
    /// first; a child context's save goes into its parent (see `init(concurrencyType:parent:)`).
    ///
    /// - Throws: `ValidationError` holding every failure of every object; `MergeError` listing every
    ///   conflict under `MergePolicy.error`; `StoreError` from the store (I/O, a row changed by
    ///   another process), or the `storeFailure` a fault met.
    public func save() throws {
        checkQueue()
        try throwIfStoreFailed()
        prepareForSave()
        var (inserted, updated, deleted, insertedThenDeleted) = collectChanges()
        guard !inserted.isEmpty || !updated.isEmpty || !deleted.isEmpty || !insertedThenDeleted.isEmpty else {
            clearChangedObjects()
            return
        }
        try validateChanges(inserted: inserted, updated: updated, deleted: deleted)

        try assignPermanentIDs(to: inserted, includingKeyed: false)
        // Conflicts are settled and the changes written with the coordinator locked: no other context
        // saves between the version check and the write. A child's save goes into its parent as is.
        var request = SaveChangesRequest()
        var rewritten: [ManagedObject] = []
        var unchanged = Set<ObjectIdentifier>()
        var alreadyDeleted: [ManagedObject] = []
        try source.sourceLocked {
            if parent == nil {
                let constraints = try resolveConstraintConflicts(inserted: inserted, updated: updated)
                let derived = managedObjectModel.hasDerivedAttributes && computeDerivedValues()
                if constraints.changed || derived {
                    (inserted, updated, deleted, insertedThenDeleted) = collectChanges()
                }
                // Objects the store deleted that this save writes again are inserted anew.
                inserted += try resolveConflicts(
                    updated: &updated, deleted: &deleted, alreadyDeleted: &alreadyDeleted, readNow: constraints.adopted)
            }
            try assignKeyedIDs(to: inserted, absorbed: insertedThenDeleted)
            appendInsertedRows(of: inserted, to: &request)
            appendUpdatedRows(of: updated, to: &request, rewritten: &rewritten, unchanged: &unchanged)
            request.deletedObjects = deleted.map { ($0.objectID, $0.version) }
            try source.sourceSave(request)
        }

        if parent == nil { noteWrittenVersions(of: request, inserted: inserted, rewritten: rewritten) }
        for object in inserted { finishSave(of: object) }
        for object in updated { finishSave(of: object) }
        for object in alreadyDeleted { forgetDeletedElsewhere(object) }
        clearChangedObjects()
        // After the list is cleared: what a `didSave` changes is a change for the next save.
        finishSaveHooks(inserted, updated, deleted)
        for object in deleted { forget(object) }
        for object in insertedThenDeleted { forget(object) }
        flushSnapshotReleases()
        postDidSave(
            inserted: inserted.map(\.objectID),
            updated: unchanged.isEmpty
                ? updated.map(\.objectID)
                : updated.filter { !unchanged.contains(ObjectIdentifier($0)) }.map(\.objectID),
            deleted: request.deletedObjects.map(\.objectID))
    }

    /// Validates the objects of a save (each kind by its own rules), leaving out the failures of
    /// `deferredValidationRules`.
    /// - Throws: `ValidationError` holding every failure of every object.
    private func validateChanges(
        inserted: [ManagedObject], updated: [ManagedObject], deleted: [ManagedObject]
    ) throws {
        var failures: [ValidationFailure] = []
        for object in inserted {
            do { try object.validateForInsert() } catch { failures += try ValidationError.extract(error) }
        }
        for object in updated {
            do {
                // An object still a fault changed only its to-many relationships: its stored values
                // were valid, so only those edits are checked (without loading the object).
                if object.faultState { try object.validateToManyEdits() } else { try object.validateForUpdate() }
            } catch { failures += try ValidationError.extract(error) }
        }
        for object in deleted {
            do { try object.validateForDelete() } catch { failures += try ValidationError.extract(error) }
        }
        if !deferredValidationRules.isEmpty { failures.removeAll { deferredValidationRules.contains($0.rule) } }
        if !failures.isEmpty { throw ValidationError(failures: failures) }
    }

    /// Adds the rows of a save's inserted objects, and their to-many links, to `request`.
    private func appendInsertedRows(of inserted: [ManagedObject], to request: inout SaveChangesRequest) {
        request.insertedRows.reserveCapacity(inserted.count)
        for object in inserted {
            request.insertedRows.append(row(of: object, version: 1))
            appendToManyChanges(of: object, to: &request)
        }
    }

    /// Adds the rows of a save's updated objects that have values to rewrite (collected in `rewritten`),
    /// and the to-many edits of all of them, to `request`; objects the save changes nothing of go into
    /// `unchanged`.
    private func appendUpdatedRows(
        of updated: [ManagedObject], to request: inout SaveChangesRequest, rewritten: inout [ManagedObject],
        unchanged: inout Set<ObjectIdentifier>
    ) {
        // Objects whose only changes are to-many edits have no row to rewrite: only links change.
        // Objects whose values all equal the stored ones (set again to the same values, or an
        // insert that became an update of an identical row) are not written at all.
        for object in updated where object.original != nil {
            var row = row(of: object, version: object.version)
            row.changes = changes(of: object)
            if row.changes?.isEmpty == true {
                if !object.hasToManyEdits { unchanged.insert(ObjectIdentifier(object)) }
                continue
            }
            rewritten.append(object)
            request.updatedRows.append(row)
        }
        // A fault whose to-many edits change nothing stored (members that name it still) is unchanged.
        for object in updated where object.original == nil && !object.hasToManyEdits {
            unchanged.insert(ObjectIdentifier(object))
        }
        for object in updated { appendToManyChanges(of: object, to: &request) }
    }

    /// The versions a root context's save gave the rows it wrote, as the stores count them.
    private func noteWrittenVersions(
        of request: SaveChangesRequest, inserted: [ManagedObject], rewritten: [ManagedObject]
    ) {
        // A content version is computed when the object's version is first asked for (a later save or
        // merge of it), not here: an import that resets its context after each save never asks.
        func note(_ rows: [StoreRow], of objects: [ManagedObject], previous: (Int) -> Int64?) {
            let versions = persistentStoreCoordinator.countedVersions(of: rows, previous: previous)
            for (index, object) in zip(versions.indices, objects) {
                object.noteWritten(rows[index], version: versions[index])
            }
        }
        note(request.insertedRows, of: inserted) { _ in nil }
        note(request.updatedRows, of: rewritten) { request.updatedRows[$0].version }
    }

    /// Empties the list of changed objects (after a save, or a save with nothing to write).
    private func clearChangedObjects() {
        for object in changedObjects { object.isInChangedList = false }
        changedObjects.removeAll(keepingCapacity: true)
    }

    /// Gives the save's inserted objects that a store keeps under a key their permanent IDs, once
    /// uniqueness conflicts are settled; objects merged into them (`absorbed`) take the winner's new
    /// ID, as references to them without an inverse write the winner's key.
    private func assignKeyedIDs(to inserted: [ManagedObject], absorbed: [ManagedObject]) throws {
        let waiting = inserted.filter { $0.objectID.isTemporaryID }
        guard !waiting.isEmpty else { return }
        let before = waiting.map(\.objectID)
        try assignPermanentIDs(to: waiting, includingKeyed: true)
        let renamed = Dictionary(zip(before, waiting.map(\.objectID)), uniquingKeysWith: { first, _ in first })
        for loser in absorbed { if let id = renamed[loser.objectID] { loser.objectID = id } }
    }

    /// The changed objects by change state.
    private func collectChanges() -> (
        inserted: [ManagedObject], updated: [ManagedObject], deleted: [ManagedObject],
        insertedThenDeleted: [ManagedObject]
    ) {
        var inserted: [ManagedObject] = [], updated: [ManagedObject] = [], deleted: [ManagedObject] = []
        var insertedThenDeleted: [ManagedObject] = []
        inserted.reserveCapacity(changedObjects.count)
        for object in changedObjects {
            switch object.changeState {
            case .none: break
            case .inserted: inserted.append(object)
            case .updated: updated.append(object)
            case .deleted: deleted.append(object)
            case .insertedThenDeleted: insertedThenDeleted.append(object)
            }
        }
        return (inserted, updated, deleted, insertedThenDeleted)
    }

    private func finishSave(of object: ManagedObject) {
        object.changeState = .none
        object.original = nil
        if object.faultState { object.relationshipSlots = [] }
        for case .many(let storage) in object.relationshipSlots { storage.clearEdits() }
    }

    func row(of object: ManagedObject, version: Int64) -> StoreRow {
        var values = object.attributeValues
        for index in object.entity.transientAttributeIndexes { values[index] = .null }
        var toOne = object.relationshipSlots.map { slot -> ManagedObjectID? in
            if case .one(let destination) = slot { return destination?.objectID }
            return nil
        }
        for index in object.entity.transientRelationshipIndexes { toOne[index] = nil }
        return StoreRow(
            objectID: object.objectID, entity: object.entity, version: version, attributeValues: values,
            toOneDestinations: toOne)
    }

    /// The attributes and to-one relationships whose values differ from the object's snapshot (a
    /// value counts as changed unless it is the very same, which only costs an extra column write).
    private func changes(of object: ManagedObject) -> ChangedProperties? {
        guard let original = object.original, object.entity.attributes.count <= 64,
            object.entity.relationships.count <= 64
        else { return nil }
        var changes = ChangedProperties()
        let values = object.attributeValues, read = original.attributes
        for index in values.indices where !values[index].isSame(as: read[index]) {
            changes.attributes |= 1 << UInt64(index)
        }
        for index in object.entity.transientAttributeIndexes { changes.attributes &= ~(1 << UInt64(index)) }
        for (index, slot) in object.relationshipSlots.enumerated() {
            // Another object for the same row is no change: an inserted object that a uniqueness
            // conflict merged into the stored one it stands for (a row linked within a re-import).
            if case .one(let destination) = slot, destination !== original.toOne[index],
                destination?.objectID != original.toOne[index]?.objectID
            {
                changes.toOneRelationships |= 1 << UInt64(index)
            }
        }
        for index in object.entity.transientRelationshipIndexes { changes.toOneRelationships &= ~(1 << UInt64(index)) }
        return changes
    }

    private func appendToManyChanges(of object: ManagedObject, to request: inout SaveChangesRequest) {
        for relationship in object.entity.relationships
        where relationship.isToMany && !relationship.isTransient && relationship.index < object.relationshipSlots.count
        {
            guard case .many(let storage) = object.relationshipSlots[relationship.index],
                !storage.added.isEmpty || !storage.removed.isEmpty || storage.isReordered
            else { continue }
            func stored(_ destination: ManagedObject) -> Bool {
                destination.changeState != .insertedThenDeleted && !destination.objectID.isTemporaryID
            }
            let added = storage.added.filter(stored).map(\.objectID)
            let removed = storage.removed.filter { !$0.objectID.isTemporaryID }.map(\.objectID)
            var ordered: [ManagedObjectID]?
            if relationship.isOrdered, let members = storage.members {
                ordered = members.filter(stored).map(\.objectID)
            }
            guard !added.isEmpty || !removed.isEmpty || ordered != nil else { continue }
            request.toManyChanges.append(
                ToManyChange(
                    objectID: object.objectID, relationship: relationship,
                    added: added, removed: removed, orderedMembers: ordered))
        }
    }
}
