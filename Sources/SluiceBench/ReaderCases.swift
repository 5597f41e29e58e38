import Drivers
import Foundation
import Readers

// Reader cases of `make bench`: parse only, every record with every field unquoted/unescaped and
// checked as UTF-8, over the ../shared/bench `medium` data (`make bench` generates it when missing;
// SLUICE_BENCH_DATA points elsewhere). mb_per_s counts the uncompressed input, so plain and gzipped
// cases compare directly; `zcat_*` cases time `zcat` on the same files for the 1.3x check.
// BENCH_CHECKSUM=1 prints records and total field bytes per file (compare with Python's csv module).

let benchData: URL = {
    if let path = ProcessInfo.processInfo.environment["SLUICE_BENCH_DATA"] { return URL(fileURLWithPath: path) }
    return FileManager.default.temporaryDirectory.appendingPathComponent("sluice-bench/data/medium")
}()

let csvFiles = ["customers.csv", "products.csv", "orders.csv", "order_lines.csv"]

/// The kit's tables and their columns, as the JSON Lines form names its members.
let jsonlTables: [(table: String, columns: [String])] = [
    ("customers", ["id", "name", "email", "country", "signup_date", "balance"]),
    ("products", ["id", "sku", "name", "category", "price"]),
    ("orders", ["id", "customer_id", "product_id", "quantity", "price", "ordered_at", "note"]),
    ("order_lines", ["order_id", "line_no", "product_id", "quantity", "price"]),
]

func uncompressedBytes(_ names: [String]) throws -> Double {
    try names.reduce(0.0) { total, name in
        total
            + Double(
                (try FileManager.default.attributesOfItem(atPath: benchData.appendingPathComponent(name).path)[.size]
                    as? Int) ?? 0)
    }
}

/// Reads every record of `reader`, touching every field; returns the record count.
func drain(_ reader: inout some RecordReader) throws -> (records: Int, checksum: Int) {
    var records = 0, checksum = 0
    while let record = try reader.next() {
        records += 1
        for index in 0..<record.count { checksum &+= record.byteCount(index) }
    }
    return (records, checksum)
}

func runReaderCase(_ name: String) throws {
    switch name {
    case "read_csv", "read_csv_gz":
        let suffix = name.hasSuffix("_gz") ? ".gz" : ""
        var records = 0
        let seconds = try time {
            for file in csvFiles {
                var reader = try CSVReader(path: benchData.appendingPathComponent(file + suffix).path)
                let result = try drain(&reader)
                records += result.records
                if ProcessInfo.processInfo.environment["BENCH_CHECKSUM"] != nil {
                    print(file, result.records, result.checksum)
                }
            }
        }
        report(name, records: records, seconds: seconds, bytes: try uncompressedBytes(csvFiles))
    case "read_xml", "read_xml_gz":
        let file = "orders.xml" + (name.hasSuffix("_gz") ? ".gz" : "")
        var records = 0
        let seconds = try time {
            var reader = try XMLReader(path: benchData.appendingPathComponent(file).path, specs: orderDocumentSpecs)
            let result = try drain(&reader)
            records = result.records
            if ProcessInfo.processInfo.environment["BENCH_CHECKSUM"] != nil {
                print(file, result.records, result.checksum)
            }
        }
        report(name, records: records, seconds: seconds, bytes: try uncompressedBytes(["orders.xml"]))
    case "read_sqldump", "read_sqldump_gz":
        let file = "dump.sql" + (name.hasSuffix("_gz") ? ".gz" : "")
        var records = 0
        let seconds = try time {
            var reader = try SQLDumpReader(path: benchData.appendingPathComponent(file).path)
            let result = try drain(&reader)
            records = result.records
            if ProcessInfo.processInfo.environment["BENCH_CHECKSUM"] != nil {
                print(file, result.records, result.checksum)
            }
        }
        report(name, records: records, seconds: seconds, bytes: try uncompressedBytes(["dump.sql"]))
    case "read_jsonl", "split_jsonl_c": try runJSONLinesCase(name)
    case "zcat_sqldump_gz":
        let seconds = try time { try zcat(benchData.appendingPathComponent("dump.sql.gz").path) }
        report(name, records: 0, seconds: seconds, bytes: try uncompressedBytes(["dump.sql"]))
    case "parse_xml_only":
        // libxml2's SAX2 parse with handlers that do nothing: the floor for read_xml.
        let seconds = try time { try parseOnly(benchData.appendingPathComponent("orders.xml").path) }
        report(name, records: 0, seconds: seconds, bytes: try uncompressedBytes(["orders.xml"]))
    case "zcat_xml_gz":
        let seconds = try time { try zcat(benchData.appendingPathComponent("orders.xml.gz").path) }
        report(name, records: 0, seconds: seconds, bytes: try uncompressedBytes(["orders.xml"]))
    case "zcat_csv_gz":
        let seconds = try time {
            for file in csvFiles { try zcat(benchData.appendingPathComponent(file + ".gz").path) }
        }
        report(name, records: 0, seconds: seconds, bytes: try uncompressedBytes(csvFiles))
    default:
        FileHandle.standardError.write(Data("unknown case \(name)\n".utf8))
        exit(2)
    }
}

