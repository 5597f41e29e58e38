import Foundation

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

    /// Calls `body` with the rows `fetchRows` would return, `batchSize` at a time, reading them as it
    /// goes: a store that can stream (SQLite) holds no more than a batch (exports of any size). The
    /// default fetches them all first. `body` may call the store meanwhile.
    func enumerateRows(_ request: StoreFetchRequest, batchSize: Int, _ body: ([StoreRow]) throws -> Void) throws

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

    /// Whether the store holds each of several states of objects of `entity` exactly: `values` holds
    /// the states one after another, `properties.count` values each, the first `keyCount` of them a
    /// key (a property is an attribute, or a to-one relationship whose value is its destination's
    /// `ManagedObjectID.keyValue`, null for none). A state is held when a row of `entity` itself (not
    /// of a sub-entity) has its key and equal values of every other property: how a re-run tells its
    /// unchanged records without reading their rows. The default reads the rows by key and compares.
    func storedEqual(
        _ entity: EntityDescription, values: [AttributeValue], properties: [PropertyDescription], keyCount: Int
    ) throws -> [Bool]

    /// Keys on `properties` that more than one stored object of `entity` (sub-entities included)
    /// holds, each with how many hold it; at most `limit` of them (whole-graph validation). Keys with
    /// a null part are not compared, as in uniqueness constraints. The default reads every row.
    func duplicateKeys(
        of entity: EntityDescription, on properties: [PropertyDescription], limit: Int
    ) throws -> [DuplicateKey]

    /// Whether the store itself refuses to keep an object of `entity` without a value for
    /// `attribute` (a column declared NOT NULL), so whole-graph validation need not look. The
    /// default: no.
    func enforcesPresence(of attribute: AttributeDescription, in entity: EntityDescription) throws -> Bool

    /// The destinations of a to-many relationship of a stored object, in stored order.
    func destinations(
        of relationship: RelationshipDescription, for objectID: ManagedObjectID
    ) throws -> [ManagedObjectID]

    /// `count` new, never-reused references for objects of `entity` (their permanent IDs).
    func newReferences(for entity: EntityDescription, count: Int) throws -> [ManagedObjectID.Reference]

    /// The attribute whose value is the reference of `entity`'s objects, when the store keeps them
    /// under a key of the model instead of handing references out (the plain SQLite layout uses a
    /// required, unique integer or text attribute as the table's primary key); `nil` by default.
    /// A new object's permanent ID then takes the attribute's value, and the value of a stored
    /// object cannot change.
    func referenceAttribute(for entity: EntityDescription) -> AttributeDescription?

    /// How the store versions rows for optimistic locking (`.counter` by default).
    var rowVersioning: RowVersioning { get }

    /// Writes all changes, or none: a failure leaves the store as it was.
    /// - Throws: `StoreError.conflict` when a row changed or vanished since it was read.
    func save(_ request: SaveChangesRequest) throws

    /// The store is being removed from its coordinator: release resources, clean up.
    func willRemove(from coordinator: PersistentStoreCoordinator)

    /// Makes what the store holds back durable — a database store's open transaction (the
    /// PostgreSQL store's `transaction: run` option): called by `migratePersistentStore` once the
    /// copy is written, before it gives the store up. The default does nothing.
    /// - Throws: `StoreError`; the copy is then given up and nothing of it is kept.
    func finishWriting() throws

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

    public func enumerateRows(
        _ request: StoreFetchRequest, batchSize: Int, _ body: ([StoreRow]) throws -> Void
    ) throws {
        try Self.handOut(try fetchRows(request), batchSize: batchSize, body)
    }

    /// Calls `body` with `rows` `batchSize` at a time: `enumerateRows` over rows fetched whole.
    public static func handOut(_ rows: [StoreRow], batchSize: Int, _ body: ([StoreRow]) throws -> Void) throws {
        var start = 0
        while start < rows.count {
            try body(Array(rows[start..<min(start + max(1, batchSize), rows.count)]))
            start += max(1, batchSize)
        }
    }

    public func rows(for objectIDs: [ManagedObjectID]) throws -> [StoreRow] {
        try objectIDs.compactMap { try row(for: $0) }
    }

    public func willRemove(from coordinator: PersistentStoreCoordinator) {}

    public func finishWriting() throws {}

    public func referenceAttribute(for entity: EntityDescription) -> AttributeDescription? { nil }

    public var rowVersioning: RowVersioning { .counter }

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
    public func enforcesPresence(of attribute: AttributeDescription, in entity: EntityDescription) throws -> Bool {
        false
    }

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

    public func storedEqual(
        _ entity: EntityDescription, values: [AttributeValue], properties: [PropertyDescription], keyCount: Int
    ) throws -> [Bool] {
        try storedEqualByRows(entity, values: values, properties: properties, keyCount: keyCount)
    }

    /// `storedEqual` by reading the rows of the keys (`rows(of:matching:on:)`) and comparing values.
    public func storedEqualByRows(
        _ entity: EntityDescription, values: [AttributeValue], properties: [PropertyDescription], keyCount: Int
    ) throws -> [Bool] {
        let width = properties.count
        guard width > 0, keyCount > 0 else { return [] }
        let states = stride(from: 0, to: values.count, by: width).map { values[$0..<$0 + width] }
        let keys = states.flatMap { $0.prefix(keyCount) }
        var byKey: [ArraySlice<AttributeValue>: StoreRow] = [:]
        for row in try rows(of: entity, matching: keys, on: Array(properties.prefix(keyCount)))
        where row.entity === entity {
            byKey[ArraySlice(properties.prefix(keyCount).map { row.keyValue(of: $0) })] = row
        }
        return states.map { state in
            guard let row = byKey[state.prefix(keyCount)] else { return false }
            return zip(properties, state).allSatisfy { row.keyValue(of: $0) == $1 }
        }
    }
}

extension ManagedObjectID {
    /// The ID as the value of a key holding a to-one relationship: its store reference (an integer
    /// for the SQLite and in-memory stores, as a foreign-key column holds it).
    public var keyValue: AttributeValue { reference.keyValue }
}

extension ManagedObjectID.Reference {
    /// The reference as an attribute value (`ManagedObjectID.keyValue`).
    public var keyValue: AttributeValue {
        switch self {
        case .integer(let value): return .integer(value)
        case .string(let value): return .string(value)
        case .temporary(let value): return .string("temporary:\(value)")
        }
    }
}
