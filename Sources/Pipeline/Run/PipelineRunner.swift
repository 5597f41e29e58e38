import Foundation
import ObjectGraph

/// Runs a pipeline: each source in order, its records read, mapped, linked and written in batches
/// of `batch.size` top-level records through the run's private-queue contexts, then the final
/// stage, then the commit. A record that fails (mapping, lookup, validation, a key taken under
/// `merge: error`) goes to the rejects file with every failure and leaves its batch; the rest is
/// saved.
///
/// The stages, in the order a record meets them:
/// - `TargetTransaction`: the lock, the work copy or checkpoint, the store;
/// - per pass over a file (`SourcePass`): `ReadStage` on a thread of its own, then in each context
///   `BatchImporter`: `MapStage` → `LinkStage` → `WriteStage`; records waiting for a parent are
///   tried again as parents arrive (`PendingRecords`);
/// - `FinalStage`: rejects against `errors.max`, indexes, the whole graph validated;
/// - `TargetTransaction.commit()`: the work copy renamed over the target (`commit: atomic`) or the
///   checkpoint removed (`commit: batches`).
///
/// With `commit: atomic` the target is as before or as after whatever happens; with
/// `commit: batches` a killed run leaves the batches saved so far and `run(resume: true)` goes on
/// from the checkpoint. A lock next to the target keeps two runs from writing it at once.
public final class PipelineRunner {
    public let config: PipelineConfig
    /// The counts so far: once `run` returns, all of them; after it throws, those it had.
    public private(set) var report = RunReport()
    /// The file the rejected records went to (`nil` when none was rejected, or none was written).
    public private(set) var rejectsFile: String?
    /// The first rejected records (at most 3), for a summary that shows why.
    public private(set) var firstRejects: [RecordReject] = []
    /// The checkpoint of an interrupted run that `Options.discardCheckpoint` set aside: its source
    /// (from 1) and batches done.
    public private(set) var discardedCheckpoint: (source: Int, batches: Int)?
    /// What the user should know of a run that worked (a commit that could not sync its folder).
    public private(set) var notes: [String] = []

    public init(config: PipelineConfig) {
        self.config = config
    }

    public struct Options: Sendable {
        /// Import into a copy of the target in the temporary folder, thrown away at the end: the
        /// counts are the real run's, nothing is written but the report (no rejects file).
        public var dryRun = false
        /// Rewrite a progress line on standard error (source, records, rate, percentage of the
        /// file read, time left) every half second.
        public var showsProgress = false
        /// `commit: batches`: go on from the checkpoint an interrupted run left in the target
        /// (without it, such a target is an error: `RunError.interrupted`).
        public var resume = false
        /// `commit: batches`: start from the first record, setting aside the checkpoint an
        /// interrupted run left (the batches it committed stay; `discardedCheckpoint` says so).
        public var discardCheckpoint = false
        /// Seconds to wait for a run holding the target's lock (0: fail at once, `RunError.locked`).
        public var waitLock = 0.0
        /// Asked once the records are imported (before the final stage publishes anything), and when
        /// the run fails: whether this attempt stands. When it does not, the run is thrown away (the
        /// target and the rejects file as before) and `run` throws `RunSuperseded` (`SampledImport`).
        /// Never asked for a run that commits batches.
        public var check: (any RunAttemptCheck)?
        public init() {}
    }