func zcat(_ path: String) throws {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/sh")
    process.arguments = ["-c", "zcat \"$0\" > /dev/null", path]
    try process.run()
    process.waitUntilExit()
    precondition(process.terminationStatus == 0, "zcat \(path) failed")
}

/// Every field of the kit's orders.xml: customers, products, orders with their lines as child records.
let orderDocumentSpecs = [
    RecordSpec(
        path: "/dataset/customers/customer",
        fields: [
            ("id", "@id"), ("country", "@country"), ("name", "name"), ("email", "email"),
            ("signup_date", "signup-date"), ("balance", "balance"),
        ]),
    RecordSpec(
        path: "/dataset/products/product",
        fields: [
            ("id", "@id"), ("sku", "@sku"), ("category", "@category"), ("name", "name"), ("price", "price"),
        ]),
    RecordSpec(
        path: "/dataset/orders/order",
        fields: [
            ("id", "@id"), ("customer_id", "@customer"), ("ordered_at", "@ordered-at"), ("note", "note"),
        ],
        children: [
            RecordSpec(
                path: "line", kind: "line",
                fields: [
                    ("line_no", "@no"), ("product_id", "@product"), ("quantity", "@quantity"), ("price", "@price"),
                ])
        ]),
]

final class NoHandler: XMLEventHandler {
    var events = 0
    override func startElement(
        localName: UnsafePointer<UInt8>, namespaceURI: UnsafePointer<UInt8>?,
        attributes: UnsafePointer<UnsafePointer<UInt8>?>?, attributeCount: Int
    ) { events += 1 }
    override func endElement() {}
    override func characters(_ text: UnsafeBufferPointer<UInt8>) {}
}

func parseOnly(_ path: String) throws {
    let handler = NoHandler()
    let parser = try XMLPushParser(handler: handler, fileName: path)
    let source = try Input.open(path)
    var chunk = [UInt8](repeating: 0, count: 1 << 16)
    while try parser.feedNextChunk(from: source, buffer: &chunk) {}
    precondition(handler.events > 0)
}

/// `read_jsonl`: the kit's four tables as JSON Lines (Pipelines/bench/gen-jsonl.py writes them), every
/// member a field; `split_jsonl_c`: the C floor, newline-split.c finding the lines of the same files
/// (`make bench` builds it).
func runJSONLinesCase(_ name: String) throws {
    let files = jsonlTables.map { "jsonl/\($0.table).jsonl" }
    if name == "read_jsonl" {
        var records = 0
        let seconds = try time {
            for (file, table) in zip(files, jsonlTables) {
                var reader = try JSONReader(
                    path: benchData.appendingPathComponent(file).path, lines: true,
                    spec: RecordSpec(path: "/", fields: table.columns.map { ($0, $0) }))
                let result = try drain(&reader)
                records += result.records
                if ProcessInfo.processInfo.environment["BENCH_CHECKSUM"] != nil {
                    print(file, result.records, result.checksum)
                }
            }
        }
        report(name, records: records, seconds: seconds, bytes: try uncompressedBytes(files))
        return
    }
    let program = ProcessInfo.processInfo.environment["SLUICE_NEWLINE_SPLIT"] ?? ".build/release/newline-split"
    var lines = 0
    let seconds = try time {
        let process = Process()
        let output = Pipe()
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = files.map { benchData.appendingPathComponent($0).path }
        process.standardOutput = output
        try process.run()
        let text = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        precondition(process.terminationStatus == 0, "\(program) failed")
        lines = Int(String(decoding: text, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
    }
    report(name, records: lines, seconds: seconds, bytes: try uncompressedBytes(files))
}
