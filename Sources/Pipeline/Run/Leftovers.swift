import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// What a killed run leaves in the temporary folder — a dry run's copy of the target
/// (`sluice-dry-run-<pid>-…`), an import's inferred pipeline and model (`sluice-import-<pid>…`) —
/// named after the process that made it, and removed when the next run starts
/// (`PipelineRunner.run`) once that process is gone. A rejects file's lines not yet moved into place
/// (`<rejects>.sluice-tmp-<pid>`) are kept, by the next run writing rejects into that folder.
/// A killed run's copy of its target (`<target>.sluice-tmp-<pid>`, and its WAL) is removed by the
/// next run into that target, once that process is gone — never while it runs.
enum Leftovers {
    /// The prefix of a temporary file or folder of this process: `<kind>-<pid>-`.
    static func prefix(_ kind: String) -> String { "\(kind)-\(getpid())-" }

    /// Removes the temporary files and folders of `kinds` whose process is no longer running.
    static func removeStale(_ kinds: [String] = ["sluice-dry-run", "sluice-import"]) {
        let folder = FileManager.default.temporaryDirectory
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder.path) else { return }
        for name in names {
            guard let kind = kinds.first(where: { name.hasPrefix($0 + "-") }) else { continue }
            removeIfGone(folder.appendingPathComponent(name), pid: name.dropFirst(kind.count + 1))
        }
    }

    /// A file written beside `path` before it is moved over it (the rejects file):
    /// `<path>.sluice-tmp-<pid>`.
    static func name(beside path: String) -> String { "\(path).sluice-tmp-\(getpid())" }

    /// After `name(beside:)`: the rejects of an attempt that may be thrown away (`RejectsFile`).
    static let provisionalSuffix = ".provisional"

    /// Removes the work copies of `target` (`<target>.sluice-tmp-<pid>`, with its `-wal`, `-shm`,
    /// `-journal`) whose process is gone, and the one an earlier version named `<target>.sluice-tmp`
    /// (the caller holds the target's lock: no run of that version is writing it).
    static func removeStaleWorkCopies(of target: URL) {
        let folder = target.deletingLastPathComponent()
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder.path) else { return }
        let stem = target.lastPathComponent + ".sluice-tmp"
        for name in names where name.hasPrefix(stem) {
            let rest = name.dropFirst(stem.count)
            if rest.isEmpty || ["-wal", "-shm", "-journal"].contains(String(rest)) {
                unlink(folder.appendingPathComponent(name).path)
            } else if rest.hasPrefix("-") {
                removeIfGone(folder.appendingPathComponent(name), pid: rest.dropFirst())
            }
        }
    }

    /// Keeps what killed runs wrote of their rejects in `folder` (`<name>.sluice-tmp-<pid>`, and
    /// `….sorted` when the kill came while they were put in order): once that process is gone, the
    /// lines — whole ones only — are moved to `<name without .jsonl>.interrupted-<pid>.jsonl`, so the
    /// rejects of batches a killed `commit: batches` run committed are not lost. What an attempt
    /// killed before it was known to stand wrote (`….provisional`, `SampledImport`) is removed.
    static func keepStaleRejects(in folder: URL) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder.path) else { return }
        for name in names {
            guard let range = name.range(of: ".sluice-tmp-", options: .backwards) else { continue }
            let rest = name[range.upperBound...]
            guard let pid = Int32(rest.prefix { $0.isNumber }), pid > 0, pid != getpid(), isGone(pid) else { continue }
            let url = folder.appendingPathComponent(name)
            // An attempt that was to be checked, killed before it stood: its lines were never the run's.
            if rest.hasSuffix(provisionalSuffix), rest.dropLast(provisionalSuffix.count).allSatisfy(\.isNumber) {
                if isRejects(url) { try? FileManager.default.removeItem(at: url) }
                continue
            }
            // Rejects are JSON lines: a store's work copy (or its WAL) is another run's to remove.
            guard rest.allSatisfy({ $0.isNumber }) || rest.hasSuffix(".sorted"), isRejects(url) else { continue }
            if rest.hasSuffix(".sorted"), names.contains(String(name.dropLast(7))) {
                try? FileManager.default.removeItem(at: url)  // the unsorted lines are whole
                continue
            }
            let base = String(name[..<range.lowerBound])
            let stem = base.hasSuffix(".jsonl") ? String(base.dropLast(6)) : base
            if let data = FileManager.default.contents(atPath: url.path) {
                let whole = data.lastIndex(of: 10).map { $0 + 1 } ?? 0
                if whole < data.count { truncate(url.path, off_t(whole)) }
            }
            try? FileManager.default.moveItem(
                at: url, to: folder.appendingPathComponent("\(stem).interrupted-\(pid).jsonl"))
        }
    }

    /// Whether the file at `url` holds JSON lines (or nothing yet).
    private static func isRejects(_ url: URL) -> Bool {
        guard let handle = FileHandle(forReadingAtPath: url.path) else { return false }
        defer { try? handle.close() }
        let head = (try? handle.read(upToCount: 1)) ?? Data()
        return head.isEmpty || head.first == UInt8(ascii: "{")
    }

    /// Whether no process `pid` runs (a process of another user answers EPERM: it runs).
    private static func isGone(_ pid: Int32) -> Bool { kill(pid, 0) != 0 && errno == ESRCH }

    /// Removes `url` when the process whose number `pid` starts with is gone.
    private static func removeIfGone(_ url: URL, pid text: Substring) {
        guard let pid = Int32(text.prefix { $0.isNumber }), pid > 0, pid != getpid() else { return }
        if isGone(pid) { try? FileManager.default.removeItem(at: url) }
    }
}
