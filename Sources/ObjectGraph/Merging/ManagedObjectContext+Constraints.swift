import OrderedCollections

/// Uniqueness constraints at save: an object whose constrained key is already taken — by a stored
/// row or by another object of the same save — is a constraint conflict, settled by `mergePolicy`:
///
/// - `.error`: the save fails with a `MergeError` naming each key.
/// - `.objectTrumps`, `.overwrite`: the object wins. An inserted object becomes an update of the
///   stored row (an upsert: it takes the row's ID, writes its own values, keeps the row's other
///   relationships); among objects of one save with the same key, the last one inserted wins.
/// - `.storeTrumps`, `.rollback`: the stored row wins. An inserted object becomes the stored object
///   (its ID, values and to-one relationships); among objects of one save, the first one wins.
///
/// An object that loses to another object of the save is merged into it: its relationships move to
/// the winner, references to it without an inverse write the winner's key, and it leaves the context
/// after the save. An updated object whose new key is taken keeps its old key under every policy but
/// `.error` (no other row is deleted to make room).
extension ManagedObjectContext {
    /// Settles the constraint conflicts of a save's inserted and updated objects (called with the
    /// coordinator locked, permanent IDs assigned). One indexed lookup per constraint per 500 keys.
    /// - Returns: whether any object's change state or relationships changed (the caller collects the
    ///   save's objects again), and the objects that became updates of rows read just now (their
    ///   versions need no further check in this save).
    /// - Throws: `MergeError` under `.error`; `StoreError` from the lookup.
    func resolveConstraintConflicts(
        inserted: [ManagedObject], updated: [ManagedObject]
    ) throws -> (changed: Bool, adopted: Set<ObjectIdentifier>) {
        var groups = constraintGroups(inserted: inserted, updated: updated)
        guard !groups.isEmpty else { return (false, []) }
        // Keys holding a relationship come last: the objects they point at may take stored IDs first
        // (an upserted order's lines are then found by the order's stored ID).
        groups.sort { !$0.hasRelationship && $1.hasRelationship }

        let objectWins = mergePolicy == .objectTrumps || mergePolicy == .overwrite
        var resolution = Resolution()
        for group in groups {
            let merges =
                mergePolicy != .error
                && !unmergedConstraints.contains(
                    UniquenessConstraintName(entity: group.entity.name, properties: group.properties.map(\.name)))
            var holders = KeyHolders(group)
            settleDuplicates(of: group, &holders, merges: merges, objectWins: objectWins, into: &resolution)
            try settleStoredKeys(of: group, holders, merges: merges, objectWins: objectWins, into: &resolution)
        }
        if !resolution.conflicts.isEmpty { throw MergeError(constraintConflicts: resolution.conflicts) }
        takeSnapshots(of: resolution.adopted, rows: resolution.adoptedRows)
        return (resolution.changed, Set(resolution.adopted.map(ObjectIdentifier.init)))
    }

    /// The objects of a save to check, by constraint: an inserted object under every key of its
    /// entity, an updated one under the keys whose values it changed.
    private func constraintGroups(inserted: [ManagedObject], updated: [ManagedObject]) -> [Group] {
        var groups: [Group] = [], groupIndex: [ObjectIdentifier: [[String]: Int]] = [:]
        func add(_ object: ManagedObject, _ key: EntityDescription.UniquenessKey) {
            if let index = groupIndex[ObjectIdentifier(key.entity)]?[key.names] {
                groups[index].objects.append(object)
            } else {
                groupIndex[ObjectIdentifier(key.entity), default: [:]][key.names] = groups.count
                groups.append(Group(entity: key.entity, properties: key.properties, objects: [object]))
            }
        }
        for object in inserted where !object.entity.uniquenessKeys.isEmpty {
            for key in object.entity.uniquenessKeys { add(object, key) }
        }
        for object in updated where !object.entity.uniquenessKeys.isEmpty {
            guard let original = object.original else { continue }
            for key in object.entity.uniquenessKeys
            where key.properties.contains(where: { property in
                if property is RelationshipDescription {
                    return object.relatedObjectSlot(property.index) !== original.toOne[property.index]
                }
                return object.attributeValues[property.index] != original.attributes[property.index]
            }) {
                add(object, key)
            }
        }
        return groups
    }

