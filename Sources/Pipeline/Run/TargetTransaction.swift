import Foundation
import ModelFiles
import ObjectGraph
import Stores

/// A run's target as one transaction: the lock that keeps a second run out, the file the run
/// writes, and how it becomes the target.
///
/// - `commit: atomic`: the run writes a copy of the target (`<target>.sluice-tmp-<pid>`, a name of
///   its own) and `commit()` renames it over the target — one atomic step, after syncing
///   it — so the target is as before or as after, whatever happens. A target another program
///   wrote meanwhile is not replaced (`RunError.targetChanged`).
/// - `commit: batches`: the run writes the target itself, each batch's save committing with a
///   checkpoint (`checkpoint`); `resumePosition` is where an interrupted run stopped.
/// - A dry run: like `commit: atomic`, but the copy is made in a folder of its own in the temporary
///   folder (`TMPDIR`) and removed at the end, never renamed: the target is only read (under a
///   reader's lock, when a run ever locked it).
/// - An in-memory target: an in-memory store, no file, no lock.
///
/// The lock is held from `init` until the transaction is released.
final class TargetTransaction {
    let config: PipelineConfig
    /// The target's file; `nil` for an in-memory store.
    let target: URL?
    /// The file the run writes: the work copy (`commit: atomic`) or the target (`commit: batches`).
    let work: URL?
    let coordinator: PersistentStoreCoordinator
    /// The store the run writes, until `commit()` or `abandon()` removes it.
    private(set) var store: (any PersistentStore)?
    /// `commit: batches`: saves commit with it.
    private(set) var checkpoint: BatchCheckpoint?
    /// `commit: batches` with `--resume`: where the interrupted run stopped.
    private(set) var resumePosition: BatchCheckpoint.Position?
    /// `commit: batches`: start over, setting aside the checkpoint an interrupted run left.
    private let discardCheckpoint: Bool
    /// What the user should know of a commit that worked (a folder that did not sync after the rename).
    var notes: [String] = []
    /// The checkpoint set aside (`discardCheckpoint`), if there was one.
    private(set) var discarded: BatchCheckpoint.Position?
    private var lock: StoreLock?
    /// The target's file state when the run copied it (`commit: atomic`).
    var copiedState: [String]?
    /// The work copy as the run made it (`O_EXCL`, never through a link), held open until the commit
    /// renames it: what is renamed must be this file, not one put at its name meanwhile.
    var workDescriptor: Int32 = -1
    /// A dry run's folder in the temporary folder, holding its copy of the target.
    private var dryRunFolder: URL?
    /// Whether the run keeps nothing (`--dry-run`).
    private let isDryRun: Bool
    /// A postgres target: the store, whose transaction is the run's (`commit: atomic`, dry runs).
    private var database: PostgresStore?

    /// `error` as the user should read it: a store error about the work copy (removed when the run
    /// fails) names the target instead, saying the target was not changed.
    func naming(_ error: StoreError) -> StoreError {
        guard let work, let target, work != target,
            error.url?.standardizedFileURL == work.standardizedFileURL
                || error.message.contains(work.path)
        else { return error }
        var named = error
        named.url = target
        named.message =
            error.message.replacingOccurrences(of: work.path, with: target.path)
            + (dryRunFolder == nil ? " (in the run's copy of the target, removed; the target is unchanged)" : "")
        return named
    }

    /// Whether saves commit batch by batch (with a checkpoint) rather than at the end.
    var commitsBatches: Bool {
        config.commit == .batches && (target != nil || config.store == .postgres) && !isDryRun
    }

