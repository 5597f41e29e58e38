import CLibXML2
import Foundation

/// libxml2's SAX2 push parser, fed chunk by chunk: constant memory, no tree.
///
/// Safe on untrusted input: no DTD is loaded, no network access, and entities other than the five
/// predefined ones are undefined (so no external entities and no entity expansion bombs); such a
/// reference is a well-formedness error like any other.
///
/// ```swift
/// let parser = try XMLPushParser(handler: handler, fileName: "orders.xml")
/// try parser.feed(chunk)
/// try parser.finish()
/// ```
public final class XMLPushParser {
    private var context: xmlParserCtxtPtr?
    private var sax = xmlSAXHandler()
    // Not retained: the handler must own or outlive the parser (readers own theirs; discovery keeps
    // both alive for one call), so it is alive whenever a callback runs; a strong or `unowned`
    // reference would cost atomic operations per event.
    private var handler: Unmanaged<XMLEventHandler>
    /// The first error libxml2 reported.
    private var failure: XMLParseError?

    /// - Parameter handler: must own or outlive the parser (it is not retained).
    /// - Throws: `XMLParseError` when libxml2 cannot create a parser.
    public convenience init(handler: XMLEventHandler, fileName: String) throws {
        try self.init(fileName: fileName)
        attach(handler)
    }

    /// A parser whose handler is attached later (`attach(_:)`), before the first chunk: a handler that
    /// needs the parser to set itself up (`intern(_:)`) can then own it.
    public init(fileName: String) throws {
        handler = .passUnretained(XMLPushParser.noHandler)
        sax.initialized = UInt32(XML_SAX2_MAGIC)
        sax.startElementNs = { context, localName, _, uri, _, _, attributeCount, _, attributes in
            guard let context, let localName else { return }
            Unmanaged<XMLPushParser>.fromOpaque(context)._withUnsafeGuaranteedRef {
                $0.handler._withUnsafeGuaranteedRef {
                    $0.startElement(
                        localName: localName, namespaceURI: uri, attributes: attributes.map { UnsafePointer($0) },
                        attributeCount: Int(attributeCount))
                }
            }
        }
        sax.endElementNs = { context, _, _, _ in
            guard let context else { return }
            Unmanaged<XMLPushParser>.fromOpaque(context)._withUnsafeGuaranteedRef {
                $0.handler._withUnsafeGuaranteedRef { $0.endElement() }
            }
        }
        let text: charactersSAXFunc = { context, bytes, length in
            guard let context, let bytes, length > 0 else { return }
            Unmanaged<XMLPushParser>.fromOpaque(context)._withUnsafeGuaranteedRef {
                $0.handler._withUnsafeGuaranteedRef {
                    $0.characters(UnsafeBufferPointer(start: bytes, count: Int(length)))
                }
            }
        }
        sax.characters = text
        sax.cdataBlock = text
        // Entities beyond the predefined five do not exist: no DTD, no external or expanding entities.
        sax.getEntity = { _, _ in nil }
        sax.getParameterEntity = { _, _ in nil }
        sax.serror = Self.recordError
        let me = Unmanaged.passUnretained(self).toOpaque()
        context = xmlCreatePushParserCtxt(&sax, me, nil, 0, fileName)
        guard let context else { throw XMLParseError(message: "libxml2 could not create a parser", line: 0, column: 0) }
        xmlCtxtUseOptions(context, Int32(XML_PARSE_NONET.rawValue | XML_PARSE_COMPACT.rawValue))
    }

    /// Sends the events to `handler`, which must own or outlive the parser (it is not retained).
    public func attach(_ handler: XMLEventHandler) { self.handler = .passUnretained(handler) }

    /// Events before a handler is attached go here, so the handler reference is never dangling.
    /// `nonisolated(unsafe)`: the base class has no state, so sharing it across threads is safe.
    nonisolated(unsafe) private static let noHandler = XMLEventHandler()

    deinit {
        // No document is built (no startDocument handler), so only the context is freed.
        if let context { xmlFreeParserCtxt(context) }
    }

    /// Keeps the first error libxml2 reports (for parsing and, through the thread's error handler, for
    /// its encoding layer), instead of letting libxml2 print it.
    private static let recordError: xmlStructuredErrorFunc = { context, error in
        guard let context, let error else { return }
        let parser = Unmanaged<XMLPushParser>.fromOpaque(context).takeUnretainedValue()
        guard parser.failure == nil, error.pointee.level.rawValue >= XML_ERR_ERROR.rawValue else { return }
        let message = error.pointee.message.map { String(cString: $0) } ?? "malformed XML"
        parser.failure = XMLParseError(
            message: message.trimmingCharacters(in: .newlines), line: Int(error.pointee.line),
            column: Int(error.pointee.int2))
    }

    /// Runs `body` with this parser as the thread's libxml2 error handler: errors raised outside the
    /// parser context (the encoding conversion) are kept too, and nothing is printed to stderr. The
    /// thread's previous handler is restored after.
    private func capturingErrors<R>(_ body: () -> R) -> R {
        let handler = __xmlStructuredError(), handlerContext = __xmlStructuredErrorContext()
        let saved = (handler?.pointee, handlerContext?.pointee)
        xmlSetStructuredErrorFunc(Unmanaged.passUnretained(self).toOpaque(), Self.recordError)
        defer {
            handler?.pointee = saved.0
            handlerContext?.pointee = saved.1
        }
        return body()
    }

    /// The parser's own copy of `name`, valid as long as the parser. libxml2 keeps one copy of every
    /// element name, attribute name and namespace URI of a document in its dictionary and passes that
    /// copy to the events, so an event's name is this name exactly when the pointers are equal.
    /// `nil` for an empty name, or when libxml2 runs out of memory.
    public func intern(_ name: String) -> UnsafePointer<UInt8>? {
        guard !name.isEmpty, let dictionary = context?.pointee.dict else { return nil }
        var name = name
        return name.withUTF8 { bytes in
            xmlDictLookup(dictionary, bytes.baseAddress, Int32(bytes.count)).map {
                UnsafeRawPointer($0).assumingMemoryBound(to: UInt8.self)
            }
        }
    }

    /// Stops parsing (from an event handler): the chunk being parsed ends at once, and feeding more
    /// fails.
    public func stop() {
        guard let context else { return }
        if failure == nil { failure = XMLParseError(message: "parsing was stopped", line: line, column: column) }
        xmlStopParser(context)
    }

    /// The line and column the parser has reached (for positions of the current event).
    public var line: Int { context.map { Int(xmlSAX2GetLineNumber($0)) } ?? 0 }
    public var column: Int { context.map { Int(xmlSAX2GetColumnNumber($0)) } ?? 0 }

    /// Parses the next chunk of the document.
    /// - Throws: `XMLParseError` for malformed XML, with line and column.
    public func feed(_ bytes: UnsafeRawBufferPointer) throws {
        guard let context else { return }
        let status = capturingErrors {
            xmlParseChunk(context, bytes.baseAddress?.assumingMemoryBound(to: CChar.self), Int32(bytes.count), 0)
        }
        try check(status)
    }

    /// Ends the document (an unclosed element is an error).
    public func finish() throws {
        guard let context else { return }
        try check(capturingErrors { xmlParseChunk(context, nil, 0, 1) })
    }

    private func check(_ status: Int32) throws {
        if let failure { throw failure }
        if status != 0 {
            throw XMLParseError(message: "malformed XML (libxml2 error \(status))", line: line, column: column)
        }
    }
}
