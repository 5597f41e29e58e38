import Foundation
import OrderedCollections

/// What the in-memory and atomic stores keep of one object, as the predicate evaluator reads it.
protocol StoredObject: AnyObject {
    var objectID: ManagedObjectID { get }
    var entity: EntityDescription { get }
    var version: Int64 { get }
    var storedAttributes: [AttributeValue] { get }
    var storedToOne: [ManagedObjectID?] { get }
    func storedToMany(at index: Int) -> [ManagedObjectID]
}

/// A store whose objects are `StoredObject`s found by ID.
protocol StoredObjectLookup: AnyObject {
    associatedtype Object: StoredObject
    func storedObject(for objectID: ManagedObjectID) -> Object?
}

extension StoredObjectLookup {
    /// Optimistic locking: the object must still be stored, at the version it was read with.
    func checkVersion(_ objectID: ManagedObjectID, _ version: Int64) throws {
        guard let current = storedObject(for: objectID) else {
            throw StoreError(
                .conflict, "\(objectID.entityName) \(objectID) was deleted from the store after it was read",
                objectID: objectID)
        }
        if current.version != version {
            throw StoreError(
                .conflict,
                "\(objectID.entityName) \(objectID) changed in the store since it was read (read version \(version), "
                    + "store version \(current.version))",
                objectID: objectID)
        }
    }
}

extension OrderedSet where Element == ManagedObjectID {
    /// The members after a save's edit of the relationship.
    mutating func apply(_ change: ToManyChange) {
        for id in change.removed { remove(id) }
        for id in change.added { append(id) }
        if let ordered = change.orderedMembers { self = OrderedSet(ordered) }
    }
}

/// A stored object seen by the predicate evaluator; relationships resolve to other objects of the
/// same store (an ID the store does not hold stays an ID).
struct StoredObjectSubject<Store: StoredObjectLookup>: PredicateSubject {
    unowned let store: Store
    let object: Store.Object

    var predicateObjectID: ManagedObjectID { object.objectID }

    func predicateValue(forKey key: String) -> PredicateValue {
        if let index = object.entity.attributeIndex(named: key) { return .value(object.storedAttributes[index]) }
        guard let index = object.entity.relationshipIndex(named: key) else { return .value(.null) }
        if object.entity.relationships[index].isToMany {
            return .collection(object.storedToMany(at: index).map(resolve))
        }
        guard let id = object.storedToOne[index] else { return .value(.null) }
        return resolve(id)
    }

    private func resolve(_ id: ManagedObjectID) -> PredicateValue {
        if let target = store.storedObject(for: id) {
            return .subject(StoredObjectSubject(store: store, object: target))
        }
        return .objectID(id)
    }
}