    /// Settles the keys more than one object of the save holds. Under `.error` each such key is a
    /// conflict; for a constraint that does not merge, each later object is in conflict with the
    /// first; else the winner (an updated object, or by the policy the last or first inserted one)
    /// keeps the key and becomes its holder, and the others go back to their stored keys (updated
    /// objects) or are merged into it (inserted ones).
    private func settleDuplicates(
        of group: Group, _ keys: inout KeyHolders, merges: Bool, objectWins: Bool,
        into resolution: inout Resolution
    ) {
        for (holder, others) in keys.duplicates.sorted(by: { $0.key < $1.key }) {
            let objects = [keys.holders[holder]] + others
            if mergePolicy == .error {
                resolution.conflicts.append(
                    group.conflict(objects[0], key: group.key(of: objects[0]), existing: nil, others: others))
                continue
            }
            if !merges {
                // The first object keeps the key; each later one is in conflict with it.
                for other in others {
                    resolution.conflicts.append(
                        group.conflict(other, key: group.key(of: other), existing: objects[0].objectID, others: []))
                }
                continue
            }
            let winner =
                objects.first { $0.changeState == .updated } ?? (objectWins ? objects.last! : objects.first!)
            for loser in objects where loser !== winner {
                if loser.entity !== winner.entity {
                    // Objects of two entities under one key (two sub-entities of the declaring one):
                    // one cannot become the other, so the key is in conflict.
                    resolution.conflicts.append(
                        group.conflict(loser, key: group.key(of: loser), existing: winner.objectID, others: []))
                } else if loser.changeState == .updated {
                    restoreKey(of: loser, group.properties)
                } else {
                    absorb(loser, into: winner)
                }
            }
            keys.holders[holder] = winner
            resolution.changed = true
        }
    }

    /// Settles the keys of the save that are already stored (looked up through the constraint's
    /// unique index). For a constraint that does not merge, each is a conflict; else an updated
    /// holder goes back to its stored key, and an inserted one is merged into the row's registered
    /// object or becomes the row's object (an upsert).
    private func settleStoredKeys(
        of group: Group, _ keys: KeyHolders, merges: Bool, objectWins: Bool, into resolution: inout Resolution
    ) throws {
        let stored = try persistentStoreCoordinator.rows(
            of: group.entity, matching: keys.flatKeys, on: group.properties)
        for row in stored {
            let key = group.key(of: row)
            guard let holder = keys.holderOf[key] else { continue }
            let object = keys.holders[holder]
            guard object.objectID != row.objectID else { continue }
            // A stored row of another entity (a sibling sub-entity) cannot become this object.
            if !merges || row.entity !== object.entity {
                resolution.conflicts.append(group.conflict(object, key: key, existing: row.objectID, others: []))
                continue
            }
            resolution.changed = true
            if object.changeState == .updated {
                restoreKey(of: object, group.properties)
            } else if let registered = registry[row.objectID], registered !== object {
                if objectWins { copyValues(of: object, to: registered) }
                absorb(object, into: registered)
            } else {
                try adopt(row, by: object, objectWins: objectWins)
                resolution.adopted.append(object)
                resolution.adoptedRows.append(row)
            }
        }
    }

    /// The objects of a save that hold one constraint's keys.
    private struct Group {
        let entity: EntityDescription
        let properties: [PropertyDescription]
        var objects: [ManagedObject]
        var hasRelationship: Bool { properties.contains { $0 is RelationshipDescription } }

        func key(of object: ManagedObject) -> Key {
            properties.count == 1
                ? .single(object.keyValue(of: properties[0]))
                : .compound(properties.map { object.keyValue(of: $0) })
        }

        func key(of row: StoreRow) -> Key {
            properties.count == 1
                ? .single(row.keyValue(of: properties[0]))
                : .compound(properties.map { row.keyValue(of: $0) })
        }

        func conflict(
            _ object: ManagedObject, key: Key, existing: ManagedObjectID?, others: [ManagedObject]
        ) -> ConstraintConflict {
            ConstraintConflict(
                entityName: entity.name, keyNames: properties.map(\.name), keyValues: key.values,
                objectID: object.objectID, existingObjectID: existing, otherObjectIDs: others.map(\.objectID))
        }
    }

