import ObjectGraph
import Readers

/// A re-run's shortcut: the batch's stored rows are read by key once, before the records become
/// objects. A record equal to its row — every attribute, and every lookup finding the object the row
/// points at — is counted unchanged and goes no further; a record that differs updates the row's
/// object directly (`ImportBatch.Item.stored`) instead of being inserted and merged into it at the
/// save, which would read the row again. Either way the outcome is the merge's.
///
/// Taken where that is exactly what the merge would do: a key of attributes, every attribute of the
/// entity (which has no sub-entities) mapped, no nested records or links, a policy under which the
/// record's values win (`object-trumps`, `overwrite`), `mode: merge` or `sync`, `duplicates:
/// reject`. A row that points somewhere the record says nothing about (a to-one relationship the
/// source does not set, or a lookup whose key is empty) goes the usual way, as does a record
/// whose lookup finds nothing stored.
struct StoredMatch {
    let scope: StageScope

    private struct Plan {
        let entity: EntityDescription
        let key: [AttributeDescription]
        /// Where a mapped record holds the key's values.
        let places: [Int]
        /// The mapped attributes (indexes in the entity), in the mapped record's order.
        let attributes: [Int]
        /// Per lookup: the relationship it sets.
        let lookups: [Int]
        /// The entity's to-one relationships the source does not set.
        let unset: [Int]
        /// Whether every lookup's destination is kept under its key (its ID's key value is the key).
        let lookupsByKey: Bool

        /// The properties of a record's state as `skipUnchanged` gives it to the store: the key,
        /// the mapped attributes, the lookups' relationships, the relationships the source does not set.
        var properties: [PropertyDescription] {
            key + attributes.map { entity.attributes[$0] } + (lookups + unset).map { entity.relationships[$0] }
        }
    }

    /// The shortcut's plan, `nil` when it cannot be taken. Asked once the batch is mapped (a
    /// source's record kinds are known from its first record on).
    private func plan() -> Plan? {
        let mapping = scope.source.mapping, kinds = scope.kinds
        guard kinds.all.count == 1, !mapping.key.isEmpty, mapping.children.isEmpty, mapping.links == nil,
            scope.source.mode == .merge || scope.source.mode == .sync,
            // With `last-wins` a later record of a key may undo an earlier one: each goes the usual way.
            scope.source.duplicates == .reject,
            scope.config.merge == .objectTrumps || scope.config.merge == .overwrite
        else { return nil }
        let kind = kinds[0], mapper = kind.mapper, entity = mapper.entity
        let key = mapping.key.compactMap { entity.attribute(named: $0) }
        guard entity.subentities.isEmpty, key.count == mapping.key.count, let places = kind.keyPlaces,
            Set(mapper.attributes) == Set(entity.attributes.filter { !$0.isTransient }.map(\.index))
        else { return nil }
        var lookups: [Int] = []
        for resolver in kind.resolvers {
            guard let relationship = entity.relationship(named: resolver.lookup.relationship), !relationship.isToMany
            else { return nil }
            lookups.append(relationship.index)
        }
        let unset = entity.relationships.filter { !$0.isToMany && !lookups.contains($0.index) }.map(\.index)
        // Destinations the store keeps under the very attribute the lookup finds them by (the plain
        // layout's keys): a foreign key holds that value, so the record's key is the state's value.
        let coordinator = scope.context.persistentStoreCoordinator
        let byKey = kind.resolvers.allSatisfy { resolver in
            resolver.lookup.key.count == 1
                && coordinator.referenceAttribute(for: resolver.entity)?.name == resolver.lookup.key[0].attribute
        }
        return Plan(
            entity: entity, key: key, places: places, attributes: mapper.attributes, lookups: lookups, unset: unset,
            lookupsByKey: byKey)
    }

