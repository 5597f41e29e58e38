import ObjectGraph
import Readers

/// One context's share of a source: takes a batch through the stages — map, link, write — then
/// counts it, writes its rejects, sets aside the groups that wait for a parent, and resets the
/// context. Used on its context's queue only (inside `performAndWait`), one batch at a time.
final class BatchImporter: @unchecked Sendable {
    // @unchecked: used only inside its context's `performAndWait`, one batch at a time.
    let scope: StageScope
    private let map: MapStage
    private let link: LinkStage
    private let write: WriteStage
    private let match: StoredMatch
    private let children: ChildIdentity
    private let rejects: RejectsCollector
    private let pending: PendingRecords
    /// `mode: sync`: where the keys of the source's records are noted.
    private let seen: SeenKeys?

    init(
        source: PipelineConfig.Source, sourceIndex: Int, config: PipelineConfig, context: ManagedObjectContext,
        rejects: RejectsCollector, keys: KnownKeysRegistry, pending: PendingRecords, checkpoint: BatchCheckpoint?,
        bulk: BulkInsertChoice = BulkInsertChoice(), seen: SeenKeys? = nil
    ) {
        let kinds = RecordKinds(source: source, config: config, keys: keys) { entity, relationships in
            WriteStage.canInsertInBulk(entity, setting: relationships, context: context, checkpoint: checkpoint)
        }
        scope = StageScope(source: source, sourceIndex: sourceIndex, config: config, kinds: kinds, context: context)
        map = MapStage(scope: scope)
        link = LinkStage(scope: scope)
        write = WriteStage(scope: scope, checkpoint: checkpoint, bulk: bulk)
        match = StoredMatch(scope: scope)
        children = ChildIdentity(scope: scope)
        self.rejects = rejects
        self.pending = pending
        self.seen = seen
    }

    /// Imports a batch the read stage handed over: maps it, then links and writes it in its `turn`
    /// (after every batch handed over before it), with the rows the reader could not read. Returns
    /// the batch written, for the caller to free once the turn has ended (freeing needs no turn).
    func importBatch(_ read: ReadStage.Batch, turn: BoundedQueue<ReadStage.Batch>.Turn) throws -> ImportBatch {
        try importBatch(
            read.records, number: read.number, repeats: read.repeats, unreadable: read.unreadable, turn: turn)
    }

    /// `mode: sync`: notes the keys of the batch's records — as mapped, or for a record rejected
    /// for another field as its key field converts; a record whose key does not convert, and a row
    /// the reader could not read, hold an unknown one.
    private func noteKeys(of batch: ImportBatch, unreadable: Int, in seen: SeenKeys) {
        let key = scope.source.mapping.key
        var keys: [[AttributeValue]] = [], unknown = unreadable
        for item in batch.items where item.parent == nil {
            if let places = scope.kinds[item.kind].keyPlaces, places.allSatisfy({ $0 < item.mapped.values.count }) {
                keys.append(places.map { item.mapped.values[$0] })
            } else if let values = scope.kinds[item.kind].mapper.values(of: key, in: item.record) {
                keys.append(values)
            } else {
                unknown += 1
            }
        }
        seen.add(keys, unknown: unknown, entity: scope.source.mapping.entity)
    }

