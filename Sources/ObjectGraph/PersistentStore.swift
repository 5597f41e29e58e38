import Foundation

/// Metadata every store keeps: its type, its UUID, the hash of the model that wrote it, and user keys.
public struct StoreMetadata: Sendable, Hashable {
    public var storeType: String
    /// The store's UUID; permanent object IDs name it.
    public var identifier: String
    /// `nil` for a new, empty store (the coordinator records the model's hash on add).
    public var modelVersionHash: String?
    public var entityVersionHashes: [String: String]
    /// Keys the application sets (import checkpoints, source file names, ...).
    public var userInfo: [String: String]

    public init(
        storeType: String, identifier: String = UUID().uuidString, modelVersionHash: String? = nil,
        entityVersionHashes: [String: String] = [:], userInfo: [String: String] = [:]
    ) {
        self.storeType = storeType
        self.identifier = identifier
        self.modelVersionHash = modelVersionHash
        self.entityVersionHashes = entityVersionHashes
        self.userInfo = userInfo
    }
}

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

/// What a fetch asks a store: the entity, a predicate already checked against the model, sorting,
/// paging. A store that cannot evaluate something may return a superset; the context re-checks.
public struct StoreFetchRequest: @unchecked Sendable {
    public var entity: EntityDescription
    public var predicate: FetchPredicate?
    public var sortDescriptors: [FetchSortDescriptor]
    public var includesSubentities: Bool
    /// 0 means no limit.
    public var fetchLimit: Int
    public var fetchOffset: Int
    public init(
        entity: EntityDescription, predicate: FetchPredicate?, sortDescriptors: [FetchSortDescriptor],
        includesSubentities: Bool, fetchLimit: Int, fetchOffset: Int
    ) {
        self.entity = entity
        self.predicate = predicate
        self.sortDescriptors = sortDescriptors
        self.includesSubentities = includesSubentities
        self.fetchLimit = fetchLimit
        self.fetchOffset = fetchOffset
    }

    /// Applies the request to rows a store evaluates in memory: keeps the items whose subject matches
    /// the predicate, sorts them (ties keep their order) and pages them, with exactly the semantics
    /// contexts use for unsaved objects.
    /// - Throws: `FetchRequestError` for key paths the entity does not have.
    public func apply<T>(to items: [T], subject: (T) -> any PredicateSubject) throws -> [T] {
        let predicate = try self.predicate?.compiled(for: entity)
        let matches = predicate.map { test in items.filter { test.evaluate(subject($0)) } } ?? items
        return KeyPathEvaluator.sortedAndPaged(
            matches, by: sortDescriptors.map { ($0.path, $0) },
            offset: fetchOffset, limit: fetchLimit, subject: subject)
    }

    /// The same request without limit and offset.
    public var unpaged: StoreFetchRequest {
        var copy = self
        copy.fetchLimit = 0
        copy.fetchOffset = 0
        return copy
    }
}

/// The interface every store implements: the in-memory store, the SQLite, XML and binary stores, and
/// stores users write themselves. Register a store class with
/// `PersistentStoreCoordinator.registerStoreType(_:named:)`, then add stores by type name and URL.
///
/// A coordinator calls a store only while holding its lock, one call at a time, so a store needs no
/// locking of its own. Stores see rows and object IDs, never managed objects or contexts.
public protocol PersistentStore: AnyObject {
    /// Creates the store for `url` (which may not exist yet: a missing or empty file is a new store).
    /// Metadata must be valid when this returns.
    init(
        coordinator: PersistentStoreCoordinator, configurationName: String?, url: URL?, options: [String: String])
        throws

    var url: URL? { get }
    var configurationName: String? { get }
    /// The store's metadata; the coordinator writes it back (model hash, user keys) before saves.
    var metadata: StoreMetadata { get set }

    /// Reads the store's contents or prepares it for use; called once by the coordinator after init.
    func load() throws

    /// Rows of `request.entity` (and sub-entities when asked) matching the predicate, sorted and paged.
    func fetchRows(_ request: StoreFetchRequest) throws -> [StoreRow]

    /// Number of rows matching the request (without paging).
    func countRows(_ request: StoreFetchRequest) throws -> Int

    /// IDs of the rows `fetchRows` would return, in the same order (for fetches of faults and IDs).
    func fetchObjectIDs(_ request: StoreFetchRequest) throws -> [ManagedObjectID]

    /// The current rows of several objects at once (batch faulting); objects that no longer exist are
    /// left out, the order is free.
    func rows(for objectIDs: [ManagedObjectID]) throws -> [StoreRow]

