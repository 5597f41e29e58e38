import Foundation

/// Which attributes and to-one relationships of a row changed, by index (entities with up to 64 of
/// each; others report no mask and are written whole).
public struct ChangedProperties: Sendable, Hashable {
    public var attributes: UInt64 = 0
    public var toOneRelationships: UInt64 = 0
    public init() {}
    public var isEmpty: Bool { attributes == 0 && toOneRelationships == 0 }
    public func containsAttribute(at index: Int) -> Bool { attributes & (1 << UInt64(index)) != 0 }
    public func containsRelationship(at index: Int) -> Bool { toOneRelationships & (1 << UInt64(index)) != 0 }
}

/// Destinations added to and removed from one to-many relationship of one object since the last save.
///
/// Stores must treat both lists as idempotent: while a relationship was a fault the context cannot
/// know what the store holds, so `added` may name a link that already exists and `removed` one that
/// does not. A relational store can ignore changes of a to-many whose inverse is to-one (the inverse's
/// foreign-key column already says it) but must keep links of many-to-many and inverse-less to-many
/// relationships. Deleting a row removes its own links; links other rows hold to it stay unless the
/// context sent their removal (No Action and unidirectional relationships leave them dangling).
public struct ToManyChange: @unchecked Sendable {
    public var objectID: ManagedObjectID
    public var relationship: RelationshipDescription
    public var added: [ManagedObjectID]
    public var removed: [ManagedObjectID]
    /// For ordered relationships: every destination in its new order (stores replace the stored order).
    public var orderedMembers: [ManagedObjectID]?
}

/// Everything one context save asks a store to write, as one atomic unit.
public struct SaveChangesRequest: Sendable {
    /// New rows (permanent IDs already assigned by `newReferences`; `version` 1).
    public var insertedRows: [StoreRow] = []
    /// Changed rows; `version` is the version the object was read with (the store compares it).
    public var updatedRows: [StoreRow] = []
    /// Deleted objects with the versions they were read with.
    public var deletedObjects: [(objectID: ManagedObjectID, version: Int64)] = []
    /// To-many edits of inserted and updated objects.
    public var toManyChanges: [ToManyChange] = []

    public init() {}

    public var isEmpty: Bool {
        insertedRows.isEmpty && updatedRows.isEmpty && deletedObjects.isEmpty && toManyChanges.isEmpty
    }
}
