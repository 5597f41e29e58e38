import Foundation

extension ManagedObjectContext {
    /// Compares the objects this save rewrites or deletes with the store's rows (one request) and
    /// settles each conflict by `mergePolicy` (objects in `readNow` were read under the same lock and
    /// are not checked again). Called with the coordinator locked, so no other context
    /// of the coordinator saves between this check and the write.
    /// - Returns: objects the store deleted that must be written again (object-trumps, overwrite).
    /// - Throws: `MergeError` under `.error`.
    func resolveConflicts(
        updated: inout [ManagedObject], deleted: inout [ManagedObject], alreadyDeleted: inout [ManagedObject],
        readNow: Set<ObjectIdentifier> = []
    ) throws -> [ManagedObject] {
        let checked =
            updated.filter { $0.original != nil && (readNow.isEmpty || !readNow.contains(ObjectIdentifier($0))) }
            + deleted.filter { !$0.objectID.isTemporaryID }
        guard !checked.isEmpty else { return [] }
        var current: [ManagedObjectID: StoreRow] = [:]
        for row in try source.sourceCurrentRows(for: checked.map(\.objectID)) { current[row.objectID] = row }
        var conflicts = checked.filter { current[$0.objectID]?.version != $0.version }
        // A delete of a row another save deleted already is no conflict under any policy (the
        // guide's first strategy: the save goes on): the object leaves the context once the save
        // went through (a failing save keeps it as it was).
        let goneAlready = conflicts.filter { $0.changeState == .deleted && current[$0.objectID] == nil }
        if !goneAlready.isEmpty {
            alreadyDeleted = goneAlready
            let gone = Set(goneAlready.map(ObjectIdentifier.init))
            conflicts.removeAll { gone.contains(ObjectIdentifier($0)) }
            deleted.removeAll { gone.contains(ObjectIdentifier($0)) }
        }
        guard !conflicts.isEmpty else { return [] }
        if mergePolicy == .error {
            throw MergeError(conflicts: conflicts.map { conflict(of: $0, store: current[$0.objectID]) })
        }
        var dropped = Set<ObjectIdentifier>(), reinserted: [ManagedObject] = []
        for object in conflicts {
            switch settle(object, with: current[object.objectID]) {
            case .kept: break
            case .dropped: dropped.insert(ObjectIdentifier(object))
            case .reinserted:
                dropped.insert(ObjectIdentifier(object))
                reinserted.append(object)
            }
        }
        updated.removeAll { dropped.contains(ObjectIdentifier($0)) }
        deleted.removeAll { dropped.contains(ObjectIdentifier($0)) }
        return reinserted
    }

    enum Settlement { case kept, dropped, reinserted }

    /// Settles one object whose row changed (or, with `row` nil, was deleted) since the object read it,
    /// by `mergePolicy` (not `.error`, which the callers handle): `.kept` when the object's changes are
    /// still to be saved, `.dropped` when nothing of it is left to save (it took the store's state or
    /// left the context), `.reinserted` when it must be written again as a new row.
    func settle(_ object: ManagedObject, with row: StoreRow?) -> Settlement {
        let isDelete = object.changeState == .deleted
        switch (mergePolicy, row) {
        case (_, nil) where isDelete, (.storeTrumps, nil), (.rollback, nil):
            // Gone from the store: nothing to write, and the object goes from this context too.
            forgetDeletedElsewhere(object)
            return .dropped
        case (_, nil):
            return .reinserted
        case (.rollback, let row?):
            object.changeState = .none
            object.original = nil
            if isDelete { object.turnIntoFault(notify: true) } else { object.fill(from: row, in: self) }
            return .dropped
        case (.storeTrumps, let row?) where !isDelete, (.objectTrumps, let row?) where !isDelete:
            mergeByProperty(object, with: row, storeWins: mergePolicy == .storeTrumps)
            return .kept
        case (_, let row?):
            // Overwrite, or a delete that goes ahead. The store's row becomes the snapshot, so an
            // update writes every value that differs from it: the object's whole state.
            if !isDelete, let original = object.original {
                var snapshot = row.attributeValues
                for index in object.entity.transientAttributeIndexes { snapshot[index] = original.attributes[index] }
                object.original = (snapshot, row.toOneDestinations.map { $0.map { self.object(with: $0) } })
            }
            object.version = row.version
            return .kept
        }
    }

    /// Takes the store's value of each property the store changed, unless the object changed it too
    /// and the object wins; the object's snapshot and version become the store's.
    private func mergeByProperty(_ object: ManagedObject, with row: StoreRow, storeWins: Bool) {
        guard let original = object.original else { return }
        for attribute in object.entity.attributes where !attribute.isTransient {
            let read = original.attributes[attribute.index], theirs = row.attributeValues[attribute.index]
            let objectChanged = object.attributeValues[attribute.index] != read
            if theirs != read, storeWins || !objectChanged { object.attributeValues[attribute.index] = theirs }
        }
        for relationship in object.entity.relationships where !relationship.isToMany && !relationship.isTransient {
            let read = original.toOne[relationship.index]?.objectID, theirs = row.toOneDestinations[relationship.index]
            guard case .one(let destination) = object.relationshipSlots[relationship.index] else { continue }
            let objectChanged = destination?.objectID != read
            if theirs != read, storeWins || !objectChanged {
                object.setRelatedObject(theirs.map { self.object(with: $0) }, at: relationship.index)
            }
        }
        var toOne = row.toOneDestinations.map { $0.map { self.object(with: $0) } }
        for index in object.entity.transientRelationshipIndexes { toOne[index] = original.toOne[index] }
        object.original = (row.attributeValues, toOne)
        object.version = row.version
    }

    private func conflict(of object: ManagedObject, store row: StoreRow?) -> MergeConflict {
        let attributes = object.entity.attributes.filter { !$0.isTransient }
        func named(_ values: [AttributeValue]) -> [String: AttributeValue] {
            Dictionary(uniqueKeysWithValues: attributes.map { ($0.name, values[$0.index]) })
        }
        return MergeConflict(
            objectID: object.objectID, objectValues: named(object.attributeValues),
            snapshot: named(object.original?.attributes ?? object.attributeValues),
            storeValues: row.map { named($0.attributeValues) }, snapshotVersion: object.version,
            storeVersion: row?.version, isDelete: object.changeState == .deleted)
    }
}
