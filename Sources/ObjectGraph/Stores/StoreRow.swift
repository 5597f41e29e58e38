import Foundation

/// The stored state of one object: what a store returns from fetches and fault fulfilment, and what a
/// save hands it.
///
/// Values are in the entity's flat order: `attributeValues[a.index]` for attribute `a` (transient
/// attributes are `.null`), `toOneDestinations[r.index]` for to-one relationship `r` (`nil` for
/// to-many slots and empty to-ones).
public struct StoreRow: @unchecked Sendable {
    // @unchecked: EntityDescription is immutable once its model is built.
    public var objectID: ManagedObjectID
    public var entity: EntityDescription
    /// The row version for optimistic locking: 1 after insert, +1 for each saved update.
    public var version: Int64
    public var attributeValues: [AttributeValue]
    public var toOneDestinations: [ManagedObjectID?]
    /// For rows of `SaveChangesRequest.updatedRows`: which values differ from the stored row (`nil`:
    /// not known, write them all). The row always carries every value; a store may write only these
    /// (SQLite maintains an index for every column an UPDATE sets, changed or not).
    public var changes: ChangedProperties?

    public init(
        objectID: ManagedObjectID, entity: EntityDescription, version: Int64,
        attributeValues: [AttributeValue], toOneDestinations: [ManagedObjectID?]
    ) {
        precondition(
            attributeValues.count == entity.attributes.count && toOneDestinations.count == entity.relationships.count,
            "a row of \(entity.name) needs \(entity.attributes.count) attribute values and "
                + "\(entity.relationships.count) relationship slots"
        )
        self.objectID = objectID
        self.entity = entity
        self.version = version
        self.attributeValues = attributeValues
        self.toOneDestinations = toOneDestinations
    }
}

extension StoreRow {
    /// A row of `entity`'s default values and no relationships: what a context fills a fault with
    /// when its store cannot read the row (`ManagedObjectContext.storeFailure`).
    init(placeholderFor objectID: ManagedObjectID, entity: EntityDescription) {
        self.init(
            objectID: objectID, entity: entity, version: 0, attributeValues: entity.defaultAttributeValues,
            toOneDestinations: Array(repeating: nil, count: entity.relationships.count))
    }

    /// The row's value of a key property: an attribute's value, or a to-one destination's `keyValue`.
    public func keyValue(of property: PropertyDescription) -> AttributeValue {
        if let relationship = property as? RelationshipDescription {
            return toOneDestinations[relationship.index]?.keyValue ?? .null
        }
        return attributeValues[property.index]
    }
}
