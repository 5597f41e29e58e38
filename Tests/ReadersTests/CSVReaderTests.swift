import Foundation
import Readers
import Testing

/// Reads every record of `text`, whole and in small chunks (to cross buffer boundaries); the results
/// must agree. Returns the fields (`nil` for null).
func readCSV(_ text: String, _ dialect: CSVDialect = CSVDialect(), file: String = "t.csv") throws -> [[String?]] {
    try readCSV(Array(text.utf8), dialect, file: file)
}

func readCSV(_ bytes: [UInt8], _ dialect: CSVDialect = CSVDialect(), file: String = "t.csv") throws -> [[String?]] {
    var results: [[[String?]]] = []
    for chunk in [Int.max, 1, 3, 7] {
        let reader = try CSVReader(source: MemoryByteSource(bytes, name: file, chunkSize: chunk), dialect: dialect)
        var rows: [[String?]] = []
        while let record = try reader.next() { rows.append(record.strings) }
        results.append(rows)
    }
    #expect(results.allSatisfy { $0 == results[0] }, "chunked reads must agree")
    return results[0]
}

/// The error the first bad record raises.
func csvError(_ text: String, _ dialect: CSVDialect = CSVDialect()) -> ReaderError? {
    do {
        let reader = try CSVReader(source: MemoryByteSource(text, name: "t.csv"), dialect: dialect)
        while try reader.next() != nil {}
        return nil
    } catch let error as ReaderError {
        return error
    } catch {
        return nil
    }
}

func dialect(_ configure: (inout CSVDialect) -> Void) -> CSVDialect {
    var d = CSVDialect()
    configure(&d)
    return d
}

@Suite struct CSVReaderTests {
    @Test func headerNamesFieldsAndPositionsCountLinesAndRecords() throws {
        let reader = try CSVReader(source: MemoryByteSource("id,name\n1,Ada\n2,Grace\n", name: "people.csv"))
        #expect(reader.schema?.names == ["id", "name"])
        let first = try #require(try reader.next())
        #expect(first["name"] == "Ada" && first.string(0) == "1")
        #expect(first.position == SourcePosition(file: "people.csv", line: 2, column: 1, record: 1))
        #expect(first.position(ofField: 1).column == 3)
        let second = try #require(try reader.next())
        #expect(second.position.line == 3 && second.position.record == 2)
        #expect(try reader.next() == nil)
    }

    @Test func quotedFieldsHoldDelimitersDoubledQuotesAndLineBreaks() throws {
        let text = "a,b\n\"x,y\",\"say \"\"hi\"\"\"\n\"line1\nline2\",\"cr\rcrlf\r\nend\"\nlast,\"\"\n"
        #expect(try readCSV(text) == [["x,y", "say \"hi\""], ["line1\nline2", "cr\rcrlf\r\nend"], ["last", ""]])
        // Lines are counted inside quoted fields: the third record starts on line 6.
        let reader = try CSVReader(source: MemoryByteSource(text))
        _ = try reader.next()
        _ = try reader.next()
        #expect(try reader.next()?.position.line == 6)
    }