    /// A group's objects by key: the first object of each key holds it; objects of this save with a
    /// taken key are duplicates.
    private struct KeyHolders {
        var holders: [ManagedObject] = []
        var holderOf: [Key: Int] = [:]
        var duplicates: [Int: [ManagedObject]] = [:]
        /// The holders' keys, one value after another (the lookup of stored keys).
        var flatKeys: [AttributeValue] = []

        init(_ group: Group) {
            holders.reserveCapacity(group.objects.count)
            holderOf.reserveCapacity(group.objects.count)
            flatKeys.reserveCapacity(group.objects.count * group.properties.count)
            for object in group.objects {
                let key = group.key(of: object)
                if key.hasNull { continue }  // NULLs never clash (as in SQL unique indexes)
                if let holder = holderOf[key] {
                    duplicates[holder, default: []].append(object)
                } else {
                    holderOf[key] = holders.count
                    holders.append(object)
                    switch key {
                    case .single(let value): flatKeys.append(value)
                    case .compound(let values): flatKeys += values
                    }
                }
            }
        }
    }

    /// What settling a save's constraints came to: the conflicts left (thrown under `MergeError`),
    /// whether any object changed, and the objects that became updates of rows read just now.
    private struct Resolution {
        var conflicts: [ConstraintConflict] = []
        var changed = false
        var adopted: [ManagedObject] = []
        var adoptedRows: [StoreRow] = []
    }

    /// A constrained key: one value (the usual case, no array to allocate) or several.
    private enum Key: Hashable {
        case single(AttributeValue)
        case compound([AttributeValue])
        var values: [AttributeValue] {
            switch self {
            case .single(let value): return [value]
            case .compound(let values): return values
            }
        }
        var hasNull: Bool {
            switch self {
            case .single(let value): return value == .null
            case .compound(let values): return values.contains(.null)
            }
        }
    }

    /// An inserted object becomes the object of a stored row with its key: it takes the row's ID,
    /// version and snapshot, and is saved as an update of that row — with its own values when the
    /// object wins, with the row's otherwise.
    private func adopt(_ row: StoreRow, by object: ManagedObject, objectWins: Bool) throws {
        if registry[object.objectID] === object { registry.removeValue(forKey: object.objectID) }
        object.objectID = row.objectID
        registry[row.objectID] = object
        try keepStoredLinks(of: object)
        if object.entity.hasDerivations { reloadStoredMembers(of: object) }
        object.version = row.version
        let toOne = row.toOneDestinations.map { $0.map { self.object(with: $0) } }
        var snapshot = row.attributeValues
        for index in object.entity.transientAttributeIndexes { snapshot[index] = object.attributeValues[index] }
        object.original = (snapshot, toOne)
        object.changeState = .updated
        guard !objectWins else { return }
        object.attributeValues = snapshot
        for relationship in object.entity.relationships where !relationship.isToMany && !relationship.isTransient {
            guard case .one(let current) = object.relationshipSlots[relationship.index],
                current !== toOne[relationship.index]
            else { continue }
            object.setRelatedObject(toOne[relationship.index], at: relationship.index)
        }
        // The row's values as they are: nothing to rewrite (to-many edits are still saved).
        object.original = nil
    }

    /// An inserted object that became a stored row's, of an entity whose derived values read its
    /// to-many relationships (or whose objects others' derivations read): relationships kept by the
    /// destinations' foreign keys load the row's members on next access, with this save's edits —
    /// an order that a re-import makes again sums its stored lines, not only this batch's.
    private func reloadStoredMembers(of object: ManagedObject) {
        for relationship in object.entity.relationships
        where relationship.isToMany && !relationship.usesJoinTable && !relationship.isOrdered
            && !relationship.isTransient
        {
            if case .many(let storage) = object.relationshipSlots[relationship.index] { storage.members = nil }
        }
    }

