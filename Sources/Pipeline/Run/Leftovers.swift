import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// What a killed run leaves in the temporary folder — a dry run's copy of the target
/// (`sluice-dry-run-<pid>-…`), an import's inferred pipeline and model (`sluice-import-<pid>…`) —
/// named after the process that made it, and removed when the next run starts
/// (`PipelineRunner.run`) once that process is gone.
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
            let rest = name.dropFirst(kind.count + 1)
            guard let pid = Int32(rest.prefix { $0.isNumber }), pid > 0, pid != getpid() else { continue }
            // Gone: no such process (a process of another user answers EPERM, and is left alone).
            if kill(pid, 0) != 0 && errno == ESRCH {
                try? FileManager.default.removeItem(at: folder.appendingPathComponent(name))
            }
        }
    }
}
