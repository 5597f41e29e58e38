import Foundation

/// A fetch index over one or more properties of an entity.
public struct IndexDescription: Sendable, Hashable {
    public var name: String
    public var propertyNames: [String]
    public init(name: String, propertyNames: [String]) {
        self.name = name
        self.propertyNames = propertyNames
    }
}