    /// An inserted object that became a stored row's: the row's links in join tables stay (an upsert
    /// keeps the row's other relationships), so its unordered many-to-many relationships hold them
    /// with its own, and its adds of links the row has already are no edits (a re-import that adds
    /// the same links changes nothing).
    private func keepStoredLinks(of object: ManagedObject) throws {
        for relationship in object.entity.relationships where relationship.usesJoinTable && !relationship.isOrdered {
            guard case .many(let storage) = object.relationshipSlots[relationship.index], storage.members != nil,
                !storage.added.isEmpty
            else { continue }
            let stored = try persistentStoreCoordinator.destinations(of: relationship, for: object.objectID).map {
                self.object(with: $0)
            }
            guard !stored.isEmpty else { continue }
            let kept = Set(stored)
            for member in storage.added where kept.contains(member) {
                storage.added.remove(member)
                // Its inverse's add of this object is no edit either.
                if let inverse = relationship.inverse, inverse.index < member.relationshipSlots.count,
                    case .many(let other) = member.relationshipSlots[inverse.index]
                {
                    other.added.remove(object)
                }
            }
            var members = OrderedSet(stored)
            members.append(contentsOf: storage.members!)
            storage.members = members
        }
    }

    /// The winner of a key takes the loser's attribute values and to-one destinations (object trumps).
    private func copyValues(of loser: ManagedObject, to winner: ManagedObject) {
        for attribute in winner.entity.attributes where !attribute.isTransient {
            guard let index = loser.entity.attributeIndex(named: attribute.name) else { continue }
            if winner[attributeAt: attribute.index] != loser.attributeValues[index] {
                winner[attributeAt: attribute.index] = loser.attributeValues[index]
            }
        }
        for relationship in winner.entity.relationships where !relationship.isToMany {
            guard let index = loser.entity.relationshipIndex(named: relationship.name),
                case .one(let destination?) = loser.relationshipSlots[index]
            else { continue }
            winner.setRelatedObject(destination, at: relationship.index)
        }
    }

    /// Merges an inserted object into the object that keeps its key: its relationships move to the
    /// winner (to-ones only where the winner has none), and it is saved as never inserted.
    private func absorb(_ loser: ManagedObject, into winner: ManagedObject) {
        for relationship in loser.entity.relationships {
            guard let target = winner.entity.relationship(named: relationship.name),
                target.isToMany == relationship.isToMany
            else { continue }
            switch loser.relationshipSlots[relationship.index] {
            case .one(let destination?):
                loser.setRelatedObject(nil, at: relationship.index)
                if case .one(nil) = winner.relationshipSlotLoaded(target.index) {
                    winner.setRelatedObject(destination, at: target.index)
                }
            case .many(let storage):
                for member in storage.members ?? storage.added {
                    loser.removeRelatedObject(member, forKey: relationship.name)
                    winner.addRelatedObject(member, forKey: target.name)
                }
            case .one(nil):
                break
            }
        }
        if registry[loser.objectID] === loser { registry.removeValue(forKey: loser.objectID) }
        loser.objectID = winner.objectID  // references to it without an inverse write the winner's key
        loser.changeState = .insertedThenDeleted
    }

    /// An updated object whose new key is taken goes back to its stored key.
    private func restoreKey(of object: ManagedObject, _ properties: [PropertyDescription]) {
        guard let original = object.original else { return }
        for property in properties {
            if property is RelationshipDescription {
                object.setRelatedObject(original.toOne[property.index], at: property.index)
            } else {
                object.attributeValues[property.index] = original.attributes[property.index]
            }
        }
    }
}

extension ManagedObject {
    /// The value of a key property: an attribute's value, or a to-one destination's ID as `keyValue`.
    fileprivate func keyValue(of property: PropertyDescription) -> AttributeValue {
        guard property is RelationshipDescription else { return attributeValues[property.index] }
        return relatedObjectSlot(property.index)?.objectID.keyValue ?? .null
    }

    /// A to-one destination as the object holds it (no fault fired: the object is loaded or new).
    fileprivate func relatedObjectSlot(_ index: Int) -> ManagedObject? {
        guard index < relationshipSlots.count, case .one(let destination) = relationshipSlots[index] else { return nil }
        return destination
    }

    /// A relationship slot with the object's values loaded.
    fileprivate func relationshipSlotLoaded(_ index: Int) -> RelationshipSlot {
        willAccess()
        return relationshipSlots[index]
    }
}
