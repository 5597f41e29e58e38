import ObjectGraph
import Readers

/// A re-run's shortcut: a record equal to the stored row it meets by key is counted unchanged
/// before it becomes an object — one read of the stored rows by key a batch, instead of an object,
/// a snapshot and a merge a record. Taken where that is exactly what the merge would find: a key
/// of one attribute, every attribute of the entity (which has no sub-entities) mapped, no
/// relationship set, no nested records, a policy under which the record's values win
/// (`object-trumps`, `overwrite`), `mode: merge` or `sync`, `duplicates: reject`. Anything not equal
/// goes the usual way.
struct StoredMatch {
    let scope: StageScope

    /// The key attribute, its place among a mapped record's values, and the mapped attributes (their
    /// indexes in the entity) in that order; `nil`: no shortcut. Asked once the batch is mapped (a
    /// source's record kinds are known from its first record on).
    private func plan() -> (key: AttributeDescription, place: Int, attributes: [Int])? {
        let mapping = scope.source.mapping, kinds = scope.kinds
        guard kinds.all.count == 1, mapping.key.count == 1, mapping.children.isEmpty, mapping.relationships.isEmpty,
            mapping.links == nil, scope.source.mode == .merge || scope.source.mode == .sync,
            // With `last-wins` a later record of a key may undo an earlier one: each goes the usual way.
            scope.source.duplicates == .reject,
            scope.config.merge == .objectTrumps || scope.config.merge == .overwrite
        else { return nil }
        let mapper = kinds[0].mapper, entity = mapper.entity
        guard entity.subentities.isEmpty, let key = entity.attribute(named: mapping.key[0]),
            Set(mapper.attributes) == Set(entity.attributes.filter { !$0.isTransient }.map(\.index)),
            let place = mapper.attributes.firstIndex(of: key.index)
        else { return nil }
        return (key, place, mapper.attributes)
    }

    /// Takes the batch's records equal to the stored objects of their keys out of it, counted
    /// unchanged.
    func skipUnchanged(_ batch: inout ImportBatch) throws {
        guard !batch.items.isEmpty, let (key, place, attributes) = plan() else { return }
        // A SQL row with a conflict clause (`OR REPLACE`, `OR IGNORE`) goes the usual way too.
        let candidates = batch.items.indices.filter {
            batch.items[$0].reject == nil && batch.items[$0].record.conflict == nil
        }
        guard !candidates.isEmpty else { return }
        let entity = scope.kinds[0].mapper.entity
        let rows = try scope.context.persistentStoreCoordinator.storedRows(
            of: entity, matching: candidates.map { batch.items[$0].mapped.values[place] }, on: [key])
        guard !rows.isEmpty else { return }
        var byKey: [AttributeValue: StoreRow] = [:]
        for row in rows { byKey[row.attributeValues[key.index]] = row }
        var equal = Set<Int>()
        for index in candidates {
            let values = batch.items[index].mapped.values
            guard let row = byKey[values[place]], row.entity === entity else { continue }
            if attributes.indices.allSatisfy({ row.attributeValues[attributes[$0]] == values[$0] }) {
                equal.insert(index)
            }
        }
        guard !equal.isEmpty else { return }
        batch.ignoredByKind[0, default: 0] += equal.count
        batch.items = batch.items.indices.filter { !equal.contains($0) }.map { batch.items[$0] }
        for index in batch.items.indices { batch.items[index].top = index }
    }
}
