import Foundation
import ModelFiles
import ObjectGraph
import Readers

#if canImport(Glibc)
import Glibc
#endif

/// What `--report FILE` holds: how a run ended, whatever the end — done, rejected, refused, failed,
/// locked or stopped by a signal — with its counts so far, its times, and the error with its type and
/// position. Written atomically (`write(to:)`); `ReportFile.check(_:)` tests the path before the
/// target is touched.
public struct RunOutcome: Sendable, Codable {
    public enum Status: String, Sendable, Codable {
        /// The target holds the import (rejected records, if any, were within `errors.max`).
        case done
        /// More rejected records than `errors.max`, or an imported graph breaking the model.
        case rejected
        /// A guard refused the run: `mode: sync` would delete more than `sync.max_delete` (nothing
        /// of the run is written).
        case refused
        /// A usage, model, pipeline, input, store or I/O error.
        case failed
        /// Another run held the target's lock.
        case locked
        /// Stopped by SIGINT, SIGTERM or SIGHUP.
        case interrupted
    }

    /// An error as the report names it: its type (`RunError.tooManyRejects`, `ReaderError.raggedRow`,
    /// …), message and, when it has one, the position it points at.
    public struct ReportedError: Sendable, Codable, Equatable {
        public var type: String
        public var message: String
        public var file: String?
        public var line: Int?
        public var column: Int?
    }

    public struct Input: Sendable, Codable, Equatable {
        public var source: String
        public var path: String
        public var format: String
    }

    public struct Target: Sendable, Codable, Equatable {
        public var path: String?
        public var type: String
    }

    public var status: Status
    /// The status the command exits with (0 done, 1 rejected, 2 usage, 3 input/store/I/O, 4 locked,
    /// 128 + the signal's number when stopped).
    public var exitStatus: Int32
    public var error: ReportedError?
    public var version = SluiceVersion.current
    /// `run` or `import`.
    public var command: String
    /// The pipeline file (`sluice run`, or `sluice import --save-pipeline`).
    public var pipeline: String?
    public var dryRun: Bool
    public var inputs: [Input]
    /// `nil` when the run failed before its pipeline was read.
    public var target: Target?
    /// ISO 8601, UTC, with milliseconds.
    public var started: String
    public var ended: String
    public var seconds: Double
    /// Counts per entity, stages and rejects so far (all of them when the run is done).
    public var entities: [String: RunReport.Counts]
    public var rejected: Int
    public var stages: [RunReport.Stage]
    public var peakRSSMegabytes: Double
    /// The file the rejected records are in; `nil` when none was rejected or none written (a dry run).
    public var rejectsFile: String?

    /// The outcome of a run of `config` that started at `started` and ended now.
    /// - Parameters:
    ///   - config: the pipeline; `nil` when it could not be read (the error says why).
    ///   - report: the run's counts (when done: all of them; else those so far).
    ///   - error: why it failed; `nil` when it is done.
    public init(
        config: PipelineConfig?, command: String, pipeline: String?, dryRun: Bool, started: Date, report: RunReport,
        rejectsFile: String?, error: (any Error)?
    ) {
        let ended = Date()
        let exit = error.map(ExitStatus.code(for:)) ?? 0
        switch error {
        case nil: status = .done
        case RunError.stopped?: status = .interrupted
        case RunError.locked?: status = .locked
        case RunError.tooManyDeletions?: status = .refused
        case let error? where ExitStatus(for: error) == .dataErrors: status = .rejected
        default: status = .failed
        }
        exitStatus = exit
        self.error = error.map(Self.reported)
        self.command = command
        self.pipeline = pipeline
        self.dryRun = dryRun
        inputs = (config?.sources ?? []).map { Input(source: $0.name, path: $0.path, format: $0.format.rawValue) }
        target = config.map { config in
            Target(
                path: config.store == .inMemory ? nil : config.targetName,
                type: config.store == .inMemory ? "in-memory" : config.store.storeType)
        }
        self.started = Self.timestamp(started)
        self.ended = Self.timestamp(ended)
        seconds = ended.timeIntervalSince(started)
        entities = report.entities
        rejected = report.rejected
        stages = report.stages
        peakRSSMegabytes = PipelineRunner.peakRSSMegabytes()
        self.rejectsFile = report.rejected > 0 ? rejectsFile : nil
    }

