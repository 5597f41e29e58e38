import Foundation

// A nightly re-run through the built `sluice` (peak_rss_mb is its own): 1,000,000 keyed rows loaded
// into a new store, then the same file again, or one with every tenth row changed, into the store
// the first load made. Each case prints the first load and the re-run, the re-run with its speed as
// a share of the first load's (`ratio_to_first_load`; the target is at least 0.8).
//
//   rerun_unchanged        the same file again: every row unchanged
//   rerun_10pct_updated    every tenth row's name changed: 10% updated, 90% unchanged

/// The rows of `rerun_10pct_updated`'s second night: every tenth row's name changed.
private func changedRows(_ rows: Int) throws -> String {
    try hostileInput("rows-\(rows)-10pct.csv") { handle in
        try write("id,name,amount\n", to: handle)
        var chunk = ""
        for row in 1...rows {
            chunk += "\(row),name \(row)\(row % 10 == 0 ? " (changed)" : ""),\(row % 1000).\(row % 100)\n"
            if chunk.utf8.count > 1 << 16 {
                try write(chunk, to: handle)
                chunk = ""
            }
        }
        try write(chunk, to: handle)
    }
}

func runRerunCase(_ name: String) throws -> Bool {
    guard name == "rerun_unchanged" || name == "rerun_10pct_updated" else { return false }
    let rows = 1_000_000
    let pipeline = try rowsPipeline(rows: rows, contexts: 2, target: "rerun.sqlite")
    let text = try String(contentsOfFile: pipeline, encoding: .utf8)
        .replacingOccurrences(of: "batch: { size: 1000,", with: "merge: object-trumps\nbatch: { size: 5000,")
    try text.write(toFile: pipeline, atomically: true, encoding: .utf8)
    let csv = hostileFolder.appendingPathComponent("rows-\(rows).csv").path
    let first = try runSluice(["run", pipeline, "--quiet"])
    reportChild("\(name)_first_load", records: rows, bytes: fileBytes(csv), first)
    var again = pipeline
    if name == "rerun_10pct_updated" {
        again = pipeline.replacingOccurrences(of: ".yaml", with: "-10pct.yaml")
        try text.replacingOccurrences(of: csv, with: try changedRows(rows))
            .write(toFile: again, atomically: true, encoding: .utf8)
    }
    let rerun = try runSluice(["run", again, "--quiet"])
    reportChild(
        name, records: rows, bytes: fileBytes(csv), rerun,
        extra: String(format: " ratio_to_first_load=%.2f", first.seconds / rerun.seconds))
    return true
}