    /// Imports a batch: records read now (batch `number` of the source), or records that waited for
    /// a parent (`number` nil, each top-level record's `origins` given). On the `final` try a
    /// must-exist lookup that finds nothing rejects its record; before, the record waits. What
    /// follows the mapping waits for the batch's `turn`, when it has one.
    /// - Throws: `RunError`; `PipelineFileError` (a mapping that names a field the input lacks);
    ///   `StoreError`; `CancellationError` (another batch failed while this one waited).
    @discardableResult
    func importBatch(
        _ records: [Record], number: Int?, origins: [PendingRecords.Origin]? = nil, final: Bool = false,
        repeats: [Int: KeyRepeats.Repeat] = [:], unreadable: [RecordReject] = [],
        turn: BoundedQueue<ReadStage.Batch>.Turn? = nil, readAgain: [Bool]? = nil
    ) throws -> ImportBatch {
        // `mode: append`: a record meeting a stored key is rejected, whatever the merge policy.
        scope.context.mergePolicy = scope.source.mode == .append ? .error : scope.config.merge
        var batch = try map.map(records, number: number, origins: origins, repeats: repeats, readAgain: readAgain)
        if let seen { noteKeys(of: batch, unreadable: unreadable.count, in: seen) }
        // While batch inserts find new keys (a first load) there is nothing stored to compare with.
        if !(write.bulk.worthTrying && scope.kinds.anyBulk) { try match.skipUnchanged(&batch) }
        // Planned before the turn too: the plan only chooses which objects batch inserts may write
        // (the store refuses a key written since, and the context links what found no parent yet),
        // so the outcome is the same whichever batches are written by then.
        let plan =
            !batch.items.isEmpty && write.bulk.worthTrying && scope.kinds.anyBulk
            ? try link.planBatchInserts(batch) : nil
        try turn?.begin()
        /// Counts the batch and writes its rejects, with the unreadable rows, in input order.
        func account(_ outcome: (counts: [String: RunReport.Counts], rejected: [RecordReject])) throws {
            var counts = outcome.counts
            if !unreadable.isEmpty {
                counts[scope.source.mapping.entity, default: .init()].add(
                    RunReport.Counts(read: unreadable.count, rejected: unreadable.count))
            }
            try rejects.add(counts, rejected: outcome.rejected + unreadable)
        }
        guard !batch.items.isEmpty else {
            try account(write.outcome(of: batch))
            return batch
        }
        if let plan { try write.insert(plan, into: &batch) }
        let waiting = try link.linkInContext(&batch, final: final)
        let vanished = try children.pair(&batch)
        let waitingOrigins = waiting.map(\.origin)
        let resolved = origins.map { tried in
            let still = Set(waitingOrigins)
            return tried.filter { !still.contains($0) }
        }
        try write.save(&batch, waiting: waitingOrigins, resolved: resolved ?? [])
        try link.listMissingDestinationsOfRejected(&batch)
        if origins != nil { pending.putBack(waiting) } else { pending.add(waiting) }
        var outcome = write.outcome(of: batch, losing: Set(vanished.keys))
        for (entity, count) in try write.deleteVanished(vanished, of: batch) {
            outcome.counts[entity, default: .init()].deleted += count
        }
        if outcome.counts.values.contains(where: { $0.inserted > 0 }) { pending.noteInserted() }
        scope.context.reset()
        link.reset()
        try account(outcome)
        return batch
    }

