import Foundation

extension ManagedObjectContext {
    /// Gives each object with a temporary ID its permanent ID now, from the store that will hold it.
    ///
    /// A store that keeps an entity's objects under a key (`PersistentStore.referenceAttribute(for:)`,
    /// the plain SQLite layout) makes the ID of the key's value: the object needs that value now.
    /// - Throws: `StoreError.constraintViolation` when such a key has no value yet, or another object
    ///   of this context already has it.
    public func obtainPermanentIDs(for objects: [ManagedObject]) throws {
        checkQueue()
        try assignPermanentIDs(to: objects, includingKeyed: true)
    }

    /// `includingKeyed: false` leaves objects that a store keeps under a key temporary: a save gives
    /// them their IDs once uniqueness conflicts are settled, so that an object that becomes an
    /// update of a stored row (or merges into another object of the save) never shares an ID with it.
    func assignPermanentIDs(to objects: [ManagedObject], includingKeyed: Bool) throws {
        let pending =
            objects.allSatisfy { $0.objectID.isTemporaryID && $0.context === self }
            ? objects : objects.filter { $0.objectID.isTemporaryID && $0.context === self }
        guard let first = pending.first else { return }
        var byEntity: [Group: [ManagedObject]] = [:]
        if assignedStores.isEmpty, pending.allSatisfy({ $0.entity === first.entity }) {
            byEntity[Group(entity: first.entity, store: nil)] = pending  // the usual import batch: one entity
        } else {
            for object in pending {
                byEntity[Group(entity: object.entity, store: assignedStores[ObjectIdentifier(object)]), default: []]
                    .append(object)
            }
        }
        registry.reserveCapacity(registry.count + pending.count)
        for (key, group) in byEntity.sorted(by: {
            ($0.key.entity.index, $0.key.store ?? "") < ($1.key.entity.index, $1.key.store ?? "")
        }) {
            let entity = key.entity
            let keyed = persistentStoreCoordinator.referenceAttribute(for: entity, inStore: key.store) != nil
            if keyed && !includingKeyed { continue }
            let ids = try source.sourceNewObjectIDs(for: entity, in: key.store, count: group.count) {
                index, attribute in
                group[index].attributeValues[attribute.index]
            }
            if keyed {
                var taken: [ManagedObjectID: ManagedObject] = [:]
                for (object, id) in zip(group, ids) {
                    guard let holder = registry[id] ?? taken[id] else {
                        taken[id] = object
                        continue
                    }
                    throw StoreError(
                        .constraintViolation,
                        "two objects of \(entity.name) have the key \(id.keyValue), which the store keeps them under "
                            + "(the other is \(holder.objectID.isTemporaryID ? "new" : "\(holder.objectID)"))",
                        objectID: id)
                }
            }
            for index in group.indices {
                group[index].objectID = ids[index]
                registry[ids[index]] = group[index]
            }
            if key.store != nil { for object in group { assignedStores.removeValue(forKey: ObjectIdentifier(object)) } }
        }
    }

    private struct Group: Hashable {
        let entity: EntityDescription
        let store: String?
    }

    /// Puts a new object in `store` (one of the coordinator's that holds its entity): its save, or
    /// `obtainPermanentIDs`, gives it an ID of that store and writes it there (Core Data's
    /// `assign(_:to:)`). Without it, a new object goes to the first store that holds its entity.
    public func assign(_ object: ManagedObject, to store: any PersistentStore) {
        checkQueue()
        precondition(object.context === self, "\(object.objectID) does not belong to this context")
        precondition(object.objectID.isTemporaryID, "\(object.objectID) is saved already: its store is fixed")
        precondition(
            persistentStoreCoordinator.store(store, holds: object.entity),
            "the store \(store.identifier) is not the coordinator's, or its configuration does not hold "
                + "\(object.entity.name)")
        assignedStores[ObjectIdentifier(object)] = store.identifier
    }
}
