import Foundation
import ObjectGraph
import Readers
import Stores

/// What a run did, per entity and in all.
public struct RunReport: Sendable, Codable {
    public struct Counts: Sendable, Codable, Equatable {
        /// Records mapped onto the entity (children and objects created by lookups not included).
        public var read = 0
        /// Objects of those records saved as new rows.
        public var inserted = 0
        /// Objects of those records that became updates of stored rows (by key, through the merge
        /// policy) and changed them.
        public var updated = 0
        /// Objects of those records equal to the stored rows they met: nothing written.
        public var unchanged = 0
        public var rejected = 0

        mutating func add(_ other: Counts) {
            read += other.read
            inserted += other.inserted
            updated += other.updated
            unchanged += other.unchanged
            rejected += other.rejected
        }
    }
    public var entities: [String: Counts] = [:]
    public var rejected = 0
    public var seconds = 0.0
    /// Where the time went, in order: one entry per source (named after it), then the final stage's
    /// `indexes` (built after the load), `validation` (the whole graph) and `commit`.
    public var stages: [Stage] = []
    public var peakRSSMegabytes = 0.0

    public struct Stage: Sendable, Codable, Equatable {
        public var name: String
        public var seconds: Double
    }
}

/// Why a run failed; the target is as it was (`commit: atomic`).
public enum RunError: Error, Sendable, CustomStringConvertible {
    /// `committed`: with `commit: batches` the batches saved so far stay in the target.
    case tooManyRejects(count: Int, max: Int, rejects: String?, committed: Bool = false)
    case locked(String)
    case input(source: String, String)
    case store(String)
    /// `commit: batches`: the target holds the checkpoint of an interrupted run.
    case interrupted(String)
    /// The final stage found rules the imported graph breaks as a whole.
    case invalidGraph([GraphViolation])

    public var description: String {
        switch self {
        case .tooManyRejects(let count, let max, let rejects, let committed):
            return "\(count) record\(count == 1 ? " was" : "s were") rejected, more than errors.max (\(max)); "
                + (committed
                    ? "the batches saved so far stay in the target (commit: batches)" : "the target is unchanged")
                + (rejects.map { "; see \($0)" } ?? "")
        case .locked(let path): return "another run is writing the target (lock \(path) is held)"
        case .input(let source, let message): return "source \(source): \(message)"
        case .store(let message): return message
        case .interrupted(let message): return message
        case .invalidGraph(let violations):
            return
                "the imported graph breaks \(violations.count) rule\(violations.count == 1 ? "" : "s") of the model:\n"
                + violations.map { "  \($0)" }.joined(separator: "\n")
        }
    }
}

/// Runs a pipeline: each source in order, its records mapped, inserted through a private-queue
/// context in batches of `batch.size` top-level records (a record and its nested children stay in
/// one batch), lookups resolved once per batch, saved with the file's merge policy and reset. Records
/// that fail (mapping, lookup, validation, a key taken under `merge: error`) are written to the
/// rejects file with every failure and leave the batch; the rest is saved.
///
/// With `commit: atomic` the run writes a copy of the target (`<target>.sluice-tmp`) and renames it
/// over the target only when it succeeds, so the target is as before or as after whatever happens.
/// A lock next to the target keeps two runs from writing it at once.
///
/// With `commit: batches` the run writes the target directly, each batch's save committing with a
/// checkpoint; a killed run leaves the batches saved so far and `run(resume: true)` goes on from
/// the checkpoint (`BatchCheckpoint`).
///
/// The final stage validates the whole graph (`GraphValidation`) before the target is committed: a
/// broken rule fails the run (`RunError.invalidGraph`) and, with `commit: atomic`, leaves the target
/// as it was.
public final class PipelineRunner {
    public let config: PipelineConfig
    /// The target's file state when the run copied it (`commit: atomic`).
    private var copiedState: [String]?

    public init(config: PipelineConfig) {
        self.config = config
    }

