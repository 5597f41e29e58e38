/// One mistake in a model, naming the entity and property it concerns.
public struct ModelIssue: Sendable, Hashable, CustomStringConvertible {
    public var entity: String?
    public var property: String?
    public var message: String

    public init(entity: String?, property: String? = nil, message: String) {
        self.entity = entity
        self.property = property
        self.message = message
    }

    public var description: String {
        switch (entity, property) {
        case let (e?, p?): return "\(e).\(p): \(message)"
        case let (e?, nil): return "\(e): \(message)"
        default: return message
        }
    }
}

/// A model that cannot be built: every mistake found, not just the first.
public struct ModelValidationError: Error, Sendable, CustomStringConvertible {
    public var issues: [ModelIssue]
    public init(issues: [ModelIssue]) { self.issues = issues }
    public var description: String {
        "The model has \(issues.count) error\(issues.count == 1 ? "" : "s"): "
            + issues.map(\.description).joined(separator: "; ")
    }
}
