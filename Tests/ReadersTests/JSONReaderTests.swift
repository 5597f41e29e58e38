import Foundation
import Readers
import Testing

/// Issue 36: JSON documents and JSON Lines read as records — values exactly as written, nested
/// records as children, every fault at its line and column, hostile input refused in linear time.
@Suite struct JSONReaderTests {
    struct Read {
        var records: [[String?]] = []
        /// Each record's kind and parent record number, as `kind<parent`.
        var shapes: [String] = []
        var errors: [String] = []
        var fatal: String?
    }

    /// What a reader reads from `bytes`, the same whether they come whole or a few at a time.
    static func read(
        _ bytes: [UInt8], lines: Bool, spec: RecordSpec, limits: ReaderLimits = .standard, lastWins: Bool = false
    ) -> Read {
        let whole = read(bytes, lines: lines, spec: spec, limits: limits, lastWins: lastWins, chunk: .max)
        let pieces = read(bytes, lines: lines, spec: spec, limits: limits, lastWins: lastWins, chunk: 7)
        #expect(whole.records == pieces.records && whole.errors == pieces.errors && whole.fatal == pieces.fatal)
        return whole
    }

    static func read(
        _ bytes: [UInt8], lines: Bool, spec: RecordSpec, limits: ReaderLimits, lastWins: Bool, chunk: Int
    ) -> Read {
        var read = Read()
        let reader: JSONReader
        do {
            reader = try JSONReader(
                source: MemoryByteSource(bytes, name: "t.json", chunkSize: chunk), lines: lines, spec: spec,
                limits: limits, lastWins: lastWins)
        } catch {
            read.fatal = "\(error)"
            return read
        }
        while true {
            do {
                guard let record = try reader.next() else { break }
                read.records.append(record.strings)
                read.shapes.append("\(record.kind ?? "-")<\(record.parentRecord.map(String.init) ?? "")")
            } catch let error as ReaderError where error.isRecoverable {
                read.errors.append(error.description)
            } catch {
                read.fatal = "\(error)"
                break
            }
        }
        return read
    }

    static func read(
        _ text: String, lines: Bool = false, spec: RecordSpec, limits: ReaderLimits = .standard, lastWins: Bool = false
    ) -> Read {
        read(Array(text.utf8), lines: lines, spec: spec, limits: limits, lastWins: lastWins)
    }

    static func flat(_ names: String..., path: String = "/") -> RecordSpec {
        RecordSpec(path: path, fields: names.map { ($0, $0) })
    }

