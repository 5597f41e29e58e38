import Drivers
import Foundation

public enum XMLTree {
    /// Reads the document at `path` (plain or gzipped) and returns its root element.
    /// - Throws: `ReaderError` (`.io`, `.malformedXML` with line and column).
    public static func read(path: String) throws -> XMLTreeElement {
        let source = try Input.open(path)
        let builder = Builder()
        let parser: XMLPushParser
        do { parser = try XMLPushParser(handler: builder, fileName: source.name) } catch {
            throw ReaderError(.malformedXML, "\(error)", underlying: error)
        }
        builder.parser = parser
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        do {
            while true {
                let count = try chunk.withUnsafeMutableBytes { try source.read(into: $0) }
                if count == 0 { break }
                try chunk.withUnsafeBytes { try parser.feed(UnsafeRawBufferPointer(rebasing: $0[..<count])) }
            }
            try parser.finish()
        } catch let error as XMLParseError {
            throw ReaderError(
                .malformedXML, error.message,
                at: SourcePosition(file: source.name, line: error.line, column: error.column))
        }
        guard let root = builder.root else {
            throw ReaderError(
                .malformedXML, "the document has no element", at: SourcePosition(file: source.name, line: 1, column: 1))
        }
        return root
    }

    private final class Builder: XMLEventHandler {
        var root: XMLTreeElement?
        var stack: [XMLTreeElement] = []
        weak var parser: XMLPushParser?

        override func startElement(
            localName: UnsafePointer<UInt8>, namespaceURI: UnsafePointer<UInt8>?,
            attributes: UnsafePointer<UnsafePointer<UInt8>?>?, attributeCount: Int
        ) {
            var values: [String: String] = [:]
            for index in 0..<attributeCount {
                guard let base = attributes?.advanced(by: index * 5), let name = base[0], let start = base[3],
                    let end = base[4]
                else { continue }
                let raw = UnsafeBufferPointer(start: start, count: end - start)
                values[String(cString: name)] = String(
                    decoding: XMLEventHandler.decodedAttributeValue(raw) ?? Array(raw), as: UTF8.self)
            }
            let element = XMLTreeElement(name: String(cString: localName), attributes: values, line: parser?.line ?? 0)
            if let parent = stack.last { parent.children.append(element) } else if root == nil { root = element }
            stack.append(element)
        }

        override func endElement() { stack.removeLast() }

        override func characters(_ text: UnsafeBufferPointer<UInt8>) {
            stack.last?.text += String(decoding: text, as: UTF8.self)
        }
    }
}
