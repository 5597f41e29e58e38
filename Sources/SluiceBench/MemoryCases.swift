import Drivers
import Foundation

// Memory of a run whose records or batches are huge, through the built `sluice` (peak_rss_mb is
// its own); inputs generated once into $TMPDIR/sluice-bench-hostile.
//
//   memory_huge_records_gz    30 XML records of 60 MiB text each (just under the 64 MiB record limit)
//                             out of a small .xml.gz: every record imported
//   memory_batch_size_1m      2,000,000 CSV rows with batch.size 1,000,000
//   memory_resume_waiting     a commit: batches run of 1,000,000 order lines before their 100,000
//                             orders, killed once every line waits (the checkpoint names them all),
//                             then resumed: the resumed run's memory and time

/// A pipeline over `rows-<rows>.csv` with batches of `size`.
func bigBatchPipeline(rows: Int, size: Int) throws -> String {
    let pipeline = try rowsPipeline(rows: rows, contexts: 2, target: "batch-\(size).sqlite")
    let text = try String(contentsOfFile: pipeline, encoding: .utf8)
    try text.replacingOccurrences(of: "batch: { size: 1000,", with: "batch: { size: \(size),")
        .write(toFile: pipeline, atomically: true, encoding: .utf8)
    return pipeline
}

/// The `commit: batches` pipeline of `waiting_children_1m`'s dump: lines first (each waits for its
/// order), then orders.
func waitingPipeline(dump: String, target: String) throws -> String {
    let model = try hostileInput("children.model.yaml") { handle in
        try write(
            """
            version: 1
            entities:
              Order:
                attributes: { id: integer64!, placed: string }
                relationships: { lines: { destination: Line, toMany: true, inverse: order } }
                unique: [[id]]
              Line:
                attributes: { id: integer64!, qty: integer64 }
                relationships: { order: { destination: Order, inverse: lines, optional: false } }
                unique: [[id]]

            """, to: handle)
    }
    let pipeline = hostileFolder.appendingPathComponent("waiting-batches.yaml")
    try """
    version: 1
    model: \(model)
    target: { store: sqlite, path: \(target), commit: batches }
    batch: { size: 5000, contexts: 2 }
    sources:
      - name: lines
        format: sqldump
        path: \(dump)
        table: lines
        entity: Line
        key: [id]
        fields: { id: id, qty: qty }
        relationships: { order: { entity: Order, key: { id: order_id }, missing: reject } }
      - { name: orders, format: sqldump, path: \(dump), table: orders, entity: Order, key: [id],
          fields: { id: id, placed: placed } }

    """.write(to: pipeline, atomically: true, encoding: .utf8)
    return pipeline.path
}

/// Starts `sluice run pipeline`, kills it once its checkpoint in `target` says the second source
/// started (every line then waits in the checkpoint), and waits for it.
func killOnceEveryLineWaits(_ pipeline: String, target: String) throws {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0]).standardizedFileURL
        .deletingLastPathComponent().appendingPathComponent("sluice")
    process.arguments = ["run", pipeline, "--quiet"]
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try process.run()
    while process.isRunning {
        usleep(20_000)
        guard FileManager.default.fileExists(atPath: target),
            let connection = try? SQLiteConnection(path: target, mode: .readOnly),
            let statement = try? connection.makeStatement(
                "SELECT value FROM _sluice_metadata WHERE key = 'user.sluice.checkpoint'"),
            (try? statement.step()) == true, let checkpoint = statement.string(0)
        else { continue }
        let parts = checkpoint.split(separator: " ")
        if parts.count > 2, parts[1] == "1" { break }
    }
    kill(process.processIdentifier, SIGKILL)
    process.waitUntilExit()
}

func runMemoryCase(_ name: String) throws -> Bool {
    switch name {
    case "memory_huge_records_gz":
        let xml = try hostileInput("huge-records-30.xml.gz") { handle in
            try gzipped(into: handle) { input in
                try write("<rows>", to: input)
                let chunk = Data(repeating: UInt8(ascii: "a"), count: 1 << 20)
                for id in 1...30 {
                    try write("<row><id>\(id)</id><t>", to: input)
                    for _ in 0..<60 { try input.write(contentsOf: chunk) }
                    try write("</t></row>", to: input)
                }
                try write("</rows>\n", to: input)
            }
        }
        let run = try runSluice(["import", xml, "--record", "/rows/row", "--to", output("huge.sqlite")])
        reportChild(name, records: 30, bytes: fileBytes(xml), run)
    case "memory_batch_size_1m":
        let run = try runSluice(["run", try bigBatchPipeline(rows: 2_000_000, size: 1_000_000)])
        reportChild(
            name, records: 2_000_000, bytes: fileBytes(hostileFolder.appendingPathComponent("rows-2000000.csv").path),
            run)
    case "memory_resume_waiting":
        let dump = try childrenFirstDump()
        let target = output("waiting-batches.sqlite")
        let pipeline = try waitingPipeline(dump: dump, target: target)
        try killOnceEveryLineWaits(pipeline, target: target)
        let run = try runSluice(["run", pipeline, "--resume"])
        reportChild(name, records: 1_100_000, bytes: fileBytes(dump), run)
    default:
        return false
    }
    return true
}
