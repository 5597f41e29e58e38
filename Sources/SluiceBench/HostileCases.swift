import Foundation

// Hostile and unlucky inputs through the built `sluice` (release, next to this executable), each
// generated once into $TMPDIR/sluice-bench-hostile; peak_rss_mb is the `sluice` process's own.
//
//   hostile_text_100mb        an XML record with a 100 MB text node: refused at the record size
//                             limit (64 MiB), exit 3
//   hostile_gzip_bomb         a 2 GiB text node out of a ~2 MB .xml.gz: `import`, exit 3
//   hostile_gzip_bomb_infer   the same through `infer --record`, exit 3
//   waiting_children_1m       a SQL dump of 1,000,000 lines before their 100,000 orders: every
//                             line waits for its order (kept packed), then all are linked
//   xml_depth_1m_infer        XML nested 1,000,000 deep: `infer` finds the repeated records
//   contexts_max              200,000 CSV rows with batch.contexts 64 (the most a pipeline may ask)
//   contexts_100000           the same asking for 100,000 contexts: refused (exit 2)
//   xml_target_200k           200,000 CSV rows run into an XML store (written once, at commit)

let hostileFolder = FileManager.default.temporaryDirectory.appendingPathComponent("sluice-bench-hostile")

/// The input `name` in the hostile folder, written by `make` the first time.
func hostileInput(_ name: String, _ make: (FileHandle) throws -> Void) throws -> String {
    try FileManager.default.createDirectory(at: hostileFolder, withIntermediateDirectories: true)
    let url = hostileFolder.appendingPathComponent(name)
    if !FileManager.default.fileExists(atPath: url.path) {
        let partial = url.path + ".partial"
        _ = FileManager.default.createFile(atPath: partial, contents: nil)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: partial))
        try make(handle)
        try handle.close()
        try FileManager.default.moveItem(atPath: partial, toPath: url.path)
    }
    return url.path
}

/// Writes `text` through gzip (`gzip -c`) into `handle`.
func gzipped(into handle: FileHandle, _ write: (FileHandle) throws -> Void) throws {
    let gzip = Process()
    gzip.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    gzip.arguments = ["gzip", "-c", "-9"]
    let input = Pipe()
    gzip.standardInput = input
    gzip.standardOutput = handle
    try gzip.run()
    try write(input.fileHandleForWriting)
    try input.fileHandleForWriting.close()
    gzip.waitUntilExit()
}

func write(_ text: String, to handle: FileHandle) throws { try handle.write(contentsOf: Data(text.utf8)) }

/// The built `sluice`, next to this executable.
func sluiceBinary() -> String {
    URL(fileURLWithPath: CommandLine.arguments[0]).standardizedFileURL.deletingLastPathComponent()
        .appendingPathComponent("sluice").path
}

/// Runs `sluice` with `arguments`; returns its exit status, seconds and peak RSS (MB).
func runSluice(_ arguments: [String]) throws -> (status: Int32, seconds: Double, peakMB: Double) {
    let run = try runProgram(sluiceBinary(), arguments)
    return (run.status, run.seconds, run.peakMB)
}

func reportChild(
    _ name: String, records: Int, bytes: Double, _ run: (status: Int32, seconds: Double, peakMB: Double),
    extra: String = ""
) {
    print(
        String(
            format:
                "BENCH case=%@ records=%d seconds=%.3f records_per_s=%.0f mb_per_s=%.1f peak_rss_mb=%.1f exit=%d",
            name, records, run.seconds, Double(records) / run.seconds, bytes / 1_048_576 / run.seconds, run.peakMB,
            run.status) + extra)
}

