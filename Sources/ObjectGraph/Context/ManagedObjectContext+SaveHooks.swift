import Foundation

/// What a save does around writing: the event's end, `willSave` hooks, derived values, `didSave`.
extension ManagedObjectContext {
    /// Before a save collects its changes: the event ends (observers hear of it), every changed
    /// object's `willSave` runs (objects it changes get theirs too), and derived values are computed.
    func prepareForSave() {
        processPendingChanges()
        var next = 0
        var rounds = 0
        // `changedObjects` only grows here: objects a `willSave` changes are appended and called in turn.
        while next < changedObjects.count, rounds < 100 {
            let end = changedObjects.count
            for object in changedObjects[next..<end]
            where object.changeState != .none && type(of: object) != ManagedObject.self {
                object.willSave()
            }
            next = end
            rounds += 1
        }
        if managedObjectModel.hasDerivedAttributes { computeDerivedValues() }
    }

    /// Sets every derived attribute of the changed objects, and of the objects whose derivations
    /// read a changed object (an order whose total sums its lines), when the value differs.
    private func computeDerivedValues() {
        var owners: [ManagedObject] = []
        var seen = Set<ObjectIdentifier>()
        func add(_ object: ManagedObject) {
            guard !object.entity.derivedAttributeIndexes.isEmpty, seen.insert(ObjectIdentifier(object)).inserted,
                object.changeState != .deleted, object.changeState != .insertedThenDeleted
            else { return }
            owners.append(object)
        }
        for object in changedObjects where object.changeState != .none {
            add(object)
            // A deleted object still names its destinations (delete rules change the other side).
            for relationship in object.entity.derivationDependents {
                for destination in object.destinations(of: relationship) { add(destination) }
            }
        }
        for object in owners {
            for index in object.entity.derivedAttributeIndexes {
                let attribute = object.entity.attributes[index]
                guard let derivation = attribute.derivation else { continue }
                let value = derivation.value(for: object, as: attribute.type)
                if !value.isSame(as: object[attributeAt: index]) { object[attributeAt: index] = value }
            }
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