    /// - Throws: `RunError` (with the reader's, the store's or the file's error inside);
    ///   `PipelineFileError` when a mapping names a field its input does not have.
    public func run(_ options: Options = Options()) throws -> RunReport {
        let start = Date()
        var clock = StageClock()
        RunStop.setRunning(true)
        defer { RunStop.setRunning(false) }
        Leftovers.removeStale()
        let (rejectsPath, fresh) = Self.rejectsPath(of: config, dryRun: options.dryRun, at: start)
        if let rejectsPath {
            Leftovers.keepStaleRejects(in: URL(fileURLWithPath: rejectsPath).deletingLastPathComponent())
        }
        let rejects = RejectsCollector(
            rejectsPath: rejectsPath, fresh: fresh, entities: config.sources.flatMap(\.mapping.reportNames),
            provisional: options.check != nil)
        var transaction: TargetTransaction?
        /// The counts (all, or those so far), the stages, the time and memory, the rejects made.
        func finish(_ counts: RunReport) {
            report = counts
            report.stages = clock.stages
            report.seconds = Date().timeIntervalSince(start)
            report.peakRSSMegabytes = Self.peakRSSMegabytes()
            (rejectsFile, firstRejects) = (rejects.path, rejects.firstRejects)
        }
        do {
            try RunStop.check()
            let target = try TargetTransaction(
                config: config, dryRun: options.dryRun, resume: options.resume,
                discardCheckpoint: options.discardCheckpoint, waitLock: options.waitLock)
            transaction = target
            discardedCheckpoint = target.discarded.map { ($0.sourceIndex + 1, $0.batches) }
            clock.end("target")
            if let rejectsPath {
                if fresh {
                    try Self.makeFolder(of: rejectsPath)
                } else {
                    try OutputFile.check(rejectsPath, .rejects, config: config)
                }
                try ReportFile.check(rejectsPath, role: "the rejects file")
            }
            try importSources(into: target, rejects: rejects, showsProgress: options.showsProgress, clock: &clock)
            try RunStop.check()
            try Self.checkAttempt(options.check, target, rejects)
            let counts = try FinalStage(config: config, transaction: target, rejects: rejects).run(clock: &clock)
            try RunStop.check()
            try target.commit()
            notes += target.notes
            clock.end("commit")
            // Every record read is stored, rejected with its reasons, counted unchanged or filtered.
            assert(
                counts.entities.allSatisfy { $0.value.isBalanced },
                "the counts do not balance: \(counts.entities.filter { !$0.value.isBalanced })")
            finish(counts)
            return report
        } catch {
            let committed = transaction?.commitsBatches ?? false
            transaction?.abandon()
            if !committed, let check = options.check, !Self.stands(check, after: error) {
                rejects.discard()
                // A signal (before or while waiting for the check) stops the run; else it runs again.
                if let signal = RunStop.requested { throw RunError.stopped(signal: signal, committed: false) }
                throw RunSuperseded()
            }
            rejects.confirm()
            try? rejects.close()
            finish(rejects.currentReport)
            if case RunError.stopped(let signal, _) = error {
                throw RunError.stopped(signal: signal, committed: committed)
            }
            let failure = Self.runError(error)
            // Never a message pointing at the work copy, which is gone.
            if let transaction {
                if case RunError.store(let store) = failure { throw RunError.store(transaction.naming(store)) }
                if case RunError.batchNotSaved(let source, let store as StoreError) = failure {
                    throw RunError.batchNotSaved(source: source, underlying: transaction.naming(store))
                }
            }
            throw failure
        }
    }

    /// Once the records are in, before the final stage publishes anything: an attempt to be checked
    /// goes on only when it stands (its rejects then the run's), else it is thrown away.
    private static func checkAttempt(
        _ check: (any RunAttemptCheck)?, _ target: TargetTransaction, _ rejects: RejectsCollector
    ) throws {
        guard !target.commitsBatches, let check else { return }
        guard try check.stands() else { throw RunSuperseded() }
        rejects.confirm()
    }

    /// Whether a failed attempt stands: never once superseded; after a signal, only when that is
    /// known without waiting; else when the check says so (waiting for it).
    private static func stands(_ check: any RunAttemptCheck, after error: any Error) -> Bool {
        if error is RunSuperseded { return false }
        if case RunError.stopped = error { return check.standsSoFar == true }
        return (try? check.stands()) ?? false
    }