    @Test func jsonLinesValuesAreKeptAsWritten() {
        let text =
            "\u{FEFF}{\"id\":12345678901234567890123,\"price\":2684.00,\"ok\":true,\"note\":null,\"e\":-1.5e-7}\n"
            + "\n{\"note\":\"tab\\there \\\"q\\\" \\\\ \\/ \\u00e9 \\ud83d\\ude00 é\","
            + "\"id\":2,\"ok\":false,\"price\":0,\"e\":0,\"unmapped\":[1]}\r\n"
            + "{\"id\":3}"
        let read = Self.read(text, lines: true, spec: Self.flat("id", "price", "ok", "note", "e"))
        #expect(read.errors.isEmpty && read.fatal == nil, "\(read)")
        #expect(
            read.records == [
                ["12345678901234567890123", "2684.00", "true", nil, "-1.5e-7"],
                ["2", "0", "false", "tab\there \"q\" \\ / é 😀 é", "0"],
                ["3", nil, nil, nil, nil],
            ])
    }

    @Test func aBadLineIsItsRecordsErrorAndTheNextLineIsRead() {
        let lines = [
            "{\"a\":1,\"b\":\"x\"}",
            "{\"a\":3,\"a\":4}",
            "{\"a\":01}",
            "{\"a\":\"\\ud800\"}",
            "{\"a\":\"\u{1}\"}",
            "{\"a\":1} x",
            "{\"a\":\"unterminated}",
            "{\"a\":\"\\u12G4\"}",
            "{\"a\":",
            "{\"a\":tru}",
            "{\"a\":1,}",
            "{\"a\":5,\"b\":\"y\"}",
        ]
        var bytes = Array((lines.joined(separator: "\n") + "\n{\"a\":\"").utf8)
        bytes += [0xC3, 0x28, UInt8(ascii: "\""), UInt8(ascii: "}"), 10, 0, 10]
        let read = Self.read(bytes, lines: true, spec: Self.flat("a", "b"))
        #expect(read.records == [["1", "x"], ["5", "y"]])
        #expect(
            read.errors == [
                "t.json:2:12 (record 2): the member \"a\" is given twice in one object",
                "t.json:3:6 (record 3): a number has a leading zero",
                "t.json:4:7 (record 4): a lone surrogate \\uD800",
                "t.json:5:7 (record 5): a control character inside a string (write it as an escape)",
                "t.json:6:9 (record 6): text after the line's value (JSON Lines holds one value a line)",
                "t.json:7:20 (record 7): the line ends inside a string",
                "t.json:8:7 (record 8): \\u needs four hexadecimal digits",
                "t.json:9:6 (record 9): the line ends inside a value (expected a value); JSON Lines holds one value "
                    + "a line",
                "t.json:10:9 (record 10): expected true (an unquoted word other than true, false or null is no "
                    + "JSON value)",
                "t.json:11:8 (record 11): '}' where a member name should be",
                "t.json:13:7 (record 13): invalid UTF-8",
                "t.json:14:1 (record 14): the byte 0x0 where a value should be",
            ], "\(read.errors)")
        #expect(read.fatal == nil)
    }

    /// A JSON Lines file in UTF-16: its first line is refused (once: the reader goes on past it),
    /// and the next line is read.
    @Test func aUTF16MarkRefusesTheFirstLineOnce() {
        let read = Self.read([0xFF, 0xFE] + Array("{\"a\": 1}\n{\"a\": 2}\n".utf8), lines: true, spec: Self.flat("a"))
        #expect(read.records == [["2"]])
        #expect(read.errors.count == 1 && read.errors[0].contains("UTF-16 byte order mark"), "\(read.errors)")
        #expect(Self.read([0xFE, 0xFF], lines: true, spec: Self.flat("a")).errors.count == 1)
    }

    @Test func aLineLongerThanTheLimitIsRefusedAndPassedOver() throws {
        let long = "{\"a\":\"" + String(repeating: "x", count: 300_000) + "\"}"
        let text = "{\"a\":\"short\"}\n" + long + "\n{\"a\":\"after\"}\n"
        let reader = try JSONReader(
            source: MemoryByteSource(text, name: "t.jsonl"), lines: true, spec: Self.flat("a"),
            limits: ReaderLimits(recordBytes: 100_000))
        #expect(try reader.next()?.strings == ["short"])
        #expect(throws: ReaderError.self) { try reader.next() }
        #expect(try reader.next()?.strings == ["after"])
        #expect((try reader.next()).map(\.strings) == nil)
    }

    /// Records at a path (arrays on the way looked through), fields by path, children and
    /// grandchildren numbered after their parent, arrays of scalars as children of one value.
    @Test func nestedDataBecomesFieldsAndChildren() {
        let text = """
            {"meta": {"n": 2}, "pages": [
              {"orders": [
                {"id": 1, "customer": {"name": "Ann", "address": {"city": "Oslo"}}, "first": [7, 8],
                 "a.b": "dotted", "lines": [{"sku": "A", "notes": [{"t": "x"}, {"t": "y"}]}, {"sku": "B"}],
                 "tags": ["new", 2, true, null]}
              ]},
              {"orders": {"id": 2, "customer": null, "lines": {"sku": "C"}, "tags": null,
                          "raw": {"k": [1, {"z": "\\n"}]}}}
            ]}
            """
        let spec = RecordSpec(
            path: "/pages/orders",
            fields: [
                ("id", "id"), ("city", "customer.address.city"), ("name", "customer.name"), ("second", "first[1]"),
                ("dotted", "a\\.b"), ("raw", "raw"), ("missing", "nope.deeper"),
            ],
            children: [
                RecordSpec(
                    path: "lines", kind: "lines", fields: [("sku", "sku")],
                    children: [RecordSpec(path: "notes", kind: "notes", fields: [("t", "t")])]),
                RecordSpec(path: "tags", kind: "tags", fields: [("value", ".")]),
            ])
        let read = Self.read(text, spec: spec)
        #expect(read.errors.isEmpty && read.fatal == nil, "\(read)")
        #expect(
            read.records == [
                ["1", "Oslo", "Ann", "8", "dotted", nil, nil], ["A"], ["x"], ["y"], ["B"], ["new"], ["2"], ["true"],
                [nil],
                ["2", nil, nil, nil, nil, "{\"k\":[1,{\"z\":\"\\n\"}]}", nil], ["C"],
            ])
        #expect(
            read.shapes == [
                "-<", "lines<1", "notes<2", "notes<2", "lines<1", "tags<1", "tags<1", "tags<1", "tags<1", "-<",
                "lines<10",
            ])
    }

    @Test func aNullTheInputStatesIsToldApartFromALeftOutMember() throws {
        let reader = try JSONReader(
            source: MemoryByteSource("[{\"a\": null}]", name: "t.json"), lines: false, spec: Self.flat("a", "b"))
        let record = try #require(try reader.next())
        #expect(record.isNull(0) && record.isStatedNull(0))
        #expect(record.isNull(1) && !record.isStatedNull(1))
    }

    @Test func aRepeatedMemberRejectsItsRecordUnlessTheLastWins() {
        let text = "[{\"a\": 1, \"b\": 2, \"a\": 3}, {\"a\": 4, \"b\": {\"c\": 1, \"c\": 2}}, {\"a\": 5}]"
        let rejecting = Self.read(text, spec: Self.flat("a"))
        #expect(rejecting.records == [["5"]])
        #expect(
            rejecting.errors == [
                "t.json:1:24 (record 1): the member \"a\" is given twice in one object",
                "t.json:1:56 (record 2): the member \"c\" is given twice in one object",
            ])
        #expect(
            Self.read(text, spec: Self.flat("a", "b"), lastWins: true).records == [
                ["3", "2"], ["4", "{\"c\":2}"], ["5", nil],
            ])
        // Many members: the check is by hash, not every pair.
        let many = "[{" + (0..<5000).map { "\"m\($0)\": \($0)" }.joined(separator: ", ") + ", \"m17\": 0}]"
        #expect(Self.read(many, spec: Self.flat("m1")).errors.count == 1)
    }

    @Test func aFaultyValueRejectsItsRecordAndTheDocumentReadsOn() {
        var bytes = Array("[{\"a\": \"ok\"},\n {\"a\": \"bad ".utf8)
        bytes += [0xFF, 0xFE]
        bytes += Array("\"},\n {\"a\": \"\\udc00\"}, {\"a\": 1e99999}, {\"a\": \"fine\"}]".utf8)
        let read = Self.read(bytes, lines: false, spec: Self.flat("a"))
        #expect(read.records == [["ok"], ["1e99999"], ["fine"]])
        #expect(
            read.errors == [
                "t.json:2:13 (record 2): invalid UTF-8", "t.json:3:9 (record 3): a lone surrogate \\uDC00",
            ])
        #expect(read.fatal == nil)
    }

    /// A high surrogate followed by another escape (not `\u`): a lone surrogate, and the escape after
    /// it read on — whatever the chunks the input comes in (a fuzzer found a read before the buffer
    /// when the backslash ended one).
    @Test func aHighSurrogateBeforeAnotherEscapeIsALoneSurrogate() {
        let text = #"[{"a": "x\ud83d\n\ud83d\e"}, {"a": "\ud83d\""}, {"a": "ok"}]"#
        for chunk in [1, 2, 3, .max] {
            let read = Self.read(
                Array(text.utf8), lines: false, spec: Self.flat("a"), limits: .standard, lastWins: false, chunk: chunk)
            #expect(read.records == [["ok"]], "chunk \(chunk): \(read)")
            #expect(
                read.errors == [
                    "t.json:1:10 (record 1): a lone surrogate \\uD83D",
                    "t.json:1:37 (record 2): a lone surrogate \\uD83D",
                ], "chunk \(chunk): \(read)")
        }
    }

    /// Malformed JSON ends a document, with where.
    @Test func malformedDocumentsAreRefusedWithTheirPosition() {
        let cases: [(String, String)] = [
            ("[{\"a\": 1}, {\"a\": 2", "t.json:1:19 (record 2): the input ends inside a value (expected , or })"),
            (
                "[{\"a\": 1}] [",
                "t.json:1:12 (record 2): '[' where the end of the input (the document's value ended) should be"
            ),
            (
                "[{\"a\": 1}]\n\u{0}",
                "t.json:2:1 (record 2): the byte 0x0 where the end of the input (the document's value ended) should be"
            ),
            ("", "t.json:1:1 (record 1): the input holds no JSON value"),
            ("  \n ", "t.json:2:2 (record 1): the input holds no JSON value"),
            ("[{\"a\": 1},]", "t.json:1:11 (record 2): ']' where a value should be"),
            ("[{'a': 1}]", "t.json:1:3 (record 1): ''' where a member name should be"),
            (
                "{\"other\": []}",
                "nothing in t.json is at the record path /data (no member of that name where the path goes)"
            ),
        ]
        for (text, error) in cases {
            let path = text.hasPrefix("{") ? "/data" : "/"
            let read = Self.read(text, spec: Self.flat("a", path: path))
            #expect(read.fatal == error, "\(text.debugDescription): \(read)")
        }
        #expect(Self.read("\u{FEFF} [] ", spec: Self.flat("a")).records.isEmpty)
        #expect(Self.read("\u{FEFF} [] ", spec: Self.flat("a")).fatal == nil)
    }

    /// A million levels of nesting: refused at the depth limit, or with the limit raised read
    /// through without recursion (the time is the file's length).
    @Test func deepNestingIsLinear() {
        let depth = 1_000_000
        let text = "[" + String(repeating: "[", count: depth) + String(repeating: "]", count: depth) + "]"
        let refused = Self.read(text, spec: Self.flat("a"))
        #expect(refused.fatal == "t.json:1:1001 (record 1): the value nests deeper than 1000 levels (the depth limit)")
        let inRecord = Self.read("[{\"a\": " + String(repeating: "[", count: depth) + "}]", spec: Self.flat("a"))
        #expect(inRecord.fatal == "t.json:1:1007 (record 1): the value nests deeper than 1000 levels (the depth limit)")
        let raised = ReaderLimits(recordBytes: 1 << 30, depth: depth + 10)
        let wrapped = "[{\"a\": " + String(repeating: "[", count: depth) + String(repeating: "]", count: depth) + "}]"
        let read = Self.read(wrapped, spec: Self.flat("a"), limits: raised)
        #expect(read.fatal == nil && read.records.count == 1)
        #expect(read.records.first?.first??.utf8.count == 2 * depth)
    }

    @Test func hugeNumbersAndStringsAreKeptOrRefusedByTheLimits() {
        let digits = String(repeating: "9", count: 100_000)
        let big = String(repeating: "é", count: 3_000_000)
        let text = "[{\"a\": \(digits)}, {\"a\": -\(digits.prefix(4000)).5e-3}, {\"a\": \"\(big)\"}]"
        let read = Self.read(text, spec: Self.flat("a"))
        #expect(read.records == [["-" + digits.prefix(4000) + ".5e-3"], [big]])
        #expect(
            read.errors == [
                "t.json:1:8 (record 1): a number of 100000 characters, more than the number limit (4096)"
            ])
        let raised = Self.read(text, spec: Self.flat("a"), limits: ReaderLimits(numberCharacters: 200_000))
        #expect(raised.records.first == [digits])
        let small = Self.read(text, spec: Self.flat("a"), limits: ReaderLimits(recordBytes: 1 << 20))
        #expect(small.fatal?.contains("larger than the record size limit, 1 MiB") == true, "\(small)")
    }

    @Test func recordsArePlainOrGzippedAndSpecsAreDiscovered() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sluice-json-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let text = """
            {"data": {"items": [
              {"id": 1, "who": {"name": "a"}, "lines": [{"n": 1}], "tags": ["x"], "mixed": 1, "odd": [[1]]},
              {"id": 2, "who": {"name": "b", "age": 4}, "lines": [], "tags": [], "mixed": {"y": 1}, "odd": []}
            ]}}
            """
        let plain = directory.appendingPathComponent("items.json").path
        try Data(text.utf8).write(to: URL(fileURLWithPath: plain))
        let spec = try JSONReader.discoverSpec(path: plain, lines: false, recordPath: "/data/items")
        #expect(spec.fields.map(\.path) == ["id", "who.name", "mixed", "odd", "who.age"])
        #expect(spec.fields.map(\.name) == ["id", "who_name", "mixed", "odd", "who_age"])
        #expect(spec.children.map(\.path) == ["lines", "tags"])
        #expect(spec.children.map { $0.fields.map(\.path) } == [["n"], ["."]])
        let error = JSONReader.recordPathNeeded(for: plain)
        #expect(error.message.contains("arrays of objects in it: /data/items (2 elements)"), "\(error)")
        let gzipped = plain + ".gz"
        let gzip = Process()
        gzip.executableURL = URL(fileURLWithPath: "/bin/sh")
        gzip.arguments = ["-c", "gzip -c '\(plain)' > '\(gzipped)'"]
        try gzip.run()
        gzip.waitUntilExit()
        let reader = try JSONReader(path: gzipped, lines: false, spec: spec)
        var records: [[String?]] = []
        while let record = try reader.next() { records.append(record.strings) }
        #expect(records == [["1", "a", "1", "[[1]]", nil], ["1"], ["x"], ["2", "b", "{\"y\":1}", "[]", "4"]])
        #expect(try InputFormat.detect(path: gzipped) == .json)
    }

    @Test func theFormatIsToldFromTheNameOrTheFirstBytes() throws {
        #expect(InputFormat.named(byExtensionOf: "a.json.gz") == .json)
        #expect(InputFormat.named(byExtensionOf: "a.ndjson") == .jsonl)
        #expect(InputFormat.named(byExtensionOf: "a.JSONL.gz") == .jsonl)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sluice-json-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        for (text, format) in [
            ("{\"a\": 1}\n{\"a\": 2}\n", InputFormat.jsonl), ("{\n  \"data\": []\n}\n", .json), ("  [1, 2]", .json),
            ("\u{FEFF}{\"a\": 1}", .jsonl),
        ] {
            let file = directory.appendingPathComponent("input-\(format)-\(text.count)").path
            try Data(text.utf8).write(to: URL(fileURLWithPath: file))
            #expect(try InputFormat.detect(path: file) == format, "\(text.debugDescription)")
        }
    }

    @Test func badPathsAreRefusedWhenTheReaderIsMade() {
        for path in ["a..b", ".a", "a.", "a[x]", "a[1]b", "", "a\\"] {
            #expect(throws: ReaderError.self, "\(path)") {
                try JSONReader(
                    source: MemoryByteSource("[]", name: "t.json"), lines: false,
                    spec: RecordSpec(path: "/", fields: [("f", path)]))
            }
        }
        #expect(throws: ReaderError.self) {
            try JSONReader(
                source: MemoryByteSource("[]", name: "t.json"), lines: false, spec: Self.flat("a", path: "data"))
        }
    }
}