    @Test func recordsEndAtLFCRLFOrCRAndBlankLinesAreSkipped() throws {
        #expect(
            try readCSV("h,i\r\n1,a\r\n\r\n2,b\r3,c\n\n4,d") == [["1", "a"], ["2", "b"], ["3", "c"], ["4", "d"]])
        let reader = try CSVReader(source: MemoryByteSource("h,i\r\n1,a\r\n\r\n2,b"))
        _ = try reader.next()
        #expect(try reader.next()?.position.line == 4)
        // With one field per record a blank line is a record with an empty field.
        #expect(try readCSV("h\n1\n\n2\n", dialect { $0.nullMarkers = [""] }) == [["1"], [nil], ["2"]])
    }

    @Test func delimitersQuotesAndEscapesAreConfigurable() throws {
        #expect(try readCSV("a\tb\nx y\t\"q\"\n", .tsv) == [["x y", "\"q\""]])
        #expect(try readCSV("a;b\n1,5;\"x;y\"\n", dialect { $0.delimiter = UInt8(ascii: ";") }) == [["1,5", "x;y"]])
        #expect(
            try readCSV(
                "a|b\n'it''s'|'|'\n",
                dialect {
                    $0.delimiter = UInt8(ascii: "|")
                    $0.quote = UInt8(ascii: "'")
                }) == [["it's", "|"]])
        let mysql = dialect { $0.escape = UInt8(ascii: "\\") }
        #expect(try readCSV("a,b\n\"say \\\"hi\\\"\",x\\,y\n", mysql) == [["say \"hi\"", "x,y"]])
    }

    @Test func withoutHeaderTheFirstRecordSetsTheFieldCount() throws {
        let d = dialect { $0.hasHeader = false }
        #expect(try readCSV("1,2\n3,4\n", d) == [["1", "2"], ["3", "4"]])
        let error = try #require(csvError("1,2\n3\n", d))
        #expect(error.kind == .raggedRow && error.message.contains("the first record has 2"))
    }

    @Test func byteOrderMarkCommentsNullsAndTrimming() throws {
        #expect(try readCSV("\u{FEFF}id\n1\n") == [["1"]])
        #expect(try readCSV("id,v\n# note\n1,2\n#x,y\n", dialect { $0.comment = UInt8(ascii: "#") }) == [["1", "2"]])
        let nulls = dialect { $0.nullMarkers = ["", "NULL"] }
        #expect(try readCSV("a,b,c,d\n,\"\",NULL,\"NULL\"\n", nulls) == [[nil, "", nil, "NULL"]])
        let trimmed = dialect { $0.trimsWhitespace = true }
        #expect(try readCSV("a,b\n  x , \" y \" \n", trimmed) == [["x", " y "]])
        #expect(try readCSV("a,b\n  x , y\n") == [["  x ", " y"]])
    }

    @Test func otherEncodingsAreConvertedToUTF8() throws {
        let latin1: [UInt8] = Array("name\n".utf8) + [0x4A, 0xFC, 0x72, 0x67, 0x65, 0x6E, 0x0A]  // Jürgen
        #expect(try readCSV(latin1, dialect { $0.encoding = .latin1 }) == [["Jürgen"]])
        let cp1252: [UInt8] = Array("price\n".utf8) + [0x80, 0x35, 0x0A]  // €5
        #expect(try readCSV(cp1252, dialect { $0.encoding = .windows1252 }) == [["€5"]])
        let text = "name\n日本,\"😀\"\n".replacingOccurrences(of: ",\"😀\"", with: "")
        let utf16LE: [UInt8] = [0xFF, 0xFE] + text.utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }
        let utf16BE: [UInt8] = [0xFE, 0xFF] + "name\n😀\n".utf16.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
        #expect(try readCSV(utf16LE) == [["日本"]])  // the byte order mark announces UTF-16
        #expect(try readCSV(utf16BE, dialect { $0.encoding = .utf16 }) == [["😀"]])
        let undefined: [UInt8] = Array("a\n".utf8) + [0x81, 0x0A]
        #expect(throws: ReaderError.self) { try readCSV(undefined, dialect { $0.encoding = .windows1252 }) }
        let unpaired: [UInt8] = [0xFF, 0xFE, 0x61, 0x00, 0x0A, 0x00, 0x00, 0xD8, 0x0A, 0x00]
        #expect(throws: ReaderError.self) { try readCSV(unpaired) }
    }

    @Test func aBrokenTextStreamEndsTheInput() throws {
        // Found by fuzzing: UTF-16 ending in half a character must not be reported as recoverable
        // (a caller going on after it would loop forever).
        let reader = try CSVReader(
            source: MemoryByteSource([0xFF, 0xFE, 0x6E, 0x00, 0x0A, 0x00, 0x61, 0x00, 0x0A, 0x00, 0x00]))
        #expect(try reader.next()?.strings == ["a"])
        #expect { _ = try reader.next() } throws: {
            ($0 as? ReaderError).map { $0.kind == .encoding && !$0.isRecoverable } ?? false
        }
        #expect(throws: ReaderError.self) { _ = try reader.next() }
    }

    @Test func raggedRowsAreErrorsWithPositionAndReadingGoesOn() throws {
        let reader = try CSVReader(source: MemoryByteSource("a,b\n1,2,3\n4\n5,6\n", name: "r.csv"))
        do {
            _ = try reader.next()
            Issue.record("expected an error")
        } catch let error as ReaderError {
            #expect(error.kind == .raggedRow && error.isRecoverable)
            #expect(error.position == SourcePosition(file: "r.csv", line: 2, column: 5, record: 1))
            #expect(
                error.description
                    == "r.csv:2:5 (record 1): the record has 3 fields, the header has 2 (field 3 starts here)")
        }
        do {
            _ = try reader.next()
            Issue.record("expected an error")
        } catch let error as ReaderError {
            #expect(error.kind == .raggedRow && error.position?.line == 3 && error.position?.column == 2)
        }
        #expect(try reader.next()?.strings == ["5", "6"])
    }

    @Test func anUnterminatedQuoteIsAnErrorAtTheFieldThatOpensIt() throws {
        let error = try #require(csvError("a,b\n1,\"open\nmore\nlines"))
        #expect(error.kind == .unterminatedQuote)
        #expect(error.position?.line == 2 && error.position?.column == 3)
    }

    @Test func misplacedQuotesAreErrorsUnlessLenient() throws {
        let after = try #require(csvError("a,b\n\"x\"y,2\n"))
        #expect(after.kind == .misplacedQuote && after.position?.line == 2 && after.position?.column == 4)
        let inside = try #require(csvError("a,b\n5\" screen,2\n"))
        #expect(inside.kind == .misplacedQuote && inside.position?.column == 2)
        #expect(try readCSV("a,b\n5\" screen,2\n", dialect { $0.lenientQuotes = true }) == [["5\" screen", "2"]])
        // After the error the reader continues on the next line.
        let reader = try CSVReader(source: MemoryByteSource("a\n\"x\"y\nok\n"))
        #expect(throws: ReaderError.self) { _ = try reader.next() }
        #expect(try reader.next()?.strings == ["ok"])
    }

    @Test func invalidUTF8IsAnErrorUnlessLossy() throws {
        let bad: [UInt8] = Array("a,b\nok,".utf8) + [0x41, 0xC3, 0x28] + Array("\n".utf8)
        let reader = try CSVReader(source: MemoryByteSource(bad, name: "u.csv"))
        do {
            _ = try reader.next()
            Issue.record("expected an error")
        } catch let error as ReaderError {
            #expect(error.kind == .encoding && error.position?.line == 2 && error.position?.column == 4)
            #expect(error.message.contains("byte 0xC3 at byte 2 of field 2"))
        }
        #expect(try readCSV(bad, dialect { $0.lossyEncoding = true }) == [["ok", "A\u{FFFD}("]])
        // Overlong forms and surrogates are invalid too.
        for sequence: [UInt8] in [[0xC0, 0xAF], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xE2, 0x82]] {
            #expect(throws: ReaderError.self) { try readCSV(Array("a\n".utf8) + sequence + [10]) }
        }
    }

    @Test func aRecordLargerThanTheLimitIsAnError() throws {
        let error = try #require(
            csvError("a\n\"" + String(repeating: "x", count: 5000), dialect { $0.maxRecordBytes = 1000 }))
        #expect(error.kind == .recordTooLarge)
    }

    @Test func invalidDialectsAreRejected() {
        #expect(throws: ReaderError.self) { try dialect { $0.delimiter = 10 }.validate() }
        #expect(throws: ReaderError.self) { try dialect { $0.quote = UInt8(ascii: ",") }.validate() }
        #expect(throws: ReaderError.self) { try dialect { $0.delimiter = 0xC3 }.validate() }
    }
}
