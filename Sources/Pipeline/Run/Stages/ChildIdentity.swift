import ObjectGraph

/// Nested records without a key of their own (XML children whose entity has no uniqueness
/// constraint) are found again by their parent's key and their place among their siblings of
/// their kind: a re-run pairs the n-th such record of a stored parent with the parent's n-th stored
/// child of that entity (in stored order). A pair that is equal stays as it is (unchanged), one
/// that differs updates the stored child, a record beyond the stored children is a new child, and
/// a stored child beyond the records is deleted once its parent is saved. Records with nested
/// records of their own, rejected ones and those of parents that wait are left as they are (new).
struct ChildIdentity {
    let scope: StageScope

    /// The keyless child kinds, with the parent's to-many relationship to them.
    private func keylessKinds() -> [Int: RelationshipDescription] {
        var kinds: [Int: RelationshipDescription] = [:]
        for (index, kind) in scope.kinds.all.enumerated() where kind.isNested && kind.links == nil {
            guard let name = kind.parentRelationship, let toParent = kind.mapper.entity.relationship(named: name),
                let toChildren = toParent.inverse, toChildren.isToMany,
                kind.mapper.entity.constraintsWithInherited.isEmpty
            else { continue }
            kinds[index] = toChildren
        }
        return kinds
    }

    /// Pairs the batch's keyless children of stored parents with the stored children (see the type).
    /// - Returns: by top-level item, the stored children no record stands for (deleted once the
    ///   parent is saved: `WriteStage.deleteVanished`).
    func pair(_ batch: inout ImportBatch) throws -> [Int: [ManagedObjectID]] {
        let kinds = keylessKinds(), key = scope.source.mapping.key
        let tops = batch.items.indices.filter {
            let item = batch.items[$0]
            return item.parent == nil && item.object != nil && item.reject == nil && !item.waits
        }
        guard !kinds.isEmpty, !key.isEmpty, let first = tops.first else { return [:] }
        let mapper = scope.kinds[batch.items[first].kind].mapper
        let attributes = key.compactMap { mapper.entity.attribute(named: $0) }
        guard let places = scope.kinds[batch.items[first].kind].keyPlaces else { return [:] }
        func keyOf(_ index: Int) -> [AttributeValue] { places.map { batch.items[index].mapped.values[$0] } }
        let coordinator = scope.context.persistentStoreCoordinator
        let stored = try coordinator.objectIDs(of: mapper.entity, matching: tops.flatMap(keyOf), on: attributes)
        let parents = Dictionary(stored.map { ($0.key, $0.objectID) }, uniquingKeysWith: { first, _ in first })
        guard !parents.isEmpty else { return [:] }
        var children: [Int: [Int]] = [:]  // top-level item → its direct children, in input order
        var hasChildren = Set<Int>()
        for index in batch.items.indices {
            guard let parent = batch.items[index].parent else { continue }
            hasChildren.insert(parent)
            if batch.items[parent].parent == nil { children[parent, default: []].append(index) }
        }
        var vanished: [Int: [ManagedObjectID]] = [:]
        for top in tops {
            guard let parentID = parents[keyOf(top)] else { continue }
            for (kind, toChildren) in kinds {
                let records = (children[top] ?? []).filter { batch.items[$0].kind == kind }
                guard
                    records.allSatisfy({
                        batch.items[$0].reject == nil && batch.items[$0].object != nil && !hasChildren.contains($0)
                    })
                else { continue }
                let entity = scope.kinds[kind].mapper.entity.name
                let storedChildren = try coordinator.storedDestinations(of: toChildren, for: parentID).filter {
                    $0.entityName == entity
                }
                let rows = Dictionary(
                    try coordinator.storedRows(for: Array(storedChildren.prefix(records.count))).map {
                        ($0.objectID, $0)
                    },
                    uniquingKeysWith: { first, _ in first })
                for (place, index) in records.enumerated() where place < storedChildren.count {
                    if let row = rows[storedChildren[place]] { adopt(&batch, index, stored: row) }
                }
                if storedChildren.count > records.count {
                    vanished[top, default: []] += storedChildren[records.count...]
                }
            }
        }
        return vanished
    }

    /// The record at `index` stands for the stored child `row`: the stored child takes its values
    /// (only those that differ), and the new object the record made leaves the context.
    private func adopt(_ batch: inout ImportBatch, _ index: Int, stored row: StoreRow) {
        let context = scope.context, item = batch.items[index], kind = scope.kinds[item.kind]
        guard let new = item.object else { return }
        let stored = context.object(with: row.objectID)
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
