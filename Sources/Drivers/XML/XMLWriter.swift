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
    public func attribute(_ name: String, _ value: String) throws {
        try check(xmlTextWriterWriteAttribute(writer, name, value), "attribute \(name)")
    }
    public func text(_ text: String) throws { try check(xmlTextWriterWriteString(writer, text), "text") }
    public func endElement() throws { try check(xmlTextWriterEndElement(writer), "an end tag") }

    /// Ends the document and returns its bytes.
    public func finish() throws -> Data {
        try check(xmlTextWriterEndDocument(writer), "the end of the document")
        xmlTextWriterFlush(writer)
        guard let content = xmlBufferContent(buffer) else { return Data() }
        return Data(bytes: content, count: Int(xmlBufferLength(buffer)))
    }
}
