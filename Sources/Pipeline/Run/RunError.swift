import Foundation
import ObjectGraph
import Readers

/// Why a run failed. With `commit: atomic` the target is as it was; with `commit: batches` the
/// batches saved so far stay in it (`tooManyRejects` says which).
///
/// Every case keeps the error it stands for, with its type and position: a reader's `ReaderError`
/// (file, line, column, record), the store's `StoreError` (and the `SQLiteError` under it), the
/// file operation and `errno` of the run's own files. `ExitStatus(for:)` chooses the exit status
/// from the case and those types, never from the text.
public enum RunError: Error, Sendable, CustomStringConvertible {
    /// More records were rejected than `errors.max` allows. `committed`: with `commit: batches`
    /// the batches saved so far stay in the target.
    /// `first`: the first rejected records, for the message.
    case tooManyRejects(count: Int, max: Int, rejects: String?, committed: Bool = false, first: [RecordReject] = [])
    /// The final stage found rules the imported graph breaks as a whole.
    case invalidGraph([GraphViolation])
    /// `mode: sync` would delete more stored objects than `sync.max_delete` allows (a cut export):
    /// nothing was committed.
    case tooManyDeletions(
        source: String, entity: String, count: Int, stored: Int, limit: PipelineConfig.DeleteLimit)
    /// A source without a key, under `mode: merge`, into a target that holds objects of its entity:
    /// its records would be added again beside them. Nothing was written.
    case keylessRepeat(source: String, entity: String, stored: Int)
    /// Another run holds the target's lock (the lock file's path).
    case locked(path: String)
    /// A source could not be read (or opened): the reader's error, with its position.
    case input(source: String, ReaderError)
    /// A source yielded a record its mapping has no place for (an XML record kind without a mapping).
    case unmappedRecord(source: String, kind: String)
    /// The target store failed: opening, reading, saving, building indexes.
    case store(StoreError)
    /// A batch could not be saved and no record of it could be blamed (the save's own error kept).
    case batchNotSaved(source: String, underlying: any Error & Sendable)
    /// A file of the run itself (the target's folder, work copy, lock, rejects file) could not be
    /// made, copied, written, synced or renamed.
    case file(RunFileError)
    /// The target changed while the run worked on a copy of it (another program wrote it):
    /// nothing was committed.
    case targetChanged(path: String)
    /// `commit: batches`: the target holds the checkpoint of an interrupted run that this run
    /// does not go on from.
    case interrupted(InterruptedRun)
    /// A signal (SIGINT, SIGTERM, SIGHUP) stopped the run: nothing was committed, or with
    /// `commit: batches` (`committed`) the batches saved so far stay, with their checkpoint.
    case stopped(signal: Int32, committed: Bool = false)

    /// The error this one stands for, when it wraps one.
    public var underlying: (any Error & Sendable)? {
        switch self {
        case .input(_, let error): return error
        case .store(let error): return error
        case .batchNotSaved(_, let error): return error
        case .file(let error): return error
        default: return nil
        }
    }

    public var description: String {
        switch self {
        case .tooManyRejects(let count, let max, let rejects, let committed, let first):
            let shown = first.isEmpty ? "" : (count == 1 ? ":" : first.count < count ? "; the first:" : ":")
            return "\(count) record\(count == 1 ? " was" : "s were") rejected, more than errors.max (\(max)); "
                + (committed
                    ? "the batches saved so far stay in the target (commit: batches)" : "the target is unchanged")
                + shown + first.map { "\n  \($0)" }.joined()
                + (rejects.map { "\n" + (count == 1 ? "It is in \($0)" : "All \(count) are in \($0)") } ?? "")
        case .invalidGraph(let violations):
            return
                "the imported graph breaks \(violations.count) rule\(violations.count == 1 ? "" : "s") of the model:\n"
                + violations.map { "  \($0)" }.joined(separator: "\n")
        case .tooManyDeletions(let source, let entity, let count, let stored, let limit):
            return "source \(source) (mode: sync) would delete \(count) of the \(stored) \(entity) objects stored "
                + "before the run (their keys are not in the input), more than sync.max_delete (\(limit)); the target "
                + "is unchanged. A cut or partial export? If the deletions are meant, raise sync.max_delete "
                + "(--max-delete of import)"
        case .keylessRepeat(let source, let entity, let stored):
            return
                "source \(source) has no key, and the target holds \(stored) \(entity) object\(stored == 1 ? "" : "s") "
                + "already: its records would be added again beside them. Give it a key (key:, or --key), or say "
                + "mode: append (--mode append) to add them anyway, or mode: replace to load them instead; the target "
                + "is unchanged"
        case .locked(let path): return "another run is writing the target (lock \(path) is held)"
        case .input(let source, let error): return "source \(source): \(error)"
        case .unmappedRecord(let source, let kind): return "source \(source): a record of kind \(kind) has no mapping"
        case .store(let error): return "\(error)"
        case .batchNotSaved(let source, let error): return "a batch of \(source) cannot be saved: \(error)"
        case .file(let error): return "\(error)"
        case .targetChanged(let path):
            return "the target \(path) changed while the run worked on a copy of it (another program wrote it); "
                + "nothing was committed — run again"
        case .interrupted(let run): return "\(run)"
        case .stopped(let signal, let committed):
            return "stopped by \(RunStop.name(of: signal)); "
                + (committed
                    ? "the batches saved so far stay in the target (commit: batches): --resume goes on from them"
                    : "the target is unchanged")
        }
    }
}