func fileBytes(_ path: String) -> Double {
    Double((try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0)
}

/// A fresh output path in the hostile folder (its earlier files removed).
func output(_ name: String) -> String {
    let path = hostileFolder.appendingPathComponent("out-\(name)").path
    for suffix in ["", "-wal", "-shm", ".lock"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    return path
}

/// A CSV of `rows` rows (id, name, amount) and a pipeline over it into a new store of type `store`
/// (its file `output(target)`) with `contexts`.
func rowsPipeline(rows: Int, contexts: Int, store: String = "sqlite", target: String) throws -> String {
    let csv = try hostileInput("rows-\(rows).csv") { handle in
        try write("id,name,amount\n", to: handle)
        var chunk = ""
        for row in 1...rows {
            chunk += "\(row),name \(row),\(row % 1000).\(row % 100)\n"
            if chunk.utf8.count > 1 << 16 {
                try write(chunk, to: handle)
                chunk = ""
            }
        }
        try write(chunk, to: handle)
    }
    let model = try hostileInput("rows.model.yaml") { handle in
        try write(
            "version: 1\nentities:\n  Row:\n    attributes: { id: integer64!, name: string, amount: decimal }\n"
                + "    unique: [[id]]\n", to: handle)
    }
    let pipeline = hostileFolder.appendingPathComponent("\(target).yaml")
    try """
    version: 1
    model: \(model)
    target: { store: \(store), path: \(output(target)) }
    batch: { size: 1000, contexts: \(contexts) }
    sources:
      - { name: rows, path: \(csv), entity: Row, key: [id], fields: { id: id, name: name, amount: amount } }

    """.write(to: pipeline, atomically: true, encoding: .utf8)
    return pipeline.path
}

/// A SQL dump of 1,000,000 order lines before their 100,000 orders.
func childrenFirstDump() throws -> String {
    try hostileInput("children-first.sql") { handle in
        try write(
            "BEGIN TRANSACTION;\nCREATE TABLE orders(id INTEGER PRIMARY KEY, placed TEXT);\n"
                + "CREATE TABLE lines(id INTEGER PRIMARY KEY, order_id INTEGER NOT NULL REFERENCES orders(id), "
                + "qty INTEGER);\n", to: handle)
        var chunk = ""
        for line in 0..<1_000_000 {
            chunk += "INSERT INTO lines VALUES(\(line + 1),\(line % 100_000 + 1),\(line % 7));\n"
            if chunk.utf8.count > 1 << 16 {
                try write(chunk, to: handle)
                chunk = ""
            }
        }
        for order in 1...100_000 { chunk += "INSERT INTO orders VALUES(\(order),'2024-01-01');\n" }
        try write(chunk + "COMMIT;\n", to: handle)
    }
}

func runHostileCase(_ name: String) throws -> Bool {
    switch name {
    case "hostile_text_100mb":
        let xml = try hostileInput("text-100mb.xml") { handle in
            try write("<rows><row><id>1</id><t>", to: handle)
            let chunk = Data(repeating: UInt8(ascii: "a"), count: 1 << 20)
            for _ in 0..<100 { try handle.write(contentsOf: chunk) }
            try write("</t></row><row><id>2</id><t>b</t></row></rows>\n", to: handle)
        }
        let run = try runSluice(["import", xml, "--record", "/rows/row", "--to", output("text.sqlite")])
        reportChild(name, records: 1, bytes: fileBytes(xml), run)
    case "hostile_gzip_bomb", "hostile_gzip_bomb_infer":
        let bomb = try hostileInput("bomb-2gib.xml.gz") { handle in
            try gzipped(into: handle) { input in
                try write("<rows><row><id>1</id><t>", to: input)
                let chunk = Data(repeating: UInt8(ascii: "a"), count: 1 << 20)
                for _ in 0..<2048 { try input.write(contentsOf: chunk) }
                try write("</t></row></rows>\n", to: input)
            }
        }
        let run =
            name.hasSuffix("infer")
            ? try runSluice(["infer", bomb, "--record", "/rows/row"])
            : try runSluice(["import", bomb, "--record", "/rows/row", "--to", output("bomb.sqlite")])
        reportChild(name, records: 1, bytes: fileBytes(bomb), run)
    case "waiting_children_1m":
        let dump = try childrenFirstDump()
        let run = try runSluice(["import", dump, "--to", output("children.sqlite")])
        reportChild(name, records: 1_100_000, bytes: fileBytes(dump), run)
    case "xml_depth_1m_infer":
        let xml = try hostileInput("depth-1m.xml") { handle in
            try write("<r><a><b>1</b></a><a><b>2</b></a>", to: handle)
            try write(String(repeating: "<a>", count: 1_000_000) + "x", to: handle)
            try write(String(repeating: "</a>", count: 1_000_000) + "</r>\n", to: handle)
        }
        let run = try runSluice(["infer", xml, "--record", "/r/a"])
        reportChild(name, records: 1_000_002, bytes: fileBytes(xml), run)
    case "contexts_max", "contexts_100000":
        let contexts = name == "contexts_max" ? 64 : 100_000
        let run = try runSluice(["run", try rowsPipeline(rows: 200_000, contexts: contexts, target: name + ".sqlite")])
        reportChild(
            name, records: 200_000, bytes: fileBytes(hostileFolder.appendingPathComponent("rows-200000.csv").path), run)
    case "xml_target_200k":
        let pipeline = try rowsPipeline(rows: 200_000, contexts: 2, store: "xml", target: "rows.xml")
        let run = try runSluice(["run", pipeline])
        reportChild(
            name, records: 200_000, bytes: fileBytes(hostileFolder.appendingPathComponent("rows-200000.csv").path), run)
    default:
        return false
    }
    return true
}
