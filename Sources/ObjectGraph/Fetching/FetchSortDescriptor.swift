/// How to order fetch results: a key path (through to-one relationships), direction, and whether
/// strings compare case-insensitively. Nulls sort first in ascending order.
public struct FetchSortDescriptor: Sendable, Hashable {
    public var keyPath: String
    public var ascending: Bool
    public var caseInsensitive: Bool

    public init(_ keyPath: String, ascending: Bool = true, caseInsensitive: Bool = false) {
        self.keyPath = keyPath
        self.ascending = ascending
        self.caseInsensitive = caseInsensitive
    }

    var path: [String] { keyPath.split(separator: ".").map(String.init) }
}
