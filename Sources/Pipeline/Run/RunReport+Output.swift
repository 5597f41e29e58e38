import Foundation

extension RunReport {
    /// What `sluice run` prints when a run is done: the target, time and memory, a line per entity
    /// (read, inserted, updated, unchanged, rejected), the stages' times and where rejects went.
    public func summary(for config: PipelineConfig, dryRun: Bool) -> String {
        let target = dryRun || config.store == .inMemory ? "an in-memory store (dry run)" : (config.targetPath ?? "")
        var lines = [
            String(format: "Imported into %@ in %.2f s (peak memory %.0f MB).", target, seconds, peakRSSMegabytes)
        ]
        for (entity, counts) in entities.sorted(by: { $0.key < $1.key }) {
            lines.append(
                "  \(entity): \(counts.read) read, \(counts.inserted) inserted, \(counts.updated) updated, "
                    + "\(counts.unchanged) unchanged, \(counts.rejected) rejected")
        }
        if !stages.isEmpty {
            lines.append(
                "  Time: " + stages.map { String(format: "%@ %.2f s", $0.name, $0.seconds) }.joined(separator: ", "))
        }
        if rejected > 0 {
            let file = config.rejectsPath ?? "(no rejects file)"
            lines.append("  \(rejected) rejected record\(rejected == 1 ? "" : "s") in \(file)")
        }
        return lines.joined(separator: "\n")
    }

    /// Writes the report as JSON (pretty, keys sorted) to `path`.
    /// - Throws: `RunFileError` when the file cannot be written.
    public func writeJSON(to path: String) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        do { try encoder.encode(self).write(to: URL(fileURLWithPath: path)) } catch {
            throw RunFileError(.write, "the report", path: path, underlying: error)
        }
    }
}
