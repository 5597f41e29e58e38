import Readers
import Testing

@Suite struct CSVSnifferTests {
    static func sniff(_ text: String) -> CSVDialect { CSVSniffer.sniff(sample: Array(text.utf8)) }

    @Test func delimiterQuoteAndHeaderAreFound() {
        let comma = Self.sniff("id,name,price\n1,\"Smith, J\",2.50\n2,Ada,3\n")
        #expect(comma.delimiter == UInt8(ascii: ",") && comma.quote == UInt8(ascii: "\"") && comma.hasHeader)
        let semicolon = Self.sniff("id;name;price\n1;Smith, J;2,50\n2;Ada;3\n3;Bob;4\n")
        #expect(semicolon.delimiter == UInt8(ascii: ";") && semicolon.hasHeader)
        let tab = Self.sniff("a\tb\n1\t2\n3\t4\n")
        #expect(tab.delimiter == 9 && tab.hasHeader)
        let pipe = Self.sniff("1|x|2.5\n2|y|3.5\n3|z|4\n")
        #expect(pipe.delimiter == UInt8(ascii: "|") && !pipe.hasHeader)
        let single = Self.sniff("name,city\n'Smith, J','Paris'\n'Ada','Rome, IT'\n")
        #expect(single.quote == UInt8(ascii: "'") && single.delimiter == UInt8(ascii: ","))
    }

    @Test func encodingHintsComeFromTheBytes() {
        #expect(CSVSniffer.sniff(sample: Array("a,b\n".utf8) + [0xE9] + Array(",2\n".utf8)).encoding == .windows1252)
        #expect(CSVSniffer.sniff(sample: [0xFF, 0xFE, 0x61, 0x00]).encoding == .utf16)
    }

    @Test func aCutLastLineIsIgnored() {
        let dialect = CSVSniffer.sniff(sample: Array("a;b\n1;2\n3;4\n5;\"cut".utf8), isComplete: false)
        #expect(dialect.delimiter == UInt8(ascii: ";"))
    }
}
