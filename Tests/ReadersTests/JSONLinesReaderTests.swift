import Foundation
import Readers
import Testing

/// JSON Lines as `sluice export --format jsonl` writes it (issue 33, point 8; the start of issue
/// 36): one object of scalar members per line, values exactly as written, a bad line an error of
/// that record only, at its line and column.
@Suite struct JSONLinesReaderTests {
    static func read(_ text: String) -> (records: [[String?]], errors: [String]) { read(Array(text.utf8)) }

    /// The records read, and the errors (each recoverable: the next line is read on).
    static func read(_ bytes: [UInt8]) -> (records: [[String?]], errors: [String]) {
        let reader = try! JSONLinesReader(source: MemoryByteSource(bytes, name: "t.jsonl"))
        var records: [[String?]] = [], errors: [String] = []
        while true {
            do {
                guard let record = try reader.next() else { break }
                records.append(record.strings)
            } catch let error as ReaderError where error.isRecoverable {
                errors.append(error.description)
            } catch {
                Issue.record("not recoverable: \(error)")
                break
            }
        }
        return (records, errors)
    }

    @Test func valuesAreKeptAsWritten() {
        let text =
            "\u{FEFF}{\"id\":12345678901234567890123,\"price\":2684.00,\"ok\":true,\"note\":null,\"e\":-1.5e-7}\n"
            + "\n{\"note\":\"tab\\there \\\"q\\\" \\\\ \\/ \\u00e9 \\ud83d\\ude00 é\","
            + "\"id\":2,\"ok\":false,\"price\":0,\"e\":0}\r\n"
            + "{\"id\":3}"
        let (records, errors) = Self.read(text)
        #expect(errors.isEmpty, "\(errors)")
        #expect(
            records == [
                ["12345678901234567890123", "2684.00", "true", nil, "-1.5e-7"],
                ["2", "0", "false", "tab\there \"q\" \\ / é 😀 é", "0"],
                ["3", nil, nil, nil, nil],
            ])
    }

    @Test func aBadLineIsItsRecordsErrorAndTheNextLineIsRead() {
        let lines = [
            "{\"a\":1,\"b\":\"x\"}",
            "{\"a\":2,\"c\":3}",
            "{\"a\":3,\"a\":4}",
            "{\"a\":{\"n\":1}}",
            "{\"a\":01}",
            "{\"a\":\"\\ud800\"}",
            "{\"a\":\"\u{1}\"}",
            "{\"a\":1} x",
            "[1,2]",
            "{\"a\":\"unterminated}",
            "{\"a\":\"\\u12G4\"}",
            "{\"a\":5,\"b\":\"y\"}",
        ]
        var text = lines.joined(separator: "\n")
        text += "\n{\"a\":\""
        var bytes = Array(text.utf8)
        bytes += [0xC3, 0x28, UInt8(ascii: "\""), UInt8(ascii: "}")]
        let (records, errors) = Self.read(bytes)
        #expect(records == [["1", "x"], ["5", "y"]])
        #expect(
            errors == [
                "t.jsonl:2:1 (record 2): member \"c\" is not one of the first line's (a, b)",
                "t.jsonl:3:1 (record 3): member \"a\" is given twice",
                "t.jsonl:4:6 (record 4): member \"a\" holds a nested value, which JSON Lines inputs cannot hold yet",
                "t.jsonl:5:6 (record 5): a number has a leading zero",
                "t.jsonl:6:7 (record 6): a lone surrogate \\uD800",
                "t.jsonl:7:7 (record 7): a control character inside a string (write it as an escape)",
                "t.jsonl:8:9 (record 8): text after the object",
                "t.jsonl:9:1 (record 9): the line is not a JSON object (JSON Lines holds one object per line)",
                "t.jsonl:10:20 (record 10): a string does not end on its line",
                "t.jsonl:11:7 (record 11): \\u needs four hexadecimal digits",
                "t.jsonl:13:7 (record 13): invalid UTF-8",
            ])
    }

    @Test func aLineLongerThanTheLimitIsRefusedAndPassedOver() throws {
        let long = "{\"a\":\"" + String(repeating: "x", count: 300_000) + "\"}"
        let text = "{\"a\":\"short\"}\n" + long + "\n{\"a\":\"after\"}\n"
        let reader = try JSONLinesReader(
            source: MemoryByteSource(text, name: "t.jsonl"), limits: ReaderLimits(recordBytes: 100_000))
        #expect(try reader.next()?.strings == ["short"])
        #expect(throws: ReaderError.self) { try reader.next() }
        #expect(try reader.next()?.strings == ["after"])
        #expect((try reader.next()).map(\.strings) == nil)
    }
}
