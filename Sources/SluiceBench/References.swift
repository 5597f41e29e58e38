import Foundation

// The references `make bench` measures in the same invocation as Sluice's cases, and the ratio each
// case is given to its reference: `ratio=` is the case's time for the same work over the
// reference's — per MB for readers, per record for loads — so below 1 is faster than the reference,
// and `ref=` names it. The kit's C programs are built by `make bench` (SLUICE_CSVLOAD points
// elsewhere); the kit's folder is SLUICE_BENCH_KIT (default ../shared/bench).
//
//   c_parse_csv         the kit's C parser (csvload --parse-only) over its four CSV files
//   c_load_csv          the kit's C floor (csvload: WAL, synchronous OFF, one transaction, the three
//                       indexes built after the load) loading the four CSV files into a new file
//   sqlite3_import_csv  `sqlite3 new.db '.import --csv orders.csv orders'`: what a new user compares
//   import_csv_oneoff   `sluice import orders.csv --to new.db`: inference and import, one command

/// What a case is compared with, and by what: MB/s (readers) or records/s (loads).
let references: [String: (reference: String, perRecord: Bool)] = [
    "read_csv": ("c_parse_csv", false), "read_csv_gz": ("zcat_csv_gz", false),
    "read_xml": ("parse_xml_only", false), "read_xml_gz": ("zcat_xml_gz", false),
    "read_sqldump": ("c_parse_csv", false), "read_sqldump_gz": ("zcat_sqldump_gz", false),
    "read_jsonl": ("split_jsonl_c", false),
    "insert_sqlite": ("c_load_csv", true), "insert_sqlite_2ctx": ("c_load_csv", true),
    "insert_sqlite_keyed": ("c_load_csv", true), "upsert_sqlite": ("c_load_csv", true),
    "upsert_sqlite_moved": ("c_load_csv", true), "rerun_unchanged": ("c_load_csv", true),
    "rerun_10pct_updated": ("c_load_csv", true),
    "import_csv_oneoff": ("sqlite3_import_csv", false),
]

/// The figures of one BENCH line.
struct BenchFigures {
    var name = "", recordsPerSecond = 0.0, megabytesPerSecond = 0.0

    /// Reads `BENCH case=… records_per_s=… mb_per_s=…`; `nil` for other lines.
    init?(line: String) {
        guard line.hasPrefix("BENCH case=") else { return nil }
        for pair in line.split(separator: " ").dropFirst() {
            let parts = pair.split(separator: "=", maxSplits: 1)
            guard parts.count == 2 else { continue }
            switch parts[0] {
            case "case": name = String(parts[1])
            case "records_per_s": recordsPerSecond = Double(parts[1]) ?? 0
            case "mb_per_s": megabytesPerSecond = Double(parts[1]) ?? 0
            default: break
            }
        }
    }

    /// ` ratio=… ref=…` to this case's reference among `measured`, or nothing.
    func ratio(among measured: [String: BenchFigures]) -> String {
        guard let (name, perRecord) = references[name], let reference = measured[name] else { return "" }
        let (mine, theirs) =
            perRecord
            ? (recordsPerSecond, reference.recordsPerSecond) : (megabytesPerSecond, reference.megabytesPerSecond)
        guard mine > 0, theirs > 0 else { return "" }
        return String(format: " ratio=%.2f ref=%@", theirs / mine, name)
    }
}

let benchKit = URL(
    fileURLWithPath: ProcessInfo.processInfo.environment["SLUICE_BENCH_KIT"] ?? "../shared/bench")
let kitTables = ["customers", "products", "orders", "order_lines"]

/// The kit's C loader, built by `make bench`.
func csvload() -> String {
    ProcessInfo.processInfo.environment["SLUICE_CSVLOAD"]
        ?? URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(
            "csvload"
        ).path
}

