import Foundation
import OrderedCollections

/// One stored object of an atomic store: its ID, row version, attribute values (by attribute index),
/// to-one destinations (by relationship index) and to-many destinations (by relationship index, in
/// stored order). A store's `load` makes one per object of its file; saves keep them in step.
open class AtomicStoreCacheNode {
    public let objectID: ManagedObjectID
    public let entity: EntityDescription
    public var version: Int64
    public var attributeValues: [AttributeValue]
    public var toOneDestinations: [ManagedObjectID?]
    public var toManyDestinations: [Int: [ManagedObjectID]]

    /// A node with the entity's default values and no relationships.
    public init(objectID: ManagedObjectID, entity: EntityDescription) {
        self.objectID = objectID
        self.entity = entity
        version = 1
        attributeValues = entity.defaultAttributeValues
        toOneDestinations = Array(repeating: nil, count: entity.relationships.count)
        toManyDestinations = [:]
    }

    var storeRow: StoreRow {
        StoreRow(
            objectID: objectID, entity: entity, version: version, attributeValues: attributeValues,
            toOneDestinations: toOneDestinations)
    }
}

extension AtomicStoreCacheNode: StoredObject {
    var storedAttributes: [AttributeValue] { attributeValues }
    var storedToOne: [ManagedObjectID?] { toOneDestinations }
    func storedToMany(at index: Int) -> [ManagedObjectID] { toManyDestinations[index] ?? [] }
}
