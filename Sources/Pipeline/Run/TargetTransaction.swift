import Foundation
import ModelFiles
import ObjectGraph

/// A run's target as one transaction: the lock that keeps a second run out, the file the run
/// writes, and how it becomes the target.
///
/// - `commit: atomic`: the run writes a copy of the target (`<target>.sluice-tmp`, or a new file
///   for a new target) and `commit()` renames it over the target — one atomic step, after syncing
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
    private var lock: StoreLock?
    /// The target's file state when the run copied it (`commit: atomic`).
    private var copiedState: [String]?
    /// A dry run's folder in the temporary folder, holding its copy of the target.
    private var dryRunFolder: URL?

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
    var commitsBatches: Bool { config.commit == .batches && target != nil && dryRunFolder == nil }

    /// Takes the lock, copies the target (`commit: atomic`, a dry run), opens the store and, for
    /// `commit: batches`, reads the checkpoint an interrupted run left.
    /// - Parameters:
    ///   - dryRun: work on a copy in the temporary folder; the target is only read.
    ///   - resume: `commit: batches`: go on from the checkpoint (without it, a target holding one
    ///     is refused: `RunError.interrupted`).
    ///   - waitLock: seconds to wait for another run's lock.
    /// - Throws: `RunError` (`.locked`, `.file`, `.store`, `.interrupted`).
    init(config: PipelineConfig, dryRun: Bool, resume: Bool, waitLock: Double = 0) throws {
        self.config = config
        let target = config.store == .inMemory ? nil : config.targetPath.map(Self.realFile)
        self.target = target
        coordinator = PersistentStoreCoordinator(managedObjectModel: config.model)
        var work = target
        if let target {
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
                work = try Self.workCopy(
                    of: target, at: folder.appendingPathComponent(target.lastPathComponent), state: &copiedState)
            } else if config.commit == .atomic {
                work = try Self.workCopy(
                    of: target, at: URL(fileURLWithPath: target.path + ".sluice-tmp"), state: &copiedState)
            }
        }
        self.work = work
        do {
            try openStore(resume: resume)
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

    private func openStore(resume: Bool) throws {
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
            store = try TargetStore.add(
                to: coordinator, at: work, type: work == nil ? nil : config.store.storeType, options: options)
        } catch let error as StoreError {
            throw RunError.store(error)
        }
        self.store = store
        guard work != nil else { return }
        // The model goes with the store (written with its first save), for `inspect` and `validate`.
        var metadata = coordinator.metadata(for: store)
        StoredModel.record(fileAt: config.modelPath, in: &metadata)
        coordinator.setMetadata(metadata, for: store)
        guard commitsBatches else { return }
        let made = BatchCheckpoint(
            coordinator: coordinator, store: store, pipeline: BatchCheckpoint.identity(of: config))
        if let left = BatchCheckpoint.position(in: coordinator.metadata(for: store)) {
            let interrupted = { (reason: InterruptedRun.Reason) in
                RunError.interrupted(
                    InterruptedRun(
                        target: self.target?.path ?? "", reason: reason, source: left.sourceIndex + 1,
                        batches: left.batches))
            }
            guard resume else { throw interrupted(.needsResume) }
            guard left.pipeline == made.pipeline else { throw interrupted(.otherPipeline) }
            resumePosition = left
        }
        checkpoint = made
    }

    /// Ends the run: the checkpoint goes, the metadata is saved, the store closed and — with
    /// `commit: atomic` — the work copy synced and renamed over the target.
    /// - Throws: `RunError` (`.store`, `.file`, `.targetChanged`); the target is then as it was.
    func commit() throws {
        guard let store else { return }
        if dryRunFolder != nil { return abandon() }
        do {
            try checkpoint?.finish()
            try coordinator.saveMetadata()
            try (store as? AtomicStore)?.flush()
        } catch let error as StoreError {
            throw RunError.store(error)
        }
        coordinator.removePersistentStore(store)
        self.store = nil
        if let target, let work, work != target { try Self.move(work, over: target, copiedState: copiedState) }
    }

    /// After a failure: the store is closed and the work copy removed (the target is as it was).
    func abandon() {
        if let store { coordinator.removePersistentStore(store) }
        store = nil
        if let target, let work, work != target { Self.removeStoreFiles(at: work) }
        if let dryRunFolder { try? FileManager.default.removeItem(at: dryRunFolder) }
        dryRunFolder = nil
    }

    // MARK: The work copy

    /// The file the run writes, `work`: a copy of the target (or nothing, for a new target), its
    /// WAL with it, owned and permitted as the target is. The target itself is only read: never
    /// opened as a store here (that would switch it to WAL mode, or add a store's tables to
    /// another program's database), so a run that fails leaves it byte for byte as it was.
    private static func workCopy(of target: URL, at work: URL, state: inout [String]?) throws -> URL {
        removeStoreFiles(at: work)  // what a killed run left
        guard FileManager.default.fileExists(atPath: target.path) else { return work }
        state = fileState(of: target)
        for suffix in ["", "-wal"] where suffix.isEmpty || FileManager.default.fileExists(atPath: target.path + suffix)
        {
            do { try FileManager.default.copyItem(atPath: target.path + suffix, toPath: work.path + suffix) } catch {
                throw RunError.file(
                    RunFileError(.copy, "the target to work on", path: target.path + suffix, underlying: error))
            }
        }
        var info = stat()
        if stat(target.path, &info) == 0 {
            // The group a reader relies on goes with the new file (the owner too, where allowed).
            _ = chown(work.path, info.st_uid, info.st_gid)
            _ = chmod(work.path, info.st_mode & 0o7777)
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
    private static func move(_ work: URL, over target: URL, copiedState: [String]?) throws {
        if let copiedState, fileState(of: target) != copiedState { throw RunError.targetChanged(path: target.path) }
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: work.path + suffix) }
        try sync(work, "the finished store", naming: target)
        guard rename(work.path, target.path) == 0 else {
            throw RunError.file(.posix(.rename, "the finished store", path: target.path))
        }
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: target.path + suffix) }
        try sync(target.deletingLastPathComponent(), "the target's folder")
    }

    /// Has the kernel start writing the work copy's pages to the disk now, without waiting for it
    /// (Linux `sync_file_range`), so that the sync in `commit()` finds little left to write: called
    /// while the run still computes (indexes, validation). Nothing happens where the call is missing.
    func startWriteback() {
        guard let target, let work, work != target, let startWriteback = Self.syncFileRange else { return }
        let descriptor = open(work.path, O_RDONLY)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        _ = startWriteback(descriptor, 0, 0, 2)  // SYNC_FILE_RANGE_WRITE: start, do not wait
    }

    /// glibc's `sync_file_range`, which Swift's Glibc module does not declare.
    private static let syncFileRange: (@convention(c) (Int32, Int64, Int64, UInt32) -> Int32)? = {
        guard let symbol = dlsym(nil, "sync_file_range") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (Int32, Int64, Int64, UInt32) -> Int32).self)
    }()

    /// Flushes a file (or a folder, for a rename in it) to the disk; errors name `named` (the target,
    /// for its work copy, which a failed run removes).
    private static func sync(_ url: URL, _ role: String, naming named: URL? = nil) throws {
        let descriptor = open(url.path, O_RDONLY)
        let path = (named ?? url).path
        guard descriptor >= 0 else { throw RunError.file(.posix(.open, role, path: path)) }
        defer { close(descriptor) }
        guard fsync(descriptor) == 0 else { throw RunError.file(.posix(.sync, role, path: path)) }
    }

    static func removeStoreFiles(at url: URL) {
        for suffix in ["", "-wal", "-shm", "-journal"] {
            try? FileManager.default.removeItem(atPath: url.path + suffix)
        }
    }
}
