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
