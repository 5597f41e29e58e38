import Testing

@testable import Readers

/// Readers put many records in one buffer and move a record that outgrows the room left: records
/// held at once (as a batch holds them) must keep their own bytes, whatever their sizes.
@Suite struct RecordStorageTests {
    /// Field sizes that cross the reader's 32 KB buffers in every way: tiny, medium, larger than a buffer.
    static func text(row: Int) -> String {
        switch row % 97 {
        case 13: String(repeating: "x", count: 40_000 + row)
        case 50: String(repeating: "é", count: 9_000)
        default: "r\(row)-" + String(repeating: "abc", count: row % 41)
        }
    }

    @Test func csvRecordsHeldTogetherKeepTheirFields() throws {
        let rows = 3_000
        var csv = "id,text,empty\n"
        for row in 0..<rows { csv += "\(row),\"\(Self.text(row: row))\",\n" }
        for chunk in [Int.max, 4_093] {
            let reader = try CSVReader(source: MemoryByteSource(Array(csv.utf8), name: "t.csv", chunkSize: chunk))
            var records: [Record] = []
            while let record = try reader.next() { records.append(record) }
            #expect(records.count == rows)
            for (row, record) in records.enumerated() {
                #expect(record.count == 3)
                #expect(record.string(0) == String(row))
                #expect(record.string(1) == Self.text(row: row))
                #expect(record.string(2) == "")
                #expect(record.position.line == row + 2)
            }
        }
    }

    @Test func csvRecordsDroppedAndHeldInTurnKeepTheirFields() throws {
        // Most records are dropped at once (their buffer starts over), every 10th is held.
        var csv = "id,text\n"
        for row in 0..<2_000 { csv += "\(row),\(Self.text(row: row))\n" }
        let reader = try CSVReader(source: MemoryByteSource(Array(csv.utf8), name: "t.csv"))
        var held: [(Int, Record)] = [], row = 0
        while let record = try reader.next() {
            #expect(record.string(1) == Self.text(row: row))
            if row % 10 == 0 { held.append((row, record)) }
            row += 1
        }
        for (row, record) in held { #expect(record.string(1) == Self.text(row: row)) }
    }

    @Test func xmlRecordsAndChildrenHeldTogetherKeepTheirFields() throws {
        var xml = "<orders>"
        for row in 0..<1_500 {
            xml += "<order id=\"\(row)\"><note>\(Self.text(row: row))</note>"
            for line in 0..<(row % 4) { xml += "<line no=\"\(line)\" sku=\"\(Self.text(row: row + line))\"/>" }
            xml += "</order>"
        }
        xml += "</orders>"
        let spec = RecordSpec(
            path: "/orders/order", fields: [("id", "@id"), ("note", "note")],
            children: [RecordSpec(path: "line", kind: "line", fields: [("no", "@no"), ("sku", "@sku")])])
        let reader = try XMLReader(source: MemoryByteSource(Array(xml.utf8), name: "t.xml"), specs: [spec])
        var records: [Record] = []
        while let record = try reader.next() { records.append(record) }
        var index = 0
        for row in 0..<1_500 {
            #expect(records[index].strings == [String(row), Self.text(row: row)])
            index += 1
            for line in 0..<(row % 4) {
                #expect(records[index].kind == "line")
                #expect(records[index].strings == [String(line), Self.text(row: row + line)])
                index += 1
            }
        }
        #expect(index == records.count)
    }

    @Test func dumpRowsHeldTogetherKeepTheirValues() throws {
        var sql = "CREATE TABLE t(id INTEGER, text TEXT, n TEXT);\n"
        for row in 0..<2_000 { sql += "INSERT INTO t VALUES(\(row),'\(Self.text(row: row))',NULL);\n" }
        let reader = try SQLDumpReader(source: MemoryByteSource(Array(sql.utf8), name: "t.sql"))
        var records: [Record] = []
        while let record = try reader.next() { records.append(record) }
        #expect(records.count == 2_000)
        for (row, record) in records.enumerated() {
            #expect(record.strings == [String(row), Self.text(row: row), nil])
        }
    }

    /// Records packed (`PackedRecords`) and read back equal the records: fields, nulls, blobs, places,
    /// numbers, parents and table rows — across chunk boundaries too (3 MB of records).
    @Test func aPackedRecordReadsBackEqual() throws {
        let reader = try CSVReader(
            source: MemoryByteSource(Array("a,b,c\n1,,\"x\ny\"\n2,héllo,\n".utf8), name: "t.csv"),
            dialect: {
                var d = CSVDialect()
                d.nullMarkers = [""]
                return d
            }())
        var records: [Record] = []
        while let record = try reader.next() { records.append(record) }
        #expect(records.count == 2)
        var child = Record(
            byteFields: [Array("ab".utf8), nil, [0xde, 0xad]], blobs: [2],
            context: Record.Context(file: "d.sql", kind: "t"), line: 7, column: 3, number: 9)
        child.parentRecord = 4
        child.ordinal = 2
        records.append(child)
        let large = Record(
            fields: [String(repeating: "z", count: 70_000), "-5"], context: records[0].context, line: 1_000_000,
            number: Int(Int32.max) + 5)
        var packed = PackedRecords()
        var offsets: [Int] = []
        for round in 0..<40 {
            for record in records + [large] {
                offsets.append(packed.end)
                packed.append(integer: -round)
                packed.append(record)
            }
        }
        #expect(packed.byteCount > 2 << 20)
        for (index, start) in offsets.enumerated() {
            var offset = start
            #expect(packed.integer(at: &offset) == -(index / 4))
            let copy = packed.record(at: &offset)
            let record = (records + [large])[index % 4]
            #expect(copy.strings == record.strings)
            #expect(copy.count == record.count && copy.number == record.number && copy.ordinal == record.ordinal)
            #expect(copy.parentRecord == record.parentRecord && copy.context === record.context)
            #expect((0..<record.count).map(copy.isNull) == (0..<record.count).map(record.isNull))
            #expect((0..<record.count).map(copy.isBlob) == (0..<record.count).map(record.isBlob))
            #expect(
                (0..<record.count).map(copy.position(ofField:)) == (0..<record.count).map(record.position(ofField:)))
        }
        #expect(records[0].strings == ["1", nil, "x\ny"])
    }
}
