import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// What a killed run leaves in the temporary folder — a dry run's copy of the target
/// (`sluice-dry-run-<pid>-…`), an import's inferred pipeline and model (`sluice-import-<pid>…`) —
/// named after the process that made it, and removed when the next run starts
/// (`PipelineRunner.run`) once that process is gone; and a rejects file's lines not yet moved into
/// place (`<rejects>.sluice-tmp-<pid>`), removed by the next run writing rejects into that folder.
/// (A killed run's `<target>.sluice-tmp` is removed by the next run into that target.)
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

    /// Removes the files of `folder` named `name(beside:)` a path that `named` accepts, whose
    /// process is no longer running.
    static func removeStale(in folder: URL, named: (String) -> Bool) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder.path) else { return }
        for name in names {
            guard let range = name.range(of: ".sluice-tmp-", options: .backwards),
                named(String(name[..<range.lowerBound]))
            else { continue }
            removeIfGone(folder.appendingPathComponent(name), pid: name[range.upperBound...])
        }
    }

    /// Removes `url` when the process whose number `pid` starts with is gone.
    private static func removeIfGone(_ url: URL, pid text: Substring) {
        guard let pid = Int32(text.prefix { $0.isNumber }), pid > 0, pid != getpid() else { return }
        // Gone: no such process (a process of another user answers EPERM, and is left alone).
        if kill(pid, 0) != 0 && errno == ESRCH { try? FileManager.default.removeItem(at: url) }
    }
}
