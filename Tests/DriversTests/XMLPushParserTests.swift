import Drivers
import Foundation
import Testing

@Suite struct XMLPushParserTests {
    /// A document with a bit of everything: prolog, comments, namespaces, attributes, references,
    /// CDATA, multi-byte characters and line breaks.
    private static let mixedDocument = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!-- orders of the day -->
        <orders xmlns="urn:orders" xmlns:x="urn:extra" date="2024-05-01">
          <order id="1" x:flag="yes" note="a &amp; b &lt; c">Caf\u{E9} \u{2615} &#x1F600; &amp; more</order>
          <order id="2"><![CDATA[<raw> & "quoted"]]><?pi ignored?></order>
          <x:empty/>
        </orders>
        """

    @Test func elementsAndTextArriveInDocumentOrder() throws {
        let events = try parseEvents("<a><b>x</b><c/>y</a>")
        #expect(events == ["start a", "start b", "text x", "end", "start c", "end", "text y", "end"])
    }

    @Test func attributesArriveWithTheirElementInDocumentOrder() throws {
        let events = try parseEvents(#"<r id="1" name='two' empty=""><e z="9" a="0"/></r>"#)
        #expect(events == ["start r id=1 name=two empty=", "start e z=9 a=0", "end", "end"])
    }

    @Test func referencesAreReplacedInTextAndAttributes() throws {
        let events = try parseEvents(
            #"<r v="x &amp; y &lt; &#38; z &quot;&#x41;">a &lt; b &amp; c &gt; &#233; &#x1F600; &apos;</r>"#)
        #expect(events == [#"start r v=x & y < & z "A"#, "text a < b & c > \u{E9} \u{1F600} '", "end"])
    }

    @Test func attributeWhitespaceIsNormalizedButCharacterReferencesAreKept() throws {
        let events = try parseEvents("<r v=\"a\tb\nc&#10;d&#9;e\"/>")
        #expect(events == ["start r v=a b c\nd\te", "end"])
    }

    @Test func decodedAttributeValueIsNilWhenTheValueHasNoReference() {
        let plain = Array("plain value".utf8)
        let encoded = Array("a&#38;b&#38;&#38;".utf8)
        plain.withUnsafeBufferPointer { #expect(XMLEventHandler.decodedAttributeValue($0) == nil) }
        encoded.withUnsafeBufferPointer {
            #expect(XMLEventHandler.decodedAttributeValue($0) == Array("a&b&&".utf8))
        }
    }

    @Test func cdataArrivesAsTextWithoutEscaping() throws {
        let events = try parseEvents("<r>before <![CDATA[<not-a-tag> & ]]> after</r>")
        #expect(events == ["start r", "text before <not-a-tag> &  after", "end"])
    }

    @Test func commentsAndProcessingInstructionsProduceNoEvents() throws {
        let events = try parseEvents("<?xml version=\"1.0\"?><!-- c --><r><?pi data?>t<!-- inner --></r><!-- end -->")
        #expect(events == ["start r", "text t", "end"])
    }

    @Test func namespacesResolveToURIsForElementsAndPrefixedAttributes() throws {
        let events = try parseEvents(
            #"<r xmlns="urn:d" xmlns:p="urn:p"><p:e p:a="1" b="2"/><e/><n xmlns=""/></r>"#)
        #expect(
            events == [
                "start {urn:d}r", "start {urn:p}e {urn:p}a=1 b=2", "end", "start {urn:d}e", "end", "start n", "end",
                "end",
            ])
    }

    @Test func chunkBoundariesDoNotChangeTheEvents() throws {
        let bytes = Array(Self.mixedDocument.utf8)
        let whole = try parseEvents([bytes])
        #expect(
            whole == [
                "start {urn:orders}orders date=2024-05-01", "text \n  ",
                "start {urn:orders}order id=1 {urn:extra}flag=yes note=a & b < c",
                "text Caf\u{E9} \u{2615} \u{1F600} & more", "end", "text \n  ", "start {urn:orders}order id=2",
                #"text <raw> & "quoted""#, "end", "text \n  ", "start {urn:extra}empty", "end", "text \n", "end",
            ])
        for size in [1, 2, 3, 5, 8, 13, 64] {
            #expect(try parseEvents(chunks(of: bytes, sizes: [size])) == whole, "chunks of \(size) bytes")
        }
        for seed in UInt64(1)...20 {
            let pieces = randomChunks(of: bytes, maximum: 17, seed: seed)
            #expect(try parseEvents(pieces) == whole, "random chunks, seed \(seed)")
        }
    }

    @Test func emptyChunksAreHarmless() throws {
        let recorder = XMLEventRecorder()
        let parser = try XMLPushParser(handler: recorder, fileName: "empty-chunks.xml")
        for piece in ["", "<r>", "", "x", "", "</r>", ""] {
            try Array(piece.utf8).withUnsafeBytes { try parser.feed($0) }
        }
        try parser.finish()
        #expect(recorder.finish() == ["start r", "text x", "end"])
    }

    @Test func malformedXMLThrowsWithLineAndColumn() throws {
        let error = try #require(parseError(Array("<r>\n  <a>text</b>\n</r>".utf8)))
        #expect(error.line == 2)
        #expect((10...14).contains(error.column), "at the end tag </b>, columns 10 to 13 of line 2")
        #expect(error.message.contains("mismatch"))
        #expect(error.description == error.message)
        #expect(!error.message.hasSuffix("\n"))
    }

    @Test func errorInALaterChunkReportsItsLine() throws {
        let recorder = XMLEventRecorder()
        let parser = try XMLPushParser(handler: recorder, fileName: "later.xml")
        try Array("<r>\n<a>1</a>\n".utf8).withUnsafeBytes { try parser.feed($0) }
        try Array("<b>2</b>\n".utf8).withUnsafeBytes { try parser.feed($0) }
        let error = try #require(throws: XMLParseError.self) {
            try Array("<c attr=>3</c>\n</r>".utf8).withUnsafeBytes { try parser.feed($0) }
        }
        #expect(error.line == 4)
        #expect((8...9).contains(error.column), "at the missing value after attr=")
        #expect(
            recorder.finish().prefix(7) == ["start r", "text \n", "start a", "text 1", "end", "text \n", "start b"])
    }

    @Test func theFirstErrorIsKeptForLaterCalls() throws {
        let recorder = XMLEventRecorder()
        let parser = try XMLPushParser(handler: recorder, fileName: "twice.xml")
        let first = try #require(throws: XMLParseError.self) {
            try Array("<r><a></b>".utf8).withUnsafeBytes { try parser.feed($0) }
        }
        let second = try #require(throws: XMLParseError.self) {
            try Array("<c/></r>".utf8).withUnsafeBytes { try parser.feed($0) }
        }
        let third = try #require(throws: XMLParseError.self) { try parser.finish() }
        #expect(second.message == first.message && second.line == first.line && second.column == first.column)
        #expect(third.message == first.message)
        #expect(recorder.finish() == ["start r", "start a"])
    }

    @Test func unclosedElementFailsAtFinish() throws {
        let recorder = XMLEventRecorder()
        let parser = try XMLPushParser(handler: recorder, fileName: "unclosed.xml")
        try Array("<r><a>text".utf8).withUnsafeBytes { try parser.feed($0) }
        #expect(throws: XMLParseError.self) { try parser.finish() }
        #expect(recorder.finish() == ["start r", "start a", "text text"])
    }

    @Test func emptyDocumentIsAnError() throws {
        let recorder = XMLEventRecorder()
        let parser = try XMLPushParser(handler: recorder, fileName: "empty.xml")
        #expect(throws: XMLParseError.self) { try parser.finish() }
        #expect(recorder.finish().isEmpty)
    }

    @Test func invalidUTF8IsAnErrorNotGarbage() throws {
        let error = try #require(parseError(Array("<r>ok".utf8) + [0xFF, 0xFE] + Array("</r>".utf8)))
        #expect(error.message.localizedCaseInsensitiveContains("utf-8"))
    }

    @Test func declaredEncodingIsConvertedToUTF8() throws {
        let bytes =
            Array("<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><r a=\"".utf8) + [0xE9]
            + Array("\">caf".utf8) + [0xE9] + Array("</r>".utf8)
        #expect(try parseEvents([bytes]) == ["start r a=\u{E9}", "text caf\u{E9}", "end"])
        #expect(try parseEvents(chunks(of: bytes, sizes: [1])) == ["start r a=\u{E9}", "text caf\u{E9}", "end"])
    }

    @Test func stopEndsParsingAndLaterFeedsFail() throws {
        let recorder = XMLEventRecorder()
        let parser = try XMLPushParser(handler: recorder, fileName: "stop.xml")
        recorder.onStartElement = { [unowned parser] name in if name == "stop" { parser.stop() } }
        let error = try #require(throws: XMLParseError.self) {
            try Array("<r><a>1</a><stop/><b>2</b><c/></r>".utf8).withUnsafeBytes { try parser.feed($0) }
        }
        #expect(error.message == "parsing was stopped")
        #expect(error.line == 1)
        #expect(throws: XMLParseError.self) { try Array("<d/>".utf8).withUnsafeBytes { try parser.feed($0) } }
        #expect(throws: XMLParseError.self) { try parser.finish() }
        #expect(recorder.finish() == ["start r", "start a", "text 1", "end", "start stop"])
    }

    @Test func undeclaredEntityIsAWellFormednessError() throws {
        let error = try #require(parseError(Array("<r>\n&nope;</r>".utf8)))
        #expect(error.message.contains("nope"))
        #expect(error.line == 2)
    }

    @Test func internalEntitiesAreNotExpanded() throws {
        let document = """
            <!DOCTYPE r [
              <!ENTITY a "EXPANDED">
              <!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">
              <!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">
            ]>
            <r>&c;</r>
            """
        let recorder = XMLEventRecorder()
        let parser = try XMLPushParser(handler: recorder, fileName: "laughs.xml")
        let error = try #require(throws: XMLParseError.self) {
            try Array(document.utf8).withUnsafeBytes { try parser.feed($0) }
            try parser.finish()
        }
        #expect(error.message.contains("'c'"))
        #expect(!recorder.finish().joined().contains("EXPANDED"))
    }

    @Test func externalEntitiesAndDTDsAreNotLoaded() throws {
        try withTemporaryFolder { folder in
            let secret = folder.appendingPathComponent("secret.txt")
            try Data("TOP-SECRET".utf8).write(to: secret)
            let dtd = folder.appendingPathComponent("evil.dtd")
            try Data("<!ENTITY leak SYSTEM \"\(secret.absoluteString)\">".utf8).write(to: dtd)
            let documents = [
                "<!DOCTYPE r [<!ENTITY leak SYSTEM \"\(secret.absoluteString)\">]><r>&leak;</r>",
                "<!DOCTYPE r SYSTEM \"\(dtd.absoluteString)\"><r>&leak;</r>",
                "<!DOCTYPE r [<!ENTITY % ext SYSTEM \"\(dtd.absoluteString)\"> %ext;]><r>&leak;</r>",
            ]
            for document in documents {
                let recorder = XMLEventRecorder()
                let parser = try XMLPushParser(handler: recorder, fileName: "xxe.xml")
                let error = try #require(throws: XMLParseError.self, "\(document)") {
                    try Array(document.utf8).withUnsafeBytes { try parser.feed($0) }
                    try parser.finish()
                }
                #expect(error.message.contains("leak") || error.message.contains("%ext;"), "\(error)")
                #expect(!recorder.finish().joined().contains("TOP-SECRET"), "\(document)")
            }
        }
    }

    @Test func internReturnsTheNamePointerTheEventsCarry() throws {
        final class ItemCounter: XMLEventHandler {
            var item: UnsafePointer<UInt8>?
            var matches: [String] = []
            override func startElement(
                localName: UnsafePointer<UInt8>, namespaceURI: UnsafePointer<UInt8>?,
                attributes: UnsafePointer<UnsafePointer<UInt8>?>?, attributeCount: Int
            ) {
                matches.append(String(cString: localName) + (localName == item ? "=" : "!"))
            }
        }
        let counter = ItemCounter()
        let parser = try XMLPushParser(fileName: "intern.xml")
        let item = try #require(parser.intern("item"))
        counter.item = item
        #expect(parser.intern("") == nil)
        #expect(parser.intern("item") == item)
        parser.attach(counter)
        try Array("<list><item/><items/><item>x</item></list>".utf8).withUnsafeBytes { try parser.feed($0) }
        try parser.finish()
        #expect(counter.matches == ["list!", "item=", "items!", "item="])
    }

    @Test func lineAndColumnFollowTheCurrentEvent() throws {
        final class PositionRecorder: XMLEventHandler {
            unowned var parser: XMLPushParser?
            var positions: [String] = []
            override func startElement(
                localName: UnsafePointer<UInt8>, namespaceURI: UnsafePointer<UInt8>?,
                attributes: UnsafePointer<UnsafePointer<UInt8>?>?, attributeCount: Int
            ) {
                positions.append("\(String(cString: localName))@\(parser?.line ?? -1)")
            }
        }
        let recorder = PositionRecorder()
        let parser = try XMLPushParser(handler: recorder, fileName: "lines.xml")
        recorder.parser = parser
        try Array("<r>\n  <a/>\n\n<b>\n<c/></b></r>".utf8).withUnsafeBytes { try parser.feed($0) }
        try parser.finish()
        #expect(recorder.positions == ["r@1", "a@2", "b@4", "c@5"])
    }
}