    /// - Parameters:
    ///   - dryRun: import into an in-memory store; the target is not touched.
    ///   - showsProgress: rewrite a progress line on standard error (source, records, rate,
    ///     percentage of the file read, time left) every half second.
    ///   - resume: `commit: batches` — go on from the checkpoint an interrupted run left in the
    ///     target (without it, such a target is an error: `RunError.interrupted`).
    /// - Throws: `RunError`; `StoreError` for the target store.
    public func run(dryRun: Bool = false, showsProgress: Bool = false, resume: Bool = false) throws -> RunReport {
        let batches = config.commit == .batches && !dryRun
        let start = Date()
        let target = dryRun || config.store == .inMemory ? nil : config.targetPath.map { URL(fileURLWithPath: $0) }
        var lock: StoreLock?
        var work = target
        if let target {
            do {
                try FileManager.default.createDirectory(
                    at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
                lock = try StoreLock(forStoreAt: target.path)
            } catch let error as StoreLock.Error {
                if case .locked(let path) = error { throw RunError.locked(path) }
                throw RunError.store("\(error)")
            }
            if !batches { work = try prepareWorkCopy(of: target) }
        }
        defer { withExtendedLifetime(lock) {} }  // held until the run ends
        let coordinator = PersistentStoreCoordinator(managedObjectModel: config.model)
        var store: (any PersistentStore)?
        let shared = RunShared(rejectsPath: config.rejectsPath, batchSize: config.batchSize, lookups: config.lookups)
        var report = RunReport()
        var stages: [RunReport.Stage] = []
        var stageStart = Date()
        /// Ends a stage now, or one of a pass that took `seconds` of the time since the last.
        func stage(_ name: String, seconds: Double? = nil) {
            let end = seconds.map { stageStart.addingTimeInterval($0) } ?? Date()
            stages.append(.init(name: name, seconds: end.timeIntervalSince(stageStart)))
            stageStart = end
        }
        do {
            var options = storeOptions
            if let work, work != target, config.store == .sqlite {
                // The work copy is private until it is renamed into place, and thrown away when the
                // run fails: each save needs no durability of its own, so its pages are written once
                // (no WAL) and never synced; the whole file is synced before the rename (`commit`).
                options["journal_mode"] = "MEMORY"
                options["synchronous"] = "OFF"
            }
            store = try TargetStore.add(
                to: coordinator, at: work, type: work == nil ? nil : config.store.storeType, options: options)
            if let store, work != nil {
                // The model goes with the store (written with its first save), for `inspect` and `validate`.
                var metadata = coordinator.metadata(for: store)
                StoredModel.record(fileAt: config.modelPath, in: &metadata)
                coordinator.setMetadata(metadata, for: store)
            }
            let contexts = (0..<max(1, config.contexts)).map { number in
                let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
                context.name = "import \(number + 1)"
                context.mergePolicy = config.merge
                return context
            }
            var checkpoint: BatchCheckpoint?
            var position: BatchCheckpoint.Position?
            if batches, let store {
                let made = BatchCheckpoint(
                    coordinator: coordinator, store: store, pipeline: BatchCheckpoint.identity(of: config))
                if let left = BatchCheckpoint.position(in: coordinator.metadata(for: store)) {
                    guard resume else {
                        throw RunError.interrupted(
                            "the target \(target?.path ?? "") holds the checkpoint of an interrupted run (source "
                                + "\(left.sourceIndex + 1), \(left.batches) batches done); run again with --resume to "
                                + "go on from there"
                        )
                    }
                    guard left.pipeline == made.pipeline else {
                        throw RunError.interrupted(
                            "the checkpoint in \(target?.path ?? "") was left by another pipeline (or this one before "
                                + "it changed: file, model, batch size or inputs); it cannot be resumed"
                        )
                    }
                    position = left
                }
                checkpoint = made
            }
            let line = showsProgress ? ProgressLine(shared.progress) : nil
            defer { line?.stop() }
            if let position, !position.pending.isEmpty {
                // Records an interrupted run left waiting for a parent are read again.
                for (index, source) in config.sources.enumerated()
                where position.pending.contains(where: { $0.source == index }) {
                    shared.pending.add(
                        try SourceImport(source: source, sourceIndex: index, config: config).collect(position.pending))
                }
            }
            for pass in Self.passes(of: config, batches: batches) {
                let index = pass.upperBound - 1, source = config.sources[pass.lowerBound]
                if let position, index < position.sourceIndex { continue }
                let resumed = position.flatMap { index == $0.sourceIndex ? $0 : nil }
                let skipped = resumed?.batches ?? 0, alsoDone = resumed?.alsoDone ?? []
                checkpoint?.begin(sourceIndex: index, skipped: skipped, alsoDone: alsoDone, pending: resumed?.pending)
                let deferred: Set<ValidationRule> =
                    pass.allSatisfy { Self.fillsEveryMinimum(config.sources[$0].mapping, model: config.model) }
                    ? [] : [.minCount]
                for context in contexts { context.deferredValidationRules = deferred }
                let seconds = try SourceImport(
                    source: source, sourceIndex: pass.lowerBound, config: config, checkpoint: checkpoint,
                    skippedBatches: skipped,
                    alsoDone: alsoDone, alongside: Array(pass.dropFirst())
                )
                .run(contexts: contexts, shared: shared)
                for (part, spent) in zip(pass, seconds).dropLast() { stage(config.sources[part].name, seconds: spent) }
                // Records waiting for parents are tried again once the source is in; after the last
                // source, what still finds no parent is rejected with its key.
                // Tries go on while they link something (a waiting order may be what waiting lines need).
                try contexts[0].performAndWait {
                    var waiting = shared.pending.takeAll()
                    while !waiting.isEmpty {
                        let before = waiting.values.reduce(0) { $0 + $1.count }
                        try SourceImport.retry(
                            waiting, config: config, context: contexts[0], shared: shared, checkpoint: checkpoint,
                            final: false)
                        waiting = shared.pending.takeAll()
                        guard waiting.values.reduce(0, { $0 + $1.count }) < before else { break }
                    }
                    guard !waiting.isEmpty else { return }
                    if index == config.sources.count - 1 {
                        try SourceImport.retry(
                            waiting, config: config, context: contexts[0], shared: shared, checkpoint: checkpoint,
                            final: true)
                    } else {
                        shared.pending.add(waiting.values.flatMap { $0 })
                    }
                }
                stage(config.sources[index].name)
            }
            try shared.closeRejects()
            report = shared.currentReport
            if report.rejected > config.maxErrors {
                throw RunError.tooManyRejects(
                    count: report.rejected, max: config.maxErrors, rejects: config.rejectsPath, committed: batches)
            }
            if let sqlite = store as? SQLiteStore { try sqlite.buildPendingIndexes() }
            stage("indexes")
            // The final stage: the whole graph against the model's rules (what a batch could not
            // see — counts of to-many relationships filled by later sources, keys across batches).
            let violations = try GraphValidation.violations(in: coordinator)
            if !violations.isEmpty { throw RunError.invalidGraph(violations) }
            stage("validation")
            try checkpoint?.finish()
            try coordinator.saveMetadata()
            coordinator.removePersistentStore(store!)
            store = nil
            if let target, let work, work != target { try commit(work, over: target) }
            stage("commit")
        } catch {
            if let store { coordinator.removePersistentStore(store) }
            try? shared.closeRejects()
            if let target, let work, work != target { Self.removeStoreFiles(at: work) }
            throw error
        }
        report.seconds = Date().timeIntervalSince(start)
        report.stages = stages
        report.peakRSSMegabytes = Self.peakRSSMegabytes()
        return report
    }

    /// The sources in passes over their files: consecutive sources of one file go together
    /// (`SourceImport.sharesPass`), each other source alone.
    static func passes(of config: PipelineConfig, batches: Bool) -> [Range<Int>] {
        var passes: [Range<Int>] = []
        var start = 0
        while start < config.sources.count {
            var end = start + 1
            while end < config.sources.count,
                SourceImport.sharesPass(
                    config.sources[end], with: Array(config.sources[start..<end]), commit: batches ? .batches : .atomic)
            {
                end += 1
            }
            passes.append(start..<end)
            start = end
        }
        return passes
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

    private var storeOptions: [String: String] { config.sharesFile ? ["shares_file": "true"] : [:] }

    // MARK: Atomic commit

    /// The file the run writes: a copy of the target (or nothing, for a new target) next to it.
    private func prepareWorkCopy(of target: URL) throws -> URL {
        let work = URL(fileURLWithPath: target.path + ".sluice-tmp")
        Self.removeStoreFiles(at: work)  // what a killed run left
        guard FileManager.default.fileExists(atPath: target.path) else { return work }
        do {
            if (try? SQLiteStore.metadata(at: target)) != nil || !config.sharesFile {
                // A cleanly closed store has no WAL left; open it once to make sure of that before copying.
                let check = PersistentStoreCoordinator(managedObjectModel: config.model)
                let existing = try TargetStore.add(
                    to: check, at: target, type: config.store.storeType, options: storeOptions)
                check.removePersistentStore(existing)
            }
            // Another program's database is never opened as a store here (that would add the
            // store's tables to it): its file and WAL are copied as they are.
            copiedState = Self.fileState(of: target)
            try FileManager.default.copyItem(at: target, to: work)
            if FileManager.default.fileExists(atPath: target.path + "-wal") {
                try FileManager.default.copyItem(atPath: target.path + "-wal", toPath: work.path + "-wal")
            }
        } catch let error as StoreError {
            throw error
        } catch {
            throw RunError.store("cannot copy the target \(target.path) to work on: \(error.localizedDescription)")
        }
        return work
    }

    /// Size and modification time of a file and its WAL, to see whether another program wrote it.
    private static func fileState(of url: URL) -> [String] {
        ["", "-wal"].map { suffix in
            var info = stat()
            guard stat(url.path + suffix, &info) == 0 else { return "none" }
            return "\(info.st_size) \(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec)"
        }
    }

    /// Renames the finished copy over the target: one atomic step. A target another program wrote
    /// since it was copied (a shared database) is not replaced: that would lose its writes.
    private func commit(_ work: URL, over target: URL) throws {
        if let copiedState, Self.fileState(of: target) != copiedState {
            throw RunError.store(
                "the target \(target.path) changed while the run worked on a copy of it (another program wrote it); "
                    + "nothing was committed — run again"
            )
        }
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: work.path + suffix) }
        try Self.sync(work)
        guard rename(work.path, target.path) == 0 else {
            throw RunError.store(
                "cannot move the finished store into place at \(target.path): \(String(cString: strerror(errno)))")
        }
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: target.path + suffix) }
        try Self.sync(target.deletingLastPathComponent())
    }

    /// Flushes a file (or a folder, for a rename in it) to the disk.
    private static func sync(_ url: URL) throws {
        let descriptor = open(url.path, O_RDONLY)
        guard descriptor >= 0 else {
            throw RunError.store("cannot open \(url.path) to sync it: \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        guard fsync(descriptor) == 0 else {
            throw RunError.store("cannot sync \(url.path) to the disk: \(String(cString: strerror(errno)))")
        }
    }

    static func removeStoreFiles(at url: URL) {
        for suffix in ["", "-wal", "-shm", "-journal"] {
            try? FileManager.default.removeItem(atPath: url.path + suffix)
        }
    }

    static func peakRSSMegabytes() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Double(usage.ru_maxrss) / 1024
    }
}

