import Foundation
import OrderedCollections

/// A store that keeps rows in memory only: for tests, dry runs, and scratch graphs.
///
/// It evaluates predicates with the same evaluator contexts use for pending changes, checks row
/// versions on save (optimistic locking), and applies a save entirely or not at all.
public final class InMemoryStore: PersistentStore {
    public static let storeType = "InMemory"

    public let url: URL?
    public let configurationName: String?
    public var metadata: StoreMetadata
    private let model: ManagedObjectModel
    private var rows: [ManagedObjectID: Row] = [:]
    private var nextPrimaryKey: Int64 = 1
    /// Hash indexes of uniqueness keys, built at the first lookup of each and kept by saves.
    private var keyIndexes: StoredKeyIndexes

    final class Row {
        let entity: EntityDescription
        let objectID: ManagedObjectID
        let primaryKey: Int64
        var version: Int64
        var attributes: [AttributeValue]
        var toOne: [ManagedObjectID?]
        var toMany: [Int: OrderedSet<ManagedObjectID>] = [:]

        init(_ row: StoreRow, primaryKey: Int64) {
            entity = row.entity
            objectID = row.objectID
            self.primaryKey = primaryKey
            version = 1
            attributes = row.attributeValues
            toOne = row.toOneDestinations
        }

        var storeRow: StoreRow {
            StoreRow(
                objectID: objectID, entity: entity, version: version, attributeValues: attributes,
                toOneDestinations: toOne)
        }
    }

    public required init(
        coordinator: PersistentStoreCoordinator, configurationName: String?, url: URL?, options: [String: String]
    ) throws {
        self.model = coordinator.managedObjectModel
        keyIndexes = StoredKeyIndexes(model: coordinator.managedObjectModel)
        self.url = url
        self.configurationName = configurationName
        self.metadata = StoreMetadata(storeType: Self.storeType)
    }

    public func load() throws {}

    /// Number of rows held (all entities).
    public var rowCount: Int { rows.count }

    public func fetchRows(_ request: StoreFetchRequest) throws -> [StoreRow] {
        try matchingRows(request).map(\.storeRow)
    }

    public func countRows(_ request: StoreFetchRequest) throws -> Int {
        try matchingRows(request.unpaged).count
    }

    private func matchingRows(_ request: StoreFetchRequest) throws -> [Row] {
        var candidates = rows.values.filter { row in
            request.includesSubentities ? row.entity.isKind(of: request.entity) : row.entity === request.entity
        }
        candidates.sort { $0.primaryKey < $1.primaryKey }
        return try request.apply(to: candidates) { StoredObjectSubject(store: self, object: $0) }
    }

    public func row(for objectID: ManagedObjectID) throws -> StoreRow? { rows[objectID]?.storeRow }

    /// Answered from a hash index of the key (built on first use, then kept by every save).
    public func rows(
        of entity: EntityDescription, matching keys: [AttributeValue], on properties: [PropertyDescription]
    ) throws -> [StoreRow] {
        keyIndexes.objectIDs(of: entity, matching: keys, on: properties) { rows.values }.compactMap {
            rows[$0]?.storeRow
        }
    }

    public func destinations(
        of relationship: RelationshipDescription, for objectID: ManagedObjectID
    ) throws -> [ManagedObjectID] {
        Array(rows[objectID]?.toMany[relationship.index] ?? [])
    }

    public func newReferences(for entity: EntityDescription, count: Int) throws -> [ManagedObjectID.Reference] {
        defer { nextPrimaryKey += Int64(count) }
        return (0..<Int64(count)).map { .integer(nextPrimaryKey + $0) }
    }

    public func save(_ request: SaveChangesRequest) throws {
        // Check everything first, so a failure leaves the store untouched.
        var inserting = Set<ManagedObjectID>()
        for row in request.insertedRows where rows[row.objectID] != nil || !inserting.insert(row.objectID).inserted {
            throw StoreError(.conflict, "\(row.objectID) is already in the store", objectID: row.objectID)
        }
        for row in request.updatedRows { try checkVersion(row.objectID, row.version) }
        for deleted in request.deletedObjects { try checkVersion(deleted.objectID, deleted.version) }

        for row in request.insertedRows {
            guard case .integer(let key) = row.objectID.reference else {
                throw StoreError(
                    .corrupt, "\(row.objectID) does not have an integer reference from this store",
                    objectID: row.objectID)
            }
            let stored = Row(row, primaryKey: key)
            rows[row.objectID] = stored
            keyIndexes.update(stored, adding: true)
        }
        for update in request.updatedRows {
            let row = rows[update.objectID]!
            keyIndexes.update(row, adding: false)
            row.attributes = update.attributeValues
            row.toOne = update.toOneDestinations
            row.version += 1
            keyIndexes.update(row, adding: true)
        }
        for change in request.toManyChanges {
            guard let row = rows[change.objectID] else { continue }
            row.toMany[change.relationship.index, default: []].apply(change)
        }
        for deleted in request.deletedObjects {
            if let row = rows.removeValue(forKey: deleted.objectID) { keyIndexes.update(row, adding: false) }
        }
    }
}

extension InMemoryStore: StoredObjectLookup {
    func storedObject(for objectID: ManagedObjectID) -> Row? { rows[objectID] }
}

extension InMemoryStore.Row: StoredObject {
    var storedAttributes: [AttributeValue] { attributes }
    var storedToOne: [ManagedObjectID?] { toOne }
    func storedToMany(at index: Int) -> [ManagedObjectID] { Array(toMany[index] ?? []) }
}
