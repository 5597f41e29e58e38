import ObjectGraph
import Readers

/// The link stage: children to their parent records, lookups to their destinations (the batch's
/// keys of each lookup resolved together), and records whose parent has not arrived set waiting.
///
/// Records that batch inserts may write are linked by object IDs (`planBatchInserts`); the rest
/// become objects in the context and are linked there (`linkInContext`).
struct LinkStage {
    let scope: StageScope

    /// Batch inserts planned for a batch: per kind, the items a request would write and the
    /// request with their values and lookup destinations; and the groups that cannot go that way.
    struct BatchInsertPlan {
        var requests: [(members: [Int], request: BatchInsertRequest)] = []
        /// Groups (by top-level item) that stay with the context: a record that does not map or
        /// whose kind cannot, a lookup whose destination is not stored, a rule the values break.
        var excluded: Set<Int> = []
    }

    /// Plans the batch inserts: a group (a top-level record and its children) goes that way when
    /// every record of it maps, belongs to a kind that can, finds every lookup's destination stored,
    /// and passes the attribute and required-relationship rules.
    func planBatchInserts(_ batch: ImportBatch) throws -> BatchInsertPlan {
        let kinds = scope.kinds, items = batch.items
        let coordinator = scope.context.persistentStoreCoordinator
        var plan = BatchInsertPlan()
        for item in items where item.reject != nil || !kinds[item.kind].bulk { plan.excluded.insert(item.top) }
        for kindIndex in kinds.all.indices {
            let kind = kinds[kindIndex]
            let members = items.indices.filter { items[$0].kind == kindIndex && !plan.excluded.contains(items[$0].top) }
            var request = BatchInsertRequest(entity: kind.mapper.entity, capacity: members.count)
            guard kind.bulk, !members.isEmpty else {
                plan.requests.append(([], request))
                continue
            }
            for index in members {
                let object = request.appendObject()
                for (attribute, value) in zip(kind.mapper.attributes, items[index].mapped.values) {
                    request[object, attribute] = value
                }
            }
            for (lookupIndex, resolver) in kind.resolvers.enumerated() {
                let mapper = kind.mapper
                let found: [ManagedObjectID?], hasKey: [Bool]
                if mapper.hasSingleKey(lookupIndex) {
                    let values = members.map { mapper.singleKey(lookupIndex, of: items[$0].mapped) }
                    found = try resolver.resolveIDs(values: values, in: coordinator)
                    hasKey = values.map { $0 != nil }
                } else {
                    let keys = members.map { mapper.key(lookupIndex, of: items[$0].mapped) }
                    found = try resolver.resolveIDs(keys, in: coordinator)
                    hasKey = keys.map { $0 != nil }
                }
                let relationship = mapper.entity.relationship(named: resolver.lookup.relationship)!.index
                for (object, index) in members.enumerated() {
                    if hasKey[object] && found[object] == nil { plan.excluded.insert(items[index].top) }
                    request.setDestination(found[object], relationship: relationship, of: object)
                }
            }
            if let name = kind.parentRelationship, let relationship = kind.mapper.entity.relationship(named: name) {
                // Stands in for the parent's ID (known once the parent is written) so the check passes.
                let placeholder = ManagedObjectID(
                    entityName: relationship.destinationEntityName, storeIdentifier: nil, reference: .temporary(0))
                for object in members.indices {
                    request.setDestination(placeholder, relationship: relationship.index, of: object)
                }
            }
            for (object, index) in members.enumerated() where !request.isValid(object) {
                plan.excluded.insert(items[index].top)
            }
            plan.requests.append((members, request))
        }
        return plan
    }

    /// Makes objects in the context for the records batch inserts did not write, with their values
    /// and parents, and resolves their lookups. A must-exist key that finds nothing makes its
    /// record's group wait for the parent to arrive — until the `final` try, which rejects it.
    /// - Returns: the groups that wait (their objects discarded, to be tried again).
    func linkInContext(_ batch: inout ImportBatch, final: Bool) throws -> [PendingRecords.Group] {
        insertObjects(&batch)
        return try resolveLookups(&batch, final: final)
    }

    /// Makes objects in the context for the records batch inserts did not write, with their values
    /// and parents (lookups not resolved yet: `resolveLookups`).
    func insertObjects(_ batch: inout ImportBatch) {
        let kinds = scope.kinds, context = scope.context
        for index in batch.items.indices where batch.items[index].reject == nil && batch.items[index].bulkID == nil {
            let kind = kinds[batch.items[index].kind]
            let object = context.insertNewObject(forEntityName: kind.mapper.entity.name)
            for (attribute, value) in zip(kind.mapper.attributes, batch.items[index].mapped.values) {
                object[attributeAt: attribute] = value
            }
            if let parent = batch.items[index].parent, let relationship = kind.parentRelationship,
                let parentObject = batch.items[parent].object ?? batch.items[parent].bulkID.map(context.object(with:))
            {
                object.setRelatedObject(parentObject, forKey: relationship)
            }
            batch.items[index].object = object
        }
    }

