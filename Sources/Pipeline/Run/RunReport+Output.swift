import Foundation

extension RunReport {
    /// What `sluice run` prints when a run is done: the target, time and memory, a line per entity
    /// (read, inserted, updated, unchanged, rejected, left out by `where`, deleted), the stages' times
    /// and where rejects went.
    /// - Parameter first: the first rejected records, listed for a dry run (which writes no file).
    public func summary(
        for config: PipelineConfig, dryRun: Bool, rejectsFile: String?, first: [RecordReject] = []
    ) -> String {
        let target = config.targetName
        let head =
            dryRun
            ? "Dry run against \(target) "
                + (config.store == .postgres
                    ? "(one transaction, rolled back; nothing was kept): done" : "(a copy; nothing was written): done")
            : "Imported into \(target)"
        var lines = [String(format: "%@ in %.2f s (peak memory %.0f MB).", head, seconds, peakRSSMegabytes)]
        for (entity, counts) in entities.sorted(by: { $0.key < $1.key }) {
            lines.append(
                "  \(entity): \(counts.read) read, \(counts.inserted) inserted, \(counts.updated) updated, "
                    + "\(counts.unchanged) unchanged, \(counts.rejected) rejected"
                    + (counts.filtered > 0 ? ", \(counts.filtered) left out by where" : "")
                    + (counts.deleted > 0 ? ", \(counts.deleted) deleted" : ""))
        }
        if !stages.isEmpty {
            lines.append(
                "  Time: " + stages.map { String(format: "%@ %.2f s", $0.name, $0.seconds) }.joined(separator: ", "))
        }
        if rejected > 0 {
            if dryRun {
                let which = rejected > first.count ? ", the first:" : ":"
                lines.append("  \(rejected) record\(rejected == 1 ? "" : "s") would be rejected\(which)")
                lines += first.map { "    \($0)" }
            } else {
                lines.append(
                    "  \(rejected) rejected record\(rejected == 1 ? "" : "s") in \(rejectsFile ?? "(no rejects file)")")
            }
        }
        return lines.joined(separator: "\n")
    }
}
