import Foundation
import ObjectGraph
import Readers

/// The write stage: new objects that need nothing of a context go to the store in batch inserts
/// (`BatchInsertRequest`, parents before children); the rest is saved through the context with
/// the pipeline's merge policy — records whose objects fail validation or break a key are
/// rejected with those failures and the save is tried again without them. With `commit: batches`
/// each save commits with the checkpoint.
final class WriteStage {
    let scope: StageScope
    private let checkpoint: BatchCheckpoint?
    /// Whether batch inserts are worth trying for the source (shared by its contexts).
    let bulk: BulkInsertChoice
    /// The context's last did-save (which objects it inserted, and updated with changes).
    private let lastSave = LastSave()
    private var observation: DidSaveObservation?

    init(scope: StageScope, checkpoint: BatchCheckpoint?, bulk: BulkInsertChoice) {
        self.scope = scope
        self.checkpoint = checkpoint
        self.bulk = bulk
        observation = scope.context.observeDidSave { [lastSave] save in lastSave.set(save) }
    }

    deinit { observation?.cancel() }

    /// Whether records of `entity` setting `relationships` can be written by batch inserts in
    /// `context`: the store takes them, no checkpoint must commit with the save, the relationships
    /// are to-ones a foreign key says everything of (`BatchInsertRequest.canSet`), no count rule of
    /// a to-many could be broken by a new member, and no to-many of the new object has a minimum
    /// checked at the save.
    static func canInsertInBulk(
        _ entity: EntityDescription, setting relationships: [String], context: ManagedObjectContext,
        checkpoint: BatchCheckpoint?
    ) -> Bool {
        guard checkpoint == nil, context.persistentStoreCoordinator.supportsBatchInsert(for: entity) else {
            return false
        }
        for name in relationships {
            guard let relationship = entity.relationship(named: name), BatchInsertRequest.canSet(relationship),
                relationship.inverse?.maxCount == nil
            else { return false }
        }
        return entity.relationships.allSatisfy { relationship in
            guard relationship.isToMany else { return true }
            let minimum = relationship.effectiveMinCount ?? 0
            return relationship.maxCount == nil
                && (minimum == 0 || context.deferredValidationRules.contains(.minCount))
        }
    }

    /// Writes the planned batch inserts, a kind at a time, parents first; an object whose parent
    /// was not written stays behind with it (for the context). An object that meets a stored key
    /// (a re-import, a duplicate in the input) is refused by the store and left to the context,
    /// whose merge policy decides — with its children.
    func insert(_ plan: LinkStage.BatchInsertPlan, into batch: inout ImportBatch) throws {
        let kinds = scope.kinds
        let coordinator = scope.context.persistentStoreCoordinator
        var attempted = 0, refused = 0
        for (kindIndex, (members, full)) in plan.requests.enumerated() where !members.isEmpty {
            let parentRelationship = kinds[kindIndex].parentRelationship.flatMap {
                full.entity.relationship(named: $0)?.index
            }
            let kept = members.indices.filter { object in
                let index = members[object]
                guard !plan.excluded.contains(batch.items[index].top) else { return false }
                if let parent = batch.items[index].parent { return batch.items[parent].bulkID != nil }
                return true
            }
            guard !kept.isEmpty else { continue }
            var request = kept.count == members.count ? full : full.keeping(kept)
            if let parentRelationship {
                for (copy, object) in kept.enumerated() {
                    request.setDestination(
                        batch.items[batch.items[members[object]].parent!].bulkID, relationship: parentRelationship,
                        of: copy)
                }
            }
            let ids = try coordinator.execute(request)
            for (copy, object) in kept.enumerated() { batch.items[members[object]].bulkID = ids[copy] }
            // Lookups of later records and sources find these objects without asking the store.
            for (attribute, known) in kinds[kindIndex].insertedKeys {
                known.remember(values: (0..<request.count).map { request[$0, attribute] }, objectIDs: ids)
            }
            attempted += kept.count
            refused += ids.lazy.filter { $0 == nil }.count
        }
        bulk.note(attempted: attempted, refused: refused)
    }

