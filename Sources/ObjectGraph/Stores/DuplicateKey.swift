import Foundation

/// A stored object's ID with the values of the key it was found by.
/// A key more than one stored object holds, and how many do.
public struct DuplicateKey: Sendable, Equatable {
    public var key: [AttributeValue]
    public var count: Int

    public init(key: [AttributeValue], count: Int) {
        self.key = key
        self.count = count
    }
}

public struct KeyedObjectID: Sendable {
    public var key: [AttributeValue]
    public var objectID: ManagedObjectID

    public init(key: [AttributeValue], objectID: ManagedObjectID) {
        self.key = key
        self.objectID = objectID
    }
}