    /// Takes the batch's records equal to the stored objects of their keys out of it, counted
    /// unchanged (the store compares: `PersistentStoreCoordinator.storedEqual`), and makes the
    /// others that meet a stored key update it (`update`).
    func skipUnchanged(_ batch: inout ImportBatch) throws {
        guard !batch.items.isEmpty, let plan = plan() else { return }
        // A SQL row with a conflict clause (`OR REPLACE`, `OR IGNORE`) goes the usual way too.
        let candidates = batch.items.indices.filter { index in
            let item = batch.items[index]
            return item.reject == nil && item.record.conflict == nil
                && !plan.places.contains { item.mapped.values[$0].isNull }
        }
        guard !candidates.isEmpty else { return }
        let lookups = plan.lookups.count, mapper = scope.kinds[0].mapper
        // Lookups are resolved here only when their keys are not what the foreign keys hold.
        let ends = plan.lookupsByKey ? [] : try lookupDestinations(of: candidates, in: batch)
        // Each record as the state its stored object would have after the merge: key, attributes,
        // lookups' destinations, and no destination where the source sets none. A lookup whose key
        // nothing stored holds goes the usual way (wait, create or reject).
        var compared: [(item: Int, ends: ArraySlice<Destination>)] = [], states: [AttributeValue] = []
        for (position, index) in candidates.enumerated() {
            let mine = plan.lookupsByKey ? [] : ends[position * lookups..<(position + 1) * lookups]
            guard !mine.contains(where: \.isNotStored) else {
                continue
            }
            compared.append((index, mine))
            let mapped = batch.items[index].mapped, values = mapped.values
            for place in plan.places { states.append(values[place]) }
            states += values.prefix(plan.attributes.count)
            if plan.lookupsByKey {
                for lookup in 0..<lookups { states.append(mapper.singleKey(lookup, of: mapped) ?? .null) }
            } else {
                for end in mine {
                    if case .found(let id) = end { states.append(id.keyValue) } else { states.append(.null) }
                }
            }
            for _ in plan.unset { states.append(.null) }
        }
        guard !compared.isEmpty else { return }
        let coordinator = scope.context.persistentStoreCoordinator
        let held = try coordinator.storedEqual(
            plan.entity, values: states, properties: plan.properties, keyCount: plan.key.count)
        var equal = Set<Int>(), others: [(item: Int, ends: ArraySlice<Destination>)] = []
        for (record, isHeld) in zip(compared, held) {
            if isHeld { equal.insert(record.item) } else { others.append(record) }
        }
        if plan.lookupsByKey, lookups > 0, !others.isEmpty {
            // The records that differ link through the objects their keys find.
            let found = try lookupDestinations(of: others.map(\.item), in: batch)
            others = others.indices.compactMap { position in
                let mine = found[position * lookups..<(position + 1) * lookups]
                if mine.contains(where: \.isNotStored) {
                    return nil
                }
                return (others[position].item, mine)
            }
        }
        try updateStored(others, plan, &batch)
        guard !equal.isEmpty else { return }
        batch.ignoredByKind[0, default: 0] += equal.count
        batch.items = batch.items.indices.filter { !equal.contains($0) }.map { batch.items[$0] }
        for index in batch.items.indices { batch.items[index].top = index }
    }

    /// The records that differ from what is stored: those whose key is stored update the stored
    /// object (`update`) unless the row points where the record says nothing (the usual way
    /// decides); the rest are new, and go the usual way.
    private func updateStored(
        _ records: [(item: Int, ends: ArraySlice<Destination>)], _ plan: Plan, _ batch: inout ImportBatch
    ) throws {
        guard !records.isEmpty else { return }
        let rows = try scope.context.persistentStoreCoordinator.storedRows(
            of: plan.entity,
            matching: records.flatMap { record in plan.places.map { batch.items[record.item].mapped.values[$0] } },
            on: plan.key)
        guard !rows.isEmpty else { return }
        let ends = Dictionary(uniqueKeysWithValues: records.map { ($0.item, $0.ends) })
        var changed: [(item: Int, row: Int, ends: ArraySlice<Destination>)] = []
        for (index, rowIndex) in pairs(records.map(\.item), rows, plan, batch) {
            let row = rows[rowIndex], mine = ends[index]!
            guard plan.unset.allSatisfy({ row.toOneDestinations[$0] == nil }),
                zip(plan.lookups, mine).allSatisfy({ relationship, end in
                    if case .noKey = end { return row.toOneDestinations[relationship] == nil }
                    return true
                })
            else { continue }
            changed.append((index, rowIndex, mine))
        }
        update(changed, rows, plan, &batch)
    }

