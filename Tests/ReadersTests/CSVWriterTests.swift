import Readers
import Testing

/// A small deterministic generator (the property tests must repeat exactly).
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

@Suite struct CSVWriterTests {
    /// Characters that stress quoting: separators of every dialect, quotes, escapes, line breaks,
    /// blanks, comment characters, non-ASCII of every UTF-8 length.
    static let alphabet: [Character] = [
        ",", ";", "\t", "|", "\"", "'", "\\", "\n", "\r", "\r\n", " ", "#", "a", "Z", "0", "é", "ß", "日", "😀", "N", "U",
        "L",
    ]

    static func randomField(_ rng: inout SplitMix64) -> String {
        let length = Int(rng.next() % 8)
        return String((0..<length).map { _ in alphabet[Int(rng.next() % UInt64(alphabet.count))] })
    }

    static let dialects: [CSVDialect] = {
        let plain = CSVDialect()
        var nulls = plain
        nulls.nullMarkers = ["", "NULL"]
        var semicolon = nulls
        semicolon.delimiter = UInt8(ascii: ";")
        semicolon.quote = UInt8(ascii: "'")
        var escaped = plain
        escaped.escape = UInt8(ascii: "\\")
        escaped.nullMarkers = ["\\N"]
        var trimmedWithComments = nulls
        trimmedWithComments.trimsWhitespace = true
        trimmedWithComments.comment = UInt8(ascii: "#")
        var tab = plain
        tab.delimiter = UInt8(ascii: "\t")
        return [plain, nulls, semicolon, escaped, trimmedWithComments, tab]
    }()

    @Test(arguments: 0..<dialects.count)
    func writtenRandomFieldsReadBackUnchanged(dialectIndex: Int) throws {
        let dialect = Self.dialects[dialectIndex]
        var rng = SplitMix64(state: UInt64(dialectIndex) &* 7919 &+ 1)
        for round in 0..<60 {
            let width = 1 + Int(rng.next() % 5)
            let rows: [[String?]] = (0..<1 + Int(rng.next() % 6)).map { _ in
                (0..<width).map { _ in
                    // Null only where the dialect can say null.
                    !dialect.nullMarkers.isEmpty && rng.next() % 6 == 0 ? nil : Self.randomField(&rng)
                }
            }
            let sink = MemoryByteSink()
            let writer = try CSVWriter(sink: sink, dialect: dialect, lineTerminator: round % 2 == 0 ? "\n" : "\r\n")
            try writer.write((0..<width).map { "c\($0)" })
            for row in rows { try writer.write(row) }
            try writer.flush()
            let back = try readCSV(sink.bytes, dialect)
            #expect(back == rows, "dialect \(dialectIndex), round \(round): \(sink.text.debugDescription)")
        }
    }

    @Test func onlyFieldsThatNeedItAreQuoted() throws {
        let sink = MemoryByteSink()
        var dialect = CSVDialect()
        dialect.nullMarkers = ["NULL"]
        let writer = try CSVWriter(sink: sink, dialect: dialect)
        try writer.write(["plain", "with,comma", "say \"hi\"", "two\nlines", nil, "NULL"])
        try writer.flush()
        #expect(sink.text == "plain,\"with,comma\",\"say \"\"hi\"\"\",\"two\nlines\",NULL,\"NULL\"\n")
    }

    @Test func aFieldThatCannotBeWrittenInTheDialectIsAnError() throws {
        let writer = try CSVWriter(sink: MemoryByteSink(), dialect: .tsv)
        #expect(throws: ReaderError.self) { try writer.write(["a\tb"]) }
    }
}
