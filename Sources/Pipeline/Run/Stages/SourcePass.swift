import Foundation
import ObjectGraph
import Readers

/// One pass over a file: one source of a run — or several consecutive sources reading one file
/// (`sharesPass`). Its read stage runs on a thread of its own and hands batches through a bounded
/// queue; each of the run's contexts takes batches from it and imports them on its own queue
/// (`BatchImporter`): the contexts map batches in parallel, then link and write them one at a time
/// in input order, so the store and the rejects are the same whatever the contexts' timing. Every
/// batch of a source is done before the next source's records are handed over, and every context
/// is done before the pass ends.
struct SourcePass {
    /// The pass's sources by their place in the pipeline.
    let members: Range<Int>
    let config: PipelineConfig
    let rejects: RejectsCollector
    let keys: KnownKeysRegistry
    let pending: PendingRecords
    let progress: RunProgress
    /// `commit: batches`: each save commits with the checkpoint.
    var checkpoint: BatchCheckpoint?
    /// `mode: sync`: where the keys the records hold are noted.
    var seen: SeenKeys?
    /// Batches of the first source already in the store (`--resume`).
    var skippedBatches = 0
    var alsoDone: Set<Int> = []

    /// The sources of `config` in passes over their files: consecutive sources of one file go
    /// together (`sharesPass`), each other source alone.
    static func plan(_ config: PipelineConfig, commit: PipelineConfig.Commit) -> [Range<Int>] {
        var passes: [Range<Int>] = []
        var start = 0
        while start < config.sources.count {
            var end = start + 1
            while end < config.sources.count,
                sharesPass(config.sources[end], with: Array(config.sources[start..<end]), commit: commit)
            {
                end += 1
            }
            passes.append(start..<end)
            start = end
        }
        return passes
    }

    /// Whether `next` can be read in the same pass as `sources` (consecutive sources of the
    /// pipeline): one XML or SQL dump file whose sources each take their own records (distinct
    /// tables; XML record paths neither equal nor one inside another). Not with `commit: batches`,
    /// whose checkpoint counts the batches of one source at a time.
    static func sharesPass(
        _ next: PipelineConfig.Source, with sources: [PipelineConfig.Source], commit: PipelineConfig.Commit
    ) -> Bool {
        guard commit != .batches, let first = sources.first, next.format == first.format, next.path == first.path
        else { return false }
        switch next.format {
        case .sqldump:
            guard let table = next.table.map(TableSchema.sqlName) else { return false }
            return sources.allSatisfy { $0.table != nil && TableSchema.sqlName($0.table!) != table }
        case .xml:
            let path = next.record ?? "/"
            return sources.allSatisfy { source in
                let other = source.record ?? "/"
                return other != path && !other.hasPrefix(path + "/") && !path.hasPrefix(other + "/")
            }
        case .csv, .sqlite, .json, .jsonl:
            return false
        }
    }

    /// The read stage of the pass.
    var reader: ReadStage {
        var reader = ReadStage(parts: members.map { (config.sources[$0], $0) }, batchSize: config.batchSize)
        reader.skippedBatches = skippedBatches
        reader.alsoDone = alsoDone
        return reader
    }

