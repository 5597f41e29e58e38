import Foundation

/// A predicate format string that does not parse; `column` is 1-based, in characters.
public struct PredicateSyntaxError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public var column: Int
    public var format: String
    public var description: String {
        column > 0
            ? "Predicate syntax error at column \(column): \(message) in \(format.debugDescription)"
            : "Predicate error: \(message) in \(format.debugDescription)"
    }
}
