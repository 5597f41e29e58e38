import OrderedCollections

extension ManagedObject {
    /// The destination of a to-one relationship.
    public func relatedObject(forKey key: String) -> ManagedObject? {
        let index = relationshipIndex(key)
        precondition(
            !entity.relationships[index].isToMany, "\(entity.name).\(key) is to-many: use relatedObjects(forKey:)")
        willAccess()
        guard case .one(let destination) = relationshipSlots[index] else { return nil }
        return destination
    }

    /// The destinations of a to-many relationship (in order for ordered relationships). Loads the
    /// relationship if it is a fault.
    public func relatedObjects(forKey key: String) -> [ManagedObject] {
        let index = relationshipIndex(key)
        precondition(
            entity.relationships[index].isToMany, "\(entity.name).\(key) is to-one: use relatedObject(forKey:)")
        return Array(members(of: entity.relationships[index]))
    }

    /// Sets a to-one relationship and keeps the inverse in step: the object leaves its old
    /// destination's inverse and joins the new one's.
    public func setRelatedObject(_ destination: ManagedObject?, forKey key: String) {
        setRelatedObject(destination, at: relationshipIndex(key))
    }

    /// Sets a to-one relationship by its index in `entity.relationships` (the fast path for importers).
    public func setRelatedObject(_ destination: ManagedObject?, at index: Int) {
        let relationship = entity.relationships[index]
        precondition(
            !relationship.isToMany, "\(relationship) is to-many: use add/removeRelatedObject or setRelatedObjects")
        checkDestination(destination, of: relationship)
        willAccess()
        guard case .one(let old) = relationshipSlots[relationship.index], old !== destination else { return }
        primitiveSetToOne(relationship, destination)
        guard let inverse = relationship.inverse else { return }
        if let old { old.primitiveUnlink(inverse, self) }
        if let destination { destination.linkInverse(inverse, of: relationship, to: self) }
    }

    /// Adds a destination to a to-many relationship, updating the inverse.
    public func addRelatedObject(_ destination: ManagedObject, forKey key: String) {
        let relationship = entity.relationships[relationshipIndex(key)]
        precondition(relationship.isToMany, "\(entity.name).\(key) is to-one: use setRelatedObject")
        checkDestination(destination, of: relationship)
        let storage = editableStorage(of: relationship)
        if let members = storage.members, members.contains(destination) { return }
        willChangeToMany()
        changeMember(destination, of: relationship, in: storage, adding: true)
        if let inverse = relationship.inverse { destination.linkInverse(inverse, of: relationship, to: self) }
    }

    /// Removes a destination from a to-many relationship, updating the inverse.
    public func removeRelatedObject(_ destination: ManagedObject, forKey key: String) {
        let relationship = entity.relationships[relationshipIndex(key)]
        precondition(relationship.isToMany, "\(entity.name).\(key) is to-one: use setRelatedObject(nil, ...)")
        let storage = editableStorage(of: relationship)
        if let members = storage.members, !members.contains(destination) { return }
        willChangeToMany()
        changeMember(destination, of: relationship, in: storage, adding: false)
        if let inverse = relationship.inverse { destination.primitiveUnlink(inverse, self) }
    }

    /// Replaces the destinations of a to-many relationship (and, for ordered ones, their order).
    public func setRelatedObjects(_ destinations: [ManagedObject], forKey key: String) {
        let relationship = entity.relationships[relationshipIndex(key)]
        precondition(relationship.isToMany, "\(entity.name).\(key) is to-one: use setRelatedObject")
        let current = members(of: relationship)
        let wanted = OrderedSet(destinations)
        for object in current where !wanted.contains(object) { removeRelatedObject(object, forKey: key) }
        for object in wanted where !current.contains(object) { addRelatedObject(object, forKey: key) }
        if relationship.isOrdered, case .many(let storage) = relationshipSlots[relationship.index],
            storage.members != wanted
        {
            willChangeToMany()
            if let members = storage.members { context?.registerUndo(.order(self, relationship.index, members)) }
            storage.members = wanted
            storage.isReordered = true
        }
    }

    // MARK: Internals

    private func checkDestination(_ destination: ManagedObject?, of relationship: RelationshipDescription) {
        guard let destination else { return }
        precondition(
            destination.entity.isKind(of: relationship.destinationEntity),
            "\(entity.name).\(relationship.name) takes \(relationship.destinationEntityName) objects, not "
                + "\(destination.entity.name)"
        )
        precondition(
            destination.context === context || destination.context == nil || context == nil,
            "\(entity.name).\(relationship.name): objects of two different contexts cannot be related; pass the "
                + "objectID and use object(with:)"
        )
    }

    /// The loaded destinations of a to-many relationship (fires the relationship fault).
    func members(of relationship: RelationshipDescription) -> OrderedSet<ManagedObject> {
        willAccess()
        guard case .many(let storage) = relationshipSlots[relationship.index] else { return [] }
        if storage.members == nil { context?.fulfillRelationshipFault(storage, of: self, relationship) }
        guard let members = storage.members else {
            preconditionFailure(
                "\(entity.name).\(relationship.name) of \(objectID) is a fault with no context to load it from (keep "
                    + "the context alive while using its objects)"
            )
        }
        return members
    }

