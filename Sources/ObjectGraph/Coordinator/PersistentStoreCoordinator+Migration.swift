import Foundation

extension PersistentStoreCoordinator {
    /// Copies `store` to a new store of `type` at `url` (which must not hold a store yet), removes
    /// `store` from the coordinator and adds the copy in its place (Core Data's
    /// `migratePersistentStore(_:to:options:type:)`). Every object keeps its reference object where
    /// the target allows it: an atomic store takes any reference (an integer one as its digits), the
    /// SQLite store takes integer references (digits from an atomic store included) and gives others
    /// new keys; a store that keeps an entity under a key (the plain SQLite layout) names its objects
    /// by that key's values. Metadata's user keys go along.
    /// - Throws: `StoreError`; nothing is removed when the copy fails.
    @discardableResult
    public func migratePersistentStore(
        _ store: any PersistentStore, to url: URL, type: String, options: [String: String] = [:]
    ) throws -> any PersistentStore {
        if let size = (try? FileManager.default.attributesOfItem(atPath: url.path))?[.size] as? NSNumber,
            size.intValue > 0
        {
            throw StoreError(.io, "There is a file at the migration target already; choose a new path", url: url)
        }
        let target = try addPersistentStore(
            type: type, configurationName: store.configurationName, at: url, options: options)
        do {
            try performLocked {
                var metadata = target.metadata
                for (key, value) in store.metadata.userInfo { metadata.userInfo[key] = value }
                target.metadata = metadata
                // Every row of the old store, by root entity (sub-entities included).
                var rows: [StoreRow] = []
                for entity in managedObjectModel.entities where entity.superentity == nil {
                    rows += try store.fetchRows(
                        StoreFetchRequest(
                            entity: entity, predicate: nil, sortDescriptors: [], includesSubentities: true,
                            fetchLimit: 0, fetchOffset: 0))
                }
                // New IDs: the old reference where the target takes it, else a new one — for every
                // object of a root entity (its table) at once, so that kept and new ones never meet.
                let takesStrings = target is AtomicStore
                var newIDs: [ManagedObjectID: ManagedObjectID] = [:]
                var needingNew: [EntityDescription: [ManagedObjectID]] = [:]
                var kept: [(row: StoreRow, reference: ManagedObjectID.Reference?)] = rows.map { row in
                    // A target that keeps the entity under a key names each object by its key's value.
                    if let key = target.referenceAttribute(for: row.entity) {
                        return (row, ManagedObjectID.Reference(key: row.attributeValues[key.index]))
                    }
                    switch row.objectID.reference {
                    case .integer(let key): return (row, takesStrings ? .string(String(key)) : .integer(key))
                    case .string(let text):
                        if takesStrings { return (row, .string(text)) }
                        // Only text that is an integer's own spelling (`5`, not `05`) stays that integer.
                        return (row, Int64(text).flatMap { String($0) == text ? .integer($0) : nil })
                    case .temporary: return (row, nil)
                    }
                }
                let renumbered = Set(
                    kept.filter { $0.reference == nil }.map { ObjectIdentifier($0.row.entity.rootEntity) })
                for index in kept.indices
                where renumbered.contains(ObjectIdentifier(kept[index].row.entity.rootEntity))
                    && target.referenceAttribute(for: kept[index].row.entity) == nil
                {
                    kept[index].reference = nil
                }
                for (row, reference) in kept {
                    if let reference {
                        newIDs[row.objectID] = ManagedObjectID(
                            entityName: row.entity.name, storeIdentifier: target.identifier, reference: reference)
                    } else {
                        needingNew[row.entity, default: []].append(row.objectID)
                    }
                }
                for (entity, ids) in needingNew {
                    for (old, reference) in zip(ids, try target.newReferences(for: entity, count: ids.count)) {
                        newIDs[old] = ManagedObjectID(
                            entityName: entity.name, storeIdentifier: target.identifier, reference: reference)
                    }
                }
                var request = SaveChangesRequest()
                for row in rows {
                    let id = newIDs[row.objectID]!
                    request.insertedRows.append(
                        StoreRow(
                            objectID: id, entity: row.entity, version: 1, attributeValues: row.attributeValues,
                            toOneDestinations: row.toOneDestinations.map { $0.flatMap { newIDs[$0] } }))
                    for relationship in row.entity.relationships where relationship.isToMany {
                        let members = try store.destinations(of: relationship, for: row.objectID).compactMap {
                            newIDs[$0]
                        }
                        guard !members.isEmpty else { continue }
                        request.toManyChanges.append(
                            ToManyChange(
                                objectID: id, relationship: relationship, added: members, removed: [],
                                orderedMembers: relationship.isOrdered ? members : nil))
                    }
                }
                try target.save(request)
            }
        } catch {
            removePersistentStore(target)
            try? FileManager.default.removeItem(at: url)
            throw error
        }
        removePersistentStore(store)
        // Reopened, so a store that hands out keys ahead (SQLite) counts the keys just written.
        removePersistentStore(target)
        return try addPersistentStore(type: type, configurationName: store.configurationName, at: url, options: options)
    }
}
