import CLibXML2
import Foundation

/// Receives the events of an `XMLPushParser`: subclass it and override what you need. Names and text
/// are UTF-8 bytes valid only during the call.
///
/// A class rather than a protocol: the parser calls it through a reference it does not retain, so an
/// event costs no reference counting.
open class XMLEventHandler {
    public init() {}

    /// An element starts. `attributes` holds `attributeCount` groups of five pointers: local name,
    /// prefix, namespace URI, value start, value end (libxml2's SAX2 layout). A value holding `&`
    /// needs `decodedAttributeValue(_:)`.
    open func startElement(
        localName: UnsafePointer<UInt8>, namespaceURI: UnsafePointer<UInt8>?,
        attributes: UnsafePointer<UnsafePointer<UInt8>?>?, attributeCount: Int
    ) {}
    open func endElement() {}
    /// Text or CDATA content (entities and character references already replaced).
    open func characters(_ text: UnsafeBufferPointer<UInt8>) {}

    /// An attribute value as the document means it, or `nil` when the value is right as given.
    /// libxml2 hands values over with every `&` (from `&amp;` or `&#38;`) written as `&#38;`, leaving
    /// it to a tree builder to decode; every `&` of a value starts such a reference.
    public static func decodedAttributeValue(_ value: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        guard let base = value.baseAddress, memchr(base, 0x26, value.count) != nil else { return nil }
        var decoded: [UInt8] = []
        decoded.reserveCapacity(value.count)
        var index = 0
        while index < value.count {
            decoded.append(value[index])
            if value[index] == UInt8(ascii: "&"), index + 4 < value.count, value[index + 1] == UInt8(ascii: "#"),
                value[index + 2] == UInt8(ascii: "3"), value[index + 3] == UInt8(ascii: "8"),
                value[index + 4] == UInt8(ascii: ";")
            {
                index += 5
            } else {
                index += 1
            }
        }
        return decoded
    }
}
