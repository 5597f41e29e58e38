import Drivers
import Foundation
import Testing

@Suite struct XMLWriterTests {
    /// Writes `<r a="attribute">text</r>` without indentation and returns the document as text.
    private func document(attribute: String, text: String) throws -> String {
        let writer = try XMLWriter(indent: false)
        try writer.startDocument()
        try writer.startElement("r")
        try writer.attribute("a", attribute)
        try writer.text(text)
        try writer.endElement()
        return String(decoding: try writer.finish(), as: UTF8.self)
    }

    @Test func writesDeclarationElementsAttributesAndIndentedText() throws {
        let writer = try XMLWriter()
        try writer.startDocument()
        try writer.startElement("store")
        try writer.attribute("version", "1")
        try writer.startElement("item")
        try writer.attribute("id", "7")
        try writer.text("hello")
        try writer.endElement()
        try writer.startElement("empty")
        try writer.endElement()
        try writer.endElement()
        let output = String(decoding: try writer.finish(), as: UTF8.self)
        #expect(
            output == """
                <?xml version="1.0" encoding="UTF-8"?>
                <store version="1">
                  <item id="7">hello</item>
                  <empty/>
                </store>

                """)
    }

    @Test func withoutIndentationTheDocumentIsOneLineAfterTheDeclaration() throws {
        let output = try document(attribute: "x", text: "y")
        #expect(output == "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<r a=\"x\">y</r>\n")
    }

    @Test func finishClosesElementsLeftOpen() throws {
        let writer = try XMLWriter(indent: false)
        try writer.startDocument()
        try writer.startElement("a")
        try writer.startElement("b")
        try writer.text("t")
        let output = String(decoding: try writer.finish(), as: UTF8.self)
        #expect(output.hasSuffix("<a><b>t</b></a>\n"))
    }

    @Test func textEscapesMarkupCharacters() throws {
        let output = try document(attribute: "", text: "a < b & c > d \"q\" 's'")
        #expect(output.contains(">a &lt; b &amp; c &gt; d &quot;q&quot; 's'</r>"))
    }

    @Test func attributeEscapesQuotesAndMarkup() throws {
        let output = try document(attribute: "say \"hi\" & <bye> 'x'", text: "")
        #expect(output.contains("a=\"say &quot;hi&quot; &amp; &lt;bye&gt; 'x'\""))
    }

    @Test func lineBreaksAndTabsSurviveAReparseInTextAndAttributes() throws {
        let value = "line1\nline2\r\nline3\rend\t."
        let output = try document(attribute: value, text: value)
        #expect(output.contains("&#13;"))
        #expect(try parseEvents(output) == ["start r a=\(value)", "text \(value)", "end"])
    }

    @Test func outputReparsesToTheSameContent() throws {
        let values = [
            "plain", "<tag attr=\"v\">", "a && b", "]]>", "caf\u{E9} \u{2615} \u{1F600} \u{10FFFD}", "&amp; is not &",
            "'single' \"double\"", " leading and trailing ", "&#38;", "\u{FEFF}bom-like", "",
        ]
        let writer = try XMLWriter()
        try writer.startDocument()
        try writer.startElement("values")
        var expected = ["start values"]
        for (index, value) in values.enumerated() {
            try writer.startElement("v")
            try writer.attribute("i", String(index))
            try writer.attribute("copy", value)
            try writer.text(value)
            try writer.endElement()
            expected += ["start v i=\(index) copy=\(value)"] + (value.isEmpty ? [] : ["text \(value)"]) + ["end"]
        }
        try writer.endElement()
        let events = try parseEvents(String(decoding: try writer.finish(), as: UTF8.self))
        // Drop the indentation between elements; every value's own text is kept whole.
        let significant = events.filter { !($0.hasPrefix("text ") && $0.dropFirst(5).allSatisfy(\.isWhitespace)) }
        #expect(significant == expected + ["end"])
    }

    @Test func charactersXMLCannotCarryAreRefusedAndNothingIsWritten() throws {
        for control in ["\u{0}", "\u{1}", "\u{8}", "\u{B}", "\u{C}", "\u{1F}", "\u{FFFE}", "\u{FFFF}"] {
            let code = String(format: "U+%04X", control.unicodeScalars.first!.value)
            let writer = try XMLWriter(indent: false)
            try writer.startDocument()
            try writer.startElement("r")
            let attributeError = try #require(throws: XMLParseError.self, "\(code)") {
                try writer.attribute("a", "a\(control)b")
            }
            #expect(attributeError.message.hasPrefix("cannot write attribute a: it holds \(code), "))
            try writer.attribute("b", "ok")
            let textError = try #require(throws: XMLParseError.self, "\(code)") { try writer.text("a\(control)b") }
            #expect(textError.message.hasPrefix("cannot write text: it holds \(code), "))
            try writer.text("fine")
            try writer.endElement()
            let output = String(decoding: try writer.finish(), as: UTF8.self)
            #expect(try parseEvents(output) == ["start r b=ok", "text fine", "end"], "\(code)")
        }
    }
}
