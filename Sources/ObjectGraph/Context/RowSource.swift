import Foundation

/// Where a context loads rows from and saves its changes to: its coordinator (a root context), or its
/// parent context (a child context). Both hand out `StoreRow`s and take `SaveChangesRequest`s, so a
/// context works the same at every level.
protocol RowSource: AnyObject {
    /// Rows matching a request (sorted and paged unless `merged`: then the context sorts and pages).
    func sourceRows(matching request: StoreFetchRequest) throws -> (rows: [StoreRow], merged: Bool)
    func sourceObjectIDs(matching request: StoreFetchRequest) throws -> (ids: [ManagedObjectID], merged: Bool)
    func sourceCount(matching request: StoreFetchRequest) throws -> Int
    /// Rows to fulfil faults with (a coordinator may answer from its snapshots); gone objects are left out.
    func sourceRows(for objectIDs: [ManagedObjectID]) throws -> [StoreRow]
    /// The rows as they are now, never from a cache (conflict checks, `refresh`).
    func sourceCurrentRows(for objectIDs: [ManagedObjectID]) throws -> [StoreRow]
    func sourceDestinations(
        of relationship: RelationshipDescription, for objectID: ManagedObjectID
    ) throws -> [ManagedObjectID]
    /// Permanent IDs for new objects (`value(i, attribute)`: object `i`'s value of an attribute,
    /// for stores that keep objects under a key; see `PersistentStore.referenceAttribute(for:)`), from
    /// the store with identifier `store` (`assign(_:to:)`) or the first that holds the entity.
    func sourceNewObjectIDs(
        for entity: EntityDescription, in store: String?, count: Int,
        value: (Int, AttributeDescription) -> AttributeValue
    ) throws -> [ManagedObjectID]
    /// Runs `body` so that no other save reaches the source between a conflict check and the write.
    /// (Only stores have versions to check: a child's save overwrites its parent's state, and the
    /// parent's save is checked against the store.)
    func sourceLocked<T>(_ body: () throws -> T) rethrows -> T
    func sourceSave(_ request: SaveChangesRequest) throws
}

extension PersistentStoreCoordinator: RowSource {
    func sourceRows(matching request: StoreFetchRequest) throws -> (rows: [StoreRow], merged: Bool) {
        try fetchRows(request)
    }
    func sourceObjectIDs(matching request: StoreFetchRequest) throws -> (ids: [ManagedObjectID], merged: Bool) {
        try fetchObjectIDs(request)
    }
    func sourceCount(matching request: StoreFetchRequest) throws -> Int { try countRows(request) }
    func sourceRows(for objectIDs: [ManagedObjectID]) throws -> [StoreRow] { try rows(for: objectIDs, cached: true) }
    func sourceCurrentRows(for objectIDs: [ManagedObjectID]) throws -> [StoreRow] {
        try rows(for: objectIDs, cached: false)
    }
    func sourceDestinations(
        of relationship: RelationshipDescription, for objectID: ManagedObjectID
    ) throws -> [ManagedObjectID] {
        try destinations(of: relationship, for: objectID)
    }
    func sourceNewObjectIDs(
        for entity: EntityDescription, in store: String?, count: Int,
        value: (Int, AttributeDescription) -> AttributeValue
    ) throws -> [ManagedObjectID] {
        try newObjectIDs(for: entity, in: store, count: count, value: value)
    }
    func sourceLocked<T>(_ body: () throws -> T) rethrows -> T { try performLocked(body) }
    func sourceSave(_ request: SaveChangesRequest) throws { try save(request) }
}