    /// The current row for an object, or `nil` when it no longer exists.
    func row(for objectID: ManagedObjectID) throws -> StoreRow?

    /// The rows of `entity` (sub-entities included) whose values of `properties` equal one of the
    /// keys: how saves find uniqueness-constraint conflicts. `keys` holds the keys one after another,
    /// `properties.count` values each; a property is an attribute, or a to-one relationship whose
    /// value is its destination's `ManagedObjectID.keyValue`. Answer from an index; the default runs
    /// `fetchRows` with `StoreFetchRequest.rows(of:matching:on:)` on the key's attributes, 500 keys
    /// at a time, and compares relationships in memory.
    func rows(
        of entity: EntityDescription, matching keys: [AttributeValue], on properties: [PropertyDescription]
    ) throws -> [StoreRow]

    /// Like `rows(of:matching:on:)`, but only each found row's key (`properties.count` values) and ID:
    /// how importers turn natural keys into objects without reading rows. The default reads the rows.
    func objectIDs(
        of entity: EntityDescription, matching keys: [AttributeValue], on properties: [PropertyDescription]
    ) throws -> [KeyedObjectID]

    /// Keys on `properties` that more than one stored object of `entity` (sub-entities included)
    /// holds, each with how many hold it; at most `limit` of them (whole-graph validation). Keys with
    /// a null part are not compared, as in uniqueness constraints. The default reads every row.
    func duplicateKeys(
        of entity: EntityDescription, on properties: [PropertyDescription], limit: Int
    ) throws -> [DuplicateKey]

    /// The destinations of a to-many relationship of a stored object, in stored order.
    func destinations(
        of relationship: RelationshipDescription, for objectID: ManagedObjectID
    ) throws -> [ManagedObjectID]

    /// `count` new, never-reused references for objects of `entity` (their permanent IDs).
    func newReferences(for entity: EntityDescription, count: Int) throws -> [ManagedObjectID.Reference]

    /// Writes all changes, or none: a failure leaves the store as it was.
    /// - Throws: `StoreError.conflict` when a row changed or vanished since it was read.
    func save(_ request: SaveChangesRequest) throws

    /// The store is being removed from its coordinator: release resources, clean up.
    func willRemove(from coordinator: PersistentStoreCoordinator)

    /// Whether `insertObjects(_:)` works (false by default).
    var supportsBatchInsert: Bool { get }

    /// Writes the request's objects as new rows in one transaction, without managed objects (batch
    /// insert), and returns their IDs in request order — `nil` for an object that would break a
    /// uniqueness constraint (or another constraint of the store), which is left out while the rest
    /// is written. The default throws: the store does not support batch inserts.
    func insertObjects(_ request: BatchInsertRequest) throws -> [ManagedObjectID?]
}

extension PersistentStore {
    public var identifier: String { metadata.identifier }
    public var type: String { metadata.storeType }

    public func countRows(_ request: StoreFetchRequest) throws -> Int {
        try fetchRows(request.unpaged).count
    }

    public func fetchObjectIDs(_ request: StoreFetchRequest) throws -> [ManagedObjectID] {
        try fetchRows(request).map(\.objectID)
    }

    public func rows(for objectIDs: [ManagedObjectID]) throws -> [StoreRow] {
        try objectIDs.compactMap { try row(for: $0) }
    }

    public func willRemove(from coordinator: PersistentStoreCoordinator) {}

    public var supportsBatchInsert: Bool { false }

    public func insertObjects(_ request: BatchInsertRequest) throws -> [ManagedObjectID?] {
        throw StoreError(.io, "A \(type) store does not support batch inserts; insert objects in a context", url: url)
    }

    public func rows(
        of entity: EntityDescription, matching keys: [AttributeValue], on properties: [PropertyDescription]
    ) throws -> [StoreRow] {
        let width = properties.count
        guard width > 0 else { return [] }
        let attributePlaces = properties.indices.filter { properties[$0] is AttributeDescription }
        let attributes = attributePlaces.map { properties[$0] as! AttributeDescription }
        var found: [StoreRow] = []
        var start = 0
        while start < keys.count {
            let end = min(start + 500 * width, keys.count)
            let slice = keys[start..<end]
            if attributes.count == width {
                found += try fetchRows(.rows(of: entity, matching: slice, on: attributes))
            } else {
                // Relationships in the key: narrow by its attributes (if any), compare the whole key here.
                let wanted = Set(
                    stride(from: slice.startIndex, to: slice.endIndex, by: width).map { Array(slice[$0..<$0 + width]) })
                let narrowing =
                    attributes.isEmpty
                    ? StoreFetchRequest(
                        entity: entity, predicate: nil, sortDescriptors: [], includesSubentities: true, fetchLimit: 0,
                        fetchOffset: 0)
                    : .rows(
                        of: entity, matching: ArraySlice(wanted.flatMap { key in attributePlaces.map { key[$0] } }),
                        on: attributes)
                found += try fetchRows(narrowing).filter { row in
                    wanted.contains(properties.map { row.keyValue(of: $0) })
                }
            }
            start = end
        }
        return found
    }
}

