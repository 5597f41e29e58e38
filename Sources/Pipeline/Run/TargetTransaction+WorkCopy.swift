import Foundation
import ObjectGraph
import Stores

#if canImport(Glibc)
import Glibc
#endif

extension TargetTransaction {
    // MARK: The work copy

    /// Makes the file the run writes, `work`: a copy of the target (or, for a new SQLite target, an
    /// empty file), its WAL with it, owned and permitted as the target is — created by this run
    /// (`O_EXCL`, never through a symbolic link). The target itself is only read: never opened as a
    /// store here (that would switch it to WAL mode, or add a store's tables to another program's
    /// database), so a run that fails leaves it byte for byte as it was.
    /// - Returns: the target's file state when copied (`nil`: no target yet), and the open copy
    ///   (`-1` when the store makes the file: a new XML or binary target).
    static func workCopy(
        of target: URL, at work: URL, kind: PipelineConfig.StoreKind
    ) throws -> (state: [String]?, descriptor: Int32) {
        let exists = FileManager.default.fileExists(atPath: target.path)
        guard exists || kind == .sqlite else { return (nil, -1) }
        let descriptor = try create(work)
        do {
            guard exists else { return (nil, descriptor) }
            let state = fileState(of: target)
            try copy(target.path, into: descriptor, naming: target.path)
            if FileManager.default.fileExists(atPath: target.path + "-wal") {
                let wal = try create(URL(fileURLWithPath: work.path + "-wal"))
                defer { close(wal) }
                try copy(target.path + "-wal", into: wal, naming: target.path + "-wal")
            }
            var info = stat()
            if stat(target.path, &info) == 0 {
                // The group a reader relies on goes with the new file (the owner too, where allowed).
                _ = fchown(descriptor, info.st_uid, info.st_gid)
                _ = fchmod(descriptor, info.st_mode & 0o7777)
            }
            // An XML or binary store saves by renaming a new file over this one: nothing to hold.
            guard kind == .sqlite else {
                close(descriptor)
                return (state, -1)
            }
            return (state, descriptor)
        } catch {
            close(descriptor)
            removeStoreFiles(at: work)
            throw error
        }
    }

    /// A new file of this run's own at `url`: `O_CREAT | O_EXCL | O_NOFOLLOW`, so never another
    /// program's file nor a link's destination. One left at the name by a process gone before that
    /// had this run's number is removed first.
    private static func create(_ url: URL) throws -> Int32 {
        for attempt in 0..<2 {
            let descriptor = open(url.path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
            if descriptor >= 0 { return descriptor }
            guard errno == EEXIST, attempt == 0 else { break }
            unlink(url.path)
        }
        throw RunError.file(.posix(.copy, "the target to work on", path: url.path))
    }

    /// Copies the file at `path` into `descriptor` (from its start), all of it.
    private static func copy(_ path: String, into descriptor: Int32, naming named: String) throws {
        let source = open(path, O_RDONLY | O_CLOEXEC)
        guard source >= 0 else { throw RunError.file(.posix(.copy, "the target to work on", path: named)) }
        defer { close(source) }
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(source, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { throw RunError.file(.posix(.copy, "the target to work on", path: named)) }
            if count == 0 { return }
            guard ReportFile.writeAll(Data(buffer[..<count]), to: descriptor) else {
                throw RunError.file(.posix(.copy, "the target to work on", path: named))
            }
        }
    }

    /// Closes the work copy the run held open.
    func closeWorkCopy() {
        if workDescriptor >= 0 { close(workDescriptor) }
        workDescriptor = -1
    }

    /// Size and modification time of a file and its WAL, to see whether another program wrote it.
    static func fileState(of url: URL) -> [String] {
        ["", "-wal"].map { suffix in
            var info = stat()
            guard stat(url.path + suffix, &info) == 0 else { return "none" }
            return "\(info.st_size) \(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec)"
        }
    }

    /// Renames the finished copy over the target: one atomic step, of the file this run made. A
    /// target another program wrote since it was copied (a shared database) is not replaced: that
    /// would lose its writes — and for a SQLite target, the check, the sync and the rename happen
    /// under the target's own write lock, so no write can land between them.
    func move(_ work: URL, over target: URL) throws {
        defer { closeWorkCopy() }
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: work.path + suffix) }
        let replace = { [self] in
            if let copiedState, Self.fileState(of: target) != copiedState {
                throw RunError.targetChanged(path: target.path)
            }
            if workDescriptor >= 0 {
                guard fsync(workDescriptor) == 0 else {
                    throw RunError.file(.posix(.sync, "the finished store", path: target.path))
                }
                try checkWorkCopy(work, naming: target)
            } else {
                try Self.sync(work, "the finished store", naming: target)
            }
            guard rename(work.path, target.path) == 0 else {
                throw RunError.file(.posix(.rename, "the finished store", path: target.path))
            }
        }
        if copiedState != nil, config.store == .sqlite {
            do { try SQLiteStore.whileWriteLocked(at: target, replace) } catch let error as StoreError {
                throw RunError.store(error)
            }
        } else {
            try replace()
        }
        // The old file's WAL and shared memory are not the new file's (made without them).
        for suffix in ["-wal", "-shm"] { unlink(target.path + suffix) }
        // The target is replaced now: a folder that does not sync is said, not a failed run.
        do { try Self.sync(target.deletingLastPathComponent(), "the target's folder") } catch {
            notes.append("the target is replaced, but \(error); a crash now could bring back the old one")
        }
    }

    /// Fails unless the file at `work` is the one this run made (same device and inode as the
    /// descriptor it holds): one put at its name by another program is never renamed over the target.
    private func checkWorkCopy(_ work: URL, naming target: URL) throws {
        var held = stat(), named = stat()
        guard fstat(workDescriptor, &held) == 0, lstat(work.path, &named) == 0, held.st_dev == named.st_dev,
            held.st_ino == named.st_ino
        else {
            throw RunError.file(
                RunFileError(
                    .rename, "the finished store (its work copy was replaced)", path: target.path, errno: EEXIST))
        }
    }

    /// Has the kernel start writing the work copy's pages to the disk now, without waiting for it
    /// (Linux `sync_file_range`), so that the sync in `commit()` finds little left to write: called
    /// while the run still computes (indexes, validation). Nothing happens where the call is missing.
    func startWriteback() {
        guard workDescriptor >= 0, let startWriteback = Self.syncFileRange else { return }
        _ = startWriteback(workDescriptor, 0, 0, 2)  // SYNC_FILE_RANGE_WRITE: start, do not wait
    }

    /// glibc's `sync_file_range`, which Swift's Glibc module does not declare.
    private static let syncFileRange: (@convention(c) (Int32, Int64, Int64, UInt32) -> Int32)? = {
        guard let symbol = dlsym(nil, "sync_file_range") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (Int32, Int64, Int64, UInt32) -> Int32).self)
    }()

    /// Flushes a file (or a folder, for a rename in it) to the disk; errors name `named` (the target,
    /// for its work copy, which a failed run removes).
    static func sync(_ url: URL, _ role: String, naming named: URL? = nil) throws {
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