/// Runs `executable` with `arguments`, its standard error read; exit status, seconds, peak RSS (MB)
/// and standard error.
func runProgram(
    _ executable: String, _ arguments: [String]
) throws -> (
    status: Int32, seconds: Double, peakMB: Double, errors: String
) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    process.standardOutput = FileHandle.nullDevice
    let errors = Pipe()
    process.standardError = errors
    var text = Data()
    let seconds = try time {
        try process.run()
        text = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
    }
    var usage = rusage()
    getrusage(RUSAGE_CHILDREN.rawValue, &usage)  // this process runs one program per case
    return (process.terminationStatus, seconds, Double(usage.ru_maxrss) / 1024, String(decoding: text, as: UTF8.self))
}

/// A new folder for one case's target, removed by the caller.
func scratchFolder(_ name: String) throws -> URL {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("sluice-bench-\(name)-\(getpid())")
    try? FileManager.default.removeItem(at: folder)
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    return folder
}

/// The rows of `table` in the SQLite file at `path` (sqlite3's command line).
func rowCount(_ table: String, in path: String) throws -> Int {
    let process = Process()
    let output = Pipe()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["sqlite3", path, "SELECT count(*) FROM \(table)"]
    process.standardOutput = output
    try process.run()
    let text = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return Int(String(decoding: text, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
}

func runReferenceCase(_ name: String) throws -> Bool {
    let csvBytes = try uncompressedBytes(csvFiles)
    switch name {
    case "c_parse_csv", "c_load_csv":
        let folder = try scratchFolder(name)
        defer { try? FileManager.default.removeItem(at: folder) }
        let options =
            name == "c_parse_csv"
            ? ["--parse-only"]
            : [
                "--db", folder.appendingPathComponent("floor.db").path, "--journal", "WAL", "--sync", "OFF", "--post",
                benchKit.appendingPathComponent("sql/indexes.sql").path,
            ]
        let run = try runProgram(
            csvload(),
            options + ["--schema", benchKit.appendingPathComponent("sql/tables.sql").path, benchData.path] + kitTables)
        precondition(run.status == 0, "csvload failed: \(run.errors)")
        // csvload ends with `BENCH total rows=N seconds=S checksum=C` on standard error.
        let total = run.errors.split(separator: "\n").last { $0.hasPrefix("BENCH total") }
        let rows = total.flatMap { $0.split(separator: " ").first { $0.hasPrefix("rows=") } }.map { $0.dropFirst(5) }
        reportChild(
            name, records: rows.flatMap { Int($0) } ?? 0, bytes: csvBytes, (run.status, run.seconds, run.peakMB))
    case "sqlite3_import_csv", "import_csv_oneoff":
        let folder = try scratchFolder(name)
        defer { try? FileManager.default.removeItem(at: folder) }
        let orders = benchData.appendingPathComponent("orders.csv").path
        let target = folder.appendingPathComponent("oneoff.db").path
        let run =
            name == "sqlite3_import_csv"
            ? try runProgram("/usr/bin/env", ["sqlite3", target, ".import --csv \(orders) orders"])
            : try runProgram(sluiceBinary(), ["import", orders, "--to", target, "--quiet"])
        precondition(run.status == 0, "\(name) failed: \(run.errors)")
        reportChild(
            name, records: try rowCount("orders", in: target), bytes: try uncompressedBytes(["orders.csv"]),
            (run.status, run.seconds, run.peakMB))
    default:
        return false
    }
    return true
}

/// Reads every file of the benchmark data once, so that the first case to read one is not the only
/// one timed with a cold page cache (as the kit's harness does before its first round).
func warmPageCache() {
    let files = FileManager.default.enumerator(at: benchData, includingPropertiesForKeys: nil)?.allObjects ?? []
    var buffer = [UInt8](repeating: 0, count: 1 << 20)
    for case let file as URL in files {
        let descriptor = open(file.path, O_RDONLY)
        guard descriptor >= 0 else { continue }
        while read(descriptor, &buffer, buffer.count) > 0 {}
        close(descriptor)
    }
}
