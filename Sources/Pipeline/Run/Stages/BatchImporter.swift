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
    private let rejects: RejectsCollector
    private let pending: PendingRecords

    init(
        source: PipelineConfig.Source, sourceIndex: Int, config: PipelineConfig, context: ManagedObjectContext,
        rejects: RejectsCollector, keys: KnownKeysRegistry, pending: PendingRecords, checkpoint: BatchCheckpoint?
    ) {
        let kinds = RecordKinds(source: source, config: config, keys: keys) { entity, relationships in
            WriteStage.canInsertInBulk(entity, setting: relationships, context: context, checkpoint: checkpoint)
        }
        scope = StageScope(source: source, sourceIndex: sourceIndex, config: config, kinds: kinds, context: context)
        map = MapStage(scope: scope)
        link = LinkStage(scope: scope)
        write = WriteStage(scope: scope, checkpoint: checkpoint)
        self.rejects = rejects
        self.pending = pending
    }

    /// Imports a batch: records read now (batch `number` of the source), or records that waited for
    /// a parent (`number` nil, each top-level record's `origins` given). On the `final` try a
    /// must-exist lookup that finds nothing rejects its record; before, the record waits.
    /// - Throws: `RunError`; `PipelineFileError` (a mapping that names a field the input lacks);
    ///   `StoreError`.
    func importBatch(
        _ records: [Record], number: Int?, origins: [PendingRecords.Origin]? = nil, final: Bool = false
    ) throws {
        var batch = try map.map(records, number: number, origins: origins)
        guard !batch.items.isEmpty else { return try rejects.add(write.outcome(of: batch).counts, rejected: []) }
        if write.triesBatchInserts, scope.kinds.anyBulk {
            try write.insert(link.planBatchInserts(batch), into: &batch)
        }
        let waiting = try link.linkInContext(&batch, final: final)
        let waitingOrigins = waiting.map(\.origin)
        let resolved = origins.map { tried in
            let still = Set(waitingOrigins)
            return tried.filter { !still.contains($0) }
        }
        try write.save(&batch, waiting: waitingOrigins, resolved: resolved ?? [])
        if origins != nil { pending.putBack(waiting) } else { pending.add(waiting) }
        let outcome = write.outcome(of: batch)
        scope.context.reset()
        link.reset()
        try rejects.add(outcome.counts, rejected: outcome.rejected)
    }

    /// Imports waiting groups again (`PendingRecords`), a batch at a time, in `context` (call on its
    /// queue); what still finds no parent waits on — or, on the `final` try, is rejected with its key.
    static func retry(
        _ groups: [Int: [PendingRecords.Group]], config: PipelineConfig, context: ManagedObjectContext,
        rejects: RejectsCollector, keys: KnownKeysRegistry, pending: PendingRecords, checkpoint: BatchCheckpoint?,
        final: Bool
    ) throws {
        for (sourceIndex, waiting) in groups.sorted(by: { $0.key < $1.key }) {
            let importer = BatchImporter(
                source: config.sources[sourceIndex], sourceIndex: sourceIndex, config: config, context: context,
                rejects: rejects, keys: keys, pending: pending, checkpoint: checkpoint)
            var start = 0
            while start < waiting.count {
                let slice = waiting[start..<min(start + config.batchSize, waiting.count)]
                try importer.importBatch(
                    slice.flatMap(\.records), number: nil, origins: slice.map(\.origin), final: final)
                start += slice.count
            }
        }
    }
}
