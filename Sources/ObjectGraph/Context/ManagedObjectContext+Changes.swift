import OrderedCollections

/// Inserting and deleting objects (with delete rules), and the change tracking every edit goes through.
extension ManagedObjectContext {
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
        if let pending = pendingObjectChanges { pending.inserted.append(object) }
        registerUndo(.state(object, .insertedThenDeleted, nil))
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
        if type(of: object) != ManagedObject.self { object.prepareForDeletion() }
        registerUndo(.state(object, object.changeState, object.original))
        if let pending = pendingObjectChanges { pending.deleted.append(object) }
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
        if changeTrackingSuspended { return }
        if let pending = pendingObjectChanges { pending.touched.append(object) }
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
        if changeTrackingSuspended { return }
        if let pending = pendingObjectChanges { pending.touched.append(object) }
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
}