/// The rejects file: one JSON object per rejected record, written as the run goes.
struct RejectsFile {
    private var handle: FileHandle?
    private let path: String?
    private let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    init(path: String?) { self.path = path }

    struct Line: Encodable {
        struct Position: Encodable {
            var file: String
            var line: Int
            var column: Int
            var record: Int?
        }
        struct Failure: Encodable {
            var property: String
            var raw: String?
            var rule: String
            var message: String
            var position: Position
        }
        var source: String
        var entity: String
        var position: Position
        var failures: [Failure]
    }

    mutating func write(_ reject: RecordReject) throws {
        guard let path else { return }
        if handle == nil {
            _ = FileManager.default.createFile(atPath: path, contents: nil)
            guard let opened = FileHandle(forWritingAtPath: path) else {
                throw RunError.store("cannot write the rejects file \(path)")
            }
            handle = opened
        }
        func position(_ p: SourcePosition) -> Line.Position {
            .init(file: p.file, line: p.line, column: p.column, record: p.record)
        }
        let line = Line(
            source: reject.source, entity: reject.entity, position: position(reject.position),
            failures: reject.failures.map {
                .init(
                    property: $0.property, raw: $0.raw, rule: $0.rule, message: $0.message,
                    position: position($0.position))
            })
        try handle!.write(contentsOf: encoder.encode(line) + Data("\n".utf8))
    }

    mutating func close() throws {
        try handle?.close()
        handle = nil
    }
}
