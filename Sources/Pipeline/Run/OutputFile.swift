import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The files a run writes besides its target — the report, the rejects file, a saved pipeline —
/// kept off the files it reads and the target: an output is refused when it is an input, the
/// pipeline or model file, the target or one of the target's own files (WAL, lock, work copy), or
/// an existing file that is not what the option writes.
public enum OutputFile {
    /// What an option writes, to recognise a file it may replace.
    public enum Kind: Sendable {
        /// A JSON report: the file starts with `{`.
        case report
        /// JSON lines of rejected records: empty, or starts with `{`.
        case rejects
        /// A pipeline `sluice import` saved: starts with its comment line.
        case pipeline

        var option: String {
            switch self {
            case .report: return "--report"
            case .rejects: return "the rejects file"
            case .pipeline: return "--save-pipeline"
            }
        }
    }

    /// - Parameters:
    ///   - config: the run's pipeline (its inputs, pipeline and model files, target), when read.
    ///   - reads: further files the command reads (the pipeline file, the inputs of `sluice import`).
    ///   - target: the target, when `config` does not name it.
    /// - Throws: `UsageError` naming the clash.
    public static func check(
        _ path: String, _ kind: Kind, config: PipelineConfig?, reads: [String] = [], target: String? = nil
    ) throws {
        try requireFile(path, kind.option, folder: kind == .rejects)
        var protected: [(path: String, what: String)] = reads.map { ($0, "an input") }
        var target = target
        if let config {
            protected += config.sources.filter { $0.path != "-" }.map { ($0.path, "the input of source \($0.name)") }
            protected.append((config.file, "the pipeline file"))
            protected.append((config.modelPath, "the model file"))
            if config.store != .inMemory { target = target ?? config.targetPath }
        }
        if let target {
            for suffix in ["", "-wal", "-shm", "-journal", ".lock"] {
                protected.append((target + suffix, suffix.isEmpty ? "the target" : "a file of the target"))
            }
            // A run's work copy of the target (`<target>.sluice-tmp-<pid>`), whichever run's.
            let name = URL(fileURLWithPath: path).lastPathComponent, work = URL(fileURLWithPath: target)
            if name.hasPrefix(work.lastPathComponent + ".sluice-tmp"),
                identity(URL(fileURLWithPath: path).deletingLastPathComponent().path)
                    == identity(work.deletingLastPathComponent().path)
            {
                throw UsageError(
                    "\(kind.option) \(path) is a run's copy of the target: an output never replaces what the run "
                        + "reads or writes")
            }
        }
        let output = identity(path)
        for (file, what) in protected where identity(file) == output {
            throw UsageError(
                "\(kind.option) \(path) is \(what) (\(file)): an output never replaces what the run reads or writes")
        }
        if isLockFile(path) {
            throw UsageError(
                "\(kind.option) \(path) is the lock file of a store: an output never replaces what runs lock with")
        }
        guard let handle = FileHandle(forReadingAtPath: path) else { return }
        defer { try? handle.close() }
        let head = String(decoding: (try? handle.read(upToCount: 64)) ?? Data(), as: UTF8.self)
        let recognised: Bool
        switch kind {
        case .report: recognised = head.drop { $0.isWhitespace }.first == "{"
        case .rejects: recognised = head.isEmpty || head.first == "{"
        case .pipeline: recognised = head.hasPrefix(ImportPlan.pipelineHeader)
        }
        guard recognised else {
            throw UsageError("\(kind.option) \(path) exists and is not a file \(kind.option) wrote: it is not replaced")
        }
    }

    /// Whether `path` is a store's lock file: `<store>.lock` beside an existing store, or a file some
    /// process holds a lock on now.
    private static func isLockFile(_ path: String) -> Bool {
        if path.hasSuffix(".lock"), FileManager.default.fileExists(atPath: String(path.dropLast(5))) { return true }
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        if flock(descriptor, LOCK_SH | LOCK_NB) != 0 { return errno == EWOULDBLOCK }
        flock(descriptor, LOCK_UN)
        return false
    }

    /// Refuses a path a command would write unless it is a regular file or nothing yet (its links
    /// followed): writing would replace a device (`/dev/null`) with a file, block forever on a FIFO,
    /// copy a folder, or never end in a loop of links. A folder is taken where `folder` says it may
    /// be (a rejects folder).
    /// - Throws: `UsageError` (exit 2) naming the path and what it is.
    public static func requireFile(_ path: String, _ role: String, folder: Bool = false) throws {
        var info = stat()
        guard stat(path, &info) == 0 else {
            if errno == ELOOP { throw UsageError("\(role) \(path) is a loop of symbolic links: give a file") }
            if path.hasSuffix("/"), !folder { throw UsageError("\(role) \(path) names a folder: give a file") }
            return  // nothing there yet (or a folder missing: the write says so)
        }
        let kind: String
        switch info.st_mode & S_IFMT {
        case S_IFREG: return
        case S_IFDIR:
            if folder { return }
            kind = "a folder"
        case S_IFCHR, S_IFBLK: kind = "a device"
        case S_IFIFO: kind = "a FIFO"
        case S_IFSOCK: kind = "a socket"
        default: kind = "not a regular file"
        }
        throw UsageError(
            "\(role) \(path) is \(kind): Sluice writes regular files only (it would replace it, or wait on it "
                + "forever); give a file\(folder ? " or a folder" : "")")
    }

    /// What makes two paths one file: device and inode when it exists, else the path made absolute
    /// with its folder's links resolved.
    private static func identity(_ path: String) -> String {
        var info = stat()
        if stat(path, &info) == 0 { return "\(info.st_dev):\(info.st_ino)" }
        let url = URL(fileURLWithPath: path)
        return url.deletingLastPathComponent().resolvingSymlinksInPath().appendingPathComponent(url.lastPathComponent)
            .standardizedFileURL.path
    }
}
