import Foundation

/// One failed check of one object: which object, which property, what value, which rule, and why.
public struct ValidationFailure: Sendable, Hashable, CustomStringConvertible {
    public var objectID: ManagedObjectID
    public var entityName: String
    /// The property, or `nil` for a whole-object check.
    public var key: String?
    /// The offending value as text (`nil` when there is none to show).
    public var value: String?
    public var rule: ValidationRule
    public var message: String

    public init(
        objectID: ManagedObjectID, entityName: String, key: String?, value: String?, rule: ValidationRule,
        message: String
    ) {
        self.objectID = objectID
        self.entityName = entityName
        self.key = key
        self.value = value
        self.rule = rule
        self.message = message
    }

    public var description: String {
        var text = "\(entityName)"
        if let key { text += ".\(key)" }
        text += " [\(rule)]: \(message)"
        if let value { text += " (value: \(value))" }
        return text
    }
}

extension ValidationFailure: Error {}
