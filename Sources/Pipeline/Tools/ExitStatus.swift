import ModelFiles
import ObjectGraph
import Readers

/// The exit statuses of `sluice`, which cron jobs read:
///
/// | status | meaning |
/// |---|---|
/// | 0 | done |
/// | 1 | data errors: more rejected records than allowed, or a graph that breaks the model's rules |
/// | 2 | usage, model or pipeline error (the message names file, line and column) |
/// | 3 | input, store or I/O error |
/// | 4 | another run holds the target's lock |
/// | 128 + n | stopped by signal n (130 SIGINT, 143 SIGTERM, 129 SIGHUP) |
///
/// `ExitStatus(for:)` is the one place that maps an error to a status: by its type and code,
/// never by its message.
public enum ExitStatus: Int32, Sendable {
    case success = 0
    case dataErrors = 1
    case usage = 2
    case failure = 3
    case locked = 4

    /// The status a command exits with when it fails with `error`.
    public init(for error: any Error) {
        switch error {
        case let error as RunError: self = Self.status(of: error)
        case let error as ReaderError: self = error.kind == .invalidOption ? .usage : .failure
        case let error as StoreError: self = Self.status(of: error)
        case is PipelineFileError, is ModelFileError, is StoreInspection.NoModel, is UsageError: self = .usage
        case is SeedFileError, is ValidationError, is MergeError: self = .dataErrors
        case is RunFileError: self = .failure
        default: self = .failure
        }
    }

    /// The number a command exits with when it fails with `error`: its status, or 128 + the signal's
    /// number for a run a signal stopped (`RunError.stopped`), as shells report a killed command.
    public static func code(for error: any Error) -> Int32 {
        if case RunError.stopped(let signal, _) = error { return 128 + signal }
        return ExitStatus(for: error).rawValue
    }

    private static func status(of error: RunError) -> ExitStatus {
        switch error {
        case .tooManyRejects, .invalidGraph, .tooManyDeletions: return .dataErrors
        case .locked: return .locked
        case .input(_, let reader): return ExitStatus(for: reader)
        case .store(let store): return status(of: store)
        case .interrupted(let run):
            if case .inputChanged = run.reason { return .failure }
            return .usage
        case .unmappedRecord, .keylessRepeat: return .usage
        case .batchNotSaved, .file, .targetChanged, .stopped: return .failure
        }
    }

    private static func status(of error: StoreError) -> ExitStatus {
        switch error.code {
        case .incompatibleModel, .invalidOption, .unknownStoreType: return .usage
        case .conflict, .constraintViolation: return .dataErrors
        case .objectNotFound, .noStoreForEntity, .io, .corrupt: return .failure
        }
    }
}

/// A command-line option or combination of options that cannot work, said in one sentence.
public struct UsageError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
