import CLibXML2
import Foundation

/// XML that is not well-formed, with where libxml2 found it.
public struct XMLParseError: Error, Sendable, CustomStringConvertible {
    public let message: String
    public let line: Int
    public let column: Int
    public var description: String { message }
}
