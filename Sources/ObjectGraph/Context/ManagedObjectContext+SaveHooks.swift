import Foundation

/// What a save does around writing: the event's end, `willSave` hooks, derived values, `didSave`.
extension ManagedObjectContext {
    /// Before a save collects its changes: the event ends (observers hear of it) and every changed
    /// object's `willSave` runs (objects it changes get theirs too).
    func prepareForSave() {
        processPendingChanges()
        var next = 0
        var rounds = 0
        // `changedObjects` only grows here: objects a `willSave` changes are appended and called in turn.
        while next < changedObjects.count, rounds < 100 {
            let end = changedObjects.count
            for object in changedObjects[next..<end]
            where object.changeState != .none && object.changeState != .insertedThenDeleted
                && type(of: object) != ManagedObject.self
            {
                object.willSave()
            }
            next = end
            rounds += 1
        }
    }

    /// Sets every derived attribute of the changed objects, and of the objects whose derivations
    /// read a changed object (an order whose total sums its lines), when the value differs. Runs in
    /// a root context's save once uniqueness conflicts are settled (an inserted line that is a
    /// stored line again is counted once). `now()` is taken only by objects with a change of their
    /// own: an unchanged re-import writes nothing. Derivations that read derived values are computed
    /// until nothing moves (the model refuses cycles).
    /// - Returns: whether a value was set.
    func computeDerivedValues() -> Bool {
        var owners: [ManagedObject] = []
        var seen = Set<ObjectIdentifier>()
        func add(_ object: ManagedObject) {
            guard !object.entity.derivedAttributeIndexes.isEmpty, seen.insert(ObjectIdentifier(object)).inserted,
                object.context === self, !object.isDeleted
            else { return }
            owners.append(object)
        }
        for object in changedObjects where object.changeState != .none {
            add(object)
            reachOwners(from: object, add)
        }
        guard !owners.isEmpty else { return false }
        let stamped = Set(owners.filter(\.hasOwnChanges).map(ObjectIdentifier.init))
        var changed = false
        for _ in 0...managedObjectModel.derivedAttributeCount {
            var moved: [ManagedObject] = []
            for object in owners {
                for index in object.entity.derivedAttributeIndexes {
                    let attribute = object.entity.attributes[index]
                    guard let derivation = attribute.derivation else { continue }
                    // `now()` of an object without a change of its own: the stored time stays.
                    let value =
                        derivation.isNow && !stamped.contains(ObjectIdentifier(object))
                        ? object.original?.attributes[index] ?? object[attributeAt: index]
                        : derivation.value(for: object, as: attribute.type)
                    if !value.isSame(as: object[attributeAt: index]) {
                        object[attributeAt: index] = value
                        moved.append(object)
                    }
                }
            }
            if moved.isEmpty { break }
            changed = true
            // A derived value that moved may be read by others' derivations (a customer's sum of its
            // orders' totals): they are computed in the next round.
            for object in moved { reachOwners(from: object, add) }
        }
        return changed
    }

    /// Hands `add` the objects whose derived values read `object` and must be recomputed: when it
    /// is inserted or deleted, when what they read of it changed, or when it moved to another owner
    /// (its to-one back changed: the old owner too).
    private func reachOwners(from object: ManagedObject, _ add: (ManagedObject) -> Void) {
        for dependent in object.entity.derivationDependents where object.affects(dependent) {
            let first = dependent.back[0]
            var reached = object.destinations(of: first)
            if !first.isToMany, let original = object.original, let old = original.toOne[first.index],
                !reached.contains(where: { $0 === old })
            {
                reached.append(old)
            }
            for relationship in dependent.back.dropFirst() {
                reached = reached.flatMap { $0.destinations(of: relationship) }
            }
            reached.forEach(add)
        }
    }

    /// After a save wrote its changes: each saved object's `didSave`, and no undo across the save.
    func finishSaveHooks(_ groups: [ManagedObject]...) {
        for group in groups {
            for object in group where type(of: object) != ManagedObject.self { object.didSave() }
        }
        undoManager?.removeAllActions()
    }
}

extension ManagedObject {
    /// Whether the object has something to store besides derived values: it is inserted, or an
    /// attribute that is not derived or transient, a stored to-one or a to-many's stored links
    /// changed. (An upsert of an identical row has none.)
    var hasOwnChanges: Bool {
        switch changeState {
        case .inserted: return true
        case .updated:
            let stored =
                entity.attributes.filter { !$0.isDerived && !$0.isTransient }.map(\.name)
                + entity.relationships.filter { !$0.isToMany && !$0.isTransient }.map(\.name)
            return stored.contains(where: changed) || hasToManyEdits
        case .none, .deleted, .insertedThenDeleted: return false
        }
    }

    /// Whether a change of this object reaches the derivation of `dependent` (see `reachOwners`).
    func affects(_ dependent: EntityDescription.DerivationDependent) -> Bool {
        switch changeState {
        case .inserted, .deleted: return true
        case .none, .insertedThenDeleted: return false
        case .updated:
            if let read = dependent.read, changed(read) { return true }
            let first = dependent.back[0]
            return !first.isToMany && changed(first.name)
        }
    }

    /// Whether the property `key` differs from its last saved state.
    func changed(_ key: String) -> Bool {
        if let index = entity.attributeIndexByName[key] {
            guard let original, !faultState else { return false }
            return !attributeValues[index].isSame(as: original.attributes[index])
        }
        guard let index = entity.relationshipIndexByName[key], index < relationshipSlots.count else { return false }
        switch relationshipSlots[index] {
        case .one(let destination):
            guard let original else { return false }
            return destination !== original.toOne[index] && destination?.objectID != original.toOne[index]?.objectID
        case .many(let storage):
            return !storage.added.isEmpty || !storage.removed.isEmpty
        }
    }
}
