import ObjectGraph

/// Nested records without a key of their own (XML children whose entity has no uniqueness
/// constraint) are found again by their parent and their place among their siblings of their
/// kind: a re-run pairs the n-th such record of a stored parent with the parent's n-th stored child
/// of that entity (in stored order). A pair that is equal stays as it is (unchanged), one that
/// differs updates the stored child, a record beyond the stored children is a new child, and a
/// stored child beyond the records is deleted once its parent is saved. With `identity: content`
/// a record pairs with a stored child of the same values wherever it is (a changed child is then a
/// new one, and the stored one no record stands for is deleted). A paired child is a stored
/// parent in turn: its own keyless children are paired the same way, at any depth. A rejected or
/// waiting record keeps its place among its siblings (they pair as they would); the stored child it
/// stood for stays as it is, and none of that parent's stored children of its kind is deleted.
struct ChildIdentity {
    let scope: StageScope

    /// A keyless child kind: the parent's to-many relationship to it, and the parent's entity.
    private struct Keyless {
        let toChildren: RelationshipDescription
        let parent: EntityDescription
    }

    /// The keyless child kinds, by kind.
    private func keylessKinds() -> [Int: Keyless] {
        var kinds: [Int: Keyless] = [:]
        for (index, kind) in scope.kinds.all.enumerated() where kind.isNested && kind.links == nil {
            guard let name = kind.parentRelationship, let toParent = kind.mapper.entity.relationship(named: name),
                let toChildren = toParent.inverse, toChildren.isToMany,
                kind.mapper.entity.constraintsWithInherited.isEmpty
            else { continue }
            kinds[index] = Keyless(toChildren: toChildren, parent: toParent.destinationEntity)
        }
        return kinds
    }

    /// Pairs the batch's keyless children of stored parents with the stored children (see the type).
    /// - Returns: by parent item, the stored children no record stands for (deleted once the parent
    ///   is saved: `WriteStage.deleteVanished`; the parent counts as updated).
    func pair(_ batch: inout ImportBatch) throws -> [Int: [ManagedObjectID]] {
        let kinds = keylessKinds()
        guard !kinds.isEmpty else { return [:] }
        var storedParents = try storedTops(of: batch)
        guard !storedParents.isEmpty else { return [:] }
        var children: [Int: [Int]] = [:]  // item → its direct children, in input order
        for index in batch.items.indices {
            if let parent = batch.items[index].parent { children[parent, default: []].append(index) }
        }
        let coordinator = scope.context.persistentStoreCoordinator
        var vanished: [Int: [ManagedObjectID]] = [:]
        // Parents before their children: a paired child is a stored parent for its own children.
        var next = 0
        while next < storedParents.count {
            let (parent, parentID) = storedParents[next]
            next += 1
            let parentEntity = scope.kinds[batch.items[parent].kind].mapper.entity
            for (kind, keyless) in kinds.sorted(by: { $0.key < $1.key }) where parentEntity.isKind(of: keyless.parent) {
                let records = (children[parent] ?? []).filter { batch.items[$0].kind == kind }
                let live = records.filter { batch.items[$0].reject == nil && batch.items[$0].object != nil }
                let entity = scope.kinds[kind].mapper.entity.name
                let storedChildren = try coordinator.storedDestinations(of: keyless.toChildren, for: parentID).filter {
                    $0.entityName == entity
                }
                // A rejected (or waiting) record keeps its place: its siblings pair as they would, the
                // stored child it stood for stays as it is, and no stored child is taken as vanished.
                let pairs =
                    scope.kinds[kind].identity == .place
                    ? try byPlace(records, storedChildren).filter {
                        batch.items[$0.item].reject == nil && batch.items[$0.item].object != nil
                    }
                    : try byContent(live, storedChildren, batch)
                for (index, row) in pairs {
                    adopt(&batch, index, stored: row, children: children[index] ?? [])
                    storedParents.append((index, row.objectID))
                }
                guard live.count == records.count else { continue }
                let kept = Set(pairs.map(\.row.objectID))
                let gone = storedChildren.filter { !kept.contains($0) }
                if !gone.isEmpty { vanished[parent, default: []] += gone }
            }
        }
        return vanished
    }

