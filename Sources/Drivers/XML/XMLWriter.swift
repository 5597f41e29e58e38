import CLibXML2
import Foundation

/// libxml2's text writer into memory: elements, attributes and text escaped as XML requires,
/// indented. Used by the XML store.
public final class XMLWriter {
    private let buffer: xmlBufferPtr
    private let writer: xmlTextWriterPtr

    /// - Throws: `XMLParseError` when libxml2 cannot make a writer.
    public init(indent: Bool = true) throws {
        guard let buffer = xmlBufferCreate() else {
            throw XMLParseError(message: "libxml2 could not create a buffer", line: 0, column: 0)
        }
        guard let writer = xmlNewTextWriterMemory(buffer, 0) else {
            xmlBufferFree(buffer)
            throw XMLParseError(message: "libxml2 could not create a writer", line: 0, column: 0)
        }
        self.buffer = buffer
        self.writer = writer
        if indent {
            xmlTextWriterSetIndent(writer, 1)
            xmlTextWriterSetIndentString(writer, "  ")
        }
    }

    deinit {
        xmlFreeTextWriter(writer)
        xmlBufferFree(buffer)
    }

    private func check(_ status: Int32, _ what: String) throws {
        if status < 0 { throw XMLParseError(message: "libxml2 could not write \(what)", line: 0, column: 0) }
    }

    public func startDocument() throws {
        try check(xmlTextWriterStartDocument(writer, "1.0", "UTF-8", nil), "the XML declaration")
    }
    public func startElement(_ name: String) throws { try check(xmlTextWriterStartElement(writer, name), "<\(name)>") }
    /// - Throws: `XMLParseError` when `value` holds a character XML 1.0 cannot carry.
    public func attribute(_ name: String, _ value: String) throws {
        try checkCharacters(value, "attribute \(name)")
        try check(xmlTextWriterWriteAttribute(writer, name, value), "attribute \(name)")
    }
    /// - Throws: `XMLParseError` when `text` holds a character XML 1.0 cannot carry.
    public func text(_ text: String) throws {
        try checkCharacters(text, "text")
        try check(xmlTextWriterWriteString(writer, text), "text")
    }

    /// Refuses the characters XML 1.0 cannot carry, escaped or not (U+0000, the other control
    /// characters but tab, line feed and carriage return, U+FFFE, U+FFFF): libxml2 would write them
    /// as they are (and end the value at U+0000), making a document no parser reads back.
    private func checkCharacters(_ value: String, _ what: String) throws {
        for scalar in value.unicodeScalars {
            switch scalar.value {
            case 0x9, 0xA, 0xD, 0x20...0xD7FF, 0xE000...0xFFFD, 0x10000...0x10FFFF: continue
            default:
                throw XMLParseError(
                    message: "cannot write \(what): it holds U+\(String(format: "%04X", scalar.value)), which XML 1.0 "
                        + "cannot carry (encode the value, e.g. as base64)",
                    line: 0, column: 0)
            }
        }
    }
    public func endElement() throws { try check(xmlTextWriterEndElement(writer), "an end tag") }

    /// Ends the document and returns its bytes.
    public func finish() throws -> Data {
        try check(xmlTextWriterEndDocument(writer), "the end of the document")
        xmlTextWriterFlush(writer)
        guard let content = xmlBufferContent(buffer) else { return Data() }
        return Data(bytes: content, count: Int(xmlBufferLength(buffer)))
    }
}
