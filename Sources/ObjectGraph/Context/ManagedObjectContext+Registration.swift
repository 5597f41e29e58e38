/// The objects a context holds: at most one per ID (uniquing), looked up by ID, made as faults, or
/// made and filled from stored rows.
extension ManagedObjectContext {
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

    // MARK: Materialising rows

    /// The registered objects of rows just read from the stores
    /// (`PersistentStoreCoordinator.storedRows`), filled with the rows' values — objects this
    /// context already holds with their values are returned as they are. An importer that compared
    /// its records with the rows updates those objects directly instead of fetching them again.
    public func objects(for rows: [StoreRow]) -> [ManagedObject] {
        checkQueue()
        return materialize(rows)
    }

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
        withoutChangeTracking { for object in filled { object.awakeFromFetch() } }
        return objects
    }
}