    /// Saves the batch's objects; records whose objects fail validation or break a key under
    /// `merge: error` are rejected with those failures and the save is tried again without them.
    /// - Parameters:
    ///   - waiting: the groups of the batch that wait for a parent, and
    ///   - resolved: (for a retry) the origins that no longer wait — what the checkpoint records.
    /// - Throws: `RunError.batchNotSaved` when a failure names no record of the batch; `StoreError`.
    func save(
        _ batch: inout ImportBatch, waiting: [PendingRecords.Origin], resolved: [PendingRecords.Origin]
    ) throws {
        let context = scope.context, checkpoint = checkpoint, number = batch.number
        try Self.saveRejecting(source: scope.source.name) {
            if let checkpoint {
                try checkpoint.save(context, batch: number, waiting: waiting, resolved: resolved)
            } else {
                try context.save()
            }
        } reject: { failures in
            var progressed = false
            // Owners first: every failure of a record is listed, not only the one that rejects it.
            let owned = failures.map { failure in
                // A stored holder is named as stored, though records link to it (their children); a new
                // one by the record that made it (its own object, or a lookup's `missing: create`).
                (
                    failure, batch.owner(of: failure.objectID),
                    failure.holder.flatMap { $0.isTemporaryID ? batch.owner(of: $0) : batch.record(of: $0) }
                )
            }
            for (var failure, owner, holderOwner) in owned {
                guard let index = owner else { continue }
                if let holder = failure.holder {
                    // Who holds the key: a record of this batch (where), or a stored object.
                    let held =
                        holderOwner.map { "the record at \(batch.items[$0].record.position)" }
                        ?? "the stored \(holder.entityName) \(holder.reference.keyValue)"
                    let entity = holder.entityName
                    failure.message =
                        "\(failure.message) is taken by \(held): \(entity) keeps [\(failure.property)] unique"
                }
                scope.reject(&batch, index, for: failure)
                progressed = true
            }
            return progressed
        }
    }

    /// Deletes the stored children no record stood for (`ChildIdentity`) of the parents the save
    /// kept, and saves; returns the deletions by entity. (Its save is not the batch's: counted here.)
    func deleteVanished(_ vanished: [Int: [ManagedObjectID]], of batch: ImportBatch) throws -> [String: Int] {
        let ids = vanished.filter { batch.isLive(batch.items[$0.key].top) }.flatMap(\.value)
        guard !ids.isEmpty else { return [:] }
        let context = scope.context
        for id in ids { context.delete(context.object(with: id)) }
        try context.save()
        // What the save deleted: the vanished children, and what their delete rules cascaded to.
        let deleted = lastSave.take()?.deleted ?? ids
        return Dictionary(grouping: deleted, by: \.entityName).mapValues(\.count)
    }

    /// A failure of a save that names one object: a rule its values break, or a key it shares.
    struct SaveFailure {
        var objectID: ManagedObjectID
        /// The attribute the failure is about, whose field the rejection shows.
        var attribute: String?
        var property: String
        var rule: String
        var message: String
        var value: String?
        /// For a key it shares: the object holding the key (`message` then says which key).
        var holder: ManagedObjectID?
    }

    /// Tries `save` until it goes through; after a try that fails validation or breaks keys under
    /// `merge: error`, `reject` rejects the records of the failures and says whether any failure
    /// named one (when none does, the save cannot succeed: `RunError.batchNotSaved`).
    static func saveRejecting(
        source: String, _ save: () throws -> Void, reject: ([SaveFailure]) throws -> Bool
    ) throws {
        while true {
            do {
                return try save()
            } catch let error as ValidationError {
                let failures = error.failures.map {
                    SaveFailure(
                        objectID: $0.objectID, attribute: $0.key, property: $0.key ?? $0.entityName, rule: "\($0.rule)",
                        message: $0.message, value: $0.value)
                }
                guard try reject(failures) else { throw RunError.batchNotSaved(source: source, underlying: error) }
            } catch let error as MergeError {
                let failures = error.constraintConflicts.flatMap { conflict in
                    ([conflict.objectID] + conflict.otherObjectIDs).map {
                        guard let holder = conflict.existingObjectID else {
                            return SaveFailure(
                                objectID: $0, property: conflict.keyNames.joined(separator: ", "), rule: "unique",
                                message: "\(conflict)")
                        }
                        let key = zip(conflict.keyNames, conflict.keyValues).map { "\($0) = \($1)" }
                        return SaveFailure(
                            objectID: $0, property: conflict.keyNames.joined(separator: ", "), rule: "unique",
                            message: key.joined(separator: ", "), holder: holder)
                    }
                }
                guard try reject(failures) else { throw RunError.batchNotSaved(source: source, underlying: error) }
            } catch let error as StoreError where error.code == .constraintViolation && error.objectID != nil {
                // A value or key the store refused for one object (text PostgreSQL cannot hold, a key
                // taken by a row the context did not know): that object's record.
                let failure = SaveFailure(
                    objectID: error.objectID!, property: error.objectID!.entityName, rule: "store",
                    message: error.message)
                guard try reject([failure]) else { throw RunError.batchNotSaved(source: source, underlying: error) }
            }
        }
    }

