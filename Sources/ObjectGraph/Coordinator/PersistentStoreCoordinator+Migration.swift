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
                let rows = try allRows(of: store)
                let newIDs = try migratedIDs(of: rows, in: target)
                try target.save(try copyRequest(of: rows, from: store, renamedTo: newIDs))
                try target.finishWriting()
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

    /// Every row of `store`, by root entity (sub-entities included).
    private func allRows(of store: any PersistentStore) throws -> [StoreRow] {
        var rows: [StoreRow] = []
        for entity in managedObjectModel.entities where entity.superentity == nil {
            rows += try store.fetchRows(
                StoreFetchRequest(
                    entity: entity, predicate: nil, sortDescriptors: [], includesSubentities: true,
                    fetchLimit: 0, fetchOffset: 0))
        }
        return rows
    }

    /// The ID of each row's object in `target`: the old reference where the target takes it, else a new
    /// one — for every object of a root entity (its table) at once, so that kept and new ones never meet.
    private func migratedIDs(
        of rows: [StoreRow], in target: any PersistentStore
    ) throws -> [ManagedObjectID: ManagedObjectID] {
        var newIDs: [ManagedObjectID: ManagedObjectID] = [:]
        var needingNew: [EntityDescription: [ManagedObjectID]] = [:]
        for (row, reference) in keptReferences(of: rows, in: target) {
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
        return newIDs
    }

    /// The reference each row's object keeps in `target`, `nil` where it needs a new one (then so do the
    /// other objects of its root entity, unless the target keeps the entity under a key).
    private func keptReferences(
        of rows: [StoreRow], in target: any PersistentStore
    ) -> [(row: StoreRow, reference: ManagedObjectID.Reference?)] {
        let takesStrings = target is AtomicStore
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
        return kept
    }

    /// The save that writes every row into the migration target under its new ID, with its to-one
    /// destinations and its stored to-many links renamed alike.
    private func copyRequest(
        of rows: [StoreRow], from store: any PersistentStore, renamedTo newIDs: [ManagedObjectID: ManagedObjectID]
    ) throws -> SaveChangesRequest {
        var request = SaveChangesRequest()
        for row in rows {
            let id = newIDs[row.objectID]!
            request.insertedRows.append(
                StoreRow(
                    objectID: id, entity: row.entity, version: 1, attributeValues: row.attributeValues,
                    toOneDestinations: row.toOneDestinations.map { $0.flatMap { newIDs[$0] } }))
            for relationship in row.entity.relationships where relationship.isToMany && !relationship.isTransient {
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
        return request
    }
}