/// A file operation of a run that failed, with the file and the system's reason.
public struct RunFileError: Error, Sendable, CustomStringConvertible {
    public enum Operation: String, Sendable {
        case createFolder = "create the folder"
        case lock = "lock"
        case copy = "copy"
        case open = "open"
        case write = "write"
        case sync = "sync"
        case rename = "move into place"
    }

    public var operation: Operation
    public var path: String
    /// What the file is to the run (`the target`, `the rejects file`, …).
    public var role: String
    /// `errno` of the failed call, when the system said.
    public var errno: Int32?
    /// The error Foundation threw, when it did.
    public var underlying: (any Error & Sendable)?

    public init(
        _ operation: Operation, _ role: String, path: String, errno: Int32? = nil,
        underlying: (any Error & Sendable)? = nil
    ) {
        self.operation = operation
        self.role = role
        self.path = path
        self.errno = errno
        self.underlying = underlying
    }

    /// A failed POSIX call: its `errno` now.
    static func posix(_ operation: Operation, _ role: String, path: String) -> RunFileError {
        RunFileError(operation, role, path: path, errno: Foundation.errno)
    }

    /// Foundation's file error codes with the system's reason they stand for.
    private static let posixCodes: [Int: Int32] = [
        NSFileNoSuchFileError: ENOENT, NSFileReadNoSuchFileError: ENOENT, NSFileReadNoPermissionError: EACCES,
        NSFileWriteNoPermissionError: EACCES, NSFileWriteOutOfSpaceError: ENOSPC,
        NSFileWriteVolumeReadOnlyError: EROFS, NSFileWriteFileExistsError: EEXIST,
    ]

    public var description: String {
        var reason = ""
        if let errno { reason = ": " + String(cString: strerror(errno)) }
        if let underlying {
            // Foundation's file errors carry the system's reason under them: say that, not the dump.
            let error = underlying as NSError
            if let posix = error.userInfo[NSUnderlyingErrorKey] as? NSError, posix.domain == NSPOSIXErrorDomain {
                reason = ": " + String(cString: strerror(Int32(posix.code)))
            } else if error.domain == NSCocoaErrorDomain, let code = Self.posixCodes[error.code] {
                reason = ": " + String(cString: strerror(code))
            } else if error.domain == NSCocoaErrorDomain {
                reason = ": the system refused (Foundation's code \(error.code))"
            } else {
                reason = ": " + ((underlying as? LocalizedError)?.errorDescription ?? "\(underlying)")
            }
        }
        return "cannot \(operation.rawValue) \(role) \(path)\(reason)"
    }
}

/// A target holding the checkpoint of an interrupted `commit: batches` run, and why this run
/// does not go on from it.
public struct InterruptedRun: Sendable, CustomStringConvertible {
    public enum Reason: Sendable {
        /// The run was not asked to resume (`--resume`).
        case needsResume
        /// The checkpoint was left by another pipeline (or this one before it changed).
        case otherPipeline
        /// An input the interrupted run read is another file now (its size or content differs).
        case inputChanged(path: String)
    }

    public var target: String
    public var reason: Reason
    /// Where the interrupted run stopped: the source (from 1) and its batches done.
    public var source: Int
    public var batches: Int

    public init(target: String, reason: Reason, source: Int, batches: Int) {
        self.target = target
        self.reason = reason
        self.source = source
        self.batches = batches
    }

    public var description: String {
        switch reason {
        case .needsResume:
            return "the target \(target) holds the checkpoint of an interrupted run (source \(source), "
                + "\(batches) batches done); run again with --resume to go on from there, or with "
                + "--discard-checkpoint to start over"
        case .otherPipeline:
            return "the checkpoint in \(target) was left by another pipeline (or this one before it changed: file, "
                + "model, batch size or inputs); it cannot be resumed: run with --discard-checkpoint to start over "
                + "(the batches it committed stay)"
        case .inputChanged(let path):
            return "\(path) is not the file the interrupted run read (its size or content differs): resuming would "
                + "skip records of the new file; run with --discard-checkpoint to start over from its first record "
                + "(the batches committed before stay)"
        }
    }
}
