import Foundation

/// A context as the parent of child contexts: it answers their fetches and faults from its own objects
/// (unsaved changes included) and takes their saves as changes of its own. Every call runs on the
/// parent's queue (`performAndWait`), so a parent needs a queue: `.privateQueue` or `.mainQueue`.
extension ManagedObjectContext: RowSource {
    func sourceRows(matching request: StoreFetchRequest) throws -> (rows: [StoreRow], merged: Bool) {
        try performAndWait {
            let objects = try fetch(fetchRequest(for: request))
            try givePermanentIDsToInsertedObjects()
            return (objects.map { row(of: $0, version: $0.version) }, false)
        }
    }

    func sourceObjectIDs(matching request: StoreFetchRequest) throws -> (ids: [ManagedObjectID], merged: Bool) {
        try performAndWait {
            var faults = fetchRequest(for: request)
            faults.returnsObjectsAsFaults = true
            let objects = try fetch(faults)
            try givePermanentIDsToInsertedObjects()
            return (objects.map(\.objectID), false)
        }
    }

    func sourceCount(matching request: StoreFetchRequest) throws -> Int {
        try performAndWait { try count(for: fetchRequest(for: request)) }
    }

    func sourceRows(for objectIDs: [ManagedObjectID]) throws -> [StoreRow] {
        try performAndWait {
            let objects = try objectIDs.compactMap { id -> ManagedObject? in
                if let object = registeredObject(for: id), !object.faultState { return object.isDeleted ? nil : object }
                do { return try existingObject(with: id) } catch let error as StoreError
                    where error.code == .objectNotFound
                { return nil }
            }
            try givePermanentIDsToInsertedObjects()
            return objects.map { row(of: $0, version: $0.version) }
        }
    }

    func sourceCurrentRows(for objectIDs: [ManagedObjectID]) throws -> [StoreRow] { try sourceRows(for: objectIDs) }

    func sourceDestinations(
        of relationship: RelationshipDescription, for objectID: ManagedObjectID
    ) throws -> [ManagedObjectID] {
        try performAndWait {
            let object = try existingObject(with: objectID)
            let destinations = object.destinations(of: relationship)
            try givePermanentIDsToInsertedObjects()
            return destinations.map(\.objectID)
        }
    }

    func sourceNewObjectIDs(
        for entity: EntityDescription, in store: String?, count: Int,
        value: (Int, AttributeDescription) -> AttributeValue
    ) throws -> [ManagedObjectID] {
        try source.sourceNewObjectIDs(for: entity, in: store, count: count, value: value)
    }

    func sourceLocked<T>(_ body: () throws -> T) rethrows -> T { try body() }

    /// A child's save: its rows become this context's changes (inserted, updated, deleted objects and
    /// to-many edits, with inverses kept in step); nothing reaches a store until this context saves.
    /// Inserted objects do not run `awakeFromInsert` again: their values come from the child.
    func sourceSave(_ request: SaveChangesRequest) throws {
        try performAndWait {
            func target(_ id: ManagedObjectID?) -> ManagedObject? {
                guard let id, !id.isTemporaryID else { return nil }
                return object(with: id)
            }
            var created: [(ManagedObject, StoreRow)] = []
            for row in request.insertedRows {
                let object = makeObject(row.entity)
                object.objectID = row.objectID
                object.context = self
                var values = row.attributeValues
                for index in row.entity.transientAttributeIndexes {
                    values[index] = row.entity.attributes[index].defaultValue
                }
                object.attributeValues = values
                registry[row.objectID] = object
                setChangeState(object, .inserted)
                created.append((object, row))
            }
            for (object, row) in created {
                for relationship in row.entity.relationships where !relationship.isToMany {
                    if let destination = target(row.toOneDestinations[relationship.index]) {
                        object.setRelatedObject(destination, at: relationship.index)
                    }
                }
            }
            for row in request.updatedRows {
                let object = try existingObject(with: row.objectID)
                for attribute in row.entity.attributes
                where !attribute.isTransient
                    && object.attributeValues[attribute.index] != row.attributeValues[attribute.index]
                {
                    object[attributeAt: attribute.index] = row.attributeValues[attribute.index]
                }
                // A child's rows carry no transient relationships: the parent keeps its own.
                for relationship in row.entity.relationships where !relationship.isToMany && !relationship.isTransient {
                    guard case .one(let current) = object.relationshipSlots[relationship.index],
                        current?.objectID != row.toOneDestinations[relationship.index]
                    else { continue }
                    object.setRelatedObject(target(row.toOneDestinations[relationship.index]), at: relationship.index)
                }
            }
            for change in request.toManyChanges {
                guard let object = target(change.objectID) else { continue }
                let key = change.relationship.name
                for destination in change.added.compactMap(target) { object.addRelatedObject(destination, forKey: key) }
                for destination in change.removed.compactMap(target) {
                    object.removeRelatedObject(destination, forKey: key)
                }
                if let ordered = change.orderedMembers {
                    object.setRelatedObjects(ordered.compactMap(target), forKey: key)
                }
            }
            for (id, _) in request.deletedObjects {
                if let object = registeredObject(for: id) ?? (try? existingObject(with: id)) { delete(object) }
            }
        }
    }

    // MARK: Internals

    private func fetchRequest(for request: StoreFetchRequest) -> FetchRequest {
        var fetch = FetchRequest(
            entityName: request.entity.name, predicate: request.predicate, sortDescriptors: request.sortDescriptors)
        fetch.includesSubentities = request.includesSubentities
        fetch.fetchLimit = request.fetchLimit
        fetch.fetchOffset = request.fetchOffset
        return fetch
    }

    /// Objects this context inserted get permanent IDs before a child sees them (as rows or as
    /// destinations), so a child and its parent name every object alike.
    private func givePermanentIDsToInsertedObjects() throws {
        guard hasTemporaryIDs else { return }
        try obtainPermanentIDs(for: changedObjects.filter { $0.changeState == .inserted && $0.objectID.isTemporaryID })
        hasTemporaryIDs = false
    }
}