    /// Resolves the lookups of the batch's objects (`insertObjects`): a must-exist key that finds
    /// nothing — among stored objects and those of the context, of this batch or not — makes its
    /// record's group wait, or on the `final` try rejects the record.
    /// - Returns: the groups that wait (their objects discarded, to be tried again).
    func resolveLookups(_ batch: inout ImportBatch, final: Bool) throws -> [PendingRecords.Group] {
        let kinds = scope.kinds, context = scope.context
        var waitingTops = Set<Int>()
        for kindIndex in kinds.all.indices where !kinds[kindIndex].resolvers.isEmpty {
            let kind = kinds[kindIndex]
            let members = batch.items.indices.filter {
                batch.items[$0].kind == kindIndex && batch.items[$0].object != nil
            }
            for (lookupIndex, resolver) in kind.resolvers.enumerated() where !members.isEmpty {
                let keys = members.map { kind.mapper.key(lookupIndex, of: batch.items[$0].mapped) }
                let found = try resolver.resolve(keys, in: context)
                for (position, index) in members.enumerated() {
                    // A record an earlier lookup rejected has left the context: link nothing to it.
                    guard let key = keys[position], batch.items[index].reject == nil else { continue }
                    if let destination = found[position] {
                        batch.items[index].object?.setRelatedObject(destination, forKey: resolver.lookup.relationship)
                    } else if !final && batch.items[batch.items[index].top].bulkID == nil {
                        waitingTops.insert(batch.items[index].top)
                    } else {
                        let described = zip(resolver.lookup.key, key).map { "\($0.attribute) = \($1)" }
                            .joined(separator: ", ")
                        scope.reject(
                            &batch, index, property: resolver.lookup.relationship, rule: "lookup",
                            message: "no \(resolver.entity.name) with \(described)")
                    }
                }
            }
        }
        if !waitingTops.isEmpty, !final { waitingTops = waitingWithTheirLinkers(batch, waiting: waitingTops) }
        return waitingGroups(&batch, tops: waitingTops)
    }

    /// The waiting groups and the groups whose lookups found an object of a waiting group (found
    /// unsaved in the batch): those wait too, or their link would be lost with the waiting object.
    private func waitingWithTheirLinkers(_ batch: ImportBatch, waiting: Set<Int>) -> Set<Int> {
        var tops = waiting
        var held = Set(
            batch.items.indices.filter { tops.contains(batch.items[$0].top) }.compactMap { index in
                batch.items[index].object.map(ObjectIdentifier.init)
            })
        while true {
            var added = false
            for index in batch.items.indices where !tops.contains(batch.items[index].top) {
                guard let object = batch.items[index].object else { continue }
                let links = scope.kinds[batch.items[index].kind].resolvers.lazy.compactMap {
                    object.relatedObject(forKey: $0.lookup.relationship)
                }
                guard links.contains(where: { held.contains(ObjectIdentifier($0)) }) else { continue }
                let top = batch.items[index].top
                tops.insert(top)
                for member in batch.items.indices where batch.items[member].top == top {
                    if let object = batch.items[member].object { held.insert(ObjectIdentifier(object)) }
                }
                added = true
            }
            if !added { return tops }
        }
    }

    /// Sets the groups of `tops` waiting: their objects leave the context, their records are kept.
    private func waitingGroups(_ batch: inout ImportBatch, tops: Set<Int>) -> [PendingRecords.Group] {
        guard !tops.isEmpty else { return [] }
        var waiting: [PendingRecords.Group] = []
        var groupOfTop: [Int: Int] = [:]
        for index in batch.items.indices where tops.contains(batch.items[index].top) {
            if let object = batch.items[index].object { scope.discard(object) }
            batch.items[index].waits = true
            batch.items[index].reject = nil  // judged again when the group is tried again
            let top = batch.items[index].top
            if groupOfTop[top] == nil, let origin = batch.items[top].origin {
                groupOfTop[top] = waiting.count
                waiting.append(.init(origin: origin, records: []))
            }
            if let group = groupOfTop[top] { waiting[group].records.append(batch.items[index].record) }
        }
        return waiting
    }

    /// Forgets what the lookups of the batch found in the context (which is being reset).
    func reset() {
        for kind in scope.kinds.all { for resolver in kind.resolvers { resolver.reset() } }
    }
}