extension PersistentStore {
    public func duplicateKeys(
        of entity: EntityDescription, on properties: [PropertyDescription], limit: Int
    ) throws -> [DuplicateKey] {
        let all = StoreFetchRequest(
            entity: entity, predicate: nil, sortDescriptors: [], includesSubentities: true, fetchLimit: 0,
            fetchOffset: 0)
        var counts: [[AttributeValue]: Int] = [:]
        var order: [[AttributeValue]] = []
        for row in try fetchRows(all) {
            let key = properties.map { row.keyValue(of: $0) }
            guard !key.contains(where: \.isNull) else { continue }
            counts[key, default: 0] += 1
            if counts[key] == 2 { order.append(key) }
        }
        return order.prefix(limit).map { DuplicateKey(key: $0, count: counts[$0]!) }
    }

    public func objectIDs(
        of entity: EntityDescription, matching keys: [AttributeValue], on properties: [PropertyDescription]
    ) throws -> [KeyedObjectID] {
        try rows(of: entity, matching: keys, on: properties).map { row in
            KeyedObjectID(key: properties.map { row.keyValue(of: $0) }, objectID: row.objectID)
        }
    }
}

extension StoreRow {
    /// The row's value of a key property: an attribute's value, or a to-one destination's `keyValue`.
    public func keyValue(of property: PropertyDescription) -> AttributeValue {
        if let relationship = property as? RelationshipDescription {
            return toOneDestinations[relationship.index]?.keyValue ?? .null
        }
        return attributeValues[property.index]
    }
}

extension ManagedObjectID {
    /// The ID as the value of a key holding a to-one relationship: its store reference (an integer
    /// for the SQLite and in-memory stores, as a foreign-key column holds it).
    public var keyValue: AttributeValue {
        switch reference {
        case .integer(let value): return .integer(value)
        case .string(let value): return .string(value)
        case .temporary(let value): return .string("temporary:\(value)")
        }
    }
}

/// A stored object's ID with the values of the key it was found by.
/// A key more than one stored object holds, and how many do.
public struct DuplicateKey: Sendable, Equatable {
    public var key: [AttributeValue]
    public var count: Int

    public init(key: [AttributeValue], count: Int) {
        self.key = key
        self.count = count
    }
}

public struct KeyedObjectID: Sendable {
    public var key: [AttributeValue]
    public var objectID: ManagedObjectID

    public init(key: [AttributeValue], objectID: ManagedObjectID) {
        self.key = key
        self.objectID = objectID
    }
}

extension StoreFetchRequest {
    /// A request for the rows of `entity` whose `attributes` hold one of the keys (`attributes.count`
    /// values each, one key after another): `a IN {...}` for one attribute, `(a == x AND b == y) OR ...`
    /// for several.
    public static func rows(
        of entity: EntityDescription, matching flatKeys: ArraySlice<AttributeValue>,
        on attributes: [AttributeDescription]
    ) -> StoreFetchRequest {
        let keys = stride(from: flatKeys.startIndex, to: flatKeys.endIndex, by: attributes.count).map {
            Array(flatKeys[$0..<$0 + attributes.count])
        }
        func equal(_ attribute: AttributeDescription, _ value: AttributeValue) -> FetchPredicate {
            .comparison(PredicateComparison(.keyPath([attribute.name]), .equal, .constant(value)))
        }
        let predicate: FetchPredicate
        if attributes.count == 1 {
            predicate = .comparison(
                PredicateComparison(.keyPath([attributes[0].name]), .in, .aggregate(keys.map { .constant($0[0]) })))
        } else {
            predicate = .or(keys.map { key in .and(zip(attributes, key).map(equal)) })
        }
        return StoreFetchRequest(
            entity: entity, predicate: predicate, sortDescriptors: [], includesSubentities: true,
            fetchLimit: 0, fetchOffset: 0)
    }
}
