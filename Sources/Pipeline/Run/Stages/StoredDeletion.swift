import Foundation
import ObjectGraph

/// Deletes stored objects through a context of its own, a chunk at a time, so that their delete
/// rules apply (`mode: replace`, `mode: sync`); counts what each entity lost, cascades included.
struct StoredDeletion {
    let coordinator: PersistentStoreCoordinator

    /// The stored objects of `entity` (its sub-entities' too) that `predicate` selects (all when it
    /// is `nil`), in key order when `key` is given, with their key values.
    func stored(
        _ entity: String, key: [String], matching predicate: FetchPredicate? = nil
    ) throws -> [(id: ManagedObjectID, key: [AttributeValue])] {
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        return try context.performAndWait {
            var request = FetchRequest(
                entityName: entity, predicate: predicate, sortDescriptors: key.map { FetchSortDescriptor($0) })
            request.resultType = .objectIDs
            let ids = try context.fetchObjectIDs(request)
            guard !key.isEmpty else { return ids.map { ($0, []) } }
            request.resultType = .dictionaries
            request.propertiesToFetch = key
            let rows = try context.fetchDictionaries(request)
            return zip(ids, rows).map { id, row in
                (id, key.map { name in if case .attribute(let value)? = row[name] { value } else { .null } })
            }
        }
    }

    /// The stored objects of `entity` (its sub-entities' too) that `predicate` selects whose key
    /// `kept` says to keep not, and how many were selected. Without a predicate the rows are read a
    /// thousand at a time and only the IDs that go are kept (a whole table of objects never is).
    func unkept(
        _ entity: String, key: [String], matching predicate: FetchPredicate?, kept: ([AttributeValue]) -> Bool
    ) throws -> (ids: [ManagedObjectID], selected: Int) {
        guard predicate == nil, let description = coordinator.managedObjectModel.entity(named: entity) else {
            let stored = try stored(entity, key: key, matching: predicate)
            return (stored.filter { !kept($0.key) }.map(\.id), stored.count)
        }
        var ids: [ManagedObjectID] = [], selected = 0
        try coordinator.enumerateRows(of: description) { rows in
            for row in rows {
                // A key part that is no attribute (a relationship) reads as null, as `stored` gives it.
                let values = key.map { name in
                    row.entity.attributeIndex(named: name).map { row.attributeValues[$0] } ?? .null
                }
                if !kept(values) { ids.append(row.objectID) }
            }
            selected += rows.count
        }
        return (ids, selected)
    }

    /// How many objects of `entity` (its sub-entities' too) are stored.
    func count(_ entity: String) throws -> Int {
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        return try context.performAndWait { try context.count(for: FetchRequest(entityName: entity)) }
    }

    /// Deletes the objects `ids` names; returns the objects deleted per entity (with those their
    /// delete rules took).
    func delete(_ ids: [ManagedObjectID]) throws -> [String: Int] {
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        context.name = "deletion"
        let gone = DeletedObjects()
        let observation = context.observeDidSave { gone.add($0.deleted) }
        defer { observation.cancel() }
        try context.performAndWait {
            var start = 0
            while start < ids.count {
                let end = min(start + 1_000, ids.count)
                for id in ids[start..<end] where !gone.contains(id) { context.delete(context.object(with: id)) }
                try context.save()
                context.reset()
                start = end
            }
        }
        return gone.byEntity
    }
}

/// The objects a deletion's saves deleted, handed from the did-save callback.
private final class DeletedObjects: @unchecked Sendable {
    // @unchecked: `ids` is only touched with `lock` held.
    private let lock = NSLock()
    private var ids = Set<ManagedObjectID>()

    func add(_ deleted: [ManagedObjectID]) { lock.withLock { ids.formUnion(deleted) } }
    func contains(_ id: ManagedObjectID) -> Bool { lock.withLock { ids.contains(id) } }
    var byEntity: [String: Int] { lock.withLock { Dictionary(grouping: ids, by: \.entityName).mapValues(\.count) } }
}
