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
                let (found, hasKey) = try kind.storedDestinations(of: lookupIndex, for: members, in: batch, coordinator)
                let relationship = kind.mapper.entity.relationship(named: resolver.lookup.relationship)!.index
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
            // Records of links make no object; a stored row's object was updated and linked already.
            guard kind.links == nil, !batch.items[index].isStored else { continue }
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
                batch.items[$0].kind == kindIndex && batch.items[$0].object != nil && !batch.items[$0].isStored
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
        try addLinks(&batch, final: final, waiting: &waitingTops)
        return waitingGroups(&batch, tops: waitingTops)
    }

    /// The ends of the batch's records of links: the object each adds to and the destinations of
    /// its lookups, `nil` for an end not found (or whose key is empty).
    private struct LinkEnds {
        var owner: ManagedObject?
        /// Per destination lookup: the destination found.
        var destinations: [ManagedObject?]
    }

    /// Records of links (`RecordKinds.Kind.links`) add the destinations their keys find to the
    /// to-many relationships of the object they find (or of their parent record's object). An end
    /// not found makes the record's group wait, as a must-exist lookup does, or on the `final` try
    /// rejects the record; so does an end that is an object of a waiting group. A link already
    /// there is left as it is (the record counts as unchanged).
    private func addLinks(_ batch: inout ImportBatch, final: Bool, waiting tops: inout Set<Int>) throws {
        let ends = try linkEnds(batch, waiting: tops)
        guard !ends.isEmpty else { return }
        waitForHeldEnds(batch, ends, final: final, waiting: &tops)
        addFoundLinks(&batch, ends, waiting: tops)
    }

    /// The ends of the batch's records of links neither rejected nor waiting (in `tops`), by record:
    /// owners found by key or as the parent record's object, destinations found by key.
    private func linkEnds(_ batch: ImportBatch, waiting tops: Set<Int>) throws -> [Int: LinkEnds] {
        let kinds = scope.kinds, context = scope.context
        var ends: [Int: LinkEnds] = [:]
        for kindIndex in kinds.all.indices {
            let kind = kinds[kindIndex]
            guard let links = kind.links else { continue }
            let members = batch.items.indices.filter {
                batch.items[$0].kind == kindIndex && batch.items[$0].reject == nil
                    && !tops.contains(batch.items[$0].top)
            }
            guard !members.isEmpty else { continue }
            var found = members.map { _ in LinkEnds(owner: nil, destinations: []) }
            switch links {
            case .found:
                let owners = try kind.resolvers[0].resolve(
                    members.map { kind.mapper.key(0, of: batch.items[$0].mapped) }, in: context)
                for position in members.indices { found[position].owner = owners[position] }
            case .parent:
                for (position, index) in members.enumerated() {
                    found[position].owner = batch.items[index].parent.flatMap { batch.items[$0].object }
                }
            }
            let first = kind.resolvers.count - kind.destinationResolvers.count
            for (offset, resolver) in kind.destinationResolvers.enumerated() {
                let destinations = try resolver.resolve(
                    members.map { kind.mapper.key(first + offset, of: batch.items[$0].mapped) }, in: context)
                for position in members.indices { found[position].destinations.append(destinations[position]) }
            }
            for (position, index) in members.enumerated() { ends[index] = found[position] }
        }
        return ends
    }

    /// Adds to `tops` the group of each record of links an end of which is not found (unless `final`)
    /// or is an object of a waiting group, until no more groups wait.
    private func waitForHeldEnds(
        _ batch: ImportBatch, _ ends: [Int: LinkEnds], final: Bool, waiting tops: inout Set<Int>
    ) {
        // Ends that are objects of waiting groups, whose links would leave with them: those wait too,
        // and the groups they wait in may hold ends of others.
        func objects(of tops: Set<Int>) -> Set<ObjectIdentifier> {
            Set(
                batch.items.indices.filter { tops.contains(batch.items[$0].top) }.compactMap {
                    batch.items[$0].object.map(ObjectIdentifier.init)
                })
        }
        var held = objects(of: tops)
        var settled = false
        while !settled {
            settled = true
            for (index, end) in ends where !tops.contains(batch.items[index].top) {
                let all = [end.owner] + end.destinations
                let missing = all.contains { $0 == nil }
                let heldEnd = all.contains { $0.map { held.contains(ObjectIdentifier($0)) } ?? false }
                guard heldEnd || (missing && !final && batch.items[batch.items[index].top].bulkID == nil) else {
                    continue
                }
                if missing && !heldEnd && !hasKeys(batch, index) { continue }  // an empty key waits for nothing
                tops.insert(batch.items[index].top)
                settled = false
            }
            if !settled {
                if !final { tops = waitingWithTheirLinkers(batch, waiting: tops) }
                held = objects(of: tops)
            }
        }
    }

    /// Adds each record's destinations to its owner's to-many relationships (a link already there is
    /// left as it is); rejects a record not waiting an end of which was not found.
    private func addFoundLinks(_ batch: inout ImportBatch, _ ends: [Int: LinkEnds], waiting tops: Set<Int>) {
        let kinds = scope.kinds
        // Each owner's destinations, read once per batch (a stored owner's to-many is loaded), so that a
        // link already stored is seen as such.
        var members: [ObjectIdentifier: [String: Set<ObjectIdentifier>]] = [:]
        for (index, end) in ends.sorted(by: { $0.key < $1.key }) where !tops.contains(batch.items[index].top) {
            guard batch.items[index].reject == nil else { continue }
            let kind = kinds[batch.items[index].kind]
            guard let owner = end.owner, !end.destinations.contains(where: { $0 == nil }) else {
                rejectUnlinked(&batch, index, end: end)
                continue
            }
            for (resolver, destination) in zip(kind.destinationResolvers, end.destinations) {
                guard let destination else { continue }
                let name = resolver.lookup.relationship, ownerID = ObjectIdentifier(owner)
                if members[ownerID]?[name] == nil {
                    members[ownerID, default: [:]][name] = Set(
                        owner.relatedObjects(forKey: name).map(ObjectIdentifier.init))
                }
                guard members[ownerID]![name]!.insert(ObjectIdentifier(destination)).inserted else { continue }
                owner.addRelatedObject(destination, forKey: name)
                batch.items[index].links.append((owner, name, destination))
            }
        }
    }

    /// Whether every key of a record of links has a value (an empty one finds nothing, ever).
    private func hasKeys(_ batch: ImportBatch, _ index: Int) -> Bool {
        let kind = scope.kinds[batch.items[index].kind]
        return kind.resolvers.indices.allSatisfy { kind.mapper.key($0, of: batch.items[index].mapped) != nil }
    }

    /// Rejects a record of links an end of which was not found, naming it.
    private func rejectUnlinked(_ batch: inout ImportBatch, _ index: Int, end: LinkEnds) {
        let kind = scope.kinds[batch.items[index].kind]
        let mapper = kind.mapper
        func describe(_ resolver: LookupResolver, _ lookup: Int) -> String {
            guard let key = mapper.key(lookup, of: batch.items[index].mapped) else {
                let fields = resolver.lookup.key.map(\.from).joined(separator: ", ")
                return "its key of \(resolver.entity.name) (\(fields)) is empty"
            }
            let described = zip(resolver.lookup.key, key).map { "\($0.attribute) = \($1)" }.joined(separator: ", ")
            return "no \(resolver.entity.name) with \(described)"
        }
        var reasons: [(property: String, message: String)] = []
        if end.owner == nil {
            if case .found? = kind.links {
                reasons.append((mapper.entity.name, describe(kind.resolvers[0], 0)))
            } else {
                reasons.append((mapper.entity.name, "its parent record has no object"))
            }
        }
        let first = kind.resolvers.count - kind.destinationResolvers.count
        for (offset, destination) in end.destinations.enumerated() where destination == nil {
            let resolver = kind.resolvers[first + offset]
            reasons.append((resolver.lookup.relationship, describe(resolver, first + offset)))
        }
        for reason in reasons {
            scope.reject(&batch, index, property: reason.property, rule: "lookup", message: reason.message)
        }
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

    /// Records rejected before their lookups ran (a field that does not convert, a repeated key)
    /// also list the must-exist lookups that find nothing among the objects read or stored so far —
    /// every failure of a record, not only the first. Called once the batch is saved.
    func listMissingDestinationsOfRejected(_ batch: inout ImportBatch) throws {
        let kinds = scope.kinds, coordinator = scope.context.persistentStoreCoordinator
        var keys: [Int: [(key: [AttributeValue]?, position: SourcePosition)]] = [:]
        for (index, item) in batch.items.enumerated()
        where item.reject != nil && item.object == nil && item.bulkID == nil && !item.waits
            && kinds[item.kind].links == nil
            && kinds[item.kind].resolvers.contains(where: { !$0.lookup.createsMissing })
        {
            keys[index] = kinds[item.kind].mapper.lookupKeys(ofRejected: item.record)
        }
        guard !keys.isEmpty else { return }
        for kindIndex in kinds.all.indices {
            let members = keys.keys.filter { batch.items[$0].kind == kindIndex }.sorted()
            for (lookupIndex, resolver) in kinds[kindIndex].resolvers.enumerated()
            where !members.isEmpty && !resolver.lookup.createsMissing && !mayArriveLater(resolver.entity) {
                let wanted = members.map { keys[$0]![lookupIndex] }
                let found = try resolver.resolveIDs(wanted.map(\.key), in: coordinator)
                for (position, index) in members.enumerated() {
                    guard let key = wanted[position].key, found[position] == nil else { continue }
                    let described = zip(resolver.lookup.key, key).map { "\($0.attribute) = \($1)" }
                        .joined(separator: ", ")
                    batch.items[index].reject!.failures.append(
                        RejectFailure(
                            property: resolver.lookup.relationship, raw: nil, rule: "lookup",
                            message:
                                "no \(resolver.entity.name) with \(described) (none read or stored, and no "
                                + "later source makes one)",
                            position: wanted[position].position))
                }
            }
        }
    }

    /// Whether objects of `entity` may still come from this source or a later one (a parent later in
    /// the input): a lookup of a rejected record that finds nothing now is then no failure to list.
    private func mayArriveLater(_ entity: EntityDescription) -> Bool {
        func makes(_ mapping: PipelineConfig.Mapping) -> Bool {
            mapping.links == nil && scope.config.model.entity(named: mapping.entity)?.isKind(of: entity) == true
                || mapping.children.contains { makes($0.mapping) }
        }
        return scope.config.sources[scope.sourceIndex...].contains { makes($0.mapping) }
    }

    /// Forgets what the lookups of the batch found in the context (which is being reset).
    func reset() {
        for kind in scope.kinds.all { for resolver in kind.resolvers { resolver.reset() } }
    }
}