    /// Imports the pass; returns the seconds spent on each of its sources.
    /// - Throws: the first error of the reading thread or of any context.
    @discardableResult
    func run(contexts: [ManagedObjectContext]) throws -> [Double] {
        let queue = BoundedQueue<ReadStage.Batch>(capacity: contexts.count, maxWeight: ReadStage.queuedBytes)
        let failure = FirstFailure()
        let readerDone = DispatchSemaphore(value: 0)
        let seconds = Seconds(count: members.count)
        let reader = reader
        let progress = progress
        let thread = Thread {
            do {
                try reader.read(into: queue, progress: progress, seconds: &seconds.values) { failure.error != nil }
            } catch {
                failure.set(error)
            }
            queue.close()
            readerDone.signal()
        }
        thread.name = "sluice-read-\(config.sources[members.lowerBound].name)"
        let start = Date()
        thread.start()
        let bulk = members.map { _ in BulkInsertChoice() }
        let importers = contexts.map { context in
            members.map {
                BatchImporter(
                    source: config.sources[$0], sourceIndex: $0, config: config, context: context, rejects: rejects,
                    keys: keys, pending: pending, checkpoint: checkpoint, bulk: bulk[$0 - members.lowerBound],
                    seen: config.sources[$0].mode == .sync ? seen : nil)
            }
        }
        DispatchQueue.concurrentPerform(iterations: importers.count) { index in
            let context = contexts[index]
            while let (batch, turn) = queue.pop() {
                do {
                    let written = try context.performAndWait {
                        var written: ImportBatch? = try importers[index][batch.part].importBatch(batch, turn: turn)
                        // Enough records wait for parents: try them again, parents may have come since.
                        if var due = pending.takeIfDue() {
                            written = nil
                            try retry(&due, in: context, final: false)
                        }
                        return written
                    }
                    try turn.end()
                    // Freed once the turn has ended: freeing the batch's mapped values and objects
                    // (the context let go of them) need not hold up the next batch's writes.
                    withExtendedLifetime(written) {}
                    progress.add(records: batch.records.count)
                    // A signal stops the run between batches.
                    try RunStop.check()
                } catch {
                    failure.set(error)
                    queue.cancel()
                }
                queue.finished()
            }
        }
        readerDone.wait()
        if let error = failure.error { throw error }
        // The reader timed the sources it left; the last one ends now.
        var timed = seconds.values
        timed[timed.count - 1] += Date().timeIntervalSince(start) - timed.reduce(0, +)
        return timed
    }

    /// Imports waiting groups again in `context` (call on its queue): see `BatchImporter.retry`.
    func retry(_ groups: inout [Int: PendingRecords.Waiting], in context: ManagedObjectContext, final: Bool) throws {
        try BatchImporter.retry(
            &groups, config: config, context: context, rejects: rejects, keys: keys, pending: pending,
            checkpoint: checkpoint, final: final)
    }

    /// How many records still waiting at the end of a run are imported together at most.
    static let settledTogether = 200_000

    /// Once the pass is in: records waiting for parents are tried again while a try links something
    /// (a waiting order may be what waiting lines need); after the `last` pass, what still finds no
    /// parent is rejected with its key. Runs on `context`'s queue.
    func settleWaitingRecords(in context: ManagedObjectContext, last: Bool) throws {
        try context.performAndWait {
            // Again while a try links something; only when objects were saved since the last.
            while pending.worthTrying {
                let before = pending.count
                var waiting = pending.takeAll()
                try retry(&waiting, in: context, final: false)
                guard pending.count < before else { break }
            }
            // What still waits waits for later passes, or now, after the last, is settled.
            guard last else { return }
            var waiting = pending.takeAll()
            guard !waiting.isEmpty else { return }
            // Together when they fit in memory at once (what waits on one another resolves);
            // beyond that, batch by batch, where a cycle's records are rejected.
            let count = waiting.values.reduce(0) { $0 + $1.recordCount }
            if count <= Self.settledTogether {
                try BatchImporter.settleTogether(
                    waiting, config: config, context: context, rejects: rejects, keys: keys, pending: pending,
                    checkpoint: checkpoint)
            } else {
                try retry(&waiting, in: context, final: true)
            }
        }
    }
}

/// Seconds per source of a pass, written by the reading thread before it signals that it is done.
private final class Seconds: @unchecked Sendable {
    // @unchecked: written by the reading thread only, read after its end is signalled.
    var values: [Double]
    init(count: Int) { values = Array(repeating: 0, count: count) }
}

/// The first error of any thread of a pass.
private final class FirstFailure: @unchecked Sendable {
    // @unchecked: `stored` is only touched with `lock` held.
    private let lock = NSLock()
    private var stored: (any Error)?
    var error: (any Error)? { lock.withLock { stored } }
    func set(_ error: any Error) { lock.withLock { if stored == nil { stored = error } } }
}