    /// Current destinations of any relationship, without loading a to-many that is a fault unless asked.
    func destinations(of relationship: RelationshipDescription) -> [ManagedObject] {
        if relationship.isToMany { return Array(members(of: relationship)) }
        willAccess()
        guard case .one(let destination) = relationshipSlots[relationship.index], let destination else { return [] }
        return [destination]
    }

    func primitiveSetToOne(_ relationship: RelationshipDescription, _ destination: ManagedObject?) {
        willChange()
        if isObserved || context?.recordsUndo == true { return setWatchedToOne(relationship, destination) }
        relationshipSlots[relationship.index] = .one(destination)
    }

    /// Removes `source` from this object's `relationship` (the inverse side), without touching `source`.
    func primitiveUnlink(_ relationship: RelationshipDescription, _ source: ManagedObject) {
        if relationship.isToMany {
            let storage = editableStorage(of: relationship)
            if let members = storage.members, !members.contains(source) { return }
            willChangeToMany()
            changeMember(source, of: relationship, in: storage, adding: false)
            return
        }
        willAccess()
        if case .one(let current) = relationshipSlots[relationship.index], current === source {
            primitiveSetToOne(relationship, nil)
        }
    }

    /// Makes this object's `inverse` point at `source`, after `source.relationship` was set to include
    /// this object. For a to-one inverse, the previous owner loses this object first (one-to-one and
    /// one-to-many moves), so both ends stay consistent.
    func linkInverse(
        _ inverse: RelationshipDescription, of relationship: RelationshipDescription, to source: ManagedObject
    ) {
        if inverse.isToMany {
            let storage = editableStorage(of: inverse)
            if let members = storage.members, members.contains(source) { return }
            willChangeToMany()
            changeMember(source, of: inverse, in: storage, adding: true)
            return
        }
        willAccess()
        guard case .one(let previous) = relationshipSlots[inverse.index], previous !== source else { return }
        if let previous { previous.primitiveUnlink(relationship, self) }
        primitiveSetToOne(inverse, source)
    }

    /// Whether a to-many relationship has edits that change what is stored. Edits of a to-many whose
    /// inverse is to-one are stored by the members (their foreign keys): adding a member whose stored
    /// to-one already names this object, or removing one whose stored to-one does not, changes nothing
    /// (a re-import that links the same lines to the same order).
    var hasToManyEdits: Bool {
        for relationship in entity.relationships where relationship.isToMany && !relationship.isTransient {
            guard relationship.index < relationshipSlots.count,
                case .many(let storage) = relationshipSlots[relationship.index]
            else { continue }
            if storage.isReordered { return true }
            guard let inverse = relationship.inverse, !inverse.isToMany else {
                if !storage.added.isEmpty || !storage.removed.isEmpty { return true }
                continue
            }
            // "Names this object" by identity or ID: another object for the same row (an inserted
            // object a uniqueness conflict merged into this stored one) names it too.
            func namesSelf(_ member: ManagedObject) -> Bool? {
                guard let original = member.original else { return nil }
                let named = original.toOne[inverse.index]
                return named === self || (named != nil && named?.objectID == objectID)
            }
            for member in storage.added {
                if member.changeState == .inserted { return true }
                if namesSelf(member) == false { return true }
            }
            for member in storage.removed {
                if member.changeState == .deleted { return true }
                if namesSelf(member) == true { return true }
            }
        }
        return false
    }

    /// The storage of a to-many relationship, ready for an edit, without firing the object's fault:
    /// a fault keeps the edit (as added/removed) until it loads or is saved, so linking many children
    /// to a parent never loads the parent. Ordered relationships load, since their order must be known.
    func editableStorage(of relationship: RelationshipDescription) -> ToManyStorage {
        if faultState && !relationship.isOrdered {
            precondition(context != nil, "\(objectID) is a fault with no context (was its context reset?)")
            if relationshipSlots.isEmpty {
                relationshipSlots = entity.relationships.map {
                    $0.isToMany ? .many(ToManyStorage(storedBy: $0)) : .one(nil)
                }
            }
        } else {
            willAccess()
            if relationship.isOrdered { _ = members(of: relationship) }
        }
        guard case .many(let storage) = relationshipSlots[relationship.index] else {
            preconditionFailure("\(relationship) is not a to-many relationship")
        }
        return storage
    }
}

extension ManagedObject: PredicateSubject {
    public var predicateObjectID: ManagedObjectID { objectID }

    public func predicateValue(forKey key: String) -> PredicateValue {
        if let index = entity.attributeIndexByName[key] { return .value(self[attributeAt: index]) }
        guard let index = entity.relationshipIndexByName[key] else { return .value(.null) }
        let relationship = entity.relationships[index]
        if relationship.isToMany { return .collection(members(of: relationship).map { .subject($0) }) }
        willAccess()
        guard case .one(let destination) = relationshipSlots[index], let destination else { return .value(.null) }
        return .subject(destination)
    }
}

/// A managed object passed to a predicate stands for its ID.
extension ManagedObject: PredicateArgumentConvertible {
    public var predicateArgument: PredicateArgument { .objectID(objectID) }
}