    /// Where a record's lookup points.
    private enum Destination {
        /// Its key is empty: it sets nothing.
        case noKey
        case found(ManagedObjectID)
        /// Nothing stored holds its key (the usual way decides: wait, create or reject).
        case notStored

        var isNotStored: Bool {
            if case .notStored = self { return true } else { return false }
        }
    }

    /// Makes the changed records' objects the stored rows' own, with the records' values and
    /// destinations — here, before the batch's turn: what they link to is stored already.
    private func update(
        _ changed: [(item: Int, row: Int, ends: ArraySlice<Destination>)], _ rows: [StoreRow], _ plan: Plan,
        _ batch: inout ImportBatch
    ) {
        guard !changed.isEmpty else { return }
        let context = scope.context
        let objects = context.objects(for: changed.map { rows[$0.row] })
        for ((index, rowIndex, ends), object) in zip(changed, objects) {
            for (attribute, value) in zip(plan.attributes, batch.items[index].mapped.values)
            where object[attributeAt: attribute] != value {
                object[attributeAt: attribute] = value
            }
            for (relationship, end) in zip(plan.lookups, ends) {
                guard case .found(let id) = end, rows[rowIndex].toOneDestinations[relationship] != id else { continue }
                object.setRelatedObject(context.object(with: id), at: relationship)
            }
            batch.items[index].object = object
            batch.items[index].isStored = true
        }
    }

    /// The candidates that met a stored row of their key, each with its row's index in `rows`.
    private func pairs(
        _ candidates: [Int], _ rows: [StoreRow], _ plan: Plan, _ batch: ImportBatch
    ) -> [(item: Int, row: Int)] {
        if plan.key.count == 1 {
            // One attribute (the usual key): its values are the dictionary's keys, no array a key.
            let attribute = plan.key[0].index, place = plan.places[0]
            var byKey: [AttributeValue: Int] = [:]
            byKey.reserveCapacity(rows.count)
            for (index, row) in rows.enumerated() where row.entity === plan.entity {
                byKey[row.attributeValues[attribute]] = index
            }
            return candidates.compactMap { item in byKey[batch.items[item].mapped.values[place]].map { (item, $0) } }
        }
        var byKey: [[AttributeValue]: Int] = [:]
        byKey.reserveCapacity(rows.count)
        for (index, row) in rows.enumerated() where row.entity === plan.entity {
            byKey[plan.key.map { row.attributeValues[$0.index] }] = index
        }
        return candidates.compactMap { item in
            byKey[plan.places.map { batch.items[item].mapped.values[$0] }].map { (item, $0) }
        }
    }

    /// Where the items' records point: per item, its lookups' destinations one after another.
    private func lookupDestinations(of items: [Int], in batch: ImportBatch) throws -> [Destination] {
        let kind = scope.kinds[0], coordinator = scope.context.persistentStoreCoordinator
        let lookups = kind.resolvers.count
        var destinations = [Destination](repeating: .noKey, count: items.count * lookups)
        for lookup in kind.resolvers.indices {
            let (found, hasKey) = try kind.storedDestinations(of: lookup, for: items, in: batch, coordinator)
            for position in items.indices where hasKey[position] {
                destinations[position * lookups + lookup] = found[position].map(Destination.found) ?? .notStored
            }
        }
        return destinations
    }
}