    /// The last try of the run for the records that still wait when trying again links no more of
    /// them: records that wait on one another — a cycle of foreign keys (a team's lead is a person
    /// of the team), rows pointing at rows that wait themselves — are imported together. Every
    /// source's waiting records become objects of one context first, then their lookups are
    /// resolved (finding each other's unsaved objects), then one save writes them. Keys nobody
    /// holds reject their records; records linked to a rejected record fail validation and are
    /// rejected too, until the save goes through.
    /// - Throws: `RunError.batchNotSaved` when a failure names no waiting record; `StoreError`.
    static func settleTogether(
        _ packed: [Int: PendingRecords.Waiting], config: PipelineConfig, context: ManagedObjectContext,
        rejects: RejectsCollector, keys: KnownKeysRegistry, pending: PendingRecords, checkpoint: BatchCheckpoint?
    ) throws {
        let groups = packed.mapValues { $0.groups(0..<$0.count) }
        let sources = groups.keys.sorted()
        let importers = sources.map { sourceIndex in
            BatchImporter(
                source: config.sources[sourceIndex], sourceIndex: sourceIndex, config: config, context: context,
                rejects: rejects, keys: keys, pending: pending, checkpoint: checkpoint)
        }
        var batches = try zip(sources, importers).map { sourceIndex, importer in
            let waiting = groups[sourceIndex]!
            return try importer.map.map(
                waiting.flatMap(\.records), number: nil, origins: waiting.map(\.origin),
                readAgain: waiting.map(\.readAgain))
        }
        for (part, importer) in importers.enumerated() { importer.link.insertObjects(&batches[part]) }
        // Again while a round rejects more: a record whose lookup found an object rejected since
        // (its key named a record that is rejected) is rejected in turn — also after the save
        // rejects records, whose optional links would otherwise just be cleared.
        func resolveUntilSettled() throws {
            var rejected = -1
            while true {
                for (part, importer) in importers.enumerated() {
                    _ = try importer.link.resolveLookups(&batches[part], final: true)
                }
                let now = batches.reduce(0) { $0 + $1.items.lazy.filter { $0.reject != nil }.count }
                if now == rejected { return }
                rejected = now
            }
        }
        try resolveUntilSettled()
        let origins = groups.values.flatMap { $0.map(\.origin) }
        try WriteStage.saveRejecting(source: importers[0].scope.source.name) {
            if let checkpoint {
                try checkpoint.save(context, batch: nil, resolved: origins)
            } else {
                try context.save()
            }
        } reject: { failures in
            var progressed = false
            // Owners first: every failure of a record is listed, not only the one that rejects it.
            let owned = failures.map { ($0, owner(of: $0.objectID, in: batches)) }
            for (failure, owner) in owned {
                guard let (part, index) = owner else { continue }
                importers[part].scope.reject(&batches[part], index, for: failure)
                progressed = true
            }
            if progressed { try resolveUntilSettled() }
            return progressed
        }
        for (part, importer) in importers.enumerated() {
            let outcome = importer.write.outcome(of: batches[part])
            try rejects.add(outcome.counts, rejected: outcome.rejected)
            importer.link.reset()
        }
        context.reset()
    }

    /// The batch and item of the object `objectID` names: the item whose object it is, else an item
    /// linking to it (see `ImportBatch.owner(of:)`).
    private static func owner(of objectID: ManagedObjectID, in batches: [ImportBatch]) -> (Int, Int)? {
        for (part, batch) in batches.enumerated() {
            if let index = batch.items.indices.first(where: {
                batch.isLive($0) && batch.items[$0].object?.objectID == objectID
            }) {
                return (part, index)
            }
        }
        for (part, batch) in batches.enumerated() {
            if let index = batch.owner(of: objectID) { return (part, index) }
        }
        return nil
    }

    /// Imports waiting groups again (`PendingRecords`), a batch at a time, in `context` (call on its
    /// queue); what still finds no parent waits on — or, on the `final` try, is rejected with its key.
    static func retry(
        _ groups: inout [Int: PendingRecords.Waiting], config: PipelineConfig, context: ManagedObjectContext,
        rejects: RejectsCollector, keys: KnownKeysRegistry, pending: PendingRecords, checkpoint: BatchCheckpoint?,
        final: Bool
    ) throws {
        while let sourceIndex = groups.keys.min() {
            // Taken out of the dictionary, so that what was read back is freed as the try goes.
            var waiting = groups.removeValue(forKey: sourceIndex)!
            let importer = BatchImporter(
                source: config.sources[sourceIndex], sourceIndex: sourceIndex, config: config, context: context,
                rejects: rejects, keys: keys, pending: pending, checkpoint: checkpoint)
            while waiting.remaining > 0 {
                // Read back a batch at a time: the rest stays packed.
                let slice = waiting.takeNext(config.batchSize)
                try importer.importBatch(
                    slice.flatMap(\.records), number: nil, origins: slice.map(\.origin), final: final,
                    readAgain: slice.map(\.readAgain))
            }
        }
    }
}