    /// The batch's counts per entity once it is saved: read (when first read), inserted, updated,
    /// unchanged (equal to the stored row: nothing written), rejected; and its rejected records.
    /// - Parameter losing: items whose objects lose stored children (`ChildIdentity`): updated, even
    ///   when the save wrote nothing of them.
    func outcome(
        of batch: ImportBatch, losing: Set<Int> = []
    ) -> (counts: [String: RunReport.Counts], rejected: [RecordReject]) {
        let kinds = scope.kinds
        var counts: [String: RunReport.Counts] = [:]
        for (kind, read) in batch.readByKind.enumerated() where read > 0 {
            counts[kinds[kind].mapper.reportName, default: .init()].read += read
        }
        let saved = lastSave.take()
        let inserted = Set(saved?.inserted ?? []), updated = Set(saved?.updated ?? [])
        var rejected: [RecordReject] = []
        var byKind = [RunReport.Counts](repeating: .init(), count: kinds.all.count)
        for (kind, ignored) in batch.ignoredByKind { byKind[kind].unchanged += ignored }
        for (kind, filtered) in batch.filteredByKind { byKind[kind].filtered += filtered }
        for index in batch.items.indices where !batch.items[index].waits {
            let kind = batch.items[index].kind
            if let reject = batch.items[index].reject {
                counts[reject.entity, default: .init()].rejected += 1
                rejected.append(reject)
            } else if kinds[kind].links != nil {
                // A record of links: inserted when it added one the save wrote (an owner that became a
                // stored row's may have had it already), else all were there already.
                let added = batch.items[index].links.contains {
                    inserted.contains($0.owner.objectID) || updated.contains($0.owner.objectID)
                }
                if added { byKind[kind].inserted += 1 } else { byKind[kind].unchanged += 1 }
            } else if batch.items[index].bulkID != nil {
                byKind[kind].inserted += 1
            } else if let object = batch.items[index].object {
                if inserted.contains(object.objectID) {
                    byKind[kind].inserted += 1
                } else if updated.contains(object.objectID) || losing.contains(index) {
                    byKind[kind].updated += 1
                } else {
                    byKind[kind].unchanged += 1
                }
            }
        }
        for (kind, kindCounts) in byKind.enumerated() where kindCounts != RunReport.Counts() {
            counts[kinds[kind].mapper.reportName, default: .init()].add(kindCounts)
        }
        return (counts, rejected)
    }
}

/// Whether a source's batch inserts are worth trying: they are possible and the objects they tried
/// so far were mostly new (an input whose keys the store already holds goes through the context,
/// and a re-run compares its records with the stored rows first: `StoredMatch`). Shared by the
/// source's contexts. Either way the outcome is the same: batch inserts write new objects only and
/// leave the rest to the context.
final class BulkInsertChoice: @unchecked Sendable {
    // @unchecked: its state is only touched with `lock` held.
    private let lock = NSLock()
    private var worth = true
    private var attempted = 0, refused = 0
    var worthTrying: Bool { lock.withLock { worth } }

    /// Notes a batch's tries: once 64 objects were tried, more than a quarter of them refused (their
    /// keys stored: a re-import) ends the tries for the rest of the source — counted over all its
    /// batches, so that small batches decide as soon as large ones.
    func note(attempted: Int, refused: Int) {
        lock.withLock {
            self.attempted += attempted
            self.refused += refused
            if self.attempted >= 64 && self.refused * 4 > self.attempted { worth = false }
        }
    }
}

/// A context's last did-save, handed from the save's callback to the batch that saved.
private final class LastSave: @unchecked Sendable {
    // @unchecked: `save` is only touched with `lock` held.
    private let lock = NSLock()
    private var save: ContextDidSave?
    func set(_ save: ContextDidSave) { lock.withLock { self.save = save } }
    func take() -> ContextDidSave? {
        lock.withLock {
            defer { save = nil }
            return save
        }
    }
}
