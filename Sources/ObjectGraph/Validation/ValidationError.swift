import Foundation

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