    /// Where a run's rejected records go: `errors.rejects` (`--rejects`) when it names a file; else a
    /// file of the run's own, time-stamped (`shop.sqlite.rejects-20261124T031000Z.jsonl`), in the
    /// folder it names or next to the target — for a PostgreSQL target, next to the pipeline file
    /// (`sluice import`: its first input), named after the schema (`sales.rejects-….jsonl`). A dry
    /// run writes none, nor does a run into an in-memory store without `errors.rejects`.
    /// - Returns: the path, and whether it is the run's own (`fresh`: never replaces a file).
    static func rejectsPath(of config: PipelineConfig, dryRun: Bool, at start: Date) -> (String?, fresh: Bool) {
        guard !dryRun else { return (nil, false) }
        var isFolder: ObjCBool = false
        let chosen = config.rejectsPath
        if let chosen, !chosen.hasSuffix("/"),
            !FileManager.default.fileExists(atPath: chosen, isDirectory: &isFolder) || !isFolder.boolValue
        {
            return (URL(fileURLWithPath: chosen).standardizedFileURL.path, false)
        }
        var target = config.store == .inMemory ? nil : config.targetPath.map { URL(fileURLWithPath: $0) }
        if config.store == .postgres, let url = config.databaseURL {
            let schema = URLComponents(string: url)?.queryItems?.last { $0.name == "schema" }?.value ?? "public"
            target = URL(fileURLWithPath: config.file).deletingLastPathComponent()
                .appendingPathComponent(schema.replacingOccurrences(of: "/", with: "_"))
        }
        guard let folder = chosen.map({ URL(fileURLWithPath: $0) }) ?? target?.deletingLastPathComponent() else {
            return (nil, false)
        }
        let stamp = start.formatted(Date.ISO8601FormatStyle(dateSeparator: .omitted, timeSeparator: .omitted))
        let name = "\(target?.lastPathComponent ?? "sluice").rejects-\(stamp).jsonl"
        return (folder.appendingPathComponent(name).path, true)
    }

