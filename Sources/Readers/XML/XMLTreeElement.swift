import Foundation

/// A small XML document read whole into elements (names, attributes, text, line): for files that
/// describe rather than carry data, such as an Xcode model's `contents`. Data files use `XMLReader`,
/// which streams.
public final class XMLTreeElement {
    public let name: String
    public let attributes: [String: String]
    public let line: Int
    public internal(set) var children: [XMLTreeElement] = []
    public internal(set) var text = ""

    init(name: String, attributes: [String: String], line: Int) {
        self.name = name
        self.attributes = attributes
        self.line = line
    }

    /// The children named `name`.
    public func children(named name: String) -> [XMLTreeElement] { children.filter { $0.name == name } }
}
