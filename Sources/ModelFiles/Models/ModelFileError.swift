/// One mistake in a model file, with its position.
public struct ModelFileIssue: Sendable, Hashable, CustomStringConvertible {
    public var file: String
    public var line: Int
    public var column: Int
    public var entity: String?
    public var property: String?
    public var message: String

    public init(file: String, line: Int, column: Int, entity: String? = nil, property: String? = nil, message: String) {
        self.file = file
        self.line = line
        self.column = column
        self.entity = entity
        self.property = property
        self.message = message
    }

    /// `shop.model.yaml:12:7: Order.customer: destination entity "Client" is not in the model`
    public var description: String {
        var subject = ""
        if let entity { subject = entity + (property.map { ".\($0)" } ?? "") + ": " }
        return "\(file):\(line):\(column): \(subject)\(message)"
    }
}

/// A model file that cannot be loaded: every mistake found, each with file, line and column.
public struct ModelFileError: Error, Sendable, CustomStringConvertible {
    public var issues: [ModelFileIssue]

    public init(issues: [ModelFileIssue]) { self.issues = issues }
    public var description: String {
        let count = issues.count
        return "The model file has \(count) error\(count == 1 ? "" : "s"):\n"
            + issues.map { "  " + $0.description }.joined(separator: "\n")
    }
}