    /// Every member, `null` for those without a value (a reader of the report finds each key).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(status, forKey: .status)
        try container.encode(exitStatus, forKey: .exitStatus)
        try container.encode(error, forKey: .error)
        try container.encode(version, forKey: .version)
        try container.encode(command, forKey: .command)
        try container.encode(pipeline, forKey: .pipeline)
        try container.encode(dryRun, forKey: .dryRun)
        try container.encode(inputs, forKey: .inputs)
        try container.encode(target, forKey: .target)
        try container.encode(started, forKey: .started)
        try container.encode(ended, forKey: .ended)
        try container.encode(seconds, forKey: .seconds)
        try container.encode(entities, forKey: .entities)
        try container.encode(rejected, forKey: .rejected)
        try container.encode(stages, forKey: .stages)
        try container.encode(peakRSSMegabytes, forKey: .peakRSSMegabytes)
        try container.encode(rejectsFile, forKey: .rejectsFile)
    }

    /// `2026-11-24T03:10:00.123Z`
    static func timestamp(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }

    /// The error's type (its case, for enums) and message, and the position it or the error under
    /// it points at.
    static func reported(_ error: any Error) -> ReportedError {
        var reported = ReportedError(type: typeName(error), message: "\(error)")
        var position: SourcePosition?
        var issue: ModelFileIssue?
        var current: (any Error)? = error
        while let error = current, position == nil, issue == nil {
            switch error {
            case let error as ReaderError: position = error.position
            case let error as PipelineFileError: issue = error.issues.first
            case let error as ModelFileError: issue = error.issues.first
            default: break
            }
            current = (error as? RunError)?.underlying
        }
        if let position {
            (reported.file, reported.line, reported.column) = (position.file, position.line, position.column)
        }
        if let issue { (reported.file, reported.line, reported.column) = (issue.file, issue.line, issue.column) }
        return reported
    }

    /// `ReaderError.raggedRow`, `StoreError.constraintViolation`, `RunError.tooManyRejects`: the
    /// error a run error wraps, when it wraps one, else the run error's case.
    private static func typeName(_ error: any Error) -> String {
        let type = String(describing: Swift.type(of: error))
        if let error = error as? RunError, let underlying = error.underlying { return typeName(underlying) }
        if let error = error as? ReaderError { return "\(type).\(error.kind.rawValue)" }
        if let error = error as? StoreError { return "\(type).\(error.code)" }
        let mirror = Mirror(reflecting: error)
        guard mirror.displayStyle == .enum else { return type }
        let name = mirror.children.first?.label ?? String(describing: error).prefix { $0 != "(" }.description
        return "\(type).\(name)"
    }

    /// Writes the outcome as JSON (pretty, keys sorted) to `path`: a file beside it renamed over it.
    /// - Throws: `RunFileError` when it cannot be written.
    public func write(to path: String) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let data: Data
        do { data = try encoder.encode(self) } catch {
            throw RunFileError(.write, "the report", path: path, underlying: error)
        }
        try ReportFile.write(data, to: path, role: "the report")
    }
}

/// An output file of a run written whole or not at all.
public enum ReportFile {
    /// Checks that `path` can be written (its folder exists and takes a new file; it is a regular file
    /// or nothing yet) — before a run touches its target.
    /// - Throws: `UsageError` for a device, FIFO, folder or link loop; `RunFileError` naming the file
    ///   and the system's reason.
    public static func check(_ path: String, role: String = "the report") throws {
        try OutputFile.requireFile(path, role)
        let probe = Leftovers.name(beside: path)
        let descriptor = createOwn(probe)
        guard descriptor >= 0 else { throw RunFileError.posix(.write, role, path: path) }
        close(descriptor)
        unlink(probe)
    }

    /// A new file of this process's own at `path` (`<name>.sluice-tmp-<pid>`), for writing:
    /// `O_CREAT | O_EXCL | O_NOFOLLOW`, so never another's file nor a link's destination (one a
    /// process gone before, that had this number, left at the name is removed first); `-1` with
    /// `errno` set when it cannot be made.
    static func createOwn(_ path: String, access: Int32 = O_WRONLY, mode: mode_t = 0o644) -> Int32 {
        let flags = access | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC
        let descriptor = open(path, flags, mode)
        guard descriptor < 0, errno == EEXIST else { return descriptor }
        unlink(path)
        return open(path, flags, mode)
    }

    /// Writes all of `data` to `descriptor` (again after a signal interrupts it); `false` with
    /// `errno` set when the system refuses.
    static func writeAll(_ data: Data, to descriptor: Int32) -> Bool {
        data.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let count = Glibc.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
                if count < 0 {
                    if errno == EINTR { continue }
                    return false
                }
                offset += count
            }
            return true
        }
    }

    /// Writes `data` to a file beside `path`, syncs it and renames it over `path`.
    /// - Throws: `RunFileError` naming the file and the system's reason.
    static func write(_ data: Data, to path: String, role: String) throws {
        let temporary = Leftovers.name(beside: path)
        let descriptor = createOwn(temporary)
        guard descriptor >= 0 else { throw RunFileError.posix(.write, role, path: path) }
        let written = writeAll(data, to: descriptor) && fsync(descriptor) == 0
        let failure = errno
        close(descriptor)
        guard written, rename(temporary, path) == 0 else {
            let reason = written ? errno : failure
            unlink(temporary)
            throw RunFileError(written ? .rename : .write, role, path: path, errno: reason)
        }
    }
}