    /// Makes the folder a run's own rejects file goes in (`errors.rejects: dir/`), as the target's
    /// folder is made: before anything is read, never after the run.
    private static func makeFolder(of rejectsPath: String) throws {
        let folder = URL(fileURLWithPath: rejectsPath).deletingLastPathComponent()
        var isFolder: ObjCBool = false
        if FileManager.default.fileExists(atPath: folder.path, isDirectory: &isFolder), !isFolder.boolValue {
            throw UsageError(
                "the rejects folder \(folder.path) is a file: give a folder, or the rejects file's name without a "
                    + "trailing /")
        }
        do { try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true) } catch {
            throw RunError.file(RunFileError(.createFolder, "for the rejects", path: folder.path, underlying: error))
        }
    }

    /// The uniqueness constraints of the sources' entities that no source keys its records by: a
    /// record colliding on one of them (an email taken by another customer) is rejected, never
    /// merged into the other object, whatever the merge policy.
    static func unmergedConstraints(of config: PipelineConfig) -> Set<UniquenessConstraintName> {
        var unmerged = Set<UniquenessConstraintName>(), keys = Set<UniquenessConstraintName>()
        for source in config.sources where source.mapping.links == nil {
            for (entity, constraint) in config.model.entity(named: source.mapping.entity)?.constraintsWithInherited
                ?? []
            {
                let name = UniquenessConstraintName(entity: entity.name, properties: constraint)
                if Set(constraint) == Set(source.mapping.key) { keys.insert(name) } else { unmerged.insert(name) }
            }
        }
        return unmerged.subtracting(keys)
    }

    /// Every pass over the inputs, each followed by a try of the records waiting for parents.
    private func importSources(
        into transaction: TargetTransaction, rejects: RejectsCollector, showsProgress: Bool, clock: inout StageClock
    ) throws {
        let unmerged = Self.unmergedConstraints(of: config)
        let contexts = (0..<max(1, config.contexts)).map { number in
            let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: transaction.coordinator)
            context.name = "import \(number + 1)"
            context.mergePolicy = config.merge
            context.unmergedConstraints = unmerged
            return context
        }
        let keys = KnownKeysRegistry(lookups: config.lookups)
        let pending = PendingRecords(retryAt: config.batchSize)
        let modes = LoadModes(config: config, coordinator: transaction.coordinator, rejects: rejects)
        let seen = modes.syncs ? SeenKeys() : nil
        // A resumed run finds the objects of the run it resumes.
        if transaction.resumePosition == nil { try modes.refuseKeylessRepeats() }
        try modes.replace()
        let progress = RunProgress()
        let line = showsProgress ? ProgressLine(progress) : nil
        defer { line?.stop() }
        let position = transaction.resumePosition
        if let position {
            // Records the interrupted run left waiting for a parent are read again.
            for waiting in position.pending.sources {
                let source = SourcePass(
                    members: waiting..<waiting + 1, config: config, rejects: rejects, keys: keys, pending: pending,
                    progress: progress)
                try source.reader.collect(position.pending, into: pending)
            }
        }
        for members in SourcePass.plan(config, commit: transaction.commitsBatches ? .batches : .atomic) {
            let index = members.upperBound - 1
            if let position, index < position.sourceIndex { continue }
            var pass = SourcePass(
                members: members, config: config, rejects: rejects, keys: keys, pending: pending, progress: progress)
            pass.checkpoint = transaction.checkpoint
            pass.seen = seen
            let resumed = position.flatMap { index == $0.sourceIndex ? $0 : nil }
            if let resumed { (pass.skippedBatches, pass.alsoDone) = (resumed.batches, resumed.alsoDone) }
            transaction.checkpoint?.begin(
                sourceIndex: index, skipped: pass.skippedBatches, alsoDone: pass.alsoDone, pending: resumed?.pending)
            let deferred: Set<ValidationRule> =
                members.allSatisfy { Self.fillsEveryMinimum(config.sources[$0].mapping, model: config.model) }
                ? [] : [.minCount]
            for context in contexts { context.deferredValidationRules = deferred }
            let seconds = try pass.run(contexts: contexts)
            for (member, spent) in zip(members, seconds).dropLast() {
                clock.end(config.sources[member].name, seconds: spent)
            }
            try pass.settleWaitingRecords(in: contexts[0], last: index == config.sources.count - 1)
            clock.end(config.sources[index].name)
        }
        if let seen { notes += try modes.sync(seen) }
    }

    /// Whether every object a mapping makes gets the members of its to-many relationships that have
    /// a minimum count from the same records (nested children linked through the inverse). When not
    /// (members come from a later source; objects made by find-or-create lookups), batch saves defer
    /// `.minCount` to the final stage's whole-graph validation.
    static func fillsEveryMinimum(_ mapping: PipelineConfig.Mapping, model: ManagedObjectModel) -> Bool {
        func filled(_ entityName: String, by children: [PipelineConfig.Child]) -> Bool {
            guard let entity = model.entity(named: entityName) else { return true }
            return entity.relationships.allSatisfy { relationship in
                guard relationship.isToMany, (relationship.effectiveMinCount ?? 0) > 0 else { return true }
                return children.contains {
                    $0.parent == relationship.inverse?.name && $0.mapping.entity == relationship.destinationEntity?.name
                }
            }
        }
        guard filled(mapping.entity, by: mapping.children) else { return false }
        for lookup in mapping.relationships where lookup.createsMissing {
            guard filled(lookup.entity, by: []) else { return false }
        }
        return mapping.children.allSatisfy { fillsEveryMinimum($0.mapping, model: model) }
    }

    /// A failure as the run reports it: the store's errors as `RunError.store`, the rest as they are.
    private static func runError(_ error: any Error) -> any Error {
        switch error {
        case let error as StoreError: return RunError.store(error)
        default: return error
        }
    }

    static func peakRSSMegabytes() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Double(usage.ru_maxrss) / 1024
    }
}

/// Whether a run's attempt stands, asked before it publishes anything (`Options.check`).
public protocol RunAttemptCheck: Sendable {
    /// Waits until it is known.
    /// - Throws: `RunError.stopped` when a signal asks the run to stop meanwhile.
    func stands() throws -> Bool
    /// What is known now, without waiting (`nil`: not yet).
    var standsSoFar: Bool? { get }
}

/// Thrown by `PipelineRunner.run` when its attempt does not stand (`Options.check`): nothing was
/// committed or published.
public struct RunSuperseded: Error {}