    /// Takes the lock, copies the target (`commit: atomic`, a dry run), opens the store and, for
    /// `commit: batches`, reads the checkpoint an interrupted run left.
    /// - Parameters:
    ///   - dryRun: work on a copy in the temporary folder; the target is only read.
    ///   - resume: `commit: batches`: go on from the checkpoint (without it, a target holding one
    ///     is refused: `RunError.interrupted`), if the inputs it read are still the same files.
    ///   - discardCheckpoint: `commit: batches`: start from the first record, the checkpoint an
    ///     interrupted run left set aside (the batches it committed stay).
    ///   - waitLock: seconds to wait for another run's lock.
    /// - Throws: `RunError` (`.locked`, `.file`, `.store`, `.interrupted`).
    init(
        config: PipelineConfig, dryRun: Bool, resume: Bool, discardCheckpoint: Bool = false, waitLock: Double = 0
    ) throws {
        self.config = config
        self.discardCheckpoint = discardCheckpoint
        isDryRun = dryRun
        let target = config.store == .inMemory || config.store == .postgres ? nil : config.targetPath.map(Self.realFile)
        self.target = target
        coordinator = PersistentStoreCoordinator(managedObjectModel: config.model)
        var work = target
        if let target {
            // Before the lock: a device, FIFO, folder or link loop is never a target.
            try OutputFile.requireFile(target.path, "the target")
            let folder = target.deletingLastPathComponent()
            do {
                if !dryRun { try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true) }
            } catch {
                throw RunError.file(RunFileError(.createFolder, "of the target", path: folder.path, underlying: error))
            }
            do {
                lock = try StoreLock(forStoreAt: target.path, waiting: waitLock, shared: dryRun)
            } catch let error as StoreLock.Error {
                if let signal = RunStop.requested { throw RunError.stopped(signal: signal) }
                switch error {
                case .locked(let path): throw RunError.locked(path: path)
                case .io(let path, let errno):
                    throw RunError.file(RunFileError(.lock, "the lock file", path: path, errno: errno))
                }
            }
            if dryRun {
                let folder = try Self.dryRunFolder()
                dryRunFolder = folder
                work = folder.appendingPathComponent(target.lastPathComponent)
                (copiedState, workDescriptor) = try Self.workCopy(of: target, at: work!, kind: config.store)
            } else if config.commit == .atomic {
                // A name of this run's own: another run's copy (after its lock file was removed under
                // it) is never this one, and is removed only once its process is gone.
                Leftovers.removeStaleWorkCopies(of: target)
                work = URL(fileURLWithPath: Leftovers.name(beside: target.path))
                (copiedState, workDescriptor) = try Self.workCopy(of: target, at: work!, kind: config.store)
            }
        }
        self.work = work
        do {
            try openStore(resume: resume, waitLock: waitLock)
        } catch {
            abandon()
            // Never a message pointing at the work copy, which is gone.
            if case RunError.store(let store) = error { throw RunError.store(naming(store)) }
            throw error
        }
    }

    /// The file `path` names, its symbolic links followed (a link to a file not there yet too), so
    /// that the lock, the work copy and the rename act on the real store and the link stays a link.
    static func realFile(_ path: String) -> URL {
        var url = URL(fileURLWithPath: path).standardizedFileURL
        for _ in 0..<40 {
            guard let destination = try? FileManager.default.destinationOfSymbolicLink(atPath: url.path) else { break }
            url = URL(fileURLWithPath: destination, relativeTo: url.deletingLastPathComponent()).standardizedFileURL
        }
        return url.deletingLastPathComponent().resolvingSymlinksInPath().appendingPathComponent(url.lastPathComponent)
    }

    /// A new folder of the dry run's own in the temporary folder.
    private static func dryRunFolder() throws -> URL {
        let template = FileManager.default.temporaryDirectory.appendingPathComponent(
            Leftovers.prefix("sluice-dry-run") + "XXXXXX"
        ).path
        var bytes = Array(template.utf8CString)
        guard mkdtemp(&bytes) != nil else {
            throw RunError.file(.posix(.createFolder, "for the dry run", path: template))
        }
        return URL(fileURLWithPath: bytes.withUnsafeBufferPointer { String(cString: $0.baseAddress!) })
    }

    /// The input of a source the interrupted run read (wholly, or up to its checkpoint) that is not
    /// the file it read any more — a new export under the same name — or `nil`. Standard input can
    /// never be known to be the same. A checkpoint that recorded no inputs (an older version's) is
    /// taken as it is.
    private static func changedInput(
        since left: BatchCheckpoint.Position, now: [String], of config: PipelineConfig
    ) -> String? {
        guard let before = left.inputs else { return nil }
        for index in config.sources.indices where index <= left.sourceIndex {
            let was = index < before.count ? before[index] : "?"
            if was == "-" || was != now[index] { return config.sources[index].path }
        }
        return nil
    }

    private func openStore(resume: Bool, waitLock: Double) throws {
        var options = config.store == .sqlite ? config.storeOptions : [:]
        if let work, work != target, config.store == .sqlite {
            // The work copy is private until it is renamed into place, and thrown away when the
            // run fails: each save needs no durability of its own, so its pages are written once
            // (no WAL) and never synced; the whole file is synced before the rename (`commit`).
            options["journal_mode"] = "MEMORY"
            options["synchronous"] = "OFF"
        }
        if let work, work != target, config.store == .xml || config.store == .binary {
            // The same for a whole-file store: saves stay in memory, the file is written once (`commit`).
            options["deferred_writes"] = "true"
        }
        let store: any PersistentStore
        do {
            if config.store == .postgres, let url = config.databaseURL.flatMap(URL.init(string:)) {
                // The lock first; then, unless saves commit batch by batch, one transaction for the run.
                store = try TargetStore.add(
                    to: coordinator, at: url,
                    options: [
                        "lock": isDryRun ? "shared" : "exclusive", "lock_wait": String(waitLock),
                        "transaction": commitsBatches ? "save" : "run",
                    ])
                database = store as? PostgresStore
            } else {
                store = try TargetStore.add(
                    to: coordinator, at: work, type: work == nil ? nil : config.store.storeType, options: options)
            }
        } catch let error as StoreError {
            if error.underlying is PostgresStore.Locked {
                if let signal = RunStop.requested { throw RunError.stopped(signal: signal) }
                throw RunError.locked(path: config.targetName)
            }
            throw RunError.store(error)
        }
        self.store = store
        guard work != nil || database != nil else { return }
        // The model goes with the store (written with its first save), for `inspect` and `validate`.
        var metadata = coordinator.metadata(for: store)
        if let model = config.modelText { StoredModel.record(text: model.text, isJSON: model.isJSON, in: &metadata) }
        coordinator.setMetadata(metadata, for: store)
        guard commitsBatches else { return }
        let made = BatchCheckpoint(
            coordinator: coordinator, store: store, pipeline: BatchCheckpoint.identity(of: config),
            inputs: BatchCheckpoint.inputs(of: config))
        if let left = BatchCheckpoint.position(in: coordinator.metadata(for: store)) {
            let interrupted = { (reason: InterruptedRun.Reason) in
                RunError.interrupted(
                    InterruptedRun(
                        target: self.target?.path ?? self.config.targetName, reason: reason,
                        source: left.sourceIndex + 1,
                        batches: left.batches))
            }
            if discardCheckpoint {
                // The batches it committed stay; this run starts from the first record.
                var metadata = coordinator.metadata(for: store)
                metadata.userInfo[BatchCheckpoint.key] = nil
                coordinator.setMetadata(metadata, for: store)
                discarded = left
            } else {
                guard resume else { throw interrupted(.needsResume) }
                guard left.pipeline == made.pipeline else { throw interrupted(.otherPipeline) }
                if let changed = Self.changedInput(since: left, now: made.inputs, of: config) {
                    throw interrupted(.inputChanged(path: changed))
                }
                resumePosition = left
            }
        }
        checkpoint = made
    }

    /// Ends the run: the checkpoint goes, the metadata is saved, the store closed and — with
    /// `commit: atomic` — the work copy synced and renamed over the target.
    /// - Throws: `RunError` (`.store`, `.file`, `.targetChanged`); the target is then as it was.
    func commit() throws {
        guard let store else { return }
        if isDryRun { return abandon() }
        do {
            try checkpoint?.finish()
            try coordinator.saveMetadata()
            try (store as? AtomicStore)?.flush()
            try database?.commitRunTransaction()
        } catch let error as StoreError {
            throw RunError.store(error)
        }
        coordinator.removePersistentStore(store)
        self.store = nil
        if let target, let work, work != target { try move(work, over: target) }
    }

    /// After a failure: the store is closed and the work copy removed (the target is as it was).
    func abandon() {
        if let store { coordinator.removePersistentStore(store) }
        store = nil
        if let target, let work, work != target { Self.removeStoreFiles(at: work) }
        closeWorkCopy()
        if let dryRunFolder { try? FileManager.default.removeItem(at: dryRunFolder) }
        dryRunFolder = nil
    }
}
