import Foundation

/// The rule a value broke.
public enum ValidationRule: Sendable, Hashable, CustomStringConvertible {
    case required, type, range, minValue, maxValue, minLength, maxLength, pattern
    case minCount, maxCount, deny, danglingReference
    /// A rule of the application's own (custom validators and whole-object checks).
    case custom(String)

    public var description: String {
        switch self {
        case .required: return "required"
        case .type: return "type"
        case .range: return "range"
        case .minValue: return "minValue"
        case .maxValue: return "maxValue"
        case .minLength: return "minLength"
        case .maxLength: return "maxLength"
        case .pattern: return "pattern"
        case .minCount: return "minCount"
        case .maxCount: return "maxCount"
        case .deny: return "deny"
        case .danglingReference: return "danglingReference"
        case .custom(let name): return name
        }
    }
}

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

/// Every validation failure of a save (or of one object): one error holding each detailed failure.
///
/// A custom whole-object check may throw either a `ValidationError` or a single `ValidationFailure`;
/// `ValidationError.collect` runs several checks and keeps the failures of all of them:
///
/// ```swift
/// override func validateForInsert() throws {
///     try ValidationError.collect(
///         { try super.validateForInsert() },
///         { if self["end"].compare(to: self["start"]) == .orderedAscending {
/// throw self.validationFailure(key: "end", rule: .custom("endAfterStart"), message: "ends before it starts") } }) }
/// ```
public struct ValidationError: Error, Sendable, CustomStringConvertible {
    public var failures: [ValidationFailure]

    public init(failures: [ValidationFailure]) { self.failures = failures }

    /// Runs every check; throws one error holding the failures of all checks that failed.
    /// Errors that are not validation errors propagate unchanged.
    public static func collect(_ checks: (() throws -> Void)...) throws {
        var failures: [ValidationFailure] = []
        for check in checks {
            do { try check() } catch { failures += try extract(error) }
        }
        if !failures.isEmpty { throw ValidationError(failures: failures) }
    }

    static func extract(_ error: any Error) throws -> [ValidationFailure] {
        switch error {
        case let error as ValidationError: return error.failures
        case let failure as ValidationFailure: return [failure]
        default: throw error
        }
    }

    public var description: String {
        let count = failures.count
        return "Validation failed with \(count) error\(count == 1 ? "" : "s"): "
            + failures.map(\.description).joined(separator: "; ")
    }
}

extension ValidationFailure: Error {}