    /// `identity: place`: the n-th record stands for the n-th stored child.
    private func byPlace(_ records: [Int], _ stored: [ManagedObjectID]) throws -> [(item: Int, row: StoreRow)] {
        let rows = try scope.context.persistentStoreCoordinator.storedRows(for: Array(stored.prefix(records.count)))
        let byID = Dictionary(rows.map { ($0.objectID, $0) }, uniquingKeysWith: { first, _ in first })
        return zip(records, stored).compactMap { index, id in byID[id].map { (index, $0) } }
    }

    /// `identity: content`: a record stands for the first stored child not taken yet whose values
    /// and destinations are the record's.
    private func byContent(
        _ records: [Int], _ stored: [ManagedObjectID], _ batch: ImportBatch
    ) throws -> [(item: Int, row: StoreRow)] {
        guard !records.isEmpty else { return [] }
        let byID = Dictionary(
            try scope.context.persistentStoreCoordinator.storedRows(for: stored).map { ($0.objectID, $0) },
            uniquingKeysWith: { first, _ in first })
        var free = stored.compactMap { byID[$0] }
        var pairs: [(item: Int, row: StoreRow)] = []
        // The to-ones each kind's lookups set, found once per kind, not per record.
        var relationshipsOfKind: [Int: [RelationshipDescription]] = [:]
        for index in records {
            let item = batch.items[index], kind = scope.kinds[item.kind]
            guard let object = item.object else { continue }
            let relationships =
                relationshipsOfKind[item.kind]
                ?? kind.resolvers.compactMap { kind.mapper.entity.relationship(named: $0.lookup.relationship) }
            relationshipsOfKind[item.kind] = relationships
            guard
                let match = free.firstIndex(where: { row in
                    zip(kind.mapper.attributes, item.mapped.values).allSatisfy { row.attributeValues[$0] == $1 }
                        && relationships.allSatisfy {
                            row.toOneDestinations[$0.index] == object.relatedObject(forKey: $0.name)?.objectID
                        }
                })
            else { continue }
            pairs.append((index, free.remove(at: match)))
        }
        return pairs
    }

    /// The batch's top-level records whose objects are stored already (found by the source's key),
    /// with the stored objects' IDs.
    private func storedTops(of batch: ImportBatch) throws -> [(item: Int, id: ManagedObjectID)] {
        let key = scope.source.mapping.key
        let tops = batch.items.indices.filter {
            let item = batch.items[$0]
            return item.parent == nil && item.object != nil && item.reject == nil && !item.waits
        }
        guard !key.isEmpty, let first = tops.first, let places = scope.kinds[batch.items[first].kind].keyPlaces
        else { return [] }
        let mapper = scope.kinds[batch.items[first].kind].mapper
        let attributes = key.compactMap { mapper.entity.attribute(named: $0) }
        func keyOf(_ index: Int) -> [AttributeValue] { places.map { batch.items[index].mapped.values[$0] } }
        let coordinator = scope.context.persistentStoreCoordinator
        let stored = try coordinator.objectIDs(of: mapper.entity, matching: tops.flatMap(keyOf), on: attributes)
        let ids = Dictionary(stored.map { ($0.key, $0.objectID) }, uniquingKeysWith: { first, _ in first })
        return tops.compactMap { top in ids[keyOf(top)].map { (top, $0) } }
    }

    /// The record at `index` stands for the stored child `row`: the stored child takes its values
    /// (only those that differ) and the objects of the record's own `children`, and the new object
    /// the record made leaves the context.
    private func adopt(_ batch: inout ImportBatch, _ index: Int, stored row: StoreRow, children: [Int]) {
        let context = scope.context, item = batch.items[index], kind = scope.kinds[item.kind]
        guard let new = item.object else { return }
        let stored = context.object(with: row.objectID)
        for child in children {
            guard let name = scope.kinds[batch.items[child].kind].parentRelationship else { continue }
            batch.items[child].object?.setRelatedObject(stored, forKey: name)
        }
        for (attribute, value) in zip(kind.mapper.attributes, item.mapped.values)
        where row.attributeValues[attribute] != value {
            stored[attributeAt: attribute] = value
        }
        for resolver in kind.resolvers {
            let name = resolver.lookup.relationship
            guard let relationship = kind.mapper.entity.relationship(named: name) else { continue }
            let destination = new.relatedObject(forKey: name)
            if row.toOneDestinations[relationship.index] != destination?.objectID {
                stored.setRelatedObject(destination, forKey: name)
            }
        }
        scope.discard(new)
        batch.items[index].object = stored
    }
}
